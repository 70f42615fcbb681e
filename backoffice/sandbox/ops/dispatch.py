"""Dispatch-note service, outgoing notes (document 3, sections 2.9, 3.3 and 4.5; e-İrsaliye): create and update in
the JSON or the UBL form, the status change, the status with its envelope, the PDF, HTML, UBL and ZIP of a note,
the listing with isNew, the Excel exports and the dispatch taxpayer list. What a note's body must hold, its UBL and
its PDF and HTML are in dispatch_rules.py; the control actions (timing, forced statuses, seeding) in
dispatch_control.py. Everything is kept in the generic Document table.

Document kinds (customer-scoped):
  despatch_outbox          key the note's id (a GUID, lowercase), number despatchAdviceNumber, status; data the
                           body as bound (names as the model spells them) plus what the service derives:
                           "localReferenceId", "isNew", "target" {vknTckn, title, alias}, "issueDate",
                           "issueTime", "form" (json or ubl), "message", "envelope" {id, status, message} once
                           made, "sentDate" (when last queued), "machine" {attempt, approve_seconds, fails};
                           blob the uploaded XML of a UBL note (its cbc:ID set to the number); due_at the next
                           move of a note the platform works on.
  despatch_outbox_export   the Excel exports (exports.py).
  despatch_counter         key prefix + year; data {"last": the last counter issued}.
  despatch_settings        key "settings"; data {processing_seconds, approve_seconds, error_rate} (control action).

Choices where the documents say "not shown" (the back office's client is written against them):
- Paths are the defaults of backoffice/remote/endpoints.py (dispatch.outbox_*, dispatch.taxpayer_list), with the
  PDF and HTML also without the {isStandartXslt} segment (the facts file: public clients differ), which is the
  company's layout as isStandartXslt=false is.
- Refusals answer 400 {"title", "detail"} ("<field>: <message>; ..." for validation failures, every problem at
  once); an id the customer does not have 404; a body that does not fit the model 422 (dispatch_rules.bound).
  Query names are read whatever their letter case, as the body's.
- Numbers: the sender's (useManualDespatchAdviceId true: pattern, the issue date's year, used once by the
  customer) or the next of a series, prefix + the issue date's year + a 9-digit counter per customer, prefix and
  year (EIR unless the UBL form names a prefix of 3 of A-Z, 0-9; another is "No prefix found"), skipping numbers
  a sender took. An update with useManualDespatchAdviceId false keeps the note's number.
- UBL form: the note's id is the XML's cbc:UUID (a GUID the customer has not used; at an update the path's id);
  the receiver is the XML's DeliveryCustomerParty. targetAlias, when given, must be a mailbox of the receiver in
  the taxpayer list (or the generic alias for a receiver that is no user); it is required when the receiver has
  several. checkLocalReferenceId true refuses a localReferenceId another note of the customer has ("Duplicate").
- Update (either form) only in draft (0) or error (40); the body replaces the note (isNew kept unless given).
- Life (settled lazily on every operation of the service, as statuses.py does for tickets): 20 -> 50 after the
  customer's processing_seconds (the envelope made: 1000 "Zarf kuyruğa eklendi", document 3's only envelope
  status, kept as it is afterwards) -> after approve_seconds 60, or, for the customer's error_rate share, 40 with
  a message. The delays and the outcome are fixed when the note is queued; the share is decided by the id and the
  attempt, so a note sent again after an error may pass. Defaults: 2 s, 2 s, error share 0.
- The status answer and the list items leave the envelope members out while a note is 0, 20 or 40.
- Status change {Ids, Status}: 40 -> 0 (the message and envelope cleared) and 0 -> 20 only; all or none, the
  refusal naming every note refused. updateisnew {ids, isNew} answers null.
- List: the notes by creation (isDesc true newest first); localReferenceId and despatchNumber exact,
  status, isNew true / false, startDate and endDate on creation (endDate later than now: 400).
- Exports: startDate / endDate range over the send date (when the note was last queued; a note never sent
  matches no such range), issueStartDate / issueEndDate over the issue date, status any of the status list,
  isArchived true matches nothing (the sandbox archives nothing).
"""

