"""Ticket service (document 2): event and passenger tickets, their Excel exports and by-date reports,
and the province list.

Bodies use the platform's own field names. Answers whose spelling the documents do not show are
normalised here, so callers see one shape: ettn / ticketNumber of a create, an exportId given bare or in
an object, Response holding HTML as text or base64, a ZIP given as the file or in Response.
Failures raise the errors of remote/errors.py; a refused cancel or status change is a RemoteError whose
title and detail are the platform's Error.
"""

from __future__ import annotations  # TicketClient.list would shadow list[...] in annotations

import datetime
import json
import uuid
from decimal import Decimal

from .documents import unwrap

MAX_PAGE_SIZE = 500  # document 1, section 8
ENVELOPE = ("pageIndex", "pageSize", "totalCount", "totalPages", "hasNextPage", "hasPreviousPage", "items")
KINDS = ("event_ticket", "passenger_ticket")
# Ticket status codes (document 2, section 3; 10 deleted is seen in public clients).
DRAFT, DELETED, QUEUED, ERROR, APPROVED, CANCELLED = 0, 10, 20, 40, 60, 100
SETTLED = (ERROR, APPROVED, CANCELLED)
# queryFilter operator for equality, as public clients send it.
EQUALS = "eşittir"


def _field(data, *names, default=None):
    """A field of an answer under any of these names, whatever its capitalisation."""
    if not isinstance(data, dict):
        return default
    for name in names:
        if name in data:
            return data[name]
    lowered = {str(key).lower(): value for key, value in data.items()}
    for name in names:
        if name.lower() in lowered:
            return lowered[name.lower()]
    return default


def _int(value):
    try:
        return int(value)
    except (TypeError, ValueError):
        return value


def jsonable(value):
    """A body with dates, Decimals and UUIDs in the JSON forms the platform takes."""
    if isinstance(value, dict):
        return {key: jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(item) for item in value]
    if isinstance(value, (datetime.date, datetime.datetime, datetime.time)):
        return value.isoformat()
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    return value


def envelope(data) -> dict:
    """The paged envelope (document 2, 2.5) in camelCase, whichever capitalisation the answer used."""
    result = {name: _field(data, name) for name in ENVELOPE}
    result["items"] = result["items"] or []
    for name in ("pageIndex", "pageSize", "totalCount", "totalPages"):
        result[name] = _int(result[name]) if result[name] is not None else 0
    for name in ("hasNextPage", "hasPreviousPage"):
        result[name] = bool(result[name])
    return result


def _ids(ettns) -> list[str]:
    ids = [str(ettn) for ettn in ettns]
    if not ids:
        raise ValueError("at least one ettn is needed")
    return ids


class ExportsAndReports:
    """Excel export, export history, download and by-date report of one document family.

    prefix is the endpoint-table prefix: event_ticket, passenger_ticket, and passenger_list (issue 5)
    whose client reuses this class.
    """

    def __init__(self, transport, prefix: str):
        self.transport = transport
        self.prefix = prefix

    def _call(self, operation, **kwargs):
        return self.transport.call(f"{self.prefix}.{operation}", **kwargs)

    def export(self, filters: dict) -> str:
        """Start an Excel export (filters of 4.1 / 4.2 / 4.3, platform names); returns its exportId.

        The ZIP appears in export_history() once ready and can be downloaded for 24 hours.
        """
        answer = self._call("export", json=jsonable(filters or {}))
        export_id = answer if not isinstance(answer, dict) else _field(answer, "exportId", "id")
        if not export_id:
            raise ValueError(f"{self.prefix}.export: the platform's answer has no exportId: {answer!r}")
        return str(export_id)

    def export_history(self) -> list[dict]:
        """[{"exportId", "createdDate", "fileName"}], as the platform lists them."""
        answer = self._call("export_history")
        items = answer if isinstance(answer, list) else _field(answer, "items", default=[]) or []
        return [{"exportId": str(_field(item, "exportId", "id") or ""),
                 "createdDate": _field(item, "createdDate", "createDate"),
                 "fileName": _field(item, "fileName") or ""} for item in items]

    def export_download(self, export_id) -> bytes:
        """The export's ZIP (the platform refuses once its 24 hours are over: RemoteError, status 410/404)."""
        content, _content_type = unwrap(*self._call("export_download", path_params={"exportId": str(export_id)},
                                                    raw=True))
        return content

    def report(self, report_date: datetime.date, page_index: int, page_size: int = MAX_PAGE_SIZE) -> dict:
        """One page of the by-date report: the envelope with items of 2.5 (no records: items [], totalCount 0)."""
        if page_index < 1 or not 1 <= page_size <= MAX_PAGE_SIZE:
            raise ValueError(f"page_index starts at 1 and page_size is 1 to {MAX_PAGE_SIZE}")
        day = report_date.isoformat() if isinstance(report_date, datetime.date) else str(report_date)
        answer = self._call("report", path_params={"reportDate": day[:10]},
                            params={"pageIndex": page_index, "pageSize": page_size})
        return envelope(answer)

    def report_pages(self, report_date: datetime.date, page_size: int = MAX_PAGE_SIZE, start: int = 1):
        """Every page of a day's report from page `start` on, one envelope at a time."""
        page_index = start
        while True:
            page = self.report(report_date, page_index, page_size)
            yield page
            if not page["hasNextPage"] or not page["items"]:
                return
            page_index += 1


