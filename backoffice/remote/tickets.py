"""Ticket service (document 2): event and passenger tickets, their Excel exports and by-date reports,
and the province list.

Bodies use the platform's own field names. Answers whose spelling the documents do not show are
normalised here, so callers see one shape: ettn / ticketNumber of a create, an exportId given bare or in
an object, Response holding HTML as text or base64, a ZIP given as the file or in Response.
Failures raise the errors of remote/errors.py; a refused cancel or status change is a RemoteError whose
title and detail are the platform's Error.
"""

from __future__ import annotations  # TicketClient.list would shadow list[...] in annotations

from .common import MAX_PAGE_SIZE, Client, envelope, equals, field, ids, items_of, list_params, status_change, to_int
from .exports import ExportsAndReports

KINDS = ("event_ticket", "passenger_ticket")
# Ticket status codes (document 2, section 3; 10 deleted is seen in public clients).
DRAFT, DELETED, QUEUED, ERROR, APPROVED, CANCELLED = 0, 10, 20, 40, 60, 100


class TicketClient(ExportsAndReports):
    """The operations both ticket kinds share; EventTicketClient and PassengerTicketClient name the kind."""

    def __init__(self, transport, kind: str | None = None):
        kind = kind or self.prefix
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}")
        super().__init__(transport, kind)
        self.kind = kind

    @staticmethod
    def _created(answer) -> dict:
        ettn, number = field(answer, "ettn", "id"), field(answer, "ticketNumber")
        if not ettn:
            raise ValueError(f"the platform's answer has no ettn: {answer!r}")
        return {"ettn": str(ettn), "ticketNumber": number or ""}

    @staticmethod
    def _ticket(answer) -> dict:
        """The ticket as the platform gives it, with ettn, status and message under these names."""
        ticket = dict(answer) if isinstance(answer, dict) else {"value": answer}
        ticket["ettn"] = str(field(ticket, "ettn", "id") or "")
        ticket["status"] = to_int(field(ticket, "status"))
        ticket["message"] = field(ticket, "message", "statusMessage", "errorMessage") or ""
        return ticket

    def create(self, payload: dict) -> dict:
        """Register a ticket (status 0 draft or 20 queued in the body): {"ettn", "ticketNumber"}.

        A POST: a timeout after sending raises MaybeSent; look the ticket up with find_by_number()
        before sending again.
        """
        return self._created(self._call("create", json=payload))

    def update(self, ettn, payload: dict) -> dict:
        """Update a ticket in status 0 or 40 (ettn goes into the body too): {"ettn", "ticketNumber"}."""
        body = {**payload, "ettn": str(ettn)}
        return self._created(self._call("update", path_params={"id": str(ettn)}, json=body))

    def get(self, ettn) -> dict:
        return self._ticket(self._call("get", path_params={"id": str(ettn)}))

    def list(self, page_index: int = 1, page_size: int = MAX_PAGE_SIZE, *, query_filter: list | None = None,
             sorted_column: str | None = None, is_desc: bool | None = None) -> dict:
        """One page of tickets; query_filter is [{"category", "operator", "value"}] (operators in Turkish)."""
        params = list_params(page_index, page_size, conditions=query_filter, sorted_column=sorted_column,
                             is_desc=is_desc)
        page = envelope(self._call("list", params=params))
        page["items"] = [self._ticket(item) for item in page["items"]]
        return page

    def find_by_number(self, ticket_number: str) -> dict | None:
        """The ticket with this number, or None: how a create that timed out after sending is reconciled."""
        page = self.list(1, 10, query_filter=[equals("ticketNumber", ticket_number)])
        # Only an exact match counts, in case the platform ignored or loosened the filter.
        return next((item for item in page["items"] if field(item, "ticketNumber") == ticket_number), None)

    def cancel(self, ettns) -> None:
        """Cancel tickets (-> 100); all or none. A refusal raises RemoteError with the platform's title/detail.

        The body is {"ids": [...]} as document 2 (4.1, "Cancel ticket") writes it; the provider's client sends
        Ids, which a .NET service binds alike, but the documents win where sources disagree."""
        self._call("cancel", json={"ids": ids(ettns, "ettn")})

    def update_status(self, ettns, status: int) -> None:
        """40 -> 0 (back to draft) or 0 -> 20 (queue and send); all or none."""
        self._call("update_status", json=status_change(ettns, status, "ettn"))

    def statuses(self, ettns) -> list[dict]:
        """[{"id", "status", "message"}] of the tickets the platform knows among these."""
        items = items_of(self._call("status", json=ids(ettns, "ettn")))
        return [{"id": str(field(item, "id", "ettn") or ""), "status": to_int(field(item, "status")),
                 "message": field(item, "message", "statusMessage", "errorMessage") or ""} for item in items]

    def html(self, ettn, *, standard: bool = True) -> str:
        """The ticket as HTML: standard layout, or (standard=False) the company's default own layout."""
        content, _content_type = self._document("html", path_params={"id": str(ettn), "isStandartXslt": bool(standard)})
        return content.decode("utf-8", errors="replace")


class EventTicketClient(TicketClient):
    prefix = "event_ticket"


class PassengerTicketClient(TicketClient):
    prefix = "passenger_ticket"


class CitiesClient(Client):
    def list(self) -> list[dict]:
        """The 81 provinces: [{"id": plate code, "name": Turkish name}], by plate code."""
        items = items_of(self._call("city.list"), "items", "data")
        cities = [{"id": to_int(field(item, "id", "cityId", "plateCode", "code")),
                   "name": field(item, "name", "cityName") or ""} for item in items]
        return sorted(cities, key=lambda city: city["id"] if isinstance(city["id"], int) else 0)