import base64
import hashlib
import uuid
from datetime import timedelta
from types import SimpleNamespace

from django.db import transaction
from django.http import HttpResponse
from django.utils import timezone

from ..api import Call, operation
from ..models import Document
from . import exports
from . import dispatch_rules as rules
from .common import (
    BOOLEAN,
    INTEGER,
    STRING,
    Problems,
    array,
    blank,
    iso,
    lock,
    moment,
    now,
    page,
    paged_query,
    read_body,
    refused,
)
from .dispatch_rules import APPROVED, DELIVERED, DRAFT, ERROR, QUEUED, STATUS_NAMES, STATUSES

NOTE, COUNTER, SETTINGS = "despatch_outbox", "despatch_counter", "despatch_settings"
DEFAULT_SETTINGS = {"processing_seconds": 2.0, "approve_seconds": 2.0, "error_rate": 0.0}
ENVELOPE_QUEUED = (1000, "Zarf kuyruğa eklendi")  # document 3, 2.9: the envelope status sample
ERROR_MESSAGE = "İrsaliye GİB tarafından reddedildi: şematron kontrolünde hata bulundu (sandbox hata oranı)."
NO_ENVELOPE = (DRAFT, QUEUED, ERROR)  # statuses whose answers leave the envelope out
BASE, DOCUMENTS = "/v1/outboxdespatch", "/v2/outboxdespatch"


# --- settings, lookups, views --------------------------------------------------------------------------------

def dispatch_settings(customer) -> dict:
    doc = Document.objects.filter(customer=customer, kind=SETTINGS, key="settings").first()
    return {**DEFAULT_SETTINGS, **(doc.data if doc else {})}


def save_settings(customer, changes: dict, reset: bool = False) -> dict:
    merged = {**(DEFAULT_SETTINGS if reset else dispatch_settings(customer)), **changes}
    Document.objects.update_or_create(customer=customer, kind=SETTINGS, key="settings", defaults={"data": merged})
    return merged


def note_key(value: str) -> str:
    """A note's id as stored: GUIDs lowercase, whatever case the caller wrote them in."""
    return str(value).strip().lower()


def note_of(call: Call, note_id: str) -> Document:
    doc = Document.objects.filter(customer=call.customer, kind=NOTE, key=note_key(note_id)).first()
    if doc is None:
        raise refused("Not Found", f"No outgoing dispatch note with id {note_id}.", 404)
    return doc


def notes_of(call: Call, ids: list[str]) -> list[Document]:
    """The notes of these ids in the given order; 404 naming the unknown ones."""
    keys = [note_key(value) for value in ids]
    found = {doc.key: doc for doc in Document.objects.filter(customer=call.customer, kind=NOTE, key__in=keys)}
    missing = [value for value, key in zip(ids, keys) if key not in found]
    if missing:
        raise refused("Not Found", f"No outgoing dispatch note with id {', '.join(missing)}.", 404)
    return [found[key] for key in dict.fromkeys(keys)]


def name_of(doc: Document) -> str:
    return f"Note {doc.number} ({doc.key})"


def envelope_fields(doc: Document) -> dict:
    envelope = doc.data.get("envelope")
    if doc.status in NO_ENVELOPE or not envelope:
        return {}
    return {"envelopeId": envelope["id"], "envelopeStatus": envelope["status"], "envelopeMessage": envelope["message"]}


def status_view(doc: Document) -> dict:
    return {"id": doc.key, "despatchAdviceNumber": doc.number, "status": doc.status,
            "message": doc.data.get("message") or "", **envelope_fields(doc)}


