"""Dispatch-note service, replies to incoming notes (document 3, 2.9, 3.3 and 4.5; the contract of issue 16): a
reply uploaded as UBL (post and put), the status change, the status with its envelope and the UBL, PDF, HTML and
ZIP of a reply. The replies the platform writes itself (partial accept, approve / reject) are in
dispatch_answers.py; a reply's life in dispatch_life.py.

Choices where the documents say "not shown" (besides dispatch.py's):
- A reply's kind is decided by its lines: every line of the note with no rejected quantity is an acceptance,
  every line received 0 a rejection, anything else a partial acceptance; a note line no ReceiptLine names counts
  as wholly received. ReceiptLine[n] in refusals counts the XML's ReceiptLine elements from 1, as XPath does.
- The note answered is the customer's incoming note whose number is cac:DespatchDocumentReference/cbc:ID (among
  several of that number, the one whose sender is the reply's DespatchSupplierParty).
- cbc:ReceivedQuantity is required in every ReceiptLine; cbc:RejectedQuantity is 0 when missing.
- A note takes one reply: a new one only while the note awaits an answer (70); the reply it has is changed by
  put (in 0 or 40) and the status change (40 -> 0, 0 -> 20), all or none.
"""

import re


from ..api import Call, operation
from ..models import Document
from . import dispatch_receipt_ubl as receipt_ubl
from . import dispatch_ubl as ubl
from . import dispatch_rules as rules
from .common import BOOLEAN, INTEGER, STRING, Problems, blank, bound, decimal, locked, now, read_body, refused
from .dispatch import INBOX, REPLY, REPLY_COUNTER, document_of, envelope_fields, id_text, next_numbers, today
from .dispatch_drawings import drawn_documents
from .dispatch_life import AWAITING, move_note, queue_reply, settle, status_change
from .dispatch_rules import DRAFT, ERROR, QUEUED, STATUS_NAMES

BASE, DOCUMENTS = "/v1/outboxreceiptadvice", "/v2/outboxreceiptadvice"
REPLY_MODEL = {"ReceiptAdvice": STRING, "Prefix": STRING, "UseManualReceiptAdviceId": BOOLEAN, "Status": INTEGER}
DEFAULT_REPLY_PREFIX = "IRY"
GUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


# --- lookups and rules every reply keeps --------------------------------------------------------------------------

def reply_of(call: Call, reply_id: str) -> Document:
    return document_of(call, REPLY, reply_id, "dispatch reply")


def reply_name(doc: Document) -> str:
    return f"Reply {doc.number} ({doc.key})"


def not_awaiting(note: Document) -> str | None:
    """Why the note takes no new reply (None when it awaits one)."""
    if note.status == AWAITING:
        return None
    return f"the note is not awaiting an answer (status {note.status})"


def prefix_of(value, problems: Problems, field: str, default: str | None = DEFAULT_REPLY_PREFIX) -> str:
    if blank(value):
        if default is None:
            problems.add(field, f"{field} is required: a prefix of 3 characters of A-Z and 0-9.")
        return default or ""
    if not rules.PREFIX_PATTERN.match(value):
        problems.add(field, f"No prefix found: '{value}' is no prefix of this customer (a prefix is 3 characters of "
                            "A-Z and 0-9).")
    return value


def reply_number(customer, prefix: str, year: int) -> str:
    return next_numbers(customer, prefix, year, kind=REPLY, counter_kind=REPLY_COUNTER)[0]


def kind_of(answers: list) -> str:
    """accept, reject or partial, from (line, received, rejected, reason) of every line of the note."""
    if all(not rejected for _, _, rejected, _ in answers):
        return "accept"
    if all(not received for _, received, _, _ in answers):
        return "reject"
    return "partial"


