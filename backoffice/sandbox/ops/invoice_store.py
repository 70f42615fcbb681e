"""Accounting service, invoices: the store that the accounting service's invoice operations (invoices.py) and the
invoice service (invoice.py) answer from. The figures of an invoice's lines and totals, the other party as the
documents show it, the data kept, the status machine of outgoing invoices, the answers, and which box of the
invoice service an invoice belongs to. The choices are listed in invoices.py.

Document kinds (customer-scoped):
  outgoing_invoice / incoming_invoice   key ettn, number invoiceNumber, status invoiceStatus, created the
                    moment it was saved, due_at the next move of an outgoing invoice the platform works on, or the
                    end of the 8-day answer period of an incoming commercial invoice awaiting an answer (70);
                    data = the list item's fields (filtered and sorted in the database), "search" (their folded
                    copies, list_filters.fold), "invoice" (the rest as saved, with the computed lines and totals)
                    and "machine" (when it was queued, the step, its path of statuses); an incoming invoice seeded
                    with its own content also "received" {lineNames, despatches} (what its UBL names) and, when
                    commercial, "answerDeadline" (invoice_responses.py keeps the answers).
  invoice_counter   key prefix + year; data {"last": the last counter issued}.
  invoice_seeded    key "incoming" / "outgoing"; data {"last": the last sequence number seeded}.
"""

import re
import uuid
from datetime import date, datetime, timedelta
from datetime import timezone as dt_timezone
from decimal import ROUND_HALF_UP, Decimal


from ..api import Call
from ..models import Document, SandboxSetting
from . import accounting
from .common import BOOLEAN, INTEGER, NUMBER, STRING, array, blank, is_guid, locked, moment, now, refused
from .invoice_taxpayers import title_of
from .list_filters import fold
from .statuses import goes_wrong

OUTGOING, INCOMING, COUNTER, SEEDED = "outgoing_invoice", "incoming_invoice", "invoice_counter", "invoice_seeded"
BASE = "/v1/invoice"
E_ARCHIVE, E_INVOICE = 0, 1  # recordType
NOT_POSTED, POSTED = 0, 1  # recordStatus
# Invoice statuses of the facts file (10 is a cancelled invoice here, 100 a cancelled e-archive invoice).
CANCELLED, QUEUED, RUNNING, ERROR, SENT, APPROVED, EARCHIVE_CANCELLED = 10, 20, 30, 40, 50, 60, 100
STATUSES = (0, 5, 10, 20, 30, 40, 50, 60, 61, 62, 65, 70, 80, 81, 82, 90, 91, 92, 100)
PATHS = {E_ARCHIVE: (QUEUED, RUNNING, APPROVED), E_INVOICE: (QUEUED, RUNNING, SENT, APPROVED)}
ERROR_MESSAGE = "Fatura doğrulanamadı: UBL şema kontrolünde hata bulundu (sandbox hata oranı)."
PROFILES = ("TEMELFATURA", "TICARIFATURA", "IHRACAT", "YOLCUBERABERFATURA", "EARSIVFATURA", "KAGIT")
EARSIVFATURA = 4
TYPES = {1: "SATIS", 2: "IADE", 3: "ISTISNA", 4: "OZELMATRAH", 5: "TEVKIFAT", 6: "ARACTESCIL", 7: "IHRACKAYITLI",
         8: "SGK", 9: "KOMISYONCU"}
# The back office's default currencyCodeId list (chart_of_accounts/choices.py; the sandbox imports no app).
CURRENCY_IDS = {"TRY": 1, "USD": 2, "EUR": 3, "GBP": 4, "CHF": 5, "JPY": 6, "SAR": 7, "RUB": 8}
DEDUCTED_TAXES = ("0003", "0011")  # stopaj: deducted from what the buyer pays
VAT_CODE = "0015"
CENT = Decimal("0.01")
# The supplier party's defaults when an address is not known (the UBL needs a district and a province).
DEFAULT_ADDRESS = {"street": "", "district": "Merkez", "city": "İstanbul", "country": "Türkiye", "postalZone": ""}

