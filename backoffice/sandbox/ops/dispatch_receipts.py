"""Dispatch-note service, the replies received to the customer's outgoing notes (document 3, 4.5; the contract of
issue 16): the receipt list and the UBL, PDF and HTML of the reply to one of the customer's notes. A reply comes
back when the receiving sandbox customer's reply reaches 60 (dispatch_life.send_receipt).

Choices where the documents say "not shown" (besides dispatch.py's): items are {id (the reply's id),
receiptNumber, status (60), createdDate (UTC, "…Z", when it came back), despatchId, despatchNumber, senderVknTckn,
senderTitle (who answered), kind (accept, reject, partial)}; the documents' path takes the outgoing note's id.
"""

from ..api import Call, operation
from ..models import Document
from . import dispatch_receipt_ubl as receipt_ubl
from .common import found
from .dispatch import BASE, DOCUMENTS, RECEIPT, listed, note_of, utc
from .dispatch_drawings import drawn_documents
from .dispatch_life import settle


def list_item(doc: Document) -> dict:
    data = doc.data
    return {"id": doc.key, "receiptNumber": doc.number, "status": doc.status, "createdDate": utc(doc.created),
            "despatchId": data["despatchId"], "despatchNumber": data["despatchNumber"],
            "senderVknTckn": data["senderVknTckn"], "senderTitle": data["senderTitle"], "kind": data["kind"]}


@operation("dispatch", "GET", BASE + "/receiptadvice/list")
def receipt_list(call: Call):
    settle(call)
    receipts = Document.objects.filter(customer=call.customer, kind=RECEIPT).defer("blob")
    return listed(call, receipts, (("receiptNumber", "number"),), list_item)


def receipt_of(call: Call, note_id: str) -> Document:
    """The reply received to the customer's outgoing note (404 for another's note or while none came back)."""
    note = note_of(call, note_id)
    return found(Document.objects.filter(customer=call.customer, kind=RECEIPT, data__despatchId=note.key).order_by(
        "-created", "-pk"), f"No reply was received for outgoing dispatch note {note.number} ({note.key}).")


drawn_documents(DOCUMENTS + "/{id}/receiptadvice", find=receipt_of, pdf=receipt_ubl.pdf, html=receipt_ubl.html,
                with_kind=True)