def list_item(doc: Document) -> dict:
    data, envelope = doc.data, envelope_fields(doc)
    item = {"id": doc.key, "despatchAdviceNumber": doc.number, "status": doc.status,
            "message": data.get("message") or "", "localReferenceId": data.get("localReferenceId"),
            "isNew": data.get("isNew", True), "issueDate": data.get("issueDate"),
            "targetVknTckn": data["target"]["vknTckn"], "targetTitle": data["target"]["title"],
            "createdDate": iso(doc.created)}
    if envelope:
        item.update(envelopeId=envelope["envelopeId"], envelopeStatus=envelope["envelopeStatus"])
    return item


def today(call: Call):
    return timezone.localtime(now(call)).date()


def query_value(call: Call, name: str):
    """A query parameter whatever the letter case of its name."""
    lowered = name.lower()
    return next((value for key, value in call.query.items() if key.lower() == lowered), None)


# --- the life of a note ----------------------------------------------------------------------------------------

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


def advance(doc: Document, at) -> None:
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
            doc.data = {**doc.data, "message": ERROR_MESSAGE}
        elif doc.status == DELIVERED:
            doc.status, doc.due_at = APPROVED, None  # the envelope stays as it was made
        else:
            doc.due_at = None


def settle(call: Call) -> None:
    """Move the customer's notes whose time has come (lazily, on every operation of the service)."""
    at = now(call)
    due = Document.objects.filter(customer=call.customer, kind=NOTE, status__in=(QUEUED, DELIVERED), due_at__lte=at)
    if not due.exists():
        return
    with transaction.atomic():
        lock(call.customer)
        docs = list(due)  # again under the lock: a concurrent request may have moved them
        for doc in docs:
            advance(doc, at)
        Document.objects.bulk_update(docs, ["status", "data", "due_at"], batch_size=500)


# --- numbers ---------------------------------------------------------------------------------------------------

