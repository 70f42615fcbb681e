"""The status machine the platform's documents share (document 2 for tickets): 0 draft -> 20 queued, which
settles to 60 approved or 40 error; 40 -> 0 and 0 -> 20 by a status change; 100 cancelled; 10 deleted.

A domain describes its documents with a Lifecycle and gets from here: settling what is due (lazily, on every
read of the service, so no background thread is needed), the status query, cancel and the status change,
and the lookups by id that answer 404.

Choices where the documents say "not shown":
- a queued document settles ticket_processing_seconds later, to error (40, with the domain's message) for
  the share ticket_error_rate (0 and 1 are exact; in between decided by the ettn, so repeatable), else to
  approved (60), which also reports it (its by-date report item, dated when it was approved);
- cancel (-> 100) is allowed from 0, 40 and 60; refused for a queued document (20: being processed) and for
  one already cancelled; a cancelled approved document shows canceled in its report item;
- status change: 40 -> 0 and 0 -> 20 only; cancel and status change are all-or-nothing.

The bodies are spelled as document 2 spells them, exactly: cancel {ids}, status change {Ids, Status}
(the provider's client agrees); another spelling or member answers 422 (common.bind).
"""

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta


from ..api import Call
from ..models import Document
from .common import INTEGER, STRING, array, check_model, field, found, id_list, iso, locked, now, read_body, refused

DRAFT, DELETED, QUEUED, ERROR, APPROVED, CANCELLED = 0, 10, 20, 40, 60, 100
CANCEL_MODEL = {"ids": array(STRING)}  # document 2, 4.1: "body with ids (array of Guid)"
STATUS_CHANGE_MODEL = {"Ids": array(STRING), "Status": INTEGER}  # document 2, 4.1: "body with Ids ... and Status"
STATUS_NAMES = {DRAFT: "draft", DELETED: "deleted", QUEUED: "queued", ERROR: "error", APPROVED: "approved",
                CANCELLED: "cancelled"}


@dataclass(frozen=True)
class Lifecycle:
    """One domain's documents as the machine sees them."""

    kinds: tuple[str, ...]  # the document kinds settled together
    noun: str  # what messages call one: "ticket" -> "Ticket <number> (<ettn>)", "ticket ids (ettn)"
    error_message: str  # the message of a document that settles to error
    report_item: Callable[[Document, datetime], dict]  # the by-date report item of an approved document


def status_name(status):
    return STATUS_NAMES.get(status, status)


def due_at(call: Call, at: datetime, status: int) -> datetime | None:
    """When a document saved at `at` in this status is processed: queued ones after the processing delay."""
    return at + timedelta(seconds=call.settings.ticket_processing_seconds) if status == QUEUED else None


# --- settling ------------------------------------------------------------------------------------------------

def process_due(customer, due, outcome: Callable[[Document, datetime], dict | None]) -> int:
    """Under the customer's lock, give each due document its outcome (which sets its status and data and
    returns its report item, or None for none), then save them and their report items. Returns how many."""
    if not due.exists():
        return 0
    with locked(customer):
        docs = list(due)  # again under the lock: a concurrent request may have settled them
        reports = []
        for doc in docs:
            reported = doc.due_at
            item = outcome(doc, reported)
            doc.due_at = None
            if item is not None:
                reports.append(Document(customer=customer, kind=f"{doc.kind}_report", key=doc.key,
                                        number=doc.number, created=reported, data=item))
        Document.objects.bulk_update(docs, ["status", "data", "due_at"], batch_size=500)
        Document.objects.bulk_create(reports, batch_size=500, ignore_conflicts=True)
    return len(docs)


def goes_wrong(ettn: str, rate: float) -> bool:
    if rate <= 0:
        return False
    if rate >= 1:
        return True
    return uuid.UUID(ettn).int % 10_000 < rate * 10_000


def settle(call: Call, life: Lifecycle) -> None:
    """Process the customer's queued documents whose time has come."""
    due = Document.objects.filter(customer=call.customer, kind__in=life.kinds, status=QUEUED, due_at__lte=now(call))
    rate = call.settings.ticket_error_rate

    def outcome(doc: Document, reported: datetime) -> dict | None:
        if goes_wrong(doc.key, rate):
            doc.status, doc.data = ERROR, {**doc.data, "message": life.error_message}
            return None
        doc.status, doc.data = APPROVED, {**doc.data, "message": ""}
        return life.report_item(doc, reported)

    process_due(call.customer, due, outcome)


