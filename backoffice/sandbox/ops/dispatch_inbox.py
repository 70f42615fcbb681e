"""Dispatch-note service, incoming notes (document 3, 2.9 and 4.5; the contract of issue 16): the list, the status,
the UBL, PDF and HTML of a note and the reply of a note. How notes arrive (from other sandbox customers, by the
control action, over time) is in dispatch_life.py; their exports in dispatch_exports.py.

Choices where the documents say "not shown" (besides dispatch.py's): the list's targetVknTckn names the sender
(on an incoming note the customer is the target, so the filter names the other party); list items carry
createdDate in UTC ("…Z"), the sender, the line count, the payable amount and the reply once there is one.
"""

from types import SimpleNamespace

from django.db.models import Q

from ..api import Call, operation
from ..models import Document
from . import dispatch_ubl as ubl
from .common import Problems, blank, moment, now, page, paged_query, refused
from .dispatch import INBOX, REPLY, dispatch_settings, id_text, note_key, query_value, spelled_query, utc, wrapped
from .dispatch_drawings import drawn_documents
from .dispatch_life import settle

BASE, DOCUMENTS = "/v1/inboxdespatch", "/v2/inboxdespatch"


def incoming_of(call: Call, note_id: str) -> Document:
    doc = Document.objects.filter(customer=call.customer, kind=INBOX, key=note_key(note_id)).first()
    if doc is None:
        raise refused("Not Found", f"No incoming dispatch note with id {note_id}.", 404)
    return doc


def list_item(doc: Document, names_replies: bool = True) -> dict:
    data, reply = doc.data, (doc.data.get("reply") or {}) if names_replies else {}
    return {"id": doc.key, "despatchNumber": doc.number, "status": doc.status, "createdDate": utc(doc.created),
            "issueDate": data.get("issueDate"), "issueTime": data.get("issueTime"),
            "senderVknTckn": data["sender"]["vknTckn"], "senderTitle": data["sender"]["title"],
            "profile": data.get("profile") or "TEMELIRSALIYE", "lineCount": len(data.get("lines") or []),
            "payableAmount": data.get("payableAmount"), "currencyCode": data.get("currencyCode"),
            "receiptAdviceId": reply.get("id"), "receiptNumber": reply.get("number")}


def listed(call: Call, rows, filters: tuple, item):
    """One page of rows (the customer's incoming notes or receipts) filtered by the query as the platform's lists
    are: exact filters (query name, lookup), status, startDate / endDate on creation (endDate not later than now),
    isDesc by creation. Names as document 3 (4.5) spells them."""
    spelled_query(call, ("pageIndex", "pageSize", "status", "isDesc", "startDate", "endDate",
                         *(name for name, _lookup in filters)))
    paging = SimpleNamespace(query={name: query_value(call, name) for name in ("pageIndex", "pageSize")})
    page_index, page_size = page(paging)
    problems = Problems()
    for name, lookup in filters:
        value = query_value(call, name)
        if not blank(value):
            rows = rows.filter(**{lookup: value.strip()})
    raw_status = query_value(call, "status")
    if not blank(raw_status):
        if raw_status.strip().lstrip("-").isdigit():
            rows = rows.filter(status=int(raw_status))
        else:
            problems.add("status", f"The value '{raw_status}' is not a status number.")
    descending = query_value(call, "isDesc")
    if not blank(descending) and descending.strip().lower() not in ("true", "false"):
        problems.add("isDesc", f"isDesc must be true or false (got '{descending}').")
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
            rows = rows.filter(**{lookup: parsed})
    problems.raise_any()
    descending = (descending or "").strip().lower() == "true"
    rows = rows.order_by(*(("-created", "-pk") if descending else ("created", "pk")))
    return paged_query(rows, page_index, page_size, item)


@operation("dispatch", "GET", BASE + "/list")
def inbox_list(call: Call):
    settle(call)
    notes = Document.objects.filter(customer=call.customer, kind=INBOX).defer("blob")
    names_replies = dispatch_settings(call.customer).get("list_names_replies", True)
    return listed(call, notes, (("despatchNumber", "number"), ("targetVknTckn", "data__sender__vknTckn")),
                  lambda doc: list_item(doc, names_replies))


@operation("dispatch", "GET", DOCUMENTS + "/{id}/status")
def inbox_status(call: Call, id):
    settle(call)
    doc = incoming_of(call, id)
    return {"id": id_text(call, doc.key), "despatchNumber": doc.number, "status": doc.status}


@operation("dispatch", "GET", DOCUMENTS + "/{id}/ubl")
def inbox_ubl(call: Call, id):
    settle(call)
    return wrapped(bytes(incoming_of(call, id).blob))


inbox_pdf, inbox_html = drawn_documents(DOCUMENTS + "/{id}", find=incoming_of, pdf=ubl.pdf, html=ubl.html)


@operation("dispatch", "GET", DOCUMENTS + "/{id}/receiptadvice/ubl")
def reply_of_note(call: Call, id):
    """The reply of the incoming note (404 while it has none)."""
    settle(call)
    note = incoming_of(call, id)
    reply = Document.objects.filter(Q(key=(note.data.get("reply") or {}).get("id") or "") | Q(data__noteId=note.key),
                                    customer=call.customer, kind=REPLY).first()
    if reply is None:
        raise refused("Not Found", f"Incoming dispatch note {note.number} ({note.key}) has no reply.", 404)
    return wrapped(bytes(reply.blob))