# --- the body's model (document 3, 2.6) ---------------------------------------------------------------------

TAX_MODEL = {"invoiceTaxSettingId": INTEGER, "withHoldingName": STRING, "taxTypeCode": STRING, "taxName": STRING,
             "taxRate": NUMBER, "taxAmount": NUMBER, "vatExemptionReasonCode": STRING, "vatExemptionReason": STRING,
             "isWithHolding": BOOLEAN, "isNegative": BOOLEAN, "withHoldingId": INTEGER}
DELIVERY_MODEL = {"deliveryTermsId": INTEGER, "quantity": NUMBER, **dict.fromkeys((
    "packagingTypeCode", "packagingId", "transportModeCode", "requiredCustomsId", "deliveryCountry", "deliveryCity",
    "deliveryDistrict", "deliveryStreetName", "deliveryBuildingNumber", "deliveryBuildingName", "deliveryPostalZone",
    "airTransportId", "roadTransportId", "railTransportId", "maritimeTransportId"), STRING)}
LINE_MODEL = {"inventoryServiceCode": STRING, "warehouseCode": STRING, "unitCode": STRING,
              "vatExemptionReasonCode": STRING, "taxes": array(TAX_MODEL),
              "invoiceLineDeliveryInfoModel": DELIVERY_MODEL, "serialNumberList": array(STRING),
              **dict.fromkeys(("lineExtensionAmount", "amount", "unitPrice", "vatAmount", "vatRate", "discountAmount",
                               "discountRate"), NUMBER)}
GENERAL_MODEL = {"invoiceProfileType": INTEGER, "type": INTEGER, "exchangeRate": NUMBER, **dict.fromkeys((
    "ettn", "prefix", "invoiceNumber", "currencyCode", "issueDate", "issueTime", "exchangeRateSource",
    "exchangeRateComment", "returnInvoiceNumber", "returnInvoiceDate"), STRING)}
ARCHIVE_MODEL = {"isInternetSale": BOOLEAN, "hideDespatchMessage": BOOLEAN, **dict.fromkeys((
    "websiteUrl", "shipmentSenderTcknVkn", "shipmentSendType", "shipmentSenderName", "shipmentSenderSurname",
    "shipmentDate", "subscriptionType", "subscriptionTypeNumber"), STRING)}
PAYMENT_MODEL = dict.fromkeys(("paymentMeansCode", "paymentDueDate", "paymentChannelCode", "instructionNote",
                               "payeeFinancialAccountId"), STRING)
INVOICE_MODEL = {
    "description": STRING, "currentAccountAlias": STRING, "currentAccountIdentifier": STRING,
    "currentAccountCode": STRING, "currentAccountId": INTEGER, "currentAccountName": STRING, "branchId": INTEGER,
    "isSend": BOOLEAN, "recordType": INTEGER, "note": STRING, "notes": array({"note": STRING}),
    "currentAccount": {name: kind for name, kind in accounting.CREATE_MODEL.items() if name != "id"},
    "generalInfoModel": GENERAL_MODEL, "invoiceLines": array(LINE_MODEL), "archiveInfoModel": ARCHIVE_MODEL,
    "paymentMeansModel": PAYMENT_MODEL,
}
RESULT_LINE_EXTRAS = dict.fromkeys((
    "inventoryServiceId", "inventoryServiceType", "inventoryCard", "inventoryInputUnitCodeId",
    "inventoryInputUnitCodeName", "inventoryOutputUnitCodeId", "inventoryOutputUnitCodeName", "warehouseId",
    "warehouseName", "expenseAccountId", "unitCodeId", "despatchItemId", "despatchId", "despatchAmount",
    "despatchSerialNumbers", "vatExemptionReason"))

