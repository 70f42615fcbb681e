"""The life of dispatch notes and replies, settled lazily on every operation of the dispatch service (dispatch.py
lists the kinds and choices): outgoing notes and replies moving 20 -> 50 -> 60 / 40, a reply moving its incoming
note, a note reaching 60 arriving in the receiving sandbox customer's inbox, a reply reaching 60 coming back to the
sender's receipt list, and incoming notes arriving over time (arrival_seconds).

Several workers call at once: every move happens under the locks of the customers it touches, taken in the order
of their ids (so two customers settling each other's documents cannot wait on each other).
"""

import uuid
from datetime import timedelta
from types import SimpleNamespace

from django.db import transaction
from django.utils import timezone

from ..api import Call
from ..models import Customer, Document
from . import dispatch_rules as rules
from . import dispatch_ubl as ubl
from .common import bound, lock, locked, moment, now, read_body, refused
from .dispatch import (ARRIVAL, DEFAULT_ARRIVAL, ERROR_MESSAGE, INBOX, INBOX_COUNTER, NOTE, RECEIPT, REPLY,
                       REPLY_ERROR_MESSAGE, TRANSIT, advance, customer_by_vkn, dispatch_settings, documents_of, ids_of,
                       next_numbers, partner_of, queue)
from .dispatch_directory import TITLES
from .dispatch_rules import APPROVED, DELIVERED, DRAFT, ERROR, QUEUED, STATUS_NAMES

AWAITING, AUTOMATIC = 70, 65
# The incoming note's statuses while a reply of each kind is on its way, failed, or through (document 3, 2.9).
NOTE_MOVES = {"accept": (61, 62, 60), "reject": (81, 82, 80), "partial": (91, 92, 90)}
INCOMING_STATUSES = (60, 61, 62, AUTOMATIC, AWAITING, 80, 81, 82, 90, 91, 92)
SENDER_KINDS = {"reject": 80, "partial": 90}  # the sender's note after a reply (an acceptance leaves it 60)
MAX_ARRIVALS = 50  # notes arriving over time at most at once
DEFAULT_SENDER = "1234567890"  # a VKN with a valid check digit (Örnek Ticaret A.Ş. of the taxpayer list)
INBOX_PREFIX = "GLN"
DEFAULT_LINES = ({"name": "Çimento (50 kg)", "quantity": 40, "unit_code": "C62"},
                 {"name": "İnşaat demiri", "quantity": 1250, "unit_code": "KGM"},
                 {"name": "Kum", "quantity": 3, "unit_code": "MTQ"})


def lock_all(customer_ids) -> None:
    for pk in sorted(set(customer_ids)):
        lock(SimpleNamespace(pk=pk))


# --- settling -------------------------------------------------------------------------------------------------

def settle(call: Call) -> None:
    """Everything of the customer's whose time has come: its notes and replies, the other customers' notes and
    replies on their way to it, and its arrivals."""
    at = now(call)
    settle_kind(call.customer, NOTE, at)
    settle_kind(call.customer, REPLY, at)
    _transits(call.customer, at)
    _arrivals(call.customer, at)


def settle_kind(owner, kind: str, at, keys=None) -> None:
    """Move the owner's notes (or replies) that are due, and what their moves touch."""
    due = Document.objects.filter(customer=owner, kind=kind, status__in=(QUEUED, DELIVERED), due_at__lte=at)
    if keys is not None:
        due = due.filter(key__in=keys)
    if not due.exists():
        return
    partners = {partner_of(doc) for doc in due.defer("blob")} - {None}
    with transaction.atomic():
        lock_all([owner.pk, *partners])
        docs = list(due)  # again under the lock: a concurrent request may have moved them
        for doc in docs:
            advance(doc, at, REPLY_ERROR_MESSAGE if kind == REPLY else ERROR_MESSAGE)
        Document.objects.bulk_update(docs, ["status", "data", "due_at"], batch_size=500)
        for doc in docs:
            if kind == NOTE and doc.status == APPROVED:
                deliver(doc, at)
            elif kind == REPLY and doc.status in (APPROVED, ERROR):
                reply_moved(doc, at)


def _transits(customer, at) -> None:
    """The other customers' notes and replies on their way to this customer, settled by its own calls."""
    transits = list(Document.objects.filter(customer=customer, kind=TRANSIT, due_at__lte=at))
    if not transits:
        return
    groups = {}
    for transit in transits:
        groups.setdefault((transit.data["customer"], transit.data["kind"]), []).append(transit)
    for (owner_pk, kind), items in groups.items():
        owner = Customer.objects.filter(pk=owner_pk).first()
        if owner is not None:
            settle_kind(owner, kind, at, keys=[item.data["key"] for item in items])
        flying = {doc.key: doc.due_at for doc in Document.objects.filter(
            customer_id=owner_pk, kind=kind, key__in=[item.data["key"] for item in items],
            status__in=(QUEUED, DELIVERED), due_at__isnull=False).only("key", "due_at")}
        for item in items:
            if item.data["key"] in flying:
                item.due_at = flying[item.data["key"]]
                item.save(update_fields=["due_at"])
            else:
                item.delete()


