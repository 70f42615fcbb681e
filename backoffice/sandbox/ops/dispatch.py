"""Dispatch-note service (document 3, sections 2.9, 3.3 and 4.5; e-İrsaliye): what its modules share. The
operations are in dispatch_outbox.py (outgoing notes), dispatch_exports.py (the Excel exports of outgoing and
incoming notes), dispatch_inbox.py (incoming notes), dispatch_replies.py (replies to incoming notes),
dispatch_receipts.py (replies received to outgoing notes) and dispatch_directory.py (the taxpayer list); the life
of notes and replies, their delivery between sandbox customers and the arrivals in dispatch_life.py; the JSON body
rules in dispatch_rules.py, the DespatchAdvice UBL, PDF and HTML in dispatch_ubl.py, the ReceiptAdvice in
dispatch_receipt_ubl.py; the control actions (timing, forced statuses, seeding, incoming notes) in
dispatch_control.py and dispatch_control_inbox.py. Everything is kept in the generic Document table.

Document kinds (customer-scoped):
  despatch_outbox          key the note's id (a GUID, lowercase), number despatchAdviceNumber, status; data the
                           body as bound (names as the model spells them) plus what the service derives:
                           "localReferenceId", "isNew", "target" {vknTckn, title, alias}, "issueDate",
                           "issueTime", "form" (json or ubl), "message", "envelope" {id, status, message} once
                           made, "sentDate" (when last queued), "machine" {attempt, approve_seconds, fails},
                           "delivered" {customer, key} once a copy reached a sandbox customer's inbox, "receipt"
                           {id, number, kind} once its reply came back; blob the uploaded XML of a UBL note (its
                           cbc:ID set to the number); due_at the next move of a note the platform works on.
  despatch_outbox_export   the Excel exports of outgoing notes (exports.py).
  despatch_counter         key prefix + year; data {"last": the last counter issued} (outgoing notes).
  despatch_settings        key "settings"; data {processing_seconds, approve_seconds, error_rate} (control action),
                           which time the customer's notes and replies alike.
  despatch_arrival         key "settings"; data {arrival_seconds, arrival_lines, since}: incoming notes arriving
                           over time (control action; "since" the moment the next period is counted from).
  despatch_inbox           an incoming note: key its id (the sender's GUID), number despatchNumber, status (70,
                           61/62/60, 81/82/80, 91/92/90, 65); data "sender" {vknTckn, title}, "issueDate",
                           "issueTime", "profile", "lines" [{id, quantity, unitCode, name}], "payableAmount",
                           "currencyCode", "reply" {id, number} once answered, "origin" {customer, key} when a
                           sandbox customer sent it; blob the DespatchAdvice XML.
  despatch_inbox_counter   key prefix + year: the series of the notes the sandbox makes up (GLN).
  despatch_inbox_export    the Excel exports of incoming notes.
  despatch_reply           a reply (ReceiptAdvice) to an incoming note: key its id (the XML's cbc:UUID), number
                           receiptAdviceNumber, status (0, 20, 40, 50, 60); data "noteId", "noteNumber", "kind"
                           (accept, reject, partial), "form" (ubl or platform), "useManual", "sender" (the note's
                           sender), "origin" (the note's), "message", "envelope", "sentDate", "machine" as a
                           note's; blob the ReceiptAdvice XML; due_at as a note's.
  despatch_reply_counter   key prefix + year: the reply series.
  despatch_receipt         a reply received to one of the customer's outgoing notes: key the reply's id, number
                           its number, status 60, created when it came back; data "despatchId", "despatchNumber",
                           "senderVknTckn", "senderTitle" (who answered), "kind"; blob the ReceiptAdvice XML.
  despatch_transit         key "note:<id>" or "reply:<id>": a note or reply of another customer on its way to
                           this one; data {customer, kind, key}; due_at when to look at it again (so the
                           receiver's own calls settle it, whoever calls first).

Choices where the documents say "not shown" (the back office's client is written against them; the incoming
notes and replies follow the wire contract of issue 16):
- Paths are the defaults of backoffice/remote/endpoints.py (dispatch.outbox_*, dispatch.inbox_*, dispatch.reply_*,
  dispatch.receipt_*, dispatch.taxpayer_list), with the PDF and HTML also without the {isStandartXslt} segment (the
  facts file: public clients differ), which is the company's layout as isStandartXslt=false is.
- Refusals answer 400 {"title", "detail"} ("<field>: <message>; ..." for validation failures, every problem at
  once); an id the customer does not have 404; a body that does not fit the model 422 (common.bound).
  Query and body names are read only as document 3 spells them (issue 28); a known name in another letter case
  is refused (400 for a query, 422 for a body), other unknown query names are ignored.
- Numbers: the sender's (useManualDespatchAdviceId true: pattern, the issue date's year, used once by the
  customer) or the next of a series, prefix + the issue date's year + a 9-digit counter per customer, prefix and
  year (EIR unless the UBL form names a prefix defined for the customer), skipping numbers a sender took. A prefix
  not defined (the settings' prefixes; by default every 3 of A-Z, 0-9 is) is document 3's warning, not a
  refusal: the note takes the next number of the default series and the UBL answer adds Message "No prefix
  found: ..." (the facts file: create answers carry a message). An update with useManualDespatchAdviceId false
  keeps the note's number. Replies alike (IRY by default, the year of the reply's issue date); the sandbox's
  made-up incoming notes are numbered GLN.
- UBL form: the note's id is the XML's cbc:UUID (a GUID the customer has not used; at an update the path's id);
  the receiver is the XML's DeliveryCustomerParty. targetAlias, when given, must be a mailbox of the receiver in
  the taxpayer list (or the generic alias for a receiver that is no user); it is required when the receiver has
  several. checkLocalReferenceId true refuses a localReferenceId another note of the customer has ("Duplicate").
- Update (either form) only in draft (0) or error (40); the body replaces the note (isNew kept unless given).
- Life (settled lazily on every operation of the service, as statuses.py does for tickets): 20 -> 50 after the
  customer's processing_seconds (the envelope made: 1000 "Zarf kuyruğa eklendi", document 3's only envelope
  status, kept as it is afterwards) -> after approve_seconds 60, or, for the customer's error_rate share, 40 with
  a message. The delays and the outcome are fixed when the note is queued; the share is decided by the id and the
  attempt, so a note sent again after an error may pass. Defaults: 2 s, 2 s, error share 0. Replies live the same
  life, and move their note (70 -> 61/81/91 -> 60/80/90, or 62/82/92 on error; a draft reply keeps it in 61).
- A note that reaches 60 addressed to another sandbox customer's VKN (dispatch_ubl.company_vkn) arrives in that
  customer's inbox (status 70); a reply to it that reaches 60 comes back to the sender's receipt list and moves
  the sender's note to 80 (rejection) or 90 (partial acceptance). Whichever customer calls first settles both.
- The status answer and the list items leave the envelope members out while a note is 0, 20 or 40.
- Status change {Ids, Status}: 40 -> 0 (the message and envelope cleared) and 0 -> 20 only; all or none, the
  refusal naming every note refused. updateisnew {ids, isNew} answers null.
- List: the notes by creation (isDesc true newest first); localReferenceId and despatchNumber exact,
  status, isNew true / false, startDate and endDate on creation (endDate later than now: 400).
- Exports: startDate / endDate range over the send date (when the note was last queued; a note never sent
  matches no such range; an incoming note's creation), issueStartDate / issueEndDate over the issue date, status
  any of the status list, isArchived true matches nothing (the sandbox archives nothing).
"""

