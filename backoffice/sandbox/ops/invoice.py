"""Invoice service: the status, listing, PDF and UBL operations that document 1, section 8 rate-limits."""

from .. import fakes
from ..api import Call, invalid, operation
from .common import listed


def status_of(customer, kind: str, document_id: str) -> dict:
    choices = fakes.EARCHIVE_STATUSES if kind == "earchive" else fakes.INVOICE_STATUSES
    status = fakes.pick(customer, choices, kind, document_id)
    return {"id": document_id, "status": status, "message": "Hata: belge doğrulanamadı." if status == 40 else ""}


@operation("invoice", "GET", "/v2/outboxinvoice/{id}/status")
def outbox_status(call: Call, id):
    return status_of(call.customer, "outbox", id)


@operation("invoice", "GET", "/v2/inboxinvoice/{id}/status")
def inbox_status(call: Call, id):
    return status_of(call.customer, "inbox", id)


@operation("invoice", "GET", "/v2/earchive/{id}/status")
def earchive_status(call: Call, id):
    return status_of(call.customer, "earchive", id)


@operation("invoice", "GET", "/v2/earchive/status")
def earchive_status_by_query(call: Call):
    document_id = call.query.get("id")
    if not document_id:
        raise invalid("id", "The id field is required.")
    return status_of(call.customer, "earchive", document_id)


@operation("invoice", "POST", "/v2/outboxinvoice/status")
def outbox_status_many(call: Call):
    ids = call.json()
    if not isinstance(ids, list) or not all(isinstance(item, str) and item for item in ids):
        raise invalid("ids", "The body must be an array of invoice ids.")
    return [status_of(call.customer, "outbox", document_id) for document_id in ids]


def incoming_invoices(customer) -> list[dict]:
    count = 20 + fakes.seed(customer, "inbox-count") % 30
    items = []
    for number in range(1, count + 1):
        issued = fakes.moment(customer, "inbox", number)
        amount = round(100 + fakes.seed(customer, "inbox-amount", number) % 1_000_000 / 100, 2)
        tax = round(amount * 0.2, 2)
        items.append({
            "ettn": fakes.uuid_for(customer, "inbox", number),
            "invoiceNumber": fakes.document_number("GLN", issued.year, number),
            "profile": "TEMELFATURA",
            "type": "SATIS",
            "invoiceStatus": fakes.pick(customer, fakes.INVOICE_STATUSES, "inbox", number),
            "issueDate": issued.date().isoformat(),
            "targetAlias": "urn:mail:defaultpk@example.com.tr",
            "targetTitle": f"Tedarikçi {number} A.Ş.",
            "targetVknTckn": f"{1000000000 + fakes.seed(customer, 'vkn', number) % 8999999999:010d}",
            "currencyCode": "TRY",
            "payableAmount": round(amount + tax, 2),
            "taxExclusiveAmount": amount,
            "taxTotal": tax,
            "createDateUtc": issued.isoformat(),
        })
    return sorted(items, key=lambda item: item["createDateUtc"])


@operation("invoice", "GET", "/v1/inboxinvoice/list")
def inbox_list(call: Call):
    return listed(call, incoming_invoices(call.customer))


def pdf(call: Call, id, isStandartXslt=None):
    return {"Response": fakes.b64(fakes.pdf_bytes(f"Sandbox invoice {id}"))}


def ubl(call: Call, id):
    return {"Response": fakes.b64(fakes.ubl_invoice(id))}


for method, pattern in (
    ("POST", "/v2/outboxinvoice/{id}/pdf/{isStandartXslt}"),
    ("GET", "/v2/outboxinvoice/{id}/pdf/{isStandartXslt}"),
    ("GET", "/v2/outboxinvoice/{id}/pdf"),
    ("POST", "/v2/inboxinvoice/{id}/pdf/{isStandartXslt}"),
    ("GET", "/v2/inboxinvoice/{id}/pdf/{isStandartXslt}"),
    ("GET", "/v2/inboxinvoice/{id}/pdf"),
    ("GET", "/v2/earchive/{id}/pdf/{isStandartXslt}"),
):
    operation("invoice", method, pattern)(pdf)

for pattern in ("/v2/inboxinvoice/{id}/ubl", "/v2/earchive/{id}/ubl"):
    operation("invoice", "GET", pattern)(ubl)
