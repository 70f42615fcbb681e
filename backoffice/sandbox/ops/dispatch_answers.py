"""Dispatch-note service, the replies the platform writes itself (document 3, 4.5; the contract of issue 16):
partial accept (the lines' accepted and rejected quantities) and approve / reject (whole notes). Either writes a
UBL-TR ReceiptAdvice (dispatch_receipt_ubl.py) with a new GUID as the reply's id and a number of the prefix's
series, and queues it at once (20).

Choices where the documents say "not shown" (besides dispatch.py's and dispatch_replies.py's):
- partialaccept items are {lineId (string), acceptedQuantity, rejectedQuantity, rejectReason}; a missing quantity
  is 0; a note line no item names is wholly accepted; items[i] in refusals counts from 0, as JSON paths do.
  despatchAdviceUUID well formed but not one of the customer's incoming notes: 404.
- approvereject reads ids repeated (ids=a&ids=b) or comma-separated, names only as document 3 spells them (ids,
  isApprove, prefix, reason, actualDeliveryDate; another letter case is refused); reason is free text
  (document 3 calls it a Guid, which no list explains); all of the notes or none, the refusal naming each.
"""

import uuid

from django.utils import timezone

from ..api import Call, operation
from ..models import Document
from . import dispatch_receipt_ubl as receipt_ubl
from . import dispatch_rules as rules
from .common import (NUMBER, STRING, Problems, array, blank, bound, decimal, found, is_guid, locked, moment, now,
                     read_body, refused)
from .dispatch import INBOX, REPLY, note_key, spelled_query
from .dispatch_life import settle
from .dispatch_replies import (BASE, answer, check_answers, kind_of, not_awaiting, prefix_of, reply_data,
                               reply_number, store)
from .dispatch_rules import QUEUED

PARTIAL_MODEL = {"despatchAdviceUUID": STRING, "actualDeliveryDateTime": STRING, "deliveryContact": STRING,
                 "prefix": STRING, "items": array({"lineId": STRING, "acceptedQuantity": NUMBER,
                                                   "rejectedQuantity": NUMBER, "rejectReason": STRING})}


def _written(call: Call, note: Document, answers: list, prefix: str, delivered, contact, at) -> Document:
    """A reply written by the platform for the note, queued (20), the note moved (under the customer's lock)."""
    key = str(uuid.uuid4())
    issued = timezone.localtime(at)
    number = reply_number(call.customer, prefix, issued.year)
    reply = Document(customer=call.customer, kind=REPLY, key=key, number=number, created=at)
    reply.blob = receipt_ubl.receipt_xml(key, number, issued, note, call.customer, answers,
                                         timezone.localtime(delivered), contact)
    reply.data = reply_data(note, kind_of(answers), "platform", useManual=False, prefix=prefix, machine=None)
    store(call, reply, QUEUED, note)
    return reply


def _delivery_moment(value, name: str, problems: Problems, at, required: bool):
    if blank(value):
        if required:
            problems.add(name, f"{name} is required (an ISO date and time).")
        return None
    parsed = moment(value)
    if parsed is None:
        problems.add(name, f"'{value}' is not an ISO date and time.")
    elif parsed > at:
        problems.add(name, f"{name} ({value}) is in the future.")
    else:
        return parsed
    return None


