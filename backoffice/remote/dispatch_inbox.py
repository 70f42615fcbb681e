"""Dispatch-note service, the receiving side and the answers (document 3, 2.9, 3.3 and 4.5): incoming notes (list,
status, documents, Excel exports), replies to them (ReceiptAdvice as UBL, partial acceptance, approve or reject,
status changes, status, documents) and the replies received to our outgoing notes (the receipt list and documents).

Paths and the shapes document 3 does not show (list items, partial-accept items) are our defaults in endpoints.py,
to be confirmed with the provider; answers are read through field() in any letter case and under the names public
clients use, so callers see one shape.
"""

from __future__ import annotations

from .common import Client, envelope, field, ids, present, queue_status, status_change, to_int
from .dispatch import ENVELOPE_FIELDS, query_params
from .documents import download
from .exports import ExportsAndReports
from .transport import jsonable


def _text(value) -> str:
    return "" if value is None else str(value)


def incoming(answer) -> dict:
    """An incoming note as the list or the status answer gives it."""
    return {
        "id": _text(field(answer, "id", "uuid", "ettn")),
        "despatchNumber": _text(field(answer, "despatchNumber", "despatchAdviceNumber", "documentNumber")),
        "status": to_int(field(answer, "status")),
        "createdDate": field(answer, "createdDate", "createDate", "receivedDate"),
        "issueDate": field(answer, "issueDate", "despatchDate"),
        "issueTime": field(answer, "issueTime"),
        "senderVknTckn": _text(field(answer, "senderVknTckn", "sourceVknTckn", "senderIdentifier", "vknTckn")),
        "senderTitle": _text(field(answer, "senderTitle", "sourceTitle", "senderName", "title")),
        "profile": _text(field(answer, "profile", "profileId", "despatchProfileType")),
        "lineCount": to_int(field(answer, "lineCount")),
        "payableAmount": field(answer, "payableAmount"),
        "currencyCode": _text(field(answer, "currencyCode")),
        "receiptAdviceId": _text(field(answer, "receiptAdviceId", "receiptId")),
        "receiptNumber": _text(field(answer, "receiptNumber", "receiptAdviceNumber")),
    }


def reply(answer) -> dict:
    """A reply as the create, partial-accept or status answer gives it (receiptAdviceNumber on the first two,
    receiptNumber on the status: document 3, 2.9)."""
    return {"id": _text(field(answer, "id")),
            "receiptAdviceNumber": _text(field(answer, "receiptAdviceNumber", "receiptNumber")),
            "status": to_int(field(answer, "status")),
            "message": field(answer, "message") or "",
            "inboxDespatchNumber": _text(field(answer, "inboxDespatchNumber", "despatchNumber")),
            **present(answer, ENVELOPE_FIELDS)}


def receipt(answer) -> dict:
    """A reply received to one of our outgoing notes, as the receipt list gives it."""
    return {"id": _text(field(answer, "id")),
            "receiptNumber": _text(field(answer, "receiptNumber", "receiptAdviceNumber")),
            "status": to_int(field(answer, "status")),
            "createdDate": field(answer, "createdDate", "createDate"),
            "despatchId": _text(field(answer, "despatchId", "despatchAdviceId", "despatchUuid", "outboxDespatchId")),
            "despatchNumber": _text(field(answer, "despatchNumber", "despatchAdviceNumber")),
            "senderVknTckn": _text(field(answer, "senderVknTckn", "sourceVknTckn", "vknTckn")),
            "senderTitle": _text(field(answer, "senderTitle", "sourceTitle", "title"))}