def check_answers(entries: list, note: Document, problems: Problems) -> list:
    """(line, received, rejected, reason) of every line of the note: entries are (where, lineId, received,
    rejected, reason, labels) with the quantities already Decimals >= 0 (labels name the fields in messages:
    (lineId, reason)); the note's lines no entry names are wholly received."""
    lines = {line["id"]: line for line in note.data.get("lines") or []}
    answered = {}
    for where, line_id, received, rejected, reason, (id_label, reason_label) in entries:
        line = lines.get(str(line_id).strip() if line_id is not None else "")
        if blank(line_id):
            problems.add(where, f"{id_label} is required (the ID of the note's line answered).")
            continue
        if line is None:
            problems.add(where, f"{id_label} {line_id} is not a line of note {note.number} (its lines: "
                                f"{', '.join(lines) or 'none'}).")
            continue
        if line["id"] in answered:
            problems.add(where, f"line {line['id']} of note {note.number} is answered twice.")
            continue
        if rejected and blank(reason):
            problems.add(where, f"{reason_label} required when the rejected quantity is greater than 0.")
        delivered = decimal(line["quantity"]) or 0
        if received + rejected > delivered:
            problems.add(where, f"received {received} + rejected {rejected} exceeds the delivered quantity "
                                f"{delivered} of line {line['id']}.")
        answered[line["id"]] = (line, received, rejected, reason or "")
    return [answered.get(line_id) or (line, decimal(line["quantity"]) or 0, 0, "")
            for line_id, line in lines.items()]


def store(call: Call, reply: Document, status: int, note: Document | None = None) -> None:
    """The reply saved in draft (0) or queued (20, its life fixed now), and its note moved."""
    if status == QUEUED:
        queue_reply(reply, now(call))
    else:
        reply.status, reply.due_at = DRAFT, None
        reply.data = {**reply.data, "message": "", "envelope": None}
    reply.save()
    move_note(reply, note)


def reply_data(note: Document, kind: str, form: str, **more) -> dict:
    return {"noteId": note.key, "noteNumber": note.number, "kind": kind, "form": form,
            "sender": note.data.get("sender"), "origin": note.data.get("origin"), "message": "", "envelope": None,
            **more}


def answer(reply: Document) -> dict:
    return {"id": reply.key, "receiptAdviceNumber": reply.number, "status": reply.status}


# --- post and put (UBL) -------------------------------------------------------------------------------------------

def _ubl_lines(facts: dict, problems: Problems) -> list:
    entries = []
    for index, line in enumerate(facts["lines"], start=1):
        where = f"ReceiptLine[{index}]"
        quantities = []
        for name, value, default in (("cbc:ReceivedQuantity", line["received"], None),
                                     ("cbc:RejectedQuantity", line["rejected"], 0)):
            number = decimal(value) if value is not None else default
            if value is None and default is None:
                problems.add(where, f"{name} is required.")
            elif number is None or number < 0:
                problems.add(where, f"{name} must be a number of 0 or more (got '{value}').")
            quantities.append(number)
        if None not in quantities and all(number >= 0 for number in quantities):
            entries.append((where, line["lineId"], *quantities, line["reason"],
                            ("cac:DespatchLineReference/cbc:LineID", "RejectReason")))
    return entries


def _note_numbered(call: Call, facts: dict, problems: Problems) -> Document | None:
    number = facts["despatchNumber"]
    if blank(number):
        problems.add("ReceiptAdvice", "cac:DespatchDocumentReference/cbc:ID (the number of the note answered) is "
                                      "required.")
        return None
    notes = list(Document.objects.filter(customer=call.customer, kind=INBOX, number=number).defer("blob"))
    if len(notes) > 1:
        notes = [note for note in notes if note.data["sender"]["vknTckn"] == facts["supplier"]] or notes
    if not notes:
        problems.add("ReceiptAdvice", f"no incoming note numbered {number}.")
        return None
    return notes[0]


def _header_problems(call: Call, facts: dict, existing: Document | None, manual: bool, problems: Problems):
    """The problems of the reply's cbc:UUID, cbc:IssueDate and (a number of the sender's own) cbc:ID; the issue
    date (None when it is none)."""
    place = "ReceiptAdvice"
    if not GUID.match(facts["uuid"]):
        problems.add(place, f"cbc:UUID must be a GUID, the reply's id (got '{facts['uuid']}').")
    elif existing and facts["uuid"] != existing.key:
        problems.add(place, f"cbc:UUID {facts['uuid']} is not the id of the reply updated ({existing.key}).")
    issue_day = rules.day(facts["issueDate"])
    if issue_day is None:
        problems.add(place, f"cbc:IssueDate must be a date yyyy-MM-dd (got '{facts['issueDate']}').")
    elif issue_day > today(call):
        problems.add(place, f"cbc:IssueDate {issue_day} is in the future (today is {today(call)}).")
    if manual:
        reason = rules.number_problem(facts["number"], issue_day)
        if reason:
            problems.add(place, f"cbc:ID: {reason}")
    return issue_day