import hashlib
import uuid
from datetime import timedelta, timezone as dt_timezone

from django.utils import timezone

from ..api import Call
from ..models import Customer, Document
from . import dispatch_ubl as ubl
from .common import Problems, blank, found, iso, moment, now, page, paged_query, refused
from .dispatch_directory import TITLES
from .dispatch_rules import APPROVED, DELIVERED, DRAFT, ERROR, QUEUED, STATUS_NAMES

NOTE, COUNTER, SETTINGS = "despatch_outbox", "despatch_counter", "despatch_settings"
INBOX, INBOX_COUNTER, ARRIVAL = "despatch_inbox", "despatch_inbox_counter", "despatch_arrival"
REPLY, REPLY_COUNTER = "despatch_reply", "despatch_reply_counter"
RECEIPT, TRANSIT = "despatch_receipt", "despatch_transit"
# list_names_replies: the incoming list names each note's reply (receiptAdviceId, receiptNumber); upper_case_ids:
# status answers write ids in capitals. Both are shapes document 3 does not show, so a client must cope either way.
# prefixes: those defined for the customer's outgoing notes (None: every well-formed one; see dispatch_outbox).
DEFAULT_SETTINGS = {"processing_seconds": 2.0, "approve_seconds": 2.0, "error_rate": 0.0, "list_names_replies": True,
                    "upper_case_ids": False, "prefixes": None}