# --- lookups -------------------------------------------------------------------------------------------------

def document(call: Call, kind: str, key: str) -> Document:
    return found(Document.objects.filter(customer=call.customer, kind=kind, key=key),
                 f"No {kind.replace('_', ' ')} with ettn {key}.")


def documents(call: Call, kind: str, keys: list[str]) -> list[Document]:
    """The documents of these ids, in the given order; 404 naming the unknown ones."""
    found = {doc.key: doc for doc in Document.objects.filter(customer=call.customer, kind=kind, key__in=keys)}
    missing = [key for key in keys if key not in found]
    if missing:
        raise refused("Not Found", f"No {kind.replace('_', ' ')} with ettn {', '.join(missing)}.", 404)
    return [found[key] for key in keys]


# --- operations ----------------------------------------------------------------------------------------------

def status_query(call: Call, life: Lifecycle, kind: str):
    """POST .../status: [{id, status, message}] of the known ids, each once."""
    body = read_body(call)
    if isinstance(body, dict):  # tolerate {"ids": [...]} as well as the bare array
        body = field(body, "ids")
    if not isinstance(body, list) or not all(isinstance(item, str) for item in body):
        raise refused("Bad Request", f"body: must be an array of {life.noun} ids (ettn).")
    settle(call, life)
    found = {doc.key: doc for doc in Document.objects.filter(customer=call.customer, kind=kind, key__in=body)}
    return [{"id": key, "status": found[key].status, "message": found[key].data.get("message", "")}
            for key in dict.fromkeys(body) if key in found]


def _cancel_refusal(life: Lifecycle, doc: Document) -> str | None:
    name = f"{life.noun.capitalize()} {doc.number} ({doc.key})"
    if doc.status == CANCELLED:
        return f"{name} is already cancelled."
    if doc.status == QUEUED:
        return f"{name} is queued and being processed; cancel it once it is approved or in error."
    if doc.status not in (DRAFT, ERROR, APPROVED):
        return f"{name} cannot be cancelled in status {doc.status}."
    return None


def cancel(call: Call, life: Lifecycle, kind: str):
    """POST .../cancel {ids}: all of them cancelled (their report items marked canceled), or none."""
    body = read_body(call)
    check_model(body, CANCEL_MODEL)
    ids = id_list(body, life.noun)
    settle(call, life)
    at = now(call)
    with locked(call.customer):
        docs = documents(call, kind, ids)
        for doc in docs:
            reason = _cancel_refusal(life, doc)
            if reason:
                raise refused("Cancel refused", reason)
        reported = list(Document.objects.filter(customer=call.customer, kind=f"{kind}_report",
                                                key__in=[doc.key for doc in docs if doc.status == APPROVED]))
        for doc in docs:
            doc.status, doc.due_at = CANCELLED, None
        for item in reported:
            item.data = {**item.data, "canceled": True, "canceledDate": iso(at)}
        Document.objects.bulk_update(docs, ["status", "due_at"], batch_size=500)
        Document.objects.bulk_update(reported, ["data"], batch_size=500)


def change_status(call: Call, life: Lifecycle, kind: str):
    """PUT .../updatestatuslist {Ids, Status}: error -> draft or draft -> queued, all of them or none."""
    body = read_body(call)
    check_model(body, STATUS_CHANGE_MODEL)
    ids = id_list(body, life.noun, "Ids")
    target = body.get("Status")
    if target not in (DRAFT, QUEUED):
        raise refused("Bad Request", "Status: must be 0 (draft) or 20 (queue and send).")
    settle(call, life)
    allowed_from = ERROR if target == DRAFT else DRAFT
    at = now(call)
    with locked(call.customer):
        docs = documents(call, kind, ids)
        for doc in docs:
            if doc.status != allowed_from:
                raise refused(
                    "Status change refused",
                    f"{life.noun.capitalize()} {doc.number} ({doc.key}) is {status_name(doc.status)} ({doc.status}): "
                    f"only {STATUS_NAMES[allowed_from]} ({allowed_from}) {life.noun}s can be set to "
                    f"{STATUS_NAMES[target]} ({target}).")
        for doc in docs:
            doc.status, doc.due_at = target, due_at(call, at, target)
            if target == DRAFT:
                doc.data = {**doc.data, "message": ""}
        Document.objects.bulk_update(docs, ["status", "due_at", "data"], batch_size=500)