ITEM_FIELDS = ("branchId", "profile", "type", "recordType", "invoiceProcessStatus", "recordStatus", "issueDate",
               "lineCount", "targetAlias", "targetTitle", "targetVknTckn", "currencyId", "exchangeRate",
               "exchangeRateComment", "exchangeRateSource", "payableAmount", "taxExclusiveAmount", "taxTotal",
               "totalAmount", "createDateUtc", "updateDateUtc")
SEARCH = ("targetTitle", "targetVknTckn", "targetAlias", "profile", "type")


# --- small helpers ---------------------------------------------------------------------------------------------

def money(value: Decimal) -> Decimal:
    return value.quantize(CENT, rounding=ROUND_HALF_UP)


def number(value) -> Decimal:
    """The Decimal of a stored figure (JSON numbers come back as floats; str keeps their digits)."""
    return Decimal(str(value)) if value is not None else Decimal(0)


def stamp(at: datetime) -> str:
    """A moment as the lists give and compare it: UTC, always with microseconds, so text order is time order."""
    return at.astimezone(dt_timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f+00:00")


def day(value) -> date | None:
    """A date from yyyy-MM-dd, an ISO date-time or dd.MM.yyyy (the ticket service's filter dates)."""
    if not isinstance(value, str):
        return None
    found = re.fullmatch(r"\s*([0-9]{2})\.([0-9]{2})\.([0-9]{4})\s*", value)
    if found:
        try:
            return date(int(found[3]), int(found[2]), int(found[1]))
        except ValueError:
            return None
    parsed = moment(value)
    return parsed.date() if parsed and re.match(r"\s*[0-9]{4}-", value) else None


def canonical(ettn) -> str | None:
    return str(uuid.UUID(str(ettn))) if is_guid(ettn) else None


def find(customer, ettn, kinds=(OUTGOING, INCOMING)) -> Document | None:
    key = canonical(ettn)
    return Document.objects.filter(customer=customer, kind__in=kinds, key=key).first() if key else None


def noun(doc: Document) -> str:
    return f"invoice {doc.number} ({doc.key})" if doc.number else f"invoice {doc.key}"


# --- lines and totals (the facts file's "Invoice totals as integrators compute them") ---------------------------

def priced(line: dict) -> dict:
    """A line as stored: what was sent (members left out or null are not kept), with its gross (lineAmount), net
    (lineExtensionAmount), VAT and each tax's taxAmount computed (what the body said of them is not taken)."""
    gross = money(number(line["amount"]) * number(line["unitPrice"]))
    discount = money(gross * number(line.get("discountRate")) / 100) + money(number(line.get("discountAmount")))
    net = gross - discount
    vat = money(net * number(line["vatRate"]) / 100)
    taxes = []
    for tax in line.get("taxes") or []:
        base = vat if tax.get("isWithHolding") is True else net
        taxes.append({**tax, "taxAmount": float(money(base * number(tax["taxRate"]) / 100))})
    given = {name: value for name, value in line.items() if value is not None and name in LINE_MODEL}
    return {**given, "lineAmount": float(gross), "lineExtensionAmount": float(net), "vatAmount": float(vat),
            "taxes": taxes}


def line_figures(line: dict) -> dict:
    """The Decimal figures of a stored line: gross, discount, net, vat, withholding, added, deducted."""
    gross, net = number(line["lineAmount"]), number(line["lineExtensionAmount"])
    figures = {"gross": gross, "discount": gross - net, "net": net, "vat": number(line["vatAmount"]),
               "withholding": Decimal(0), "added": Decimal(0), "deducted": Decimal(0)}
    for tax in line["taxes"]:
        part = ("withholding" if tax.get("isWithHolding") is True else
                "deducted" if tax.get("taxTypeCode") in DEDUCTED_TAXES else "added")
        figures[part] += number(tax["taxAmount"])
    return figures


def totals(lines: list[dict]) -> dict:
    """The document's figures (Decimal): sums of the rounded line figures."""
    sums = dict.fromkeys(("gross", "discount", "net", "vat", "withholding", "added", "deducted"), Decimal(0))
    for line in lines:
        for name, value in line_figures(line).items():
            sums[name] += value
    inclusive = sums["net"] + sums["vat"] + sums["added"]
    return {**sums, "inclusive": inclusive, "payable": inclusive - sums["withholding"] - sums["deducted"]}


def totals_model(figures: dict) -> dict:
    return {"lineExtensionAmount": float(figures["net"]), "taxExclusiveAmount": float(figures["net"]),
            "taxInclusiveAmount": float(figures["inclusive"]), "allowanceTotalAmount": float(figures["discount"]),
            "payableAmount": float(figures["payable"])}


# --- what an invoice keeps -------------------------------------------------------------------------------------

def counterpart(customer, body: dict, identifier: str) -> dict:
    """The other party as the documents show it: from the body's currentAccount, else the current account
    of this store (identifier and code) with its default address and mapping, else the taxpayer list."""
    code = (body.get("currentAccountCode") or "").strip()
    account = Document.objects.filter(customer=customer, kind=accounting.ACCOUNT, number=identifier,
                                      data__code=code).first()
    given = body.get("currentAccount") or {}
    address = given.get("currentAccountAddress")
    party = {"name": None, "taxOffice": given.get("taxOffice"), "accountName": None, "accountCode": None,
             "branchId": None}
    if account is not None:
        data = account.data
        party.update(name=" ".join(filter(None, (data.get("name"), data.get("surname")))),
                     taxOffice=party["taxOffice"] or data.get("taxOffice"), branchId=data.get("branchId"))
        if address is None:
            default = Document.objects.filter(customer=customer, kind=accounting.ADDRESS,
                                              data__currentAccountId=int(account.key), data__isDefault=True).first()
            address = default.data if default else None
        mapping = Document.objects.filter(customer=customer, kind=accounting.MAPPING,
                                          data__currentAccountId=int(account.key)).first()
        chart = Document.objects.filter(customer=customer, kind=accounting.CHART,
                                        key=str(mapping.data["accountId"])).first() if mapping else None
        if chart is not None:
            party.update(accountName=chart.data.get("name"), accountCode=accounting.full_code(chart.data))
    party["name"] = (body.get("currentAccountName") or
                     " ".join(filter(None, (given.get("name"), given.get("surname")))) or party["name"] or
                     title_of(customer, identifier) or identifier)
    address = address or {}
    party["address"] = {"street": " ".join(filter(None, (address.get("streetName"), address.get("buildingNumber")))),
                        "district": address.get("subDivisionName") or DEFAULT_ADDRESS["district"],
                        "city": address.get("city") or DEFAULT_ADDRESS["city"],
                        "country": address.get("country") or DEFAULT_ADDRESS["country"],
                        "postalZone": address.get("postalZone") or ""}
    return party


def record(facts: dict, *, party: dict, body: dict, identifier: str, alias, at: datetime, branch=None,
           figures: dict | None = None) -> dict:
    """The data of an invoice (see the module's docstring), the list item's fields first."""
    figures = figures or totals(facts["lines"])
    general = body.get("generalInfoModel") or {}
    notes = body.get("notes") if body.get("notes") is not None else (
        [{"note": body["note"]}] if not blank(body.get("note")) else [])
    payment = body.get("paymentMeansModel") or {}
    rate, moment_text = facts["rate"], stamp(at)
    data = {
        "isSend": facts["is_send"], "branchId": branch or party["branchId"], "profile": PROFILES[facts["profile"]],
        "type": TYPES[facts["type"]], "recordType": facts["record_type"], "invoiceProcessStatus": 0,
        "recordStatus": NOT_POSTED, "issueDate": facts["issue_date"].isoformat(), "lineCount": len(facts["lines"]),
        "targetAlias": alias or None, "targetTitle": party["name"], "targetVknTckn": identifier,
        "currencyId": CURRENCY_IDS.get(facts["currency"]), "exchangeRate": float(rate) if rate is not None else None,
        "exchangeRateComment": general.get("exchangeRateComment") if rate is not None else None,
        "exchangeRateSource": general.get("exchangeRateSource") if rate is not None else None,
        "payableAmount": float(figures["payable"]), "taxExclusiveAmount": float(figures["net"]),
        "taxTotal": float(figures["vat"] + figures["added"]), "totalAmount": float(figures["inclusive"]),
        "createDateUtc": moment_text, "updateDateUtc": moment_text, "message": "",
        "invoice": {
            "description": body.get("description"), "currentAccountCode": body.get("currentAccountCode"),
            "currentAccountAccountName": party["accountName"], "curAccAccCode": party["accountCode"],
            "taxOffice": party["taxOffice"], "address": party["address"], "note": body.get("note"), "notes": notes,
            "generalInfoModel": {"prefix": general.get("prefix") if facts["is_send"] else None,
                                 "invoiceProfileType": facts["profile"], "type": facts["type"],
                                 "currencyCode": facts["currency"], "issueTime": facts["issue_time"],
                                 "returnInvoiceNumber": general.get("returnInvoiceNumber"),
                                 "returnInvoiceDate": general.get("returnInvoiceDate")},
            "invoiceLines": facts["lines"], "paymentMeansModel": payment,
            "archiveInfoModel": body.get("archiveInfoModel") or {}, "invoiceTotalsModel": totals_model(figures),
        },
    }
    data["search"] = {name: fold(data.get(name)) for name in SEARCH}
    return data


# --- the status machine -------------------------------------------------------------------------------------------

def queue(settings: SandboxSetting, doc: Document, at: datetime) -> None:
    """Queue an outgoing invoice: its path of statuses and the moment of its first move."""
    path = PATHS[doc.data["recordType"]]
    step = settings.ticket_processing_seconds / (len(path) - 1)
    if goes_wrong(doc.key, settings.ticket_error_rate):
        path = (QUEUED, ERROR)
    doc.status, doc.due_at = QUEUED, at + timedelta(seconds=step)
    doc.data = {**doc.data, "message": "", "updateDateUtc": stamp(at),
                "machine": {"queuedAt": stamp(at), "step": step, "path": list(path)}}


def _advance(doc: Document, at: datetime) -> None:
    """Take every move of the invoice's path that is due at `at`, each dated when it was due."""
    machine = doc.data["machine"]
    queued, step, path = datetime.fromisoformat(machine["queuedAt"]), timedelta(seconds=machine["step"]), \
        machine["path"]
    index = path.index(doc.status) if doc.status in path else 0
    while index < len(path) - 1 and queued + step * (index + 1) <= at:
        index += 1
    moved = queued + step * index
    doc.status = path[index]
    doc.due_at = queued + step * (index + 1) if index < len(path) - 1 else None
    doc.data = {**doc.data, "updateDateUtc": stamp(moved),
                "message": ERROR_MESSAGE if doc.status == ERROR else ""}


# Other lives the store's reads settle too, each settler(customer, at): the answers to incoming commercial invoices
# and their automatic acceptance (invoice_responses.py registers itself, so that this module imports it not).
SETTLERS = []


def settle(call: Call) -> None:
    """Move the customer's outgoing invoices whose time has come (lazily: on every read), and what SETTLERS move."""
    at = now(call)
    for settler in SETTLERS:
        settler(call.customer, at)
    due = Document.objects.filter(customer=call.customer, kind=OUTGOING, status__in=(QUEUED, RUNNING, SENT),
                                  due_at__lte=at)
    if not due.exists():
        return
    with locked(call.customer):
        docs = list(due)  # again under the lock: a concurrent request may have moved them
        for doc in docs:
            _advance(doc, at)
        Document.objects.bulk_update(docs, ["status", "data", "due_at"], batch_size=500)


# --- the answers --------------------------------------------------------------------------------------------------

def list_item(doc: Document) -> dict:
    item = {"ettn": doc.key, "invoiceNumber": doc.number or None, "invoiceStatus": doc.status,
            **{name: doc.data.get(name) for name in ITEM_FIELDS}}
    if doc.kind == OUTGOING:
        del item["invoiceProcessStatus"]
    return item


def invoice_view(doc: Document) -> dict:
    """The invoice as get, save and update answer it (document 3, 2.6: the save result and the get result)."""
    data, saved = doc.data, doc.data["invoice"]
    payment = {**dict.fromkeys(PAYMENT_MODEL), **saved["paymentMeansModel"]}
    payment["payeeFinancialAccountCurrencyCode"] = (saved["generalInfoModel"]["currencyCode"]
                                                    if payment.get("payeeFinancialAccountId") else None)
    return {
        "branchId": data["branchId"], "isSend": data["isSend"], "recordType": data["recordType"],
        "recordStatus": data["recordStatus"], "invoiceStatus": doc.status,
        "invoiceProcessStatus": data["invoiceProcessStatus"], "message": data["message"],
        "description": saved["description"], "currentAccountIdentifier": data["targetVknTckn"],
        "currentAccountCode": saved["currentAccountCode"], "currentAccountAlias": data["targetAlias"],
        "currentAccountName": data["targetTitle"], "currentAccountAccountName": saved["currentAccountAccountName"],
        "curAccAccCode": saved["curAccAccCode"], "note": saved["note"], "notes": saved["notes"],
        "generalInfoModel": {"ettn": doc.key, "invoiceNumber": doc.number or None, "issueDate": data["issueDate"],
                             "exchangeRate": data["exchangeRate"], "exchangeRateSource": data["exchangeRateSource"],
                             "exchangeRateComment": data["exchangeRateComment"], **saved["generalInfoModel"]},
        "invoiceLines": [{**dict.fromkeys(LINE_MODEL), **RESULT_LINE_EXTRAS, "discountRate": 0, "discountAmount": 0,
                          "serialNumberList": [], "serialNoEnabled": bool(line.get("serialNumberList")), **line}
                         for line in saved["invoiceLines"]],
        "paymentMeansModel": payment, "archiveInfoModel": {**dict.fromkeys(ARCHIVE_MODEL), **saved["archiveInfoModel"]},
        "invoiceTotalsModel": saved["invoiceTotalsModel"],
        "createDateUtc": data["createDateUtc"], "updateDateUtc": data["updateDateUtc"],
    }


# --- the invoice service's view of the store (invoice.py) ---------------------------------------------------------

BOXES = {"outbox": (OUTGOING, E_INVOICE, "outgoing e-invoice"), "earchive": (OUTGOING, E_ARCHIVE,
                                                                           "outgoing e-archive invoice"),
         "inbox": (INCOMING, None, "incoming invoice")}


def _belongs(doc: Document, box: str) -> bool:
    kind, record_type, _ = BOXES[box]
    return doc.kind == kind and (record_type is None or doc.data["recordType"] == record_type)


def on_path(call: Call, box: str, invoice_id) -> Document | None:
    """The stored invoice an invoice-service path asks for; None when the store does not know the id; 404 when
    it is another box's (an e-archive invoice asked on the outbox path), as the real platform answers."""
    settle(call)
    doc = find(call.customer, invoice_id)
    if doc is not None and not _belongs(doc, box):
        raise refused("Not Found", f"No {BOXES[box][2]} with id {invoice_id}.", 404)
    return doc


def known_statuses(call: Call, box: str, ids: list) -> dict:
    """{id: the stored invoice, or None when it is another box's} of the ids the store knows."""
    settle(call)
    keys = {canonical(invoice_id): invoice_id for invoice_id in ids if canonical(invoice_id)}
    found = Document.objects.filter(customer=call.customer, kind__in=(OUTGOING, INCOMING), key__in=list(keys))
    return {keys[doc.key]: doc if _belongs(doc, box) else None for doc in found}