# --- a note reaching 60 arrives in the receiving customer's inbox -----------------------------------------------

def note_xml(doc: Document, customer) -> bytes:
    """The DespatchAdvice of an outgoing note: the uploaded one, or the one written from its JSON."""
    return bytes(doc.blob) if doc.data.get("form") == "ubl" else ubl.despatch_xml(doc, customer)


def deliver(doc: Document, at) -> None:
    """A copy of the approved note in the receiving sandbox customer's inbox (status 70), remembered by the note."""
    if doc.data.get("delivered"):
        return
    receiver = customer_by_vkn((doc.data.get("target") or {}).get("vknTckn"))
    if receiver is None:
        return
    xml = note_xml(doc, doc.customer)
    incoming, made = Document.objects.get_or_create(
        customer=receiver, kind=INBOX, key=doc.key,
        defaults={"number": doc.number, "status": AWAITING, "created": at, "blob": xml,
                  "data": {**ubl.incoming_facts(ubl.parse_stored(xml)), "reply": None,
                           "origin": {"customer": doc.customer_id, "key": doc.key}}})
    if made:
        doc.data = {**doc.data, "delivered": {"customer": receiver.pk, "key": incoming.key}}
        doc.save(update_fields=["data"])


# --- replies move their note; one reaching 60 comes back to the sender ------------------------------------------

def move_note(reply: Document, note: Document | None = None) -> None:
    """The incoming note in the status the reply's status gives it (document 3, 3.3: a draft reply puts it in
    61, whatever the reply's kind)."""
    note = note or Document.objects.filter(customer_id=reply.customer_id, kind=INBOX, key=reply.data["noteId"]).first()
    if note is None:
        return
    being, failed, done = NOTE_MOVES[reply.data["kind"]]
    note.status = {DRAFT: NOTE_MOVES["accept"][0], QUEUED: being, DELIVERED: being, ERROR: failed,
                   APPROVED: done}.get(reply.status, note.status)
    note.data = {**note.data, "reply": {"id": reply.key, "number": reply.number}}
    note.save(update_fields=["status", "data"])


def reply_moved(reply: Document, at) -> None:
    move_note(reply)
    if reply.status == APPROVED:
        send_receipt(reply, at)


def send_receipt(reply: Document, at) -> None:
    """The reply in the sender's receipt list, and the sender's note in 80 or 90 (an acceptance leaves it 60)."""
    origin = reply.data.get("origin")
    if not origin:
        return
    sender_note = Document.objects.filter(customer_id=origin["customer"], kind=NOTE, key=origin["key"]).first()
    if sender_note is None:
        return
    answering = reply.customer
    kind = reply.data["kind"]
    Document.objects.get_or_create(
        customer_id=origin["customer"], kind=RECEIPT, key=reply.key,
        defaults={"number": reply.number, "status": APPROVED, "created": at, "blob": bytes(reply.blob),
                  "data": {"despatchId": sender_note.key, "despatchNumber": sender_note.number,
                           "senderVknTckn": ubl.company_vkn(answering), "senderTitle": answering.name,
                           "kind": kind}})
    if sender_note.status == APPROVED and kind in SENDER_KINDS:
        sender_note.status = SENDER_KINDS[kind]
    sender_note.data = {**sender_note.data, "receipt": {"id": reply.key, "number": reply.number, "kind": kind}}
    sender_note.save(update_fields=["status", "data"])


def queue_reply(reply: Document, at) -> None:
    """The reply in 20 with its life fixed by the answering customer's settings (the partner told)."""
    queue(reply, at, dispatch_settings(reply.customer))


# --- the owner's status change (document 3, 3.3) --------------------------------------------------------------

def status_change(call: Call, kind: str, what: str, nouns: tuple[str, str], store) -> None:
    """{Ids, Status}: 40 -> 0 and 0 -> 20 only, all of the notes (or replies) or none. what names the kind in a
    404, nouns (one, several) in the refusals; store(call, doc, status) saves one in its new status."""
    noun, plural = nouns
    body = bound(read_body(call), rules.STATUS_CHANGE_MODEL, rules.STATUS_CHANGE_SPELLINGS)
    ids = ids_of(body, "Ids", noun)
    target = body.get("Status")
    if target not in (DRAFT, QUEUED):
        raise refused("Bad Request", f"Status: must be 0 (draft) or 20 (queue and send) (got {target}).")
    settle(call)
    allowed_from = ERROR if target == DRAFT else DRAFT
    with locked(call.customer):
        docs = documents_of(call, kind, ids, what)
        wrong = [doc for doc in docs if doc.status != allowed_from]
        if wrong:
            raise refused("Status change refused", "; ".join(
                f"{noun.capitalize()} {doc.number} ({doc.key}) is {STATUS_NAMES.get(doc.status, doc.status)} "
                f"({doc.status})" for doc in wrong) + f": only {plural} "
                f"{'in error (40)' if target == DRAFT else 'in draft (0)'} can be set to {target}; no {noun} was "
                "changed.")
        for doc in docs:
            store(call, doc, target)


