"""Dispatch-note service (document 3, 4.5): outgoing notes in the JSON or the UBL form, their status, status
changes, documents, the listing with isNew, the Excel exports and the dispatch taxpayer list.

Answers are read through field() (any letter case: document 3 writes the UBL answer PascalCase, the JSON one
camelCase), so callers see one shape: {"id", "despatchAdviceNumber", "status", "localReferenceId", ...}.
"""

from __future__ import annotations  # DispatchClient.list would shadow list[...] in annotations

from datetime import datetime

from .common import Client, check_page, envelope, field, ids, items_of, present, status_change, to_int
from .documents import download
from .exports import ExportsAndReports

ENVELOPE_FIELDS = ("envelopeId", "envelopeStatus", "envelopeMessage")
DATE_FORMAT = "%Y-%m-%d %H:%M:%S"  # the facts file: startDate=yyyy-MM-dd HH:mm:ss


def query_params(page_index, page_size, query) -> dict:
    """A list's query: its page, and the filters given (a flag as true / false, a moment as DATE_FORMAT)."""
    check_page(page_index, page_size)
    params = {"pageIndex": page_index, "pageSize": page_size}
    for name, value in query.items():
        if value is None or value == "":
            continue
        if isinstance(value, bool):
            value = "true" if value else "false"
        elif isinstance(value, datetime):
            value = value.strftime(DATE_FORMAT)
        params[name] = value
    return params


def note(answer, number_field: str = "despatchAdviceNumber") -> dict:
    """A note as any of the service's answers gives it, under one spelling; envelope fields only when present
    (document 3: omitted for some statuses)."""
    result = {"id": str(field(answer, "id") or ""),
              "despatchAdviceNumber": str(field(answer, number_field, "despatchAdviceNumber", "despatchNumber")
                                          or ""),
              "status": to_int(field(answer, "status")),
              "message": field(answer, "message") or "",
              "localReferenceId": str(field(answer, "localReferenceId") or "")}
    return {**result, **present(answer, (*ENVELOPE_FIELDS, "isNew", "issueDate", "targetVknTckn", "targetTitle",
                                         "createdDate"))}


class DispatchClient(Client):
    prefix = "dispatch."

    def __init__(self, transport, number_field: str = "despatchAdviceNumber"):
        super().__init__(transport)
        self.number_field = number_field

    def _note(self, answer) -> dict:
        result = note(answer, self.number_field)
        if not result["id"]:
            raise ValueError(f"the platform's answer names no note: {answer!r}")
        return result

    # --- outgoing notes ------------------------------------------------------------------------------------
    def create(self, body: dict) -> dict:
        """POST the JSON model (document 3, 2.9). A timeout after sending raises MaybeSent: look the note up by
        its localReferenceId (find()) before sending again."""
        return self._note(self._call("outbox_post_json", json=body))

    def update(self, note_id, body: dict) -> dict:
        return self._note(self._call("outbox_put_json", path_params={"id": str(note_id)}, json=body))

    def create_ubl(self, body: dict) -> dict:
        """POST the UBL form: {despatchAdviceZip, localReferenceId, prefix, targetAlias,
        useManualDespatchAdviceId, checkLocalReferenceId, status}."""
        return self._note(self._call("outbox_post_ubl", json=body))

    def update_ubl(self, note_id, body: dict) -> dict:
        return self._note(self._call("outbox_put_ubl", path_params={"id": str(note_id)}, json=body))

    def update_status(self, note_ids, status: int) -> None:
        """40 -> 0 (back to draft) or 0 -> 20 (queue and send); all or none (document 3, 3.3). Spelled Ids and
        Status as document 3 (4.5) writes them."""
        self._call("outbox_update_status", json=status_change(note_ids, status, "note id"))

    def status(self, note_id) -> dict:
        """{id, despatchAdviceNumber, status, message, envelope...} of one note."""
        answer = self._call("outbox_status", path_params={"id": str(note_id)}) or {}
        result = note(answer, self.number_field)
        result["id"] = result["id"] or str(note_id)
        return result

    def statuses(self, note_ids) -> list[dict]:
        """The status of each note (one call each: the service has no call for several)."""
        return [self.status(note_id) for note_id in note_ids]

    def list(self, page_index: int = 1, page_size: int = 100, **query) -> dict:
        """One page of outgoing notes; query: localReferenceId, despatchNumber, status, isNew, startDate,
        endDate, isDesc (our default path: document 3 names a listing but shows none)."""
        page = envelope(self._call("outbox_list", params=query_params(page_index, page_size, query)))
        page["items"] = [note(item, self.number_field) for item in page["items"]]
        return page

    def find(self, local_reference_id: str) -> dict | None:
        """The note with this localReferenceId, or None: how a create whose answer was lost is reconciled. Only
        an exact match counts, in case the platform ignored or loosened the filter."""
        page = self.list(1, 10, localReferenceId=local_reference_id)
        return next((item for item in page["items"] if item["localReferenceId"] == local_reference_id), None)

    def find_number(self, number: str) -> dict | None:
        """The note with this despatchAdviceNumber, or None (exact match only, as find())."""
        page = self.list(1, 10, despatchNumber=number)
        return next((item for item in page["items"] if item["despatchAdviceNumber"] == number), None)

    def mark_read(self, note_ids) -> None:
        """isNew false: later listings of new notes no longer return these (document 3, 2.9)."""
        self._call("outbox_update_is_new", json={"ids": ids(note_ids, "note id"), "isNew": False})

    # --- documents -----------------------------------------------------------------------------------------
    pdf = download("dispatch.outbox_pdf")
    html = download("dispatch.outbox_html")
    ubl = download("dispatch.outbox_ubl")
    zip = download("dispatch.outbox_zip", "Document 3, 4.5: Get ZIP takes isStandartXslt as PDF and HTML do.")

    # --- the dispatch taxpayer list ------------------------------------------------------------------------
    def taxpayer_list(self) -> bytes:
        """The dispatch-note users: a ZIP holding one JSON file (facts file)."""
        content, _type = self._call("taxpayer_list", raw=True)
        return content


class OutboxExportClient(ExportsAndReports):
    """Excel exports of outgoing notes: dispatch.outbox_export, _export_history, _export_download."""

    prefix = "dispatch.outbox"
    separator = "_"


__all__ = ["DispatchClient", "OutboxExportClient", "items_of", "note"]