class DispatchInboxClient(Client):
    prefix = "dispatch."

    # --- incoming notes ------------------------------------------------------------------------------------
    def inbox_list(self, page_index: int = 1, page_size: int = 100, **query) -> dict:
        """One page of incoming notes; query: despatchNumber, targetVknTckn, status, startDate, endDate (range on
        creation, datetimes or "yyyy-MM-dd HH:mm:ss"; endDate never later than now), isDesc."""
        page = envelope(self._call("inbox_list", params=query_params(page_index, page_size, query)))
        page["items"] = [incoming(item) for item in page["items"]]
        return page

    def inbox_status(self, note_id) -> dict:
        answer = incoming(self._call("inbox_status", path_params={"id": str(note_id)}) or {})
        answer["id"] = str(note_id)  # as we asked: the platform may write a GUID in another letter case
        return answer

    inbox_ubl = download("dispatch.inbox_ubl")
    inbox_pdf = download("dispatch.inbox_pdf")
    inbox_html = download("dispatch.inbox_html")

    # --- replies to incoming notes ---------------------------------------------------------------------------
    def reply_create(self, receipt_advice: str, *, prefix: str | None, manual_number: bool, status: int) -> dict:
        """POST the reply as UBL: the ReceiptAdvice XML zipped, then Base64 (document 3, 2.9). Its id is the XML's
        UUID, so a create whose answer was lost is found again with reply_status()."""
        return self._reply(self._call("reply_post", json=self._reply_body(receipt_advice, prefix, manual_number,
                                                                         status)))

    def reply_update(self, reply_id, receipt_advice: str, *, prefix: str | None, manual_number: bool,
                     status: int) -> dict:
        return self._reply(self._call("reply_put", path_params={"id": str(reply_id)},
                                      json=self._reply_body(receipt_advice, prefix, manual_number, status)))

    @staticmethod
    def _reply_body(receipt_advice, prefix, manual_number, status) -> dict:
        status = queue_status(status)
        return {"ReceiptAdvice": receipt_advice, "Prefix": None if manual_number else (prefix or None),
                "UseManualReceiptAdviceId": bool(manual_number), "Status": status}

    def _reply(self, answer) -> dict:
        result = reply(answer or {})
        if not result["id"]:
            raise ValueError(f"the platform's answer names no reply: {answer!r}")
        return result

    def reply_update_status(self, reply_ids, status: int) -> None:
        """40 -> 0 or 0 -> 20, as for outgoing notes (document 3, 3.3: the same rules apply to replies)."""
        self._call("reply_update_status", json=status_change(reply_ids, status, "reply id"))

    def partial_accept(self, *, despatch_id, delivered_at, contact: str, prefix: str, items: list[dict]) -> dict:
        """Partial acceptance (document 3, 2.9); items [{lineId, acceptedQuantity, rejectedQuantity,
        rejectReason}] (their shape is not shown: our default). The platform writes the reply and queues it."""
        body = {"despatchAdviceUUID": str(despatch_id), "actualDeliveryDateTime": delivered_at,
                "deliveryContact": contact, "prefix": prefix, "items": items}
        return self._reply(self._call("reply_partial_accept", json=body))

    def approve_reject(self, note_ids, *, approve: bool, prefix: str, reason: str = "", delivered_at=None) -> None:
        """Accept or reject several incoming notes at once (query parameters, document 3, 4.5); the platform
        writes and queues a reply for each."""
        params = {"ids": ids(note_ids, "note id"), "isApprove": "true" if approve else "false", "prefix": prefix}
        if not approve:
            params["reason"] = reason
        if delivered_at is not None:
            params["actualDeliveryDate"] = jsonable(delivered_at)
        self._call("reply_approve_reject", params=params)

    def reply_status(self, reply_id) -> dict:
        answer = reply(self._call("reply_status", path_params={"id": str(reply_id)}) or {})
        answer["id"] = str(reply_id)  # as we asked: the platform may write a GUID in another letter case
        return answer

    reply_ubl = download("dispatch.reply_ubl")
    reply_ubl_by_inbox = download("dispatch.reply_ubl_by_inbox", "The reply to the incoming note of this id.")
    reply_pdf = download("dispatch.reply_pdf")
    reply_html = download("dispatch.reply_html")
    reply_zip = download("dispatch.reply_zip", "Document 3, 4.5: Get ZIP takes isStandartXslt as PDF and HTML do.")

    # --- replies received to our outgoing notes ----------------------------------------------------------------
    def receipt_list(self, page_index: int = 1, page_size: int = 100, **query) -> dict:
        """One page of the replies receivers sent to our notes; query: receiptNumber, status (0, 20, 40, 50, 60),
        startDate, endDate (on creation; endDate never later than now), isDesc."""
        page = envelope(self._call("receipt_list", params=query_params(page_index, page_size, query)))
        page["items"] = [receipt(item) for item in page["items"]]
        return page

    receipt_ubl = download("dispatch.receipt_ubl", "The reply received to our outgoing note of this id.")


class InboxExportClient(ExportsAndReports):
    """Excel exports of incoming notes: dispatch.inbox_export, _export_history, _export_download."""

    prefix = "dispatch.inbox"
    separator = "_"


__all__ = ["DispatchInboxClient", "InboxExportClient", "incoming", "receipt", "reply"]
