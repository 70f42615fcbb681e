"""Dispatch-note service, incoming notes (document 3, 2.9 and 4.5; the contract of issue 16): the list, the status,
the UBL, PDF and HTML of a note and the reply of a note. How notes arrive (from other sandbox customers, by the
control action, over time) is in dispatch_life.py; their exports in dispatch_exports.py.

Choices where the documents say "not shown" (besides dispatch.py's): the list's targetVknTckn names the sender
(on an incoming note the customer is the target, so the filter names the other party); list items carry
createdDate in UTC ("…Z"), the sender, the line count, the payable amount and the reply once there is one.
"""

from django.db.models import Q

from ..api import Call, operation
from ..models import Document
from . import dispatch_ubl as ubl
from .common import found, wrapped
from .dispatch import INBOX, REPLY, dispatch_settings, document_of, id_text, listed, utc
from .dispatch_drawings import drawn_documents
from .dispatch_life import settle

BASE, DOCUMENTS = "/v1/inboxdespatch", "/v2/inboxdespatch"


def incoming_of(call: Call, note_id: str) -> Document:
    return document_of(call, INBOX, note_id, "incoming dispatch note")


def list_item(doc: Document, names_replies: bool = True) -> dict:
    data, reply = doc.data, (doc.data.get("reply") or {}) if names_replies else {}
    return {"id": doc.key, "despatchNumber": doc.number, "status": doc.status, "createdDate": utc(doc.created),
            "issueDate": data.get("issueDate"), "issueTime": data.get("issueTime"),
            "senderVknTckn": data["sender"]["vknTckn"], "senderTitle": data["sender"]["title"],
            "profile": data.get("profile") or "TEMELIRSALIYE", "lineCount": len(data.get("lines") or []),
            "payableAmount": data.get("payableAmount"), "currencyCode": data.get("currencyCode"),
            "receiptAdviceId": reply.get("id"), "receiptNumber": reply.get("number")}


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


drawn_documents(DOCUMENTS + "/{id}", find=incoming_of, pdf=ubl.pdf, html=ubl.html)


@operation("dispatch", "GET", DOCUMENTS + "/{id}/receiptadvice/ubl")
def reply_of_note(call: Call, id):
    """The reply of the incoming note (404 while it has none)."""
    settle(call)
    note = incoming_of(call, id)
    reply = found(Document.objects.filter(Q(key=(note.data.get("reply") or {}).get("id") or "") |
                                          Q(data__noteId=note.key), customer=call.customer, kind=REPLY),
                  f"Incoming dispatch note {note.number} ({note.key}) has no reply.")
    return wrapped(bytes(reply.blob))
