"""Dispatch-note service, outgoing notes (document 3, sections 2.9, 3.3 and 4.5; e-İrsaliye): create and update in
the JSON or the UBL form, the status change, the status with its envelope, the PDF, HTML, UBL and ZIP of a note and
the listing with isNew. The choices where the documents say "not shown" are listed in dispatch.py.
"""

import uuid

from django.utils import timezone

from ..api import Call, operation
from ..models import Document
from . import dispatch_rules as rules
from . import dispatch_ubl as ubl
from .common import (BOOLEAN, STRING, Problems, array, blank, bound, iso, locked, now, read_body, refused,
                     vkn_tckn_problem)
from .dispatch import (BASE, DOCUMENTS, NOTE, check_unused, dispatch_settings, documents_of, envelope_fields, ids_of,
                       listed, next_number, note_of, save, today, updatable)
from .dispatch_directory import ALIASES, GENERIC_ALIAS
from .dispatch_drawings import drawn_documents
from .dispatch_life import note_xml, settle, status_change
from .dispatch_rules import DRAFT, QUEUED


# --- views -------------------------------------------------------------------------------------------------------

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


def _json_note(call: Call, note_id: str | None):
    body = bound(read_body(call), rules.NOTE_MODEL)
    settle(call)
    existing = note_of(call, note_id) if note_id else None
    rules.note_problems(body, today(call)).raise_any()
    general, book = body.get("generalInfo") or {}, body["addressBook"]
    issue_day = rules.day(general["issueDate"])
    manual = body.get("useManualDespatchAdviceId") is True
    with locked(call.customer):
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


operation("dispatch", "POST", BASE + "/create")(lambda call: _json_note(call, None))
operation("dispatch", "PUT", BASE + "/create/{id}")(lambda call, id: _json_note(call, id))


# --- create and update, UBL form --------------------------------------------------------------------------------

def _prefix(call: Call, body: dict) -> tuple[str, str]:
    """(the series' prefix, the warning): document 3, 2.9, an undefined prefix gives a no-prefix-found warning,
    and the note is numbered from the default series."""
    prefix = body.get("prefix")
    if blank(prefix):
        return rules.DEFAULT_PREFIX, ""
    defined = dispatch_settings(call.customer).get("prefixes")
    if rules.PREFIX_PATTERN.match(prefix) and (defined is None or prefix in defined):
        return prefix, ""
    return rules.DEFAULT_PREFIX, (f"No prefix found: '{prefix}' is no prefix of this customer; the note was numbered "
                                  f"from the default series {rules.DEFAULT_PREFIX}.")


def _target_alias(body: dict, receiver: str, problems: Problems) -> str | None:
    """Document 3, 2.9: targetAlias is required when the receiver has several mailboxes; the generic alias for
    receivers that are no dispatch-note users."""
    alias, listed = body.get("targetAlias"), ALIASES.get(receiver, [])
    if blank(alias):
        if len(listed) > 1:
            problems.add("targetAlias", f"{receiver} has several dispatch mailboxes ({', '.join(listed)}): name the "
                                        "one to send to.")
        return listed[0] if listed else GENERIC_ALIAS
    reason = rules.alias_problem(receiver, alias)
    if reason:
        problems.add("targetAlias", reason)
    return alias


def _ubl_note(call: Call, note_id: str | None):
    body = bound(read_body(call), rules.UBL_MODEL)
    settle(call)
    existing = note_of(call, note_id) if note_id else None
    problems = Problems()
    status = body.get("status")
    if status is not None and status not in (DRAFT, QUEUED):
        problems.add("status", f"status must be 0 (draft) or 20 (save and send) (got {status}).")
    manual = body.get("useManualDespatchAdviceId") is True
    prefix, warning = (rules.DEFAULT_PREFIX, "") if manual or existing else _prefix(call, body)
    upload = ubl.read_upload(body.get("despatchAdviceZip"), problems)
    facts, alias = None, None
    if upload:
        facts = ubl.upload_facts(upload[1], problems, today(call), manual)
        if existing and facts["uuid"] and facts["uuid"] != existing.key:
            problems.add("despatchAdviceZip", f"cbc:UUID {facts['uuid']} is not the id of the note updated "
                                              f"({existing.key}).")
        if facts["receiver"]["vknTckn"] and not vkn_tckn_problem(facts["receiver"]["vknTckn"]):
            alias = _target_alias(body, facts["receiver"]["vknTckn"], problems)
    problems.raise_any()
    content, root = upload
    local_reference = body.get("localReferenceId")
    with locked(call.customer):
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
        doc.blob = content if number == facts["number"] else ubl.with_number(root, number)
        save(call, doc, status or DRAFT)
    answer = {"Id": doc.key, "DespatchAdviceNumber": doc.number, "Status": doc.status,
              "LocalReferenceId": local_reference}
    if warning:
        answer["Message"] = warning
    return answer


operation("dispatch", "POST", BASE)(lambda call: _ubl_note(call, None))
operation("dispatch", "PUT", BASE + "/{id}")(lambda call, id: _ubl_note(call, id))


# --- status change, isNew, status ----------------------------------------------------------------------------------

@operation("dispatch", "PUT", DOCUMENTS + "/updatestatuslist")
def change_status(call: Call):
    """Document 3, 3.3: 40 -> 0 and 0 -> 20 only, all of the notes or none."""
    status_change(call, NOTE, "outgoing dispatch note", ("note", "notes"), save)


@operation("dispatch", "PUT", BASE + "/updateisnew")
def update_is_new(call: Call):
    """isNew false: the notes no longer match isNew=true in the list (document 3, 2.9)."""
    body = bound(read_body(call), {"ids": array(STRING), "isNew": BOOLEAN})
    ids = ids_of(body, "ids", "note")
    if not isinstance(body.get("isNew"), bool):
        raise refused("Bad Request", "isNew: must be true or false.")
    settle(call)
    with locked(call.customer):
        docs = documents_of(call, NOTE, ids, "outgoing dispatch note")
        for doc in docs:
            doc.data = {**doc.data, "isNew": body["isNew"]}
        Document.objects.bulk_update(docs, ["data"], batch_size=500)
    return None


@operation("dispatch", "GET", DOCUMENTS + "/{id}/status")
def status(call: Call, id):
    settle(call)
    return status_view(note_of(call, id))


# --- documents: {"Response": base64 of the file} -------------------------------------------------------------------

drawn_documents(DOCUMENTS + "/{id}", find=note_of, pdf=ubl.pdf, html=ubl.html, zipped=True,
                xml=lambda call, doc: note_xml(doc, call.customer), xslt_code=lambda doc: doc.data.get("xsltCode"))


# --- the list ------------------------------------------------------------------------------------------------------

@operation("dispatch", "GET", BASE + "/list")
def note_list(call: Call):
    settle(call)
    notes = Document.objects.filter(customer=call.customer, kind=NOTE).defer("blob")
    return listed(call, notes, (("localReferenceId", "data__localReferenceId"), ("despatchNumber", "number")),
                  list_item, flags=(("isNew", "data__isNew"),))