DEFAULT_ARRIVAL = {"arrival_seconds": 0.0, "arrival_lines": 3}
ENVELOPE_QUEUED = (1000, "Zarf kuyruğa eklendi")  # document 3, 2.9: the envelope status sample
ERROR_MESSAGE = "İrsaliye GİB tarafından reddedildi: şematron kontrolünde hata bulundu (sandbox hata oranı)."
REPLY_ERROR_MESSAGE = ("İrsaliye yanıtı GİB tarafından reddedildi: şematron kontrolünde hata bulundu (sandbox hata "
                       "oranı).")
NO_ENVELOPE = (DRAFT, QUEUED, ERROR)  # statuses whose answers leave the envelope out
BASE, DOCUMENTS = "/v1/outboxdespatch", "/v2/outboxdespatch"


# --- settings ----------------------------------------------------------------------------------------------------

def dispatch_settings(customer) -> dict:
    doc = Document.objects.filter(customer=customer, kind=SETTINGS, key="settings").first()
    return {**DEFAULT_SETTINGS, **(doc.data if doc else {})}


def save_settings(customer, changes: dict, reset: bool = False) -> dict:
    merged = {**(DEFAULT_SETTINGS if reset else dispatch_settings(customer)), **changes}
    Document.objects.update_or_create(customer=customer, kind=SETTINGS, key="settings", defaults={"data": merged})
    return merged


# --- lookups and helpers of every operation ----------------------------------------------------------------------

def id_text(call: Call, key: str) -> str:
    """An id as a status answer writes it (the customer's upper_case_ids setting)."""
    return key.upper() if dispatch_settings(call.customer).get("upper_case_ids") else key


def note_key(value: str) -> str:
    """A note's (or reply's) id as stored: GUIDs lowercase, whatever case the caller wrote them in."""
    return str(value).strip().lower()


def document_of(call: Call, kind: str, doc_id: str, what: str) -> Document:
    """The customer's note (or reply) of this id; 404 naming what it is looked for as."""
    return found(Document.objects.filter(customer=call.customer, kind=kind, key=note_key(doc_id)),
                 f"No {what} with id {doc_id}.")


def documents_of(call: Call, kind: str, ids: list[str], what: str) -> list[Document]:
    """The customer's notes (or replies) of these ids in the given order; 404 naming the unknown ones."""
    keys = [note_key(value) for value in ids]
    found = {doc.key: doc for doc in Document.objects.filter(customer=call.customer, kind=kind, key__in=keys)}
    missing = [value for value, key in zip(ids, keys) if key not in found]
    if missing:
        raise refused("Not Found", f"No {what} with id {', '.join(missing)}.", 404)
    return [found[key] for key in dict.fromkeys(keys)]


def ids_of(body: dict, name: str, noun: str) -> list[str]:
    """The non-empty array of ids the body gives under this name."""
    ids = body.get(name)
    if not isinstance(ids, list) or not ids or not all(isinstance(item, str) and item.strip() for item in ids):
        raise refused("Bad Request", f"{name}: must be a non-empty array of {noun} ids.")
    return ids


def note_of(call: Call, note_id: str) -> Document:
    return document_of(call, NOTE, note_id, "outgoing dispatch note")


def name_of(doc: Document) -> str:
    return f"Note {doc.number} ({doc.key})"


def today(call: Call):
    return timezone.localtime(now(call)).date()


def spelled_query(call: Call, names) -> None:
    """400 for a query parameter that is one of the operation's names in another letter case: ignored, it would
    leave the list unfiltered without a word (issue 28: names are read only as document 3 spells them)."""
    lowered = {name.lower(): name for name in names}
    problems = [f"{key}: unknown query parameter; this operation spells it {lowered[key.lower()]} (names are "
                "case-sensitive)." for key in call.query if key not in names and key.lower() in lowered]
    if problems:
        raise refused("Validation failed", "; ".join(problems))