@operation("dispatch", "POST", BASE + "/partialaccept")
def partial_accept(call: Call):
    body = bound(read_body(call), PARTIAL_MODEL)
    settle(call)
    at, problems = now(call), Problems()
    note_id = body.get("despatchAdviceUUID")
    note = None
    if blank(note_id):
        problems.add("despatchAdviceUUID", "despatchAdviceUUID is required (the incoming note's id).")
    elif not is_guid(note_id):
        problems.add("despatchAdviceUUID", f"'{note_id}' is not a GUID.")
    else:
        note = found(Document.objects.filter(customer=call.customer, kind=INBOX, key=note_key(note_id)).defer("blob"),
                     f"No incoming dispatch note with id {note_id}.")
    delivered = _delivery_moment(body.get("actualDeliveryDateTime"), "actualDeliveryDateTime", problems, at, True)
    if delivered is not None and note is not None:
        issue_day = rules.day(note.data.get("issueDate"))
        if issue_day and timezone.localtime(delivered).date() < issue_day:
            problems.add("actualDeliveryDateTime", f"{body['actualDeliveryDateTime']} is before the note's issue "
                                                   f"date {issue_day}.")
    if blank(body.get("deliveryContact")):
        problems.add("deliveryContact", "deliveryContact is required (who received the goods).")
    prefix = prefix_of(body.get("prefix"), problems, "prefix", default=None)
    items = body.get("items") or []
    if not items:
        problems.add("items", "At least one item is required.")
    entries = []
    for index, item in enumerate(items):
        where = f"items[{index}]"
        quantities = []
        for name in ("acceptedQuantity", "rejectedQuantity"):
            number = decimal(item.get(name)) if item.get(name) is not None else decimal(0)
            if number is None:
                problems.add(f"{where}.{name}", f"{name} must be a number (got {item.get(name)}).")
                continue
            if number < 0:
                problems.add(f"{where}.{name}", f"{name} must be 0 or more (got {item.get(name)}).")
            quantities.append(number)
        if len(quantities) == 2 and all(number >= 0 for number in quantities):
            entries.append((where, item.get("lineId"), *quantities, item.get("rejectReason"),
                            ("lineId", "rejectReason")))
    answers = check_answers(entries, note, problems) if note is not None else []
    problems.raise_any()
    with locked(call.customer):
        note = Document.objects.get(pk=note.pk)  # again under the lock
        reason = not_awaiting(note)
        if reason:
            raise refused("Validation failed", f"{note.key}: {reason}.")
        reply = _written(call, note, answers, prefix, delivered, body["deliveryContact"].strip(), at)
    return answer(reply)


APPROVE_QUERY = ("ids", "isApprove", "prefix", "reason", "actualDeliveryDate")  # document 3, 4.5


def _query_ids(call: Call) -> list[str]:
    return [part.strip() for value in call.query.getlist("ids") for part in value.split(",") if part.strip()]


@operation("dispatch", "POST", BASE + "/approvereject")
def approve_reject(call: Call):
    """Whole notes accepted (every line received) or rejected (every line rejected with the reason)."""
    spelled_query(call, APPROVE_QUERY)
    query = {name: call.query.get(name) for name in APPROVE_QUERY}
    settle(call)
    at, problems = now(call), Problems()
    ids = _query_ids(call)
    if not ids:
        problems.add("ids", "ids is required: the incoming notes' ids (ids=a&ids=b or ids=a,b).")
    approve = (query.get("isApprove") or "").strip().lower()
    if approve not in ("true", "false"):
        problems.add("isApprove", f"isApprove is required: true (accept) or false (reject) (got "
                                  f"'{query.get('isApprove') or ''}').")
    prefix = prefix_of(query.get("prefix"), problems, "prefix", default=None)
    reason = query.get("reason")
    if approve == "false" and blank(reason):
        problems.add("reason", "required when rejecting.")
    delivered = _delivery_moment(query.get("actualDeliveryDate"), "actualDeliveryDate", problems, at, False)
    problems.raise_any()
    with locked(call.customer):
        keys = list(dict.fromkeys(note_key(value) for value in ids))
        found = {doc.key: doc for doc in Document.objects.filter(customer=call.customer, kind=INBOX, key__in=keys)}
        for key in keys:
            if key not in found:
                problems.add(key, "no incoming dispatch note of this customer has this id.")
            elif not_awaiting(found[key]):
                problems.add(key, not_awaiting(found[key]))
        problems.raise_any()
        for key in keys:
            note = found[key]
            answers = [(line, 0, decimal(line["quantity"]) or 0, reason.strip()) if approve == "false" else
                       (line, decimal(line["quantity"]) or 0, 0, "") for line in note.data.get("lines") or []]
            _written(call, note, answers, prefix, delivered or at, None, at)
    return None