# --- incoming notes the sandbox makes up (control action, arrivals over time) ---------------------------------

def make_incoming(customer, created_list: list, sender_vkn: str = DEFAULT_SENDER, sender_title: str | None = None,
                  lines=DEFAULT_LINES, status: int = AWAITING) -> list[Document]:
    """One incoming note per moment of created_list (under the customer's lock), from the sender to the customer:
    a DespatchAdvice with these lines, numbered GLN + the year + a counter, issued when it was created."""
    title = sender_title or TITLES.get(sender_vkn) or "Gönderen Ticaret A.Ş."
    receiver = ubl.company_vkn(customer)
    years = [timezone.localtime(created).year for created in created_list]
    numbers = {year: iter(next_numbers(customer, INBOX_PREFIX, year, years.count(year), kind=INBOX,
                                       counter_kind=INBOX_COUNTER)) for year in set(years)}
    docs = []
    for created in created_list:
        local = timezone.localtime(created)
        number = next(numbers[local.year])
        key = str(uuid.uuid4())
        body = {
            "issueDate": local.date().isoformat(), "issueTime": local.strftime("%H:%M:%S"),
            "generalInfo": {"payableAmount": 100 * len(lines), "currencyCode": "TRY"},
            "addressBook": {"identificationNumber": receiver, "name": customer.name, "receiverCity": "İstanbul",
                            "receiverDistrict": "Kadıköy", "receiverCountry": "Türkiye"},
            "deliveryAddressInfo": {"district": "Kadıköy", "city": "İstanbul", "countryName": "Türkiye"},
            "despatchShipmentInfo": {"shipmentPlateNo": "34GLN001", "driverLines": [
                {"driverName": "Ali", "driverSurname": "Şahin", "driverTckn": "11111111111"}]},
            "despatchLines": [{"productName": line["name"], "amount": line["quantity"],
                               "unitCode": line.get("unit_code") or "C62"} for line in lines],
        }
        xml = ubl.despatch_xml(SimpleNamespace(key=key, number=number, data=body), customer,
                               sender=(sender_vkn, title))
        docs.append(Document(customer=customer, kind=INBOX, key=key, number=number, status=status, created=created,
                             blob=xml, data={**ubl.incoming_facts(ubl.parse_stored(xml)), "reply": None,
                                             "origin": None}))
    Document.objects.bulk_create(docs)
    return docs


def arrival_settings(customer) -> dict | None:
    doc = Document.objects.filter(customer=customer, kind=ARRIVAL, key="settings").first()
    return {**DEFAULT_ARRIVAL, **doc.data} if doc else None


def save_arrival(customer, changes: dict) -> dict:
    """Merge the arrival settings (the period counted from now when arrival_seconds is given); {} while unset."""
    current = arrival_settings(customer)
    if not changes:
        return {name: current[name] for name in DEFAULT_ARRIVAL} if current else {}
    merged = {**(current or DEFAULT_ARRIVAL), **changes}
    if "arrival_seconds" in changes:
        merged["since"] = now().isoformat()
    Document.objects.update_or_create(customer=customer, kind=ARRIVAL, key="settings", defaults={"data": merged})
    return {name: merged[name] for name in DEFAULT_ARRIVAL}


def _arrivals(customer, at) -> None:
    """One new note per elapsed arrival period since the last (at most MAX_ARRIVALS at once)."""
    settings = arrival_settings(customer)
    if not settings or float(settings["arrival_seconds"]) <= 0 or not settings.get("since"):
        return
    seconds = float(settings["arrival_seconds"])
    if int((at - moment(settings["since"])).total_seconds() // seconds) < 1:
        return
    with locked(customer):
        settings = arrival_settings(customer)  # again under the lock
        since = moment(settings["since"])
        periods = int((at - since).total_seconds() // seconds)
        if periods < 1:
            return
        count = min(periods, MAX_ARRIVALS)
        moments = [since + timedelta(seconds=seconds * step) for step in range(periods - count + 1, periods + 1)]
        lines = DEFAULT_LINES * (int(settings["arrival_lines"]) // len(DEFAULT_LINES) + 1)
        make_incoming(customer, moments, lines=lines[:int(settings["arrival_lines"])])
        since += timedelta(seconds=seconds * periods)
        Document.objects.filter(customer=customer, kind=ARRIVAL, key="settings").update(
            data={**settings, "since": since.isoformat()})