def listed(call: Call, rows, filters: tuple, item, flags: tuple = ()):
    """One page of rows (the customer's outgoing or incoming notes, or receipts) filtered by the query as the
    platform's lists are: exact filters and true / false flags (query name, lookup), status, startDate / endDate on
    creation (endDate not later than now), isDesc by creation. Names as document 3 (4.5) spells them."""
    spelled_query(call, ("pageIndex", "pageSize", "status", "isDesc", "startDate", "endDate",
                         *(name for name, _lookup in filters + flags)))
    page_index, page_size = page(call)
    problems = Problems()
    for name, lookup in filters:
        value = call.query.get(name)
        if not blank(value):
            rows = rows.filter(**{lookup: value.strip()})
    raw_status = call.query.get("status")
    if not blank(raw_status):
        if raw_status.strip().lstrip("-").isdigit():
            rows = rows.filter(status=int(raw_status))
        else:
            problems.add("status", f"The value '{raw_status}' is not a status number.")
    for name, lookup in (*flags, ("isDesc", None)):
        value = call.query.get(name)
        if not blank(value) and value.strip().lower() not in ("true", "false"):
            problems.add(name, f"{name} must be true or false (got '{value}').")
        elif lookup and not blank(value):
            rows = rows.filter(**{lookup: value.strip().lower() == "true"})
    for name, lookup in (("startDate", "created__gte"), ("endDate", "created__lte")):
        value = call.query.get(name)
        if blank(value):
            continue
        parsed = moment(value)
        if parsed is None:
            problems.add(name, f"The value '{value}' of {name} is not a date and time yyyy-MM-dd HH:mm:ss.")
        elif name == "endDate" and parsed > now(call):
            problems.add(name, f"endDate ({value}) must not be later than now.")
        else:
            rows = rows.filter(**{lookup: parsed})
    problems.raise_any()
    descending = (call.query.get("isDesc") or "").strip().lower() == "true"
    rows = rows.order_by(*(("-created", "-pk") if descending else ("created", "pk")))
    return paged_query(rows, page_index, page_size, item)