def _reply_number(call: Call, facts: dict, manual: bool, existing: Document | None, prefix: str, issue_day) -> str:
    """The sender's own number (used once by the customer), the reply's number, or the next of the series."""
    if manual:
        number = facts["number"]
        other = Document.objects.filter(customer=call.customer, kind=REPLY, number=number).exclude(
            key=facts["uuid"]).first()
        if other is not None:
            raise refused("Validation failed", f"ReceiptAdvice: cbc:ID: {number} already exists: reply "
                                               f"{other.key} has it, a reply number is used once.")
        return number
    return existing.number if existing else reply_number(call.customer, prefix, issue_day.year)


def _ubl_reply(call: Call, reply_id: str | None):
    body = bound(read_body(call), REPLY_MODEL)
    settle(call)
    existing = reply_of(call, reply_id) if reply_id else None
    problems = Problems()
    status = body.get("Status")
    if status is not None and status not in (DRAFT, QUEUED):
        problems.add("Status", f"Status must be 0 (draft) or 20 (save and send) (got {status}).")
    manual = body.get("UseManualReceiptAdviceId") is True
    prefix = DEFAULT_REPLY_PREFIX if manual or existing else prefix_of(body.get("Prefix"), problems, "Prefix")
    upload = receipt_ubl.read(body.get("ReceiptAdvice"), problems)
    if upload is None:
        problems.raise_any()
    content, root = upload
    facts = receipt_ubl.facts(root)
    issue_day = _header_problems(call, facts, existing, manual, problems)
    note = _note_numbered(call, facts, problems)
    if note is not None and existing and note.key != existing.data["noteId"]:
        problems.add("ReceiptAdvice", f"{reply_name(existing)} answers note {existing.data['noteNumber']}, not "
                                      f"{note.number}.")
    answers = check_answers(_ubl_lines(facts, problems), note, problems) if note is not None else []
    problems.raise_any()
    with locked(call.customer):
        if existing:
            existing = reply_of(call, reply_id)  # again under the lock
            if existing.status not in (DRAFT, ERROR):
                raise refused("Update refused", f"{reply_name(existing)} is "
                                                f"{STATUS_NAMES.get(existing.status, existing.status)} "
                                                f"({existing.status}); only replies in draft (0) or error (40) can be "
                                                "updated.")
        elif Document.objects.filter(customer=call.customer, kind=REPLY, key=facts["uuid"]).exists():
            raise refused("Validation failed", f"ReceiptAdvice: UUID already used: {facts['uuid']} is the id of "
                                               "another reply of this customer.")
        note = Document.objects.get(pk=note.pk)
        reason = None if existing else not_awaiting(note)
        if reason:
            raise refused("Validation failed", f"{note.number}: {reason}.")
        number = _reply_number(call, facts, manual, existing, prefix, issue_day)
        reply = existing or Document(customer=call.customer, kind=REPLY, key=facts["uuid"], created=now(call))
        reply.number = number
        reply.blob = content if number == facts["number"] else ubl.with_number(root, number)
        reply.data = reply_data(note, kind_of(answers), "ubl", useManual=manual, prefix=body.get("Prefix"),
                                machine=existing.data.get("machine") if existing else None)
        store(call, reply, status or DRAFT, note)
    return answer(reply)


operation("dispatch", "POST", BASE)(lambda call: _ubl_reply(call, None))
operation("dispatch", "PUT", BASE + "/{id}")(lambda call, id: _ubl_reply(call, id))


# --- status change and status --------------------------------------------------------------------------------------

@operation("dispatch", "PUT", DOCUMENTS + "/updatestatuslist")
def change_reply_status(call: Call):
    """Document 3, 3.3: the outgoing notes' rules (40 -> 0, 0 -> 20), all of the replies or none."""
    status_change(call, REPLY, "dispatch reply", ("reply", "replies"), store)


def reply_view(doc: Document) -> dict:
    return {"id": doc.key, "receiptNumber": doc.number, "inboxDespatchNumber": doc.data.get("noteNumber"),
            "status": doc.status, "message": doc.data.get("message") or "", **envelope_fields(doc)}


@operation("dispatch", "GET", DOCUMENTS + "/{id}/status")
def reply_status(call: Call, id):
    settle(call)
    view = reply_view(reply_of(call, id))
    return {**view, "id": id_text(call, view["id"])}


# --- documents ----------------------------------------------------------------------------------------------------

drawn_documents(DOCUMENTS + "/{id}", find=reply_of, pdf=receipt_ubl.pdf, html=receipt_ubl.html, with_kind=True,
                zipped=True)
