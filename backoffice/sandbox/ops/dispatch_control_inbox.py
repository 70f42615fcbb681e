"""The sandbox's control actions for incoming dispatch notes and their replies (the contract of issue 16): notes
arriving from a made-up sender, and a reply's status forced (its note moved as the reply's life moves it). The
customer is named as in dispatch_control.py (common.named_customer).
"""

from datetime import timedelta


from ..control import BadRequest, control_action
from ..models import Document
from .common import blank, decimal, locked, moment, named_customer, now, vkn_tckn_problem
from .dispatch import REPLY, REPLY_ERROR_MESSAGE, dispatch_settings, note_key
from .dispatch_control import force, forced_status
from .dispatch_life import DEFAULT_LINES, DEFAULT_SENDER, INCOMING_STATUSES, make_incoming, reply_moved
from .dispatch_replies import reply_view
from .dispatch_rules import APPROVED, DELIVERED, DRAFT, ERROR, QUEUED

MAX_INCOMING = 1000
REPLY_STATUSES = (DRAFT, QUEUED, ERROR, DELIVERED, APPROVED)


def _lines(value) -> list[dict]:
    if value is None:
        return list(DEFAULT_LINES)
    if not isinstance(value, list) or not value:
        raise BadRequest("lines must be a non-empty array of {name, quantity, unit_code}")
    lines = []
    for index, line in enumerate(value):
        quantity = decimal(line.get("quantity")) if isinstance(line, dict) else None
        if not isinstance(line, dict) or blank(line.get("name")) or not isinstance(line.get("name"), str) or \
                isinstance(line.get("quantity"), bool) or quantity is None or quantity <= 0:
            raise BadRequest(f"lines[{index}] must have a name and a quantity greater than 0")
        unit = line.get("unit_code") or "C62"
        if not isinstance(unit, str):
            raise BadRequest(f"lines[{index}].unit_code must be a string")
        lines.append({"name": line["name"], "quantity": line["quantity"], "unit_code": unit})
    return lines


@control_action("POST", "dispatch/incoming")
def control_incoming(body):
    """{customer, count? (1..1000, 1), sender_vkn?, sender_title?, lines? [{name, quantity, unit_code}], status?
    (70), created? (ISO, now)} -> {"notes": [{id, despatchNumber, status}]}: incoming notes from that sender,
    created a microsecond apart."""
    customer = named_customer(body)
    count = body.get("count", 1)
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_INCOMING:
        raise BadRequest(f"count must be an integer from 1 to {MAX_INCOMING}")
    sender = body.get("sender_vkn") or DEFAULT_SENDER
    if vkn_tckn_problem(sender):
        raise BadRequest(f"sender_vkn {vkn_tckn_problem(sender)}")
    title = body.get("sender_title")
    if title is not None and not isinstance(title, str):
        raise BadRequest("sender_title must be a string")
    status = body.get("status", 70)
    if isinstance(status, bool) or status not in INCOMING_STATUSES:
        raise BadRequest(f"status must be one of {', '.join(map(str, INCOMING_STATUSES))}")
    created = now()
    if body.get("created") is not None:
        created = moment(body["created"]) if isinstance(body["created"], str) else None
        if created is None:
            raise BadRequest("created must be an ISO date and time")
    lines = _lines(body.get("lines"))
    with locked(customer):
        docs = make_incoming(customer, [created + timedelta(microseconds=index) for index in range(count)],
                             sender, title, lines, status)
    return {"notes": [{"id": doc.key, "despatchNumber": doc.number, "status": doc.status} for doc in docs]}


@control_action("POST", "dispatch/reply-status")
def control_reply_status(body):
    """{customer, id, status (0, 20, 40, 50, 60), message?} -> the reply's status answer: 20 and 50 live on as a
    queued reply does; the note moves as the reply's life moves it (60 also sends the reply back to a sandbox
    sender)."""
    customer = named_customer(body)
    status, message = forced_status(body, REPLY_STATUSES)
    at = now()
    with locked(customer):
        reply = Document.objects.filter(customer=customer, kind=REPLY, key=note_key(body.get("id") or "")).first()
        if reply is None:
            raise BadRequest(f"no dispatch reply with id {body.get('id')!r} for this customer")
        force(reply, status, message or (REPLY_ERROR_MESSAGE if status == ERROR else None), at,
              dispatch_settings(customer))
        reply.save(update_fields=["status", "data", "due_at"])
        reply_moved(reply, at)
    return reply_view(reply)