def utc(moment) -> str | None:
    """An ISO moment in UTC with "Z" (the incoming notes' and receipts' createdDate)."""
    if moment is None:
        return None
    return moment.astimezone(dt_timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def standard(value) -> bool:
    """isStandartXslt: true or false in any case; missing is the company's layout."""
    if value is None:
        return False
    if value.lower() not in ("true", "false"):
        raise refused("Bad Request", f"isStandartXslt: must be true or false (got '{value}').")
    return value.lower() == "true"


def envelope_fields(doc: Document) -> dict:
    envelope = doc.data.get("envelope")
    if doc.status in NO_ENVELOPE or not envelope:
        return {}
    return {"envelopeId": envelope["id"], "envelopeStatus": envelope["status"], "envelopeMessage": envelope["message"]}


# --- the sandbox's customers as one another's partners -----------------------------------------------------------

_VKNS: dict[str, str] = {}  # customerUniqueId -> company VKN (a hash: worth remembering)


def customer_by_vkn(identifier) -> Customer | None:
    """The sandbox customer whose own VKN this is (None for the taxpayer list's users and everyone else)."""
    if not isinstance(identifier, str) or len(identifier) != 10 or identifier in TITLES:
        return None
    for customer in Customer.objects.only("pk", "customer_unique_id", "name"):
        unique = str(customer.customer_unique_id)
        if unique not in _VKNS:
            _VKNS[unique] = ubl.company_vkn(customer)
        if _VKNS[unique] == identifier:
            return customer
    return None


def partner_of(doc: Document) -> int | None:
    """The pk of the sandbox customer an outgoing note or a reply goes to, if it goes to one."""
    if doc.kind == NOTE:
        partner = customer_by_vkn((doc.data.get("target") or {}).get("vknTckn"))
        return partner.pk if partner else None
    return (doc.data.get("origin") or {}).get("customer")


def announce(doc: Document) -> None:
    """Tell the partner a note or reply is on its way, so that the partner's own calls settle it too."""
    partner = partner_of(doc)
    if partner is None or partner == doc.customer_id:
        return
    Document.objects.update_or_create(
        customer_id=partner, kind=TRANSIT, key=f"{'note' if doc.kind == NOTE else 'reply'}:{doc.key}",
        defaults={"due_at": doc.due_at, "data": {"customer": doc.customer_id, "kind": doc.kind, "key": doc.key}})


# --- the life of a note or a reply -------------------------------------------------------------------------------

def fails(key: str, attempt: int, rate: float) -> bool:
    """Whether this sending of the note ends in error: the customer's share, decided by the id and the attempt."""
    if rate <= 0:
        return False
    if rate >= 1:
        return True
    digest = hashlib.sha256(f"{key}:{attempt}".encode()).digest()
    return int.from_bytes(digest[:4], "big") % 10_000 < rate * 10_000


def queue(doc: Document, at, settings: dict) -> None:
    """Put the note in 20 and fix its life: 50 after processing_seconds, then 60 or 40 after approve_seconds."""
    attempt = (doc.data.get("machine") or {}).get("attempt", 0) + 1
    doc.status, doc.due_at = QUEUED, at + timedelta(seconds=float(settings["processing_seconds"]))
    doc.data = {**doc.data, "message": "", "envelope": None, "sentDate": iso(at),
                "machine": {"attempt": attempt, "approve_seconds": float(settings["approve_seconds"]),
                            "fails": fails(doc.key, attempt, float(settings["error_rate"]))}}
    announce(doc)


def advance(doc: Document, at, error_message: str = ERROR_MESSAGE) -> None:
    """Every move of the note's life that is due at `at`."""
    while doc.due_at is not None and doc.due_at <= at:
        machine = doc.data.get("machine") or {}
        if doc.status == QUEUED:
            status, message = ENVELOPE_QUEUED
            doc.status = DELIVERED
            doc.data = {**doc.data, "envelope": {"id": str(uuid.uuid4()), "status": status, "message": message}}
            doc.due_at += timedelta(seconds=float(machine.get("approve_seconds", DEFAULT_SETTINGS["approve_seconds"])))
        elif doc.status == DELIVERED and machine.get("fails"):
            doc.status, doc.due_at = ERROR, None
            doc.data = {**doc.data, "message": error_message}
        elif doc.status == DELIVERED:
            doc.status, doc.due_at = APPROVED, None  # the envelope stays as it was made
        else:
            doc.due_at = None


# --- numbers -----------------------------------------------------------------------------------------------------

def next_numbers(customer, prefix: str, year: int, count: int = 1, kind: str = NOTE,
                 counter_kind: str = COUNTER) -> list[str]:
    """The next numbers of the series (under the customer's lock), skipping numbers a sender took."""
    counter, _ = Document.objects.get_or_create(customer=customer, kind=counter_kind, key=f"{prefix}{year}",
                                                defaults={"data": {"last": 0}})
    last = counter.data.get("last", 0)
    taken = set(Document.objects.filter(customer=customer, kind=kind, number__gt=f"{prefix}{year}{last:09d}",
                                        number__startswith=f"{prefix}{year}").values_list("number", flat=True))
    numbers = []
    while len(numbers) < count:
        last += 1
        number = f"{prefix}{year}{last:09d}"
        if number not in taken:
            numbers.append(number)
    counter.data = {"last": last}
    counter.save(update_fields=["data"])
    return numbers


def next_number(customer, prefix: str, year: int) -> str:
    return next_numbers(customer, prefix, year)[0]


def check_unused(call: Call, number: str, key: str | None, where: str) -> None:
    other = Document.objects.filter(customer=call.customer, kind=NOTE, number=number).exclude(key=key or "").first()
    if other is not None:
        raise refused("Validation failed", f"{where}: {number} already exists: note {other.key} has it, a dispatch "
                                           "note number is used once.")


def updatable(doc: Document) -> None:
    """Document 3, 3.3: a note is changed only in draft (0) or error (40)."""
    if doc.status not in (DRAFT, ERROR):
        raise refused("Update refused", f"{name_of(doc)} is {STATUS_NAMES.get(doc.status, doc.status)} "
                                        f"({doc.status}); only notes in draft (0) or error (40) can be updated.")


def save(call: Call, doc: Document, status: int) -> None:
    """Store the note in its new status (queued: its life fixed now)."""
    at = now(call)
    if status == QUEUED:
        queue(doc, at, dispatch_settings(call.customer))
    else:
        doc.status, doc.due_at = DRAFT, None
        doc.data = {**doc.data, "message": "", "envelope": None}
    doc.save()
