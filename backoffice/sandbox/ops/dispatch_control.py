"""The sandbox's control actions for the dispatch service (ops/dispatch.py lists what it keeps): the timing and error
share of a customer's notes and replies and the arrival of incoming notes over time, a note's status forced, and
notes seeded in assorted statuses (incoming notes and replies: dispatch_control_inbox.py). Tests and `make run`
call them; the platform has none.

Each takes {"customer": ...}: the customer's id (an integer, as POST /_control/customers answers it), its
customerUniqueId or an API key of it (customer_unique_id or api_key work too, as for the other actions).
"""

import uuid
from datetime import timedelta

from django.utils import timezone

from ..control import BadRequest, control_action
from ..models import Document
from . import dispatch_rules as rules
from .common import iso, locked, named_customer, now
from .dispatch import (ENVELOPE_QUEUED, ERROR_MESSAGE, NOTE, dispatch_settings, next_numbers, note_key,
                       queue, save_settings)
from .dispatch import ARRIVAL
from .dispatch_directory import DIRECTORY
from .dispatch_life import deliver, save_arrival
from .dispatch_outbox import status_view
from .dispatch_rules import APPROVED, DELIVERED, DRAFT, ERROR, QUEUED, STATUSES

SEED_STATUSES = (DRAFT, QUEUED, ERROR, DELIVERED, APPROVED, APPROVED, APPROVED, 65, 70, 80, 90)
ERROR_STATUSES = (ERROR, 62, 82, 92)
MAX_SEED = 100_000
ARRIVAL_LIMITS = (("arrival_seconds", 0, 86400, (int, float)), ("arrival_lines", 1, 100, int))
TIMING_LIMITS = (("processing_seconds", 0, 86400, (int, float)), ("approve_seconds", 0, 86400, (int, float)),
                 ("error_rate", 0, 1, (int, float)))


def checked_numbers(body: dict, limits: tuple) -> dict:
    """The numbers the body names among limits ((name, low, high, type), ...), checked."""
    changes = {}
    for name, low, high, kind in limits:
        value = body.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, kind) or not low <= value <= high:
            raise BadRequest(f"{name} must be {'an integer' if kind is int else 'a number'} from {low} to {high}")
        changes[name] = value
    return changes


@control_action("POST", "dispatch/settings")
def control_settings(body):
    """{customer, processing_seconds?, approve_seconds?, error_rate?, arrival_seconds?, arrival_lines?,
    list_names_replies?, upper_case_ids?, prefixes?, reset?} ->
    the customer's settings: how long a queued note or reply takes to reach 50 and then 60 (or 40), and the share
    that ends in error (0 to 1); with arrival_seconds > 0 one incoming note of arrival_lines lines arrives per such
    period from now on (0 stops it). list_names_replies false: the incoming list leaves each note's reply out;
    upper_case_ids true: status answers write ids in capitals. prefixes: the prefixes defined for the customer's
    outgoing notes (a list of 3 of A-Z, 0-9; null: every well-formed prefix). The arrival members are answered once
    set (reset clears them)."""
    customer = named_customer(body)
    arrival = checked_numbers(body, ARRIVAL_LIMITS)
    if body.get("reset") is True:
        Document.objects.filter(customer=customer, kind=ARRIVAL).delete()
    changes = {name: float(value) for name, value in checked_numbers(body, TIMING_LIMITS).items()}
    for name in ("list_names_replies", "upper_case_ids"):
        value = body.get(name)
        if value is None:
            continue
        if not isinstance(value, bool):
            raise BadRequest(f"{name} must be true or false")
        changes[name] = value
    if "prefixes" in body:
        prefixes = body["prefixes"]
        if prefixes is not None and (not isinstance(prefixes, list) or not all(
                isinstance(prefix, str) and rules.PREFIX_PATTERN.match(prefix) for prefix in prefixes)):
            raise BadRequest("prefixes must be null or a list of prefixes of 3 characters of A-Z and 0-9")
        changes["prefixes"] = prefixes
    settings = save_settings(customer, changes, reset=body.get("reset") is True)
    return {**settings, **save_arrival(customer, arrival)}


def force(doc: Document, status: int, message, at, settings: dict) -> None:
    """The note in this status: 20 queued again and 50 delivered live on as the platform would move them; any
    other status stops the note's life there."""
    if status in (QUEUED, DELIVERED):
        queue(doc, at, settings)
    else:
        doc.status, doc.due_at = status, None
    if status == DELIVERED:
        doc.due_at = at + timedelta(seconds=doc.data["machine"]["approve_seconds"])
    envelope = None
    if status not in (DRAFT, QUEUED, ERROR):
        code, text = ENVELOPE_QUEUED
        envelope = doc.data.get("envelope") or {"id": str(uuid.uuid4()), "status": code, "message": text}
    doc.status = status
    doc.data = {**doc.data, "message": message or (ERROR_MESSAGE if status in ERROR_STATUSES else ""),
                "envelope": envelope, "sentDate": doc.data.get("sentDate") or (iso(at) if status else None)}