def next_numbers(customer, prefix: str, year: int, count: int = 1) -> list[str]:
    """The next numbers of the series (under the customer's lock), skipping numbers a sender took."""
    counter, _ = Document.objects.get_or_create(customer=customer, kind=COUNTER, key=f"{prefix}{year}",
                                                defaults={"data": {"last": 0}})
    last = counter.data.get("last", 0)
    taken = set(Document.objects.filter(customer=customer, kind=NOTE, number__gt=f"{prefix}{year}{last:09d}",
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


# --- create and update, JSON form ------------------------------------------------------------------------------

def _json_note(call: Call, note_id: str | None):
    body = rules.bound(read_body(call), rules.NOTE_MODEL)
    settle(call)
    existing = note_of(call, note_id) if note_id else None
    rules.note_problems(body, today(call)).raise_any()
    general, book = body.get("generalInfo") or {}, body["addressBook"]
    issue_day = rules.day(general["issueDate"])
    manual = body.get("useManualDespatchAdviceId") is True
    with transaction.atomic():
        lock(call.customer)
        if existing:
            existing = note_of(call, note_id)  # again under the lock
            updatable(existing)
        key = existing.key if existing else str(uuid.uuid4())
        if manual:
            number = rules.manual_number(general)
            check_unused(call, number, key, "generalInfo.despatchAdviceNumber")
        else:
            number = existing.number if existing else next_number(call.customer, rules.DEFAULT_PREFIX,
                                                                  issue_day.year)
        is_new = body.get("isNew")
        if is_new is None:
            is_new = existing.data.get("isNew", True) if existing else True
        data = {name: value for name, value in body.items() if name != "status"}
        data.update(
            form="json", localReferenceId=body.get("localReferenceId"), isNew=is_new,
            target={"vknTckn": book["identificationNumber"], "title": book["name"], "alias": book["alias"]},
            issueDate=issue_day.isoformat(),
            issueTime=general.get("issueTime") or timezone.localtime(now(call)).strftime("%H:%M:%S"),
            machine=existing.data.get("machine") if existing else None)
        doc = existing or Document(customer=call.customer, kind=NOTE, key=key, created=now(call))
        doc.number, doc.data, doc.blob = number, data, None
        save(call, doc, body.get("status") or DRAFT)
    return {"id": doc.key, "despatchAdviceNumber": doc.number, "status": doc.status,
            "localReferenceId": data["localReferenceId"]}


@operation("dispatch", "POST", BASE + "/create")
def create_json(call: Call):
    return _json_note(call, None)


@operation("dispatch", "PUT", BASE + "/create/{id}")
def update_json(call: Call, id):
    return _json_note(call, id)


# --- create and update, UBL form --------------------------------------------------------------------------------

def _prefix(body: dict, problems: Problems) -> str:
    prefix = body.get("prefix")
    if blank(prefix):
        return rules.DEFAULT_PREFIX
    if not rules.PREFIX_PATTERN.match(prefix):
        problems.add("prefix", f"No prefix found: '{prefix}' is no prefix of this customer (a prefix is 3 "
                               "characters of A-Z and 0-9).")
    return prefix


def _target_alias(body: dict, receiver: str, problems: Problems) -> str | None:
    """Document 3, 2.9: targetAlias is required when the receiver has several mailboxes; the generic alias for
    receivers that are no dispatch-note users."""
    alias, listed = body.get("targetAlias"), rules.ALIASES.get(receiver, [])
    if blank(alias):
        if len(listed) > 1:
            problems.add("targetAlias", f"{receiver} has several dispatch mailboxes ({', '.join(listed)}): name the "
                                        "one to send to.")
        return listed[0] if listed else rules.GENERIC_ALIAS
    reason = rules.alias_problem(receiver, alias)
    if reason:
        problems.add("targetAlias", reason)
    return alias


def _ubl_note(call: Call, note_id: str | None):
    body = rules.bound(read_body(call), rules.UBL_MODEL)
    settle(call)
    existing = note_of(call, note_id) if note_id else None
    problems = Problems()
    status = body.get("status")
    if status is not None and status not in (DRAFT, QUEUED):
        problems.add("status", f"status must be 0 (draft) or 20 (save and send) (got {status}).")
    manual = body.get("useManualDespatchAdviceId") is True
    prefix = rules.DEFAULT_PREFIX if manual or existing else _prefix(body, problems)
    upload = rules.read_upload(body.get("despatchAdviceZip"), problems)
    facts, alias = None, None
    if upload:
        facts = rules.upload_facts(upload[1], problems, today(call), manual)
        if existing and facts["uuid"] and facts["uuid"] != existing.key:
            problems.add("despatchAdviceZip", f"cbc:UUID {facts['uuid']} is not the id of the note updated "
                                              f"({existing.key}).")
        if facts["receiver"]["vknTckn"] and not rules.vkn_tckn_problem(facts["receiver"]["vknTckn"]):
            alias = _target_alias(body, facts["receiver"]["vknTckn"], problems)
    problems.raise_any()
    content, root = upload
    local_reference = body.get("localReferenceId")
    with transaction.atomic():
        lock(call.customer)
        if existing:
            existing = note_of(call, note_id)
            updatable(existing)
        elif Document.objects.filter(customer=call.customer, kind=NOTE, key=facts["uuid"]).exists():
            raise refused("Validation failed", f"despatchAdviceZip: cbc:UUID {facts['uuid']} is already the id of "
                                               "another note of this customer, a note's UUID is used once.")
        key = existing.key if existing else facts["uuid"]
        if body.get("checkLocalReferenceId") is True and not blank(local_reference):
            other = Document.objects.filter(customer=call.customer, kind=NOTE,
                                            data__localReferenceId=local_reference).exclude(key=key).first()
            if other is not None:
                raise refused("Duplicate", f"localReferenceId: {local_reference} is already the localReferenceId of "
                                           f"note {other.number} ({other.key}).")
        if manual:
            number = facts["number"]
            check_unused(call, number, key, "despatchAdviceZip: cbc:ID")
        else:
            number = existing.number if existing else next_number(call.customer, prefix,
                                                                  rules.day(facts["issueDate"]).year)
        data = {"form": "ubl", "localReferenceId": local_reference, "prefix": body.get("prefix"),
                "targetAlias": body.get("targetAlias"), "useManualDespatchAdviceId": manual,
                "isNew": existing.data.get("isNew", True) if existing else True,
                "target": {**facts["receiver"], "alias": alias}, "issueDate": facts["issueDate"],
                "issueTime": facts["issueTime"], "machine": existing.data.get("machine") if existing else None}
        doc = existing or Document(customer=call.customer, kind=NOTE, key=key, created=now(call))
        doc.number, doc.data = number, data
        doc.blob = content if number == facts["number"] else rules.with_number(root, number)
        save(call, doc, status or DRAFT)
    return {"Id": doc.key, "DespatchAdviceNumber": doc.number, "Status": doc.status,
            "LocalReferenceId": local_reference}


@operation("dispatch", "POST", BASE)
def create_ubl(call: Call):
    return _ubl_note(call, None)


# --- status change, isNew, status ----------------------------------------------------------------------------------

def _ids(body: dict, name: str = "ids") -> list[str]:
    ids = body.get(name)
    if not isinstance(ids, list) or not ids or not all(isinstance(item, str) and item.strip() for item in ids):
        raise refused("Bad Request", f"{name}: must be a non-empty array of note ids.")
    return ids


@operation("dispatch", "PUT", DOCUMENTS + "/updatestatuslist")
def change_status(call: Call):
    """Document 3, 3.3: 40 -> 0 and 0 -> 20 only, all of the notes or none."""
    body = rules.bound(read_body(call), {"ids": array(STRING), "status": INTEGER})
    ids = _ids(body, "ids")
    target = body.get("status")
    if target not in (DRAFT, QUEUED):
        raise refused("Bad Request", f"Status: must be 0 (draft) or 20 (queue and send) (got {target}).")
    settle(call)
    allowed_from = ERROR if target == DRAFT else DRAFT
    with transaction.atomic():
        lock(call.customer)
        docs = notes_of(call, ids)
        wrong = [doc for doc in docs if doc.status != allowed_from]
        if wrong:
            raise refused("Status change refused", "; ".join(
                f"{name_of(doc)} is {STATUS_NAMES.get(doc.status, doc.status)} ({doc.status})" for doc in wrong) +
                f": only notes {'in error (40)' if target == DRAFT else 'in draft (0)'} can be set to {target}; "
                "no note was changed.")
        for doc in docs:
            save(call, doc, target)
    return None


@operation("dispatch", "PUT", BASE + "/updateisnew")
def update_is_new(call: Call):
    """isNew false: the notes no longer match isNew=true in the list (document 3, 2.9)."""
    body = rules.bound(read_body(call), {"ids": array(STRING), "isNew": BOOLEAN})
    ids = _ids(body)
    if not isinstance(body.get("isNew"), bool):
        raise refused("Bad Request", "isNew: must be true or false.")
    settle(call)
    with transaction.atomic():
        lock(call.customer)
        docs = notes_of(call, ids)
        for doc in docs:
            doc.data = {**doc.data, "isNew": body["isNew"]}
        Document.objects.bulk_update(docs, ["data"], batch_size=500)
    return None


@operation("dispatch", "PUT", BASE + "/{id}")
def update_ubl(call: Call, id):
    return _ubl_note(call, id)


@operation("dispatch", "GET", DOCUMENTS + "/{id}/status")
def status(call: Call, id):
    settle(call)
    return status_view(note_of(call, id))


# --- documents: {"Response": base64 of the file} -------------------------------------------------------------------

def _xml(call: Call, doc: Document) -> bytes:
    return bytes(doc.blob) if doc.data.get("form") == "ubl" else rules.despatch_xml(doc, call.customer)


def _wrapped(content: bytes) -> dict:
    return {"Response": base64.b64encode(content).decode("ascii")}


def _standard(value) -> bool:
    """isStandartXslt: true or false in any case; missing is the company's layout."""
    if value is None:
        return False
    if value.lower() not in ("true", "false"):
        raise refused("Bad Request", f"isStandartXslt: must be true or false (got '{value}').")
    return value.lower() == "true"


def _drawn(call: Call, id, isStandartXslt, draw) -> dict:
    standard = _standard(isStandartXslt)
    settle(call)
    doc = note_of(call, id)
    layout = rules.layout_of(standard, doc.data.get("xsltCode"))
    return draw(rules.parse_stored(_xml(call, doc)), doc.status, layout)


def pdf(call: Call, id, isStandartXslt=None):
    return _wrapped(_drawn(call, id, isStandartXslt, rules.pdf))


def html(call: Call, id, isStandartXslt=None):
    return _wrapped(_drawn(call, id, isStandartXslt, rules.html).encode("utf-8"))


for _suffix in ("", "/{isStandartXslt}"):
    operation("dispatch", "GET", DOCUMENTS + "/{id}/pdf" + _suffix)(pdf)
    operation("dispatch", "GET", DOCUMENTS + "/{id}/html" + _suffix)(html)


@operation("dispatch", "GET", DOCUMENTS + "/{id}/ubl")
def ubl(call: Call, id):
    settle(call)
    return _wrapped(_xml(call, note_of(call, id)))


@operation("dispatch", "GET", DOCUMENTS + "/{id}/zip")
def zipped(call: Call, id):
    settle(call)
    doc = note_of(call, id)
    return _wrapped(exports.archive({f"{doc.number}.xml": _xml(call, doc)}))


# --- the list ------------------------------------------------------------------------------------------------------

@operation("dispatch", "GET", BASE + "/list")
def note_list(call: Call):
    settle(call)
    paging = SimpleNamespace(query={name: query_value(call, name) for name in ("pageIndex", "pageSize")})
    page_index, page_size = page(paging)
    notes = Document.objects.filter(customer=call.customer, kind=NOTE).defer("blob")
    problems = Problems()
    for name, lookup in (("localReferenceId", "data__localReferenceId"), ("despatchNumber", "number")):
        value = query_value(call, name)
        if not blank(value):
            notes = notes.filter(**{lookup: value.strip()})
    raw_status = query_value(call, "status")
    if not blank(raw_status):
        if raw_status.strip().lstrip("-").isdigit():
            notes = notes.filter(status=int(raw_status))
        else:
            problems.add("status", f"The value '{raw_status}' is not a status number.")
    for name, flag in (("isNew", "data__isNew"), ("isDesc", None)):
        value = query_value(call, name)
        if not blank(value) and value.strip().lower() not in ("true", "false"):
            problems.add(name, f"{name} must be true or false (got '{value}').")
        elif flag and not blank(value):
            notes = notes.filter(**{flag: value.strip().lower() == "true"})
    for name, lookup in (("startDate", "created__gte"), ("endDate", "created__lte")):
        value = query_value(call, name)
        if blank(value):
            continue
        parsed = moment(value)
        if parsed is None:
            problems.add(name, f"The value '{value}' of {name} is not a date and time yyyy-MM-dd HH:mm:ss.")
        elif name == "endDate" and parsed > now(call):
            problems.add(name, f"endDate ({value}) must not be later than now.")
        else:
            notes = notes.filter(**{lookup: parsed})
    problems.raise_any()
    descending = (query_value(call, "isDesc") or "").strip().lower() == "true"
    notes = notes.order_by(*(("-created", "-pk") if descending else ("created", "pk")))
    return paged_query(notes, page_index, page_size, list_item)


# --- Excel exports -------------------------------------------------------------------------------------------------

EXPORT_MODEL = {"ids": array(STRING), "status": INTEGER, "isArchived": BOOLEAN, "startDate": STRING,
                "endDate": STRING, "issueStartDate": STRING, "issueEndDate": STRING, "targetVknTckn": STRING}
EXPORT_COLUMNS = (
    ("ETTN", lambda doc: doc.key), ("İrsaliye No", lambda doc: doc.number), ("Durum", lambda doc: doc.status),
    ("Durum Açıklaması", lambda doc: rules.TURKISH_STATUS_NAMES.get(doc.status, "")),
    ("İrsaliye Tarihi", lambda doc: doc.data.get("issueDate")),
    ("Gönderim Tarihi", lambda doc: doc.data.get("sentDate")), ("Oluşturma Tarihi", lambda doc: iso(doc.created)),
    ("Alıcı VKN/TCKN", lambda doc: doc.data["target"]["vknTckn"]),
    ("Alıcı Unvanı", lambda doc: doc.data["target"]["title"]),
    ("Yerel Referans", lambda doc: doc.data.get("localReferenceId")), ("Mesaj", lambda doc: doc.data.get("message")),
)
FILE_STEM = "giden-irsaliyeler"


def _export_filters(body) -> dict:
    body = rules.bound(exports.filter_body(body), EXPORT_MODEL)
    problems = Problems()
    filters = {}
    exports.ids_filter(body, problems, filters, "note")
    if body.get("status") is not None:
        if body["status"] not in STATUSES:
            problems.add("status", f"status must be one of {', '.join(map(str, STATUSES))}.")
        else:
            filters["status"] = body["status"]
    filters["isArchived"] = body.get("isArchived") is True
    for name in ("startDate", "issueStartDate"):
        exports.date_filter(body, name, problems, filters, end=False)
    for name in ("endDate", "issueEndDate"):
        exports.date_filter(body, name, problems, filters, end=True)
    if not blank(body.get("targetVknTckn")):
        filters["targetVknTckn"] = body["targetVknTckn"].strip()
    problems.raise_any()
    return filters


def _exported(call: Call, filters: dict) -> list[Document]:
    if filters["isArchived"]:
        return []  # the sandbox archives nothing
    notes = Document.objects.filter(customer=call.customer, kind=NOTE).defer("blob").order_by("created", "pk")
    if filters.get("ids"):
        notes = notes.filter(key__in=[note_key(value) for value in filters["ids"]])
    if "status" in filters:
        notes = notes.filter(status=filters["status"])
    if "targetVknTckn" in filters:
        notes = notes.filter(data__target__vknTckn=filters["targetVknTckn"])
    chosen = []
    for doc in notes.iterator(chunk_size=1000):
        sent, issued = moment(doc.data.get("sentDate")), moment(doc.data.get("issueDate"))
        if exports.within(sent, filters.get("startDate"), filters.get("endDate")) and \
                exports.within(issued, filters.get("issueStartDate"), filters.get("issueEndDate")):
            chosen.append(doc)
    return chosen


@operation("dispatch", "POST", BASE + "/export")
def export_start(call: Call):
    filters = _export_filters(read_body(call))
    settle(call)

    def build():
        docs = _exported(call, filters)
        rows = [[name for name, _ in EXPORT_COLUMNS]] + [[column(doc) for _, column in EXPORT_COLUMNS] for doc in docs]
        return exports.archive({f"{FILE_STEM}.xlsx": exports.xlsx({"İrsaliyeler": rows})}), len(docs)

    return exports.start(call, NOTE, FILE_STEM, filters, build)


@operation("dispatch", "GET", BASE + "/export/history")
def export_history(call: Call):
    return exports.history(call, NOTE)


@operation("dispatch", "GET", BASE + "/export/{exportId}/download")
def export_download(call: Call, exportId):
    return exports.download(call, NOTE, exportId)


# --- the dispatch taxpayer list ------------------------------------------------------------------------------------

@operation("dispatch", "GET", "/v1/gibuser/recipient/zip")
def taxpayer_list(call: Call):
    """The ZIP itself (not wrapped), as the invoice service's taxpayer list is answered."""
    response = HttpResponse(rules.taxpayer_zip(), content_type="application/zip")
    response["Content-Disposition"] = 'attachment; filename="users.zip"'
    return response
