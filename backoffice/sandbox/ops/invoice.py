"""Invoice service: the status, listing, PDF and UBL operations that document 1, section 8 rate-limits, the HTML
and outbox UBL of the provider's client, and the tax authority's list of registered users (the facts file).

Invoices that the accounting service's store holds (invoice_store.py) are answered from it: the status its machine
has reached, and documents rendered from the saved invoice (invoice_documents.py). Each box has its own
invoices: outbox the outgoing e-invoices, earchive the outgoing e-archive invoices, inbox the incoming ones; a
stored invoice asked on another box's path answers 404, as the real platform does (users complain of it).
Ids the store does not know get the deterministic fakes of fakes.py, as before the store existed.
"""

from django.http import HttpResponse
from django.utils.html import format_html

from .. import fakes
from ..api import Call, invalid, operation, page_params, paged
from . import invoice_documents, invoice_store
from .common import wrapped


def status_of(customer, kind: str, document_id: str) -> dict:
    choices = fakes.EARCHIVE_STATUSES if kind == "earchive" else fakes.INVOICE_STATUSES
    status = fakes.pick(customer, choices, kind, document_id)
    return {"id": document_id, "status": status, "message": "Hata: belge doğrulanamadı." if status == 40 else ""}


def _status(call: Call, box: str, id) -> dict:
    doc = invoice_store.on_path(call, box, id)
    if doc is None:
        return status_of(call.customer, box, id)
    return {"id": id, "status": doc.status, "message": doc.data["message"]}


@operation("invoice", "GET", "/v2/earchive/status")
def earchive_status_by_query(call: Call):
    document_id = call.query.get("id")
    if not document_id:
        raise invalid("id", "The id field is required.")
    return _status(call, "earchive", document_id)


@operation("invoice", "POST", "/v2/outboxinvoice/status")
def outbox_status_many(call: Call):
    """The statuses of the outgoing e-invoices among the ids (stored invoices of other boxes are left out)."""
    ids = call.json()
    if not isinstance(ids, list) or not all(isinstance(item, str) and item for item in ids):
        raise invalid("ids", "The body must be an array of invoice ids.")
    known = invoice_store.known_statuses(call, "outbox", ids)
    answers = []
    for document_id in dict.fromkeys(ids):
        if document_id not in known:
            answers.append(status_of(call.customer, "outbox", document_id))
        elif known[document_id] is not None:
            doc = known[document_id]
            answers.append({"id": document_id, "status": doc.status, "message": doc.data["message"]})
    return answers


def incoming_invoices(customer) -> list[dict]:
    count = 20 + fakes.seed(customer, "inbox-count") % 30
    items = []
    for number in range(1, count + 1):
        issued = fakes.moment(customer, "inbox", number)
        amount = round(100 + fakes.seed(customer, "inbox-amount", number) % 1_000_000 / 100, 2)
        tax = round(amount * 0.2, 2)
        items.append({
            "ettn": fakes.uuid_for(customer, "inbox", number),
            "invoiceNumber": fakes.document_number("GLN", issued.year, number), "profile": "TEMELFATURA",
            "type": "SATIS", "invoiceStatus": fakes.pick(customer, fakes.INVOICE_STATUSES, "inbox", number),
            "issueDate": issued.date().isoformat(), "targetAlias": "urn:mail:defaultpk@example.com.tr",
            "targetTitle": f"Tedarikçi {number} A.Ş.",
            "targetVknTckn": f"{1000000000 + fakes.seed(customer, 'vkn', number) % 8999999999:010d}",
            "currencyCode": "TRY", "payableAmount": round(amount + tax, 2), "taxExclusiveAmount": amount,
            "taxTotal": tax, "createDateUtc": issued.isoformat(),
        })
    return sorted(items, key=lambda item: item["createDateUtc"])


@operation("invoice", "GET", "/v1/inboxinvoice/list")
def inbox_list(call: Call):
    """One page of the incoming invoices (422 on bad paging), newest first when isDesc is true."""
    items = incoming_invoices(call.customer)
    page_index, page_size = page_params(call)
    if call.query.get("isDesc", "").lower() == "true":
        items.reverse()
    return paged(items, page_index, page_size)


# --- documents: {"Response": base64 of the file} ----------------------------------------------------------------

def _document(draw, fake):
    """A document operation of the boxes: the stored invoice's document (draw), else the unknown id's fake."""

    def handler(call: Call, box: str, id, isStandartXslt=None):
        doc = invoice_store.on_path(call, box, id)
        return wrapped(fake(id) if doc is None else draw(doc, call.customer))

    return handler


pdf = _document(invoice_documents.pdf, lambda id: fakes.pdf_bytes(f"Sandbox invoice {id}"))
ubl = _document(invoice_documents.ubl, fakes.ubl_invoice)
html = _document(lambda doc, customer: invoice_documents.html(doc, customer).encode("utf-8"), lambda id: format_html(
    "<!DOCTYPE html><html><body><p>Sandbox invoice {}</p></body></html>", id).encode("utf-8"))


def _route(method: str, pattern: str, handler, box: str) -> None:
    operation("invoice", method, pattern)(lambda call, box=box, **kwargs: handler(call, box, **kwargs))


for method, pattern, box in (
    ("POST", "/v2/outboxinvoice/{id}/pdf/{isStandartXslt}", "outbox"),
    ("GET", "/v2/outboxinvoice/{id}/pdf/{isStandartXslt}", "outbox"),
    ("GET", "/v2/outboxinvoice/{id}/pdf", "outbox"),
    ("POST", "/v2/inboxinvoice/{id}/pdf/{isStandartXslt}", "inbox"),
    ("GET", "/v2/inboxinvoice/{id}/pdf/{isStandartXslt}", "inbox"),
    ("GET", "/v2/inboxinvoice/{id}/pdf", "inbox"),
    ("GET", "/v2/earchive/{id}/pdf/{isStandartXslt}", "earchive"),
):
    _route(method, pattern, pdf, box)

for box, prefix in (("outbox", "/v2/outboxinvoice"), ("inbox", "/v2/inboxinvoice"), ("earchive", "/v2/earchive")):
    _route("GET", prefix + "/{id}/status", _status, box)
    _route("GET", prefix + "/{id}/ubl", ubl, box)
    _route("GET", prefix + "/{id}/html/{isStandartXslt}", html, box)


def taxpayer_list(call: Call):
    """The ZIP itself (not wrapped), as the provider's clients read it; under both paths public clients use
    (the facts file: the provider's client, the back office's default, and another client)."""
    response = HttpResponse(invoice_documents.taxpayer_zip(call.customer), content_type="application/zip")
    response["Content-Disposition"] = 'attachment; filename="users.zip"'
    return response


for _path in ("/v1/gibuser/receiverboxalias/zip", "/v2/gibuser/recipient/zip"):
    operation("invoice", "GET", _path)(taxpayer_list)