def forced_status(body: dict, statuses: tuple) -> tuple[int, str | None]:
    """(status, message) of a control action that forces a status: one of the statuses, a message or none."""
    status = body.get("status")
    if isinstance(status, bool) or status not in statuses:
        raise BadRequest(f"status must be one of {', '.join(map(str, statuses))}")
    message = body.get("message")
    if message is not None and not isinstance(message, str):
        raise BadRequest("message must be a string")
    return status, message


@control_action("POST", "dispatch/status")
def control_status(body):
    """{customer, id, status, message?} -> the note's status answer (status any of document 3, 2.9; a message
    for the error statuses by default the sandbox's)."""
    customer = named_customer(body)
    status, message = forced_status(body, STATUSES)
    with locked(customer):
        doc = Document.objects.filter(customer=customer, kind=NOTE, key=note_key(body.get("id") or "")).first()
        if doc is None:
            raise BadRequest(f"no outgoing dispatch note with id {body.get('id')!r} for this customer")
        force(doc, status, message, now(), dispatch_settings(customer))
        doc.save(update_fields=["status", "data", "due_at"])
        if status == APPROVED:
            deliver(doc, now())  # a note to another sandbox customer arrives as if it had been approved
    return status_view(doc)


def _seed_body(index: int, issue_day) -> dict:
    """A JSON note that keeps every rule: receivers from the taxpayer list in turn, drivers or a carrier."""
    receiver = DIRECTORY[index % len(DIRECTORY)]
    shipment = {"shipmentPlateNo": f"34IRS{index % 1000:03d}"}
    if index % 3:
        shipment["driverLines"] = [{"driverName": "Mehmet", "driverSurname": "Kaya",
                                    "driverTckn": "10000000146" if index % 2 else rules.UNKNOWN_DRIVER}]
    else:
        shipment.update(shipmentSenderTitle="Hızlı Taşımacılık A.Ş.", shipmentSenderTcknVkn="1234567890")
    return {
        "isNew": True, "localReferenceId": f"SEED-{index:06d}", "useManualDespatchAdviceId": False,
        "addressBook": {"identificationNumber": receiver["Identifier"], "alias": receiver["Alias"],
                        "name": receiver["Title"], "receiverCity": "Ankara", "receiverDistrict": "Çankaya",
                        "receiverCountry": "Türkiye"},
        "generalInfo": {"issueDate": issue_day.isoformat(), "issueTime": "09:30:00", "despatchProfileType": 0,
                        "currencyCode": "TRY", "despatchType": 1, "payableAmount": 1200 + index % 100,
                        "totalAmount": 1000 + index % 100},
        "despatchLines": [{"productName": f"Koli {index % 50 + 1}", "amount": index % 9 + 1, "unitCode": "C62",
                           "unitPrice": 100, "lineAmount": (index % 9 + 1) * 100}],
        "deliveryAddressInfo": {"district": "Çankaya", "city": "Ankara", "zipCode": "06690", "countryName": "Türkiye"},
        "despatchShipmentInfo": shipment,
    }


@control_action("POST", "dispatch/seed")
def control_seed(body):
    """{customer, count} -> {"ids": [...]}: that many notes, numbered in the EIR series of their issue year, in the
    statuses of SEED_STATUSES in turn (20 and 50 live on as queued notes do), created in that order."""
    customer = named_customer(body)
    count = body.get("count")
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_SEED:
        raise BadRequest(f"count must be an integer from 1 to {MAX_SEED}")
    at, settings = now(), dispatch_settings(customer)
    today = timezone.localtime(at).date()
    ids, docs = [], []
    with locked(customer):
        numbers = next_numbers(customer, rules.DEFAULT_PREFIX, today.year, count)
        for index, number in enumerate(numbers):
            issue_day = max(today - timedelta(days=index % 30), today.replace(month=1, day=1))
            body = _seed_body(index, issue_day)
            book = body["addressBook"]
            doc = Document(customer=customer, kind=NOTE, key=str(uuid.uuid4()), number=number, status=DRAFT,
                           created=at + timedelta(microseconds=index), data={
                               **body, "form": "json", "target": {"vknTckn": book["identificationNumber"],
                                                                  "title": book["name"], "alias": book["alias"]},
                               "issueDate": issue_day.isoformat(), "issueTime": "09:30:00", "message": "",
                               "envelope": None, "machine": None})
            status = SEED_STATUSES[index % len(SEED_STATUSES)]
            if status != DRAFT:
                force(doc, status, None, at, settings)
            docs.append(doc)
            ids.append(doc.key)
            if len(docs) == 1000:
                Document.objects.bulk_create(docs)
                docs.clear()
        Document.objects.bulk_create(docs)
    return {"ids": ids}