class TicketClient(ExportsAndReports):
    """Event tickets (kind "event_ticket") or passenger tickets (kind "passenger_ticket")."""

    def __init__(self, transport, kind: str):
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}")
        super().__init__(transport, kind)
        self.kind = kind

    @staticmethod
    def _created(answer) -> dict:
        ettn, number = _field(answer, "ettn", "id"), _field(answer, "ticketNumber")
        if not ettn:
            raise ValueError(f"the platform's answer has no ettn: {answer!r}")
        return {"ettn": str(ettn), "ticketNumber": number or ""}

    @staticmethod
    def _ticket(answer) -> dict:
        """The ticket as the platform gives it, with ettn, status and message under these names."""
        ticket = dict(answer) if isinstance(answer, dict) else {"value": answer}
        ticket["ettn"] = str(_field(ticket, "ettn", "id") or "")
        ticket["status"] = _int(_field(ticket, "status"))
        ticket["message"] = _field(ticket, "message", "statusMessage", "errorMessage") or ""
        return ticket

    def create(self, payload: dict) -> dict:
        """Register a ticket (status 0 draft or 20 queued in the body): {"ettn", "ticketNumber"}.

        A POST: a timeout after sending raises MaybeSent; look the ticket up with find_by_number()
        before sending again.
        """
        return self._created(self._call("create", json=jsonable(payload)))

    def update(self, ettn, payload: dict) -> dict:
        """Update a ticket in status 0 or 40 (ettn goes into the body too): {"ettn", "ticketNumber"}."""
        body = jsonable({**payload, "ettn": str(ettn)})
        return self._created(self._call("update", path_params={"id": str(ettn)}, json=body))

    def get(self, ettn) -> dict:
        return self._ticket(self._call("get", path_params={"id": str(ettn)}))

    def list(self, page_index: int = 1, page_size: int = MAX_PAGE_SIZE, *, query_filter: list | None = None,
             sorted_column: str | None = None, is_desc: bool | None = None) -> dict:
        """One page of tickets; query_filter is [{"category", "operator", "value"}] (operators in Turkish)."""
        params = {"pageIndex": page_index, "pageSize": page_size}
        if query_filter:
            params["queryFilter"] = json.dumps(jsonable(query_filter), ensure_ascii=False)
        if sorted_column:
            params["sortedColumn"] = sorted_column
        if is_desc is not None:
            params["isDesc"] = "true" if is_desc else "false"
        page = envelope(self._call("list", params=params))
        page["items"] = [self._ticket(item) for item in page["items"]]
        return page

    def find_by_number(self, ticket_number: str) -> dict | None:
        """The ticket with this number, or None: how a create that timed out after sending is reconciled."""
        page = self.list(1, 10, query_filter=[{"category": "ticketNumber", "operator": EQUALS,
                                               "value": ticket_number}])
        # Only an exact match counts, in case the platform ignored or loosened the filter.
        return next((item for item in page["items"] if _field(item, "ticketNumber") == ticket_number), None)

    def cancel(self, ettns) -> None:
        """Cancel tickets (-> 100); all or none. A refusal raises RemoteError with the platform's title/detail."""
        self._call("cancel", json={"ids": _ids(ettns)})

    def update_status(self, ettns, status: int) -> None:
        """40 -> 0 (back to draft) or 0 -> 20 (queue and send); all or none."""
        if status not in (DRAFT, QUEUED):
            raise ValueError("status must be 0 (draft) or 20 (queue and send)")
        self._call("update_status", json={"ids": _ids(ettns), "status": status})

    def statuses(self, ettns) -> list[dict]:
        """[{"id", "status", "message"}] of the tickets the platform knows among these."""
        answer = self._call("status", json=_ids(ettns))
        items = answer if isinstance(answer, list) else _field(answer, "items", default=[]) or []
        return [{"id": str(_field(item, "id", "ettn") or ""), "status": _int(_field(item, "status")),
                 "message": _field(item, "message", "statusMessage", "errorMessage") or ""} for item in items]

    def html(self, ettn, *, standard: bool = True) -> str:
        """The ticket as HTML: standard layout, or (standard=False) the company's default own layout."""
        content, _content_type = unwrap(*self._call(
            "html", path_params={"id": str(ettn), "isStandartXslt": bool(standard)}, raw=True))
        return content.decode("utf-8", errors="replace")


class CitiesClient:
    def __init__(self, transport):
        self.transport = transport

    def list(self) -> list[dict]:
        """The 81 provinces: [{"id": plate code, "name": Turkish name}], by plate code."""
        answer = self.transport.call("city.list")
        items = answer if isinstance(answer, list) else _field(answer, "items", "data", default=[]) or []
        cities = [{"id": _int(_field(item, "id", "cityId", "plateCode", "code")),
                   "name": _field(item, "name", "cityName") or ""} for item in items]
        return sorted(cities, key=lambda city: city["id"] if isinstance(city["id"], int) else 0)
