"""Accounting service, invoices (document 3, sections 2.6, 3.1 and 4.2): the incoming and outgoing lists, get,
save, update, delete, post to accounting and reverse; the store that the invoice service (invoice.py) answers
status, PDF, HTML and UBL from; the status machine of outgoing invoices; the tax authority's list of registered
users. The control actions that seed invoices, set a status and register users are in invoice_control.py.

Document kinds (customer-scoped):
  outgoing_invoice / incoming_invoice   key ettn, number invoiceNumber, status invoiceStatus, created the
                    moment it was saved, due_at the next move of an outgoing invoice the platform works on;
                    data = the list item's fields (filtered and sorted in the database), "search" (their folded
                    copies, list_filters.fold), "invoice" (the rest as saved, with the computed lines and totals)
                    and "machine" (when it was queued, the step, its path of statuses).
  invoice_counter   key prefix + year; data {"last": the last counter issued}.
  invoice_seeded    key "incoming" / "outgoing"; data {"last": the last sequence number seeded}.
  taxpayer          a user added by POST /_control/invoices/taxpayers: number the identifier, data its list item.

Choices where document 3 and the facts file say "not shown" (the back office relies on them):
- Methods and paths are the defaults of backoffice/remote/endpoints.py (accounting_invoice.*). Answers are
  camelCase; amounts are JSON numbers with 2 decimals; dates ISO (issueDate yyyy-MM-dd, issueTime HH:mm:ss,
  createDateUtc and updateDateUtc UTC with microseconds, so that they sort as text).
- A body that does not fit the model below answers 422 (common.bind). Ids (branchId, currentAccountId,
  invoiceTaxSettingId, withHoldingId, deliveryTermsId) are integers; amounts, rates and quantities numbers;
  paymentMeansCode a string (a whole number is taken as its digits: the provider's client has an enum).
  Rule failures answer 400 {"title": "Validation failed", "detail": "<field>: <message>; ..."}, all at once,
  nested fields named by their path (generalInfoModel.prefix, invoiceLines[0].taxes[1].taxRate).
- isSend missing is false (incoming), a bool's default. recordType missing is decided by the taxpayer list:
  1 for a registered e-invoice user (AppType 1), else 0. An outgoing e-invoice needs a registered user and one
  of its e-invoice mailboxes; an outgoing e-archive invoice to a registered user is refused. An e-archive
  invoice's profile is EARSIVFATURA (4); an e-invoice's is 0 to 3 (0 when a save leaves it out).
- currencyCode is one of CURRENCY_IDS (the back office's default currencyCodeId list); missing is TRY.
  issueDate missing is today; an outgoing invoice's year must be 20xx (its number holds it).
- An incoming invoice (isSend false) carries the supplier's invoiceNumber (required) and is approved (60).
- ettn: a GUID the client gives is kept (any case; answered lowercase), one the customer already has is refused
  ("generalInfoModel.ettn: already exists ..."), none gives a new one. Get with isSend looks in that direction
  only (404 in the other), without isSend in both.
- What the tax authority's schematron ties to the invoice type is refused at save, as the platform refuses it
  (_type_rules): withholding (and tax 4171) outside TEVKIFAT, IADE and SGK; an exemption reason on a type it is not
  for, or a full exemption on a line with VAT (701-704, 801-812 and 555 may have VAT; 555 must, and beside a 555
  line no line's VAT may be 0 or come to 0.00: _fixed_asset_rule); a return (IADE)
  e-invoice other than TEMELFATURA; an issueDate before 2005.
- Lists: filterQuery and sortedColumn as the current-account lists (list_filters.py), with the categories of
  COLUMNS, the members of a condition and sortedColumn spelled exactly as document 3 spells them (_exact); updateDateUtc and createDateUtc compare as moments (ISO, any offset; naive ones in Türkiye's time),
  issueDate as a day (yyyy-MM-dd or dd.MM.yyyy), the amounts as numbers. Default order: createDateUtc ascending.
- Outgoing numbers: prefix + year of issueDate + 9-digit counter per customer, prefix and year, consecutive,
  never reused. An update keeps the number: another invoiceNumber or prefix is refused.
- Totals (the facts file): line gross = quantity x unitPrice rounded; discount = discountRate% of the gross
  rounded, plus discountAmount rounded (a discount above the gross is refused); net = gross - discount
  (lineExtensionAmount; lineAmount is the gross); VAT = vatRate% of the net rounded; a tax with isWithHolding
  is withholding at taxRate% of the VAT; other taxes taxRate% of the net, 0003 and 0011 (stopaj) deducted from
  the payable, the others added (0015 is refused there: VAT is the line's vatRate). Document figures are the
  sums of the line figures: taxInclusive = net + VAT + added, payable = taxInclusive - withholding - stopaj.
  List items: taxTotal = VAT + added taxes, totalAmount = taxInclusive. ROUND_HALF_UP to 2 places throughout.
- currentAccount of the body is kept with the invoice (its name and address go on the documents); the
  sandbox does not create a current account from it. Else the name and address are the current account's
  (identifier and code) in this store, or the taxpayer list's title.
- Status machine of outgoing invoices (settled lazily on every read, like statuses.py): queued (20) -> running
  (30) -> approved (60) for e-archive, 20 -> 30 -> sent to the tax authority (50) -> approved (60) for
  e-invoice, one step every ticket_processing_seconds / steps (2 or 3), fixed when the invoice was queued. The
  share ticket_error_rate (decided by the ettn; 0 and 1 exact) goes 20 -> error (40) at the first step, with a
  message in Turkish. Every move sets updateDateUtc to the moment of the move. An update of an invoice in
  error queues it again; POST /_control/invoices/status sets any status (20 queues again, others stop it).
- Delete answers 200 {}; its failures {"Error": text}: 404 unknown, 400 posted or an e-invoice. Post and
  reverse take [{ettn, isSend}], all or none: any refusal answers 400 {"Error": every refused one named}.
  Post needs lines, not cancelled (10 or 100), not posted, and the customer's current account (identifier and
  currentAccountCode) mapped to a sub-account (2.6; accounting.posting_refusal); reverse needs posted.
"""

import functools
import hashlib
import json
import re
import uuid
from datetime import date, datetime, timedelta
from datetime import timezone as dt_timezone
from decimal import ROUND_HALF_UP, Decimal

from django.db import transaction
from django.utils import timezone
from stdnum.tr import vkn

from .. import fakes
from ..api import ApiError, Call, binding_failed, operation
from ..models import Document, SandboxSetting
from . import accounting
from .common import (
    BOOLEAN,
    INTEGER,
    NUMBER,
    STRING,
    Checks,
    array,
    bind,
    blank,
    check_model,
    decimal,
    is_guid,
    lock,
    moment,
    now,
    page,
    paged_query,
    read_body,
    refused,
    vkn_tckn_problem,
)
from .list_filters import OPERATORS, TEXT_ONLY, Column, filtered, fold
from .statuses import goes_wrong

OUTGOING, INCOMING, COUNTER, SEEDED, TAXPAYER = (
    "outgoing_invoice", "incoming_invoice", "invoice_counter", "invoice_seeded", "taxpayer")
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
# What the tax authority's schematron ties to the invoice type, refused at save as the platform refuses it
# (the back office's core/codes.py says the same; the sandbox imports no app). README-invoices.md.
WITHHOLDING_TYPES = ("TEVKIFAT", "IADE", "SGK")  # a withholding (and tax 4171) only on these
WITHHOLDING_ONLY_TAXES = ("4171",)
EXPORT_REGISTERED_REASONS = ("701", "702", "703", "704")
SPECIAL_BASE_REASONS = tuple(str(code) for code in range(801, 813))
FIXED_ASSET_REASON, NOT_EXEMPT_REASON = "555", "351"
REASONS_WITH_VAT = EXPORT_REGISTERED_REASONS + SPECIAL_BASE_REASONS + (FIXED_ASSET_REASON,)
RETURN_PROFILES = (0, EARSIVFATURA)  # a return (IADE) is TEMELFATURA or EARSIVFATURA
EARLIEST_ISSUE = date(2005, 1, 1)
VAT_CODE = "0015"
PREFIX = re.compile(r"[A-Z0-9]{3}")
UNIT_CODE = re.compile(r"[A-Z0-9]{2,3}")
CLOCK = re.compile(r"([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\.[0-9]+)?)?")
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
MOVE_MODEL = {"ettn": STRING, "isSend": BOOLEAN}
RESULT_LINE_EXTRAS = dict.fromkeys((
    "inventoryServiceId", "inventoryServiceType", "inventoryCard", "inventoryInputUnitCodeId",
    "inventoryInputUnitCodeName", "inventoryOutputUnitCodeId", "inventoryOutputUnitCodeName", "warehouseId",
    "warehouseName", "expenseAccountId", "unitCodeId", "despatchItemId", "despatchId", "despatchAmount",
    "despatchSerialNumbers", "vatExemptionReason"))

# --- the lists: columns, categories and sort keys --------------------------------------------------------------

ITEM_FIELDS = ("branchId", "profile", "type", "recordType", "invoiceProcessStatus", "recordStatus", "issueDate",
               "lineCount", "targetAlias", "targetTitle", "targetVknTckn", "currencyId", "exchangeRate",
               "exchangeRateComment", "exchangeRateSource", "payableAmount", "taxExclusiveAmount", "taxTotal",
               "totalAmount", "createDateUtc", "updateDateUtc")
SEARCH = ("targetTitle", "targetVknTckn", "targetAlias", "profile", "type")
# Categories and sort columns are the list item's field names, spelled as document 3 spells them (exactly: a
# platform that binds names does not guess at capitals). Typed categories are compared here (moments, days and
# amounts); the others go to list_filters.filtered.
MOMENTS = {"updateDateUtc": "data__updateDateUtc", "createDateUtc": "data__createDateUtc"}
DAYS = {"issueDate": "data__issueDate"}
AMOUNTS = {"payableAmount": "data__payableAmount", "taxExclusiveAmount": "data__taxExclusiveAmount",
           "totalAmount": "data__totalAmount", "taxTotal": "data__taxTotal"}
COLUMNS = (Column("invoiceNumber", "number"), Column("targetVknTckn", "data__targetVknTckn"),
           Column("targetTitle", "data__targetTitle"), Column("targetAlias", "data__targetAlias"),
           Column("profile", "data__profile"), Column("type", "data__type"),
           Column("invoiceStatus", "status", True), Column("recordType", "data__recordType", True),
           Column("recordStatus", "data__recordStatus", True), Column("currencyId", "data__currencyId", True),
           *(Column(name, "") for name in (*MOMENTS, *DAYS, *AMOUNTS)))
CATEGORIES = tuple(column.name for column in COLUMNS)
CONDITION_MEMBERS = ("category", "operator", "value")
SORTS = {"createDateUtc": "created", "updateDateUtc": "data__updateDateUtc", "issueDate": "data__issueDate",
         "invoiceNumber": "number", "invoiceStatus": "status", "payableAmount": "data__payableAmount",
         "targetTitle": "data__targetTitle", "targetVknTckn": "data__targetVknTckn", "recordType": "data__recordType",
         "recordStatus": "data__recordStatus", "ettn": "key"}


# --- small helpers ---------------------------------------------------------------------------------------------

def money(value: Decimal) -> Decimal:
    return value.quantize(CENT, rounding=ROUND_HALF_UP)


def number(value) -> Decimal:
    """The Decimal of a stored figure (JSON numbers come back as floats; str keeps their digits)."""
    return Decimal(str(value)) if value is not None else Decimal(0)


def stamp(at: datetime) -> str:
    """A moment as the lists give and compare it: UTC, always with microseconds, so text order is time order."""
    return at.astimezone(dt_timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f+00:00")


def _day(value) -> date | None:
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


def _error(text: str, status: int = 400) -> ApiError:
    """A failure of delete, post or reverse (document 3, section 4): an object with field Error."""
    return ApiError(status, {"Error": text})


def _is_send(call: Call, errors_as_error: bool = False) -> bool | None:
    raw = call.query.get("isSend", "").strip().lower()
    if raw in ("true", "false"):
        return raw == "true"
    if raw == "" and not errors_as_error:
        return None
    text = f"isSend: must be true (outgoing) or false (incoming) (got '{call.query.get('isSend', '')}')."
    raise _error(text) if errors_as_error else refused("Bad Request", text)


def _noun(doc: Document) -> str:
    return f"invoice {doc.number} ({doc.key})" if doc.number else f"invoice {doc.key}"


# --- the taxpayer list (the tax authority's registered users) ---------------------------------------------------

SANDBOX_USER = "1234567890"
SANDBOX_ALIASES = ("urn:mail:defaultpk@sandbox-musteri.com.tr", "urn:mail:fatura@sandbox-musteri.com.tr")
EINVOICE_APP, DISPATCH_APP = 1, 3  # AppType: e-invoice mailbox, e-dispatch mailbox
TITLE_WORDS = ("Anadolu", "Marmara", "Ege", "Toros", "Karadeniz", "Yıldız", "Çınar", "Güneş", "Doğu", "Kuzey")
TITLE_TRADES = ("Gıda", "Tekstil", "İnşaat", "Lojistik", "Yazılım", "Makine", "Kimya", "Enerji", "Tarım", "Turizm")


def generated_vkn(*parts) -> str:
    """A valid VKN (check digit included) decided by the parts."""
    digest = hashlib.sha256(":".join(map(str, parts)).encode()).digest()
    base = str(int.from_bytes(digest[:8], "big") % 900_000_000 + 100_000_000)
    return base + vkn.calc_check_digit(base)


@functools.lru_cache(maxsize=64)
def generated_taxpayers(customer_unique_id: str) -> tuple[tuple[dict, ...], dict]:
    """(items, {identifier: e-invoice aliases}) of the list every customer starts with: the sandbox's customer
    of the examples (1234567890) with two mailboxes, 180 other e-invoice users and 20 e-dispatch-only users, all
    with VKNs decided by the customer (so 4840000006 and 10000000146, the examples' e-archive customers, are
    not on it)."""

    def user(identifier, title, alias, app_type, index):
        created = datetime(2014, 1, 1) + timedelta(days=index * 11 % 3650, seconds=index * 37)
        return {"Identifier": identifier, "Title": title, "Alias": alias, "AppType": app_type,
                "Type": "Kamu" if index % 25 == 7 else "Özel", "FirstCreationTime": created.isoformat(),
                "AliasCreationTime": (created + timedelta(days=index % 40)).isoformat()}

    items = [user(SANDBOX_USER, "Sandbox Müşteri A.Ş.", alias, EINVOICE_APP, 0) for alias in SANDBOX_ALIASES]
    items.append(user(SANDBOX_USER, "Sandbox Müşteri A.Ş.", "urn:mail:irsaliyepk@sandbox-musteri.com.tr",
                      DISPATCH_APP, 0))
    for index in range(1, 201):
        identifier = generated_vkn(customer_unique_id, "taxpayer", index)
        title = f"{TITLE_WORDS[index % 10]} {TITLE_TRADES[index // 10 % 10]} {index:03d} A.Ş."
        domain = f"mukellef{index:03d}.com.tr"
        if index <= 180:
            items.append(user(identifier, title, f"urn:mail:defaultpk@{domain}", EINVOICE_APP, index))
        if index > 180 or index % 10 == 0:  # an e-dispatch mailbox (AppType 3) alone makes no e-invoice user
            items.append(user(identifier, title, f"urn:mail:irsaliyepk@{domain}", DISPATCH_APP, index))
    aliases = {}
    for item in items:
        if item["AppType"] == EINVOICE_APP:
            aliases.setdefault(item["Identifier"], []).append(item["Alias"])
    return tuple(items), aliases


def taxpayers(customer) -> list[dict]:
    """Every item of the customer's taxpayer list: the generated ones and those added by the control action."""
    added = Document.objects.filter(customer=customer, kind=TAXPAYER).order_by("pk").values_list("data", flat=True)
    return [*generated_taxpayers(str(customer.customer_unique_id))[0], *added]


def einvoice_aliases(customer, identifier: str) -> list[str]:
    """The e-invoice mailboxes (AppType 1) of an identifier; empty when it is no e-invoice user."""
    seeded = generated_taxpayers(str(customer.customer_unique_id))[1].get(identifier, [])
    added = Document.objects.filter(customer=customer, kind=TAXPAYER, number=identifier,
                                    data__AppType=EINVOICE_APP).values_list("data__Alias", flat=True)
    return list(dict.fromkeys([*seeded, *added]))


def _title_of(customer, identifier: str) -> str | None:
    for item in generated_taxpayers(str(customer.customer_unique_id))[0]:
        if item["Identifier"] == identifier:
            return item["Title"]
    added = Document.objects.filter(customer=customer, kind=TAXPAYER, number=identifier).first()
    return added.data.get("Title") if added else None


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


def _check_line(checks: Checks, place: str, line: dict) -> None:
    """The rules of one line: quantity, price, unit, VAT and its exemption, discounts and taxes."""
    quantity, price, vat_rate = (decimal(line.get(name)) for name in ("amount", "unitPrice", "vatRate"))
    if quantity is None:
        checks.add(f"{place}.amount", "The amount (quantity) field is required.")
    elif quantity <= 0:
        checks.add(f"{place}.amount", f"amount (quantity) must be greater than 0 (got {quantity}).")
    if price is None:
        checks.add(f"{place}.unitPrice", "The unitPrice field is required.")
    elif price < 0:
        checks.add(f"{place}.unitPrice", f"unitPrice must not be negative (got {price}).")
    unit = line.get("unitCode")
    if blank(unit):
        checks.add(f"{place}.unitCode", "The unitCode field is required (a UN/ECE unit code such as C62 or KGM).")
    elif not UNIT_CODE.fullmatch(unit):
        checks.add(f"{place}.unitCode", f"unitCode must be a UN/ECE unit code such as C62 or KGM (got '{unit}').")
    if vat_rate is None:
        checks.add(f"{place}.vatRate", "The vatRate field is required (0 to 100).")
    elif not 0 <= vat_rate <= 100:
        checks.add(f"{place}.vatRate", f"vatRate must be between 0 and 100 (got {vat_rate}).")
    elif vat_rate == 0 and blank(line.get("vatExemptionReasonCode")):
        checks.add(f"{place}.vatExemptionReasonCode",
                   "The vatExemptionReasonCode field is required when vatRate is 0 (an exemption code such as 351).")
    rate, amount = decimal(line.get("discountRate")), decimal(line.get("discountAmount"))
    if rate is not None and not 0 <= rate <= 100:
        checks.add(f"{place}.discountRate", f"discountRate must be between 0 and 100 (got {rate}).")
    if amount is not None and amount < 0:
        checks.add(f"{place}.discountAmount", f"discountAmount must not be negative (got {amount}).")
    for where, tax in checks.objects(line.get("taxes"), f"{place}.taxes", "taxes", "tax"):
        code, tax_rate = tax.get("taxTypeCode"), decimal(tax.get("taxRate"))
        withholding = tax.get("isWithHolding") is True
        if blank(code):
            checks.add(f"{where}.taxTypeCode", "The taxTypeCode field is required (a tax type or withholding code).")
        elif code == VAT_CODE and not withholding:
            checks.add(f"{where}.taxTypeCode", "VAT (0015) is given by the line's vatRate; list other taxes here.")
        if tax_rate is None:
            checks.add(f"{where}.taxRate", "The taxRate field is required.")
        elif not (0 < tax_rate <= 100 if withholding else 0 <= tax_rate <= 100):
            what = "a withholding's share of the VAT must be above 0 and at most 100" if withholding else \
                "taxRate must be between 0 and 100"
            checks.add(f"{where}.taxRate", f"{what} (got {tax_rate}).")


def _lines(checks: Checks, lines) -> list[dict]:
    """The body's lines priced, with their problems added (a line with a problem is left out)."""
    result = []
    for place, line in checks.objects(lines, "invoiceLines", "invoiceLines", "invoice line"):
        before = len(checks.items)
        _check_line(checks, place, line)
        if len(checks.items) > before:
            continue
        stored = priced(line)
        if stored["lineExtensionAmount"] < 0:
            gross, net = money(number(stored["lineAmount"])), money(number(stored["lineExtensionAmount"]))
            checks.add(f"{place}.discountAmount", f"The discounts ({gross - net}) exceed the line's amount ({gross}).")
            continue
        result.append(stored)
    return result


# --- save and update: the rules ---------------------------------------------------------------------------------

def _rules(call: Call, body: dict, doc: Document | None) -> dict:
    """The rules of 2.6, 3.1 and 4.2 on a save (doc None) or on an update of doc. Raises 400 naming every
    problem; else returns what the invoice is made of."""
    checks, general = Checks(body), body.get("generalInfoModel") or {}
    info = Checks(general)
    is_send = doc.data["isSend"] if doc is not None else body.get("isSend") is True
    checks.required("description")
    record_type = _party_rules(call, body, checks, is_send)
    _number_rules(general, info, is_send, doc)
    profile = _profile_rules(general, info, record_type, is_send, doc)
    kind = 1 if general.get("type") is None else general["type"]  # SATIS when left out
    if kind not in TYPES:
        info.add("type", f"type must be 1 to 9 (got {kind}).")
    currency, rate = _currency_rules(general, info)
    issue_date, issue_time = _date_rules(call, general, info, is_send)
    ettn = _ettn_rule(call, general, info, doc)
    lines = _lines(checks, body.get("invoiceLines"))
    if kind in TYPES:
        _type_rules(checks, info, body.get("invoiceLines"), TYPES[kind], record_type, profile)
    for name, message in info.items:
        checks.add(f"generalInfoModel.{name}", message)
    checks.raise_any()
    _fixed_asset_rule(checks, lines)  # on priced lines: every line is valid here, in the body's order
    checks.raise_any()
    if record_type == E_ARCHIVE:
        profile = EARSIVFATURA
    return {"is_send": is_send, "record_type": record_type, "profile": profile or 0, "type": kind,
            "currency": currency, "rate": rate, "issue_date": issue_date, "issue_time": issue_time,
            "ettn": ettn if not blank(ettn) else str(uuid.uuid4()), "lines": lines}


def _reason_types(code: str) -> tuple[str, ...] | None:
    """The types an exemption reason may appear on (None: any)."""
    if code in EXPORT_REGISTERED_REASONS:
        return ("IHRACKAYITLI", "IADE", "SGK")
    if code in SPECIAL_BASE_REASONS:
        return ("OZELMATRAH", "IADE", "SGK")
    if code == FIXED_ASSET_REASON:
        return tuple(name for name in TYPES.values() if name not in ("ISTISNA", "IHRACKAYITLI"))
    if code == NOT_EXEMPT_REASON:
        return None
    return ("ISTISNA", "IADE", "IHRACKAYITLI", "SGK")  # the full exemptions


def _fixed_asset_rule(checks: Checks, lines: list[dict]) -> None:
    """A 555 (fixed assets) line anywhere: no line may have vatRate 0 or VAT that comes to 0.00 (the tax
    authority's DemirbasKDVTaxExemptionCheck-2 reads the whole invoice)."""
    if not any(line.get("vatExemptionReasonCode") == FIXED_ASSET_REASON for line in lines):
        return
    for index, line in enumerate(lines):
        if not number(line["vatRate"]) or not number(line["vatAmount"]):
            checks.add(f"invoiceLines[{index}].vatRate", "A line with vatExemptionReasonCode 555 (fixed assets) is "
                                                         "on this invoice: no line may have VAT 0 (vatRate 0 or a "
                                                         f"VAT amount of 0.00; got vatRate {line['vatRate']}, VAT "
                                                         f"{line['vatAmount']:.2f}).")


def _objects(value, where: str):
    """(place, item) of the objects of an array (its other problems are _lines' to name)."""
    for index, item in enumerate(value if isinstance(value, list) else []):
        if isinstance(item, dict):
            yield f"{where}[{index}]", item


def _type_rules(checks: Checks, info: Checks, lines, kind: str, record_type, profile) -> None:
    """What the invoice type allows (the tax authority's schematron): the profile of a return, the exemption
    reasons and VAT of each line, withholding."""
    if kind == "IADE" and record_type == E_INVOICE and (profile or 0) not in RETURN_PROFILES:
        info.add("type", f"A return (IADE) e-invoice is TEMELFATURA (invoiceProfileType 0), not "
                         f"{PROFILES[profile] if profile in range(len(PROFILES)) else profile}.")
    for place, line in _objects(lines, "invoiceLines"):
        code, vat_rate = line.get("vatExemptionReasonCode"), decimal(line.get("vatRate"))
        if not blank(code) and vat_rate is not None:
            types = _reason_types(code)
            if vat_rate > 0 and code not in REASONS_WITH_VAT:
                checks.add(f"{place}.vatExemptionReasonCode", f"{code} is an exemption from VAT: only on a line with "
                                                              f"vatRate 0 (a line with VAT takes 701-704, 801-812 or "
                                                              f"555; got vatRate {vat_rate}).")
            elif vat_rate == 0 and code == FIXED_ASSET_REASON:
                checks.add(f"{place}.vatExemptionReasonCode", "555 (fixed assets) is for a line with VAT (vatRate "
                                                              "above 0).")
            elif types is not None and kind not in types:
                checks.add(f"{place}.vatExemptionReasonCode", f"{code} is not for a {kind} invoice: it goes on "
                                                              f"{', '.join(types)}.")
        if kind in WITHHOLDING_TYPES:
            continue
        for where, tax in _objects(line.get("taxes"), f"{place}.taxes"):
            if tax.get("isWithHolding") is True or tax.get("taxTypeCode") in WITHHOLDING_ONLY_TAXES:
                checks.add(f"{where}.taxTypeCode", f"Withholding ({tax.get('taxTypeCode')}) is only on a TEVKIFAT, "
                                                   f"IADE or SGK invoice (type 5, 2 or 8; got {kind}).")


def _party_rules(call: Call, body: dict, checks: Checks, is_send: bool) -> int:
    """The customer, its mailbox and the invoice's kind (4.2 save rule 2: the taxpayer list decides). Returns the
    recordType."""
    identifier = body.get("currentAccountIdentifier")
    if checks.required("currentAccountIdentifier"):
        checks.vkn_tckn("currentAccountIdentifier")
    known_identifier = identifier if not blank(identifier) and not vkn_tckn_problem(identifier) else None
    aliases = einvoice_aliases(call.customer, known_identifier) if known_identifier else []
    record_type = body.get("recordType")
    if record_type is None:
        record_type = E_INVOICE if aliases else E_ARCHIVE
    elif record_type not in (E_ARCHIVE, E_INVOICE):
        checks.add("recordType", f"recordType must be 0 (e-archive) or 1 (e-invoice) (got {record_type}).")
    alias = body.get("currentAccountAlias")
    if record_type == E_INVOICE and is_send and known_identifier and not aliases:
        checks.add("currentAccountAlias", f"{identifier} is not registered as an e-invoice user in the tax "
                                          "authority's list: issue an e-archive invoice (recordType 0).")
    elif record_type == E_INVOICE and blank(alias):
        checks.add("currentAccountAlias", "The currentAccountAlias field (the customer's mailbox) is required for "
                                          "an e-invoice.")
    elif record_type == E_INVOICE and is_send and aliases and alias not in aliases:
        checks.add("currentAccountAlias", f"{alias} is not an e-invoice mailbox of {identifier}; its mailboxes: "
                                          f"{', '.join(aliases)}.")
    if record_type == E_ARCHIVE and is_send and aliases:
        checks.add("recordType", f"{identifier} is a registered e-invoice user: issue an e-invoice (recordType 1) "
                                 f"to its mailbox ({', '.join(aliases)}), not an e-archive invoice.")
    return record_type


def _number_rules(general: dict, info: Checks, is_send: bool, doc: Document | None) -> None:
    """4.2 save rules 1 and 4, update rules 1 and 4: no number on an outgoing save, a prefix; the supplier's
    number on an incoming invoice."""
    invoice_number = general.get("invoiceNumber")
    if is_send:
        if doc is None and not blank(invoice_number):
            info.add("invoiceNumber", "must not be sent for an outgoing invoice: the number is issued when it is "
                                      "saved.")
        elif doc is not None and not blank(invoice_number) and invoice_number != doc.number:
            info.add("invoiceNumber", f"The number of an outgoing invoice is issued by the platform and stays "
                                      f"{doc.number}.")
        prefix = general.get("prefix")
        if blank(prefix):
            info.add("prefix", "The prefix field is required for an outgoing invoice.")
        elif not PREFIX.fullmatch(prefix):
            info.add("prefix", f"prefix must be 3 capital letters or digits (got '{prefix}').")
        elif doc is not None and not doc.number.startswith(prefix):
            info.add("prefix", f"The invoice was numbered {doc.number}: its prefix stays {doc.number[:3]}.")
    elif blank(invoice_number):
        info.add("invoiceNumber", "The invoiceNumber field (the supplier's number) is required for an incoming "
                                  "invoice.")
    elif len(invoice_number) > 40:
        info.add("invoiceNumber", f"invoiceNumber must be at most 40 characters (got {len(invoice_number)}).")


def _profile_rules(general: dict, info: Checks, record_type, is_send: bool, doc: Document | None):
    """4.2 update rule 2: an outgoing e-invoice's update names its profile; an e-invoice is 0 to 3."""
    profile = general.get("invoiceProfileType")
    if profile is not None and profile not in range(len(PROFILES)):
        info.add("invoiceProfileType", f"invoiceProfileType must be 0 to 5 (got {profile}).")
    elif record_type == E_INVOICE and is_send and profile is None and doc is not None:
        info.add("invoiceProfileType", "The invoiceProfileType field is required to update an outgoing e-invoice.")
    elif record_type == E_INVOICE and profile in (EARSIVFATURA, 5):
        info.add("invoiceProfileType", f"An e-invoice's profile is 0 to 3 (got {profile}, {PROFILES[profile]}).")
    return profile


def _currency_rules(general: dict, info: Checks) -> tuple:
    """4.2 save rule 3: rate, source and comment when the currency is not TRY. Returns (currency, rate or None)."""
    currency = general.get("currencyCode") or "TRY"
    if currency not in CURRENCY_IDS:
        info.add("currencyCode", f"currencyCode must be one of {', '.join(CURRENCY_IDS)} (got '{currency}').")
    rate = decimal(general.get("exchangeRate"))
    if currency != "TRY":
        if rate is None or rate <= 0:
            info.add("exchangeRate", f"The exchangeRate field is required (above 0) when the currency is not TRY "
                                     f"(got {currency}).")
        for name in ("exchangeRateSource", "exchangeRateComment"):
            if blank(general.get(name)):
                info.add(name, f"The {name} field is required when the currency is not TRY (got {currency}).")
    return currency, rate if currency != "TRY" else None


def _date_rules(call: Call, general: dict, info: Checks, is_send: bool) -> tuple:
    """issueDate (today when left out; an outgoing one's year goes into its number), issueTime, returnInvoiceDate."""
    today = timezone.localtime(now(call))
    issue_date = _day(general.get("issueDate")) if not blank(general.get("issueDate")) else today.date()
    if issue_date is None:
        info.add("issueDate", f"issueDate must be a date, yyyy-MM-dd (got '{general.get('issueDate')}').")
    elif is_send and not 2000 <= issue_date.year <= 2099:
        info.add("issueDate", f"The year of issueDate must be 20xx: the invoice number holds it (got {issue_date}).")
    elif issue_date < EARLIEST_ISSUE:
        info.add("issueDate", f"issueDate must not be before {EARLIEST_ISSUE} (got {issue_date}).")
    issue_time = general.get("issueTime") or today.strftime("%H:%M:%S")
    if not CLOCK.fullmatch(issue_time):
        info.add("issueTime", f"issueTime must be a time, HH:mm:ss (got '{issue_time}').")
    if not blank(general.get("returnInvoiceDate")) and _day(general["returnInvoiceDate"]) is None:
        info.add("returnInvoiceDate", f"returnInvoiceDate must be a date (got '{general['returnInvoiceDate']}').")
    return issue_date, issue_time


def _ettn_rule(call: Call, general: dict, info: Checks, doc: Document | None):
    """A save keeps a client's ettn (a GUID the customer has not used); an update keeps the invoice's."""
    if doc is not None:
        return doc.key
    ettn = general.get("ettn")
    if blank(ettn):
        return ettn
    if canonical(ettn) is None:
        info.add("ettn", f"ettn must be a GUID (got '{ettn}').")
        return ettn
    ettn = canonical(ettn)
    twin = find(call.customer, ettn)
    if twin is not None:
        info.add("ettn", f"already exists: {_noun(twin)} has this ettn; get it instead of saving again.")
    return ettn


def _counterpart(customer, body: dict, identifier: str) -> dict:
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
                     _title_of(customer, identifier) or identifier)
    address = address or {}
    party["address"] = {"street": " ".join(filter(None, (address.get("streetName"), address.get("buildingNumber")))),
                        "district": address.get("subDivisionName") or DEFAULT_ADDRESS["district"],
                        "city": address.get("city") or DEFAULT_ADDRESS["city"],
                        "country": address.get("country") or DEFAULT_ADDRESS["country"],
                        "postalZone": address.get("postalZone") or ""}
    return party


def _record(facts: dict, *, party: dict, body: dict, identifier: str, alias, at: datetime, branch=None,
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

def _queue(settings: SandboxSetting, doc: Document, at: datetime) -> None:
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


def settle(call: Call) -> None:
    """Move the customer's outgoing invoices whose time has come (lazily: on every read)."""
    at = now(call)
    due = Document.objects.filter(customer=call.customer, kind=OUTGOING, status__in=(QUEUED, RUNNING, SENT),
                                  due_at__lte=at)
    if not due.exists():
        return
    with transaction.atomic():
        lock(call.customer)
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


# --- the lists ----------------------------------------------------------------------------------------------------

def _typed(rows, condition: dict, category: str):
    """A condition on a moment, a day or an amount, compared as such (filtered() compares text or integers)."""
    operator = condition.get("operator")
    found = OPERATORS.get(" ".join(str(operator or "").split()).lower())
    if found is None:
        raise refused("Bad Request", f"filterQuery: unknown operator '{operator}'; one of {', '.join(OPERATORS)}.")
    lookup, negated = found
    if lookup in TEXT_ONLY:
        raise refused("Bad Request", f"filterQuery: {category} takes the equality and comparison operators only "
                                     f"(got '{operator}').")
    value = condition.get("value")
    if category in MOMENTS:
        parsed = moment(value) if isinstance(value, str) else None
        name, wanted, what = MOMENTS[category], parsed and stamp(parsed), "an ISO date and time"
    elif category in DAYS:
        parsed = _day(value)
        name, wanted, what = DAYS[category], parsed and parsed.isoformat(), "a date (yyyy-MM-dd)"
    else:
        parsed = decimal(value)
        name, wanted, what = AMOUNTS[category], parsed is not None and float(parsed), "a number"
    if parsed is None:
        raise refused("Bad Request", f"filterQuery: {category} takes {what} (got {value!r}).")
    condition_filter = {f"{name}__{lookup}": wanted}
    return rows.exclude(**condition_filter) if negated else rows.filter(**condition_filter)


def _filtered(rows, raw: str):
    try:
        conditions = json.loads(raw) if raw.strip() else []
    except ValueError:
        return filtered(rows, raw, COLUMNS)  # it names the problem
    conditions = [conditions] if isinstance(conditions, dict) else conditions
    if not isinstance(conditions, list):
        return filtered(rows, raw, COLUMNS)
    rest = []
    for condition in conditions:
        if not isinstance(condition, dict):
            return filtered(rows, raw, COLUMNS)  # it names the problem
        _exact(condition)
        category = str(condition.get("category") or "").strip()
        if category in MOMENTS or category in DAYS or category in AMOUNTS:
            rows = _typed(rows, condition, category)
        else:
            rest.append(condition)
    return filtered(rows, json.dumps(rest), COLUMNS) if rest else rows


def _exact(condition: dict) -> None:
    """A condition's members and category as document 3 spells them (4.1: category, operator, value)."""
    for key in condition:
        member = next((name for name in CONDITION_MEMBERS if str(key).lower() == name), None)
        if member is not None and key != member:
            raise refused("Bad Request", f"filterQuery: unknown member '{key}'; a condition is {{category, operator, "
                                         f"value}}, spelled so.")
    category = str(condition.get("category") or "").strip()
    if category and category not in CATEGORIES:
        raise refused("Bad Request", f"filterQuery: unknown category '{category}'; one of {', '.join(CATEGORIES)} "
                                     f"(spelled so).")


def _ordered(call: Call, rows):
    wanted = call.query.get("sortedColumn", "").strip()
    column = SORTS.get(wanted or "createDateUtc")
    if column is None:
        raise refused("Bad Request", f"sortedColumn: unknown column '{wanted}'; one of {', '.join(SORTS)} "
                                     f"(spelled so).")
    flag = call.query.get("isDesc", "").strip().lower()
    if flag not in ("", "true", "false"):
        raise refused("Bad Request", f"isDesc: must be true or false (got '{call.query['isDesc']}').")
    sign = "-" if flag == "true" else ""
    return rows.order_by(f"{sign}{column}", f"{sign}pk")


def _list(call: Call, kind: str):
    page_index, page_size = page(call)
    settle(call)
    rows = _filtered(Document.objects.filter(customer=call.customer, kind=kind), call.query.get("filterQuery", ""))
    return paged_query(_ordered(call, rows), page_index, page_size, list_item)


@operation("accounting", "GET", BASE + "/incoming/list")
def list_incoming(call: Call):
    return _list(call, INCOMING)


@operation("accounting", "GET", BASE + "/outgoing/list")
def list_outgoing(call: Call):
    return _list(call, OUTGOING)


# --- get, save, update, delete ------------------------------------------------------------------------------------

@operation("accounting", "GET", BASE + "/{guid}")
def get_invoice(call: Call, guid):
    is_send = _is_send(call)
    settle(call)
    kinds = (OUTGOING, INCOMING) if is_send is None else ((OUTGOING,) if is_send else (INCOMING,))
    doc = find(call.customer, guid, kinds)
    if doc is None:
        where = "" if is_send is None else " outgoing" if is_send else " incoming"
        raise refused("Not Found", f"No{where} invoice with ettn {guid}.", 404)
    return invoice_view(doc)


def _body(call: Call) -> dict:
    body = read_body(call)
    payment = body.get("paymentMeansModel") if isinstance(body, dict) else None
    if isinstance(payment, dict) and isinstance(payment.get("paymentMeansCode"), int) \
            and not isinstance(payment["paymentMeansCode"], bool):
        payment["paymentMeansCode"] = str(payment["paymentMeansCode"])  # the provider's client sends its enum
    check_model(body, INVOICE_MODEL)
    return body


@operation("accounting", "POST", BASE)
def save_invoice(call: Call):
    body = _body(call)
    at = now(call)
    with transaction.atomic():
        lock(call.customer)
        facts = _rules(call, body, None)
        identifier = body["currentAccountIdentifier"]
        party = _counterpart(call.customer, body, identifier)
        invoice_number = (_issue(call.customer, body["generalInfoModel"]["prefix"], facts["issue_date"].year)
                          if facts["is_send"] else body["generalInfoModel"]["invoiceNumber"])
        data = _record(facts, party=party, body=body, identifier=identifier, alias=body.get("currentAccountAlias"),
                       at=at, branch=body.get("branchId"))
        doc = Document(customer=call.customer, kind=OUTGOING if facts["is_send"] else INCOMING, key=facts["ettn"],
                       number=invoice_number, status=APPROVED, created=at, data=data)
        if facts["is_send"]:
            _queue(call.settings, doc, at)
        doc.save()
    return invoice_view(doc)


def _issue(customer, prefix: str, year: int) -> str:
    """The next number of prefix and year (the caller holds the customer's lock)."""
    counter, _ = Document.objects.get_or_create(customer=customer, kind=COUNTER, key=f"{prefix}{year}",
                                                defaults={"data": {"last": 0}})
    last = counter.data["last"] + 1
    Document.objects.filter(pk=counter.pk).update(data={"last": last})
    return fakes.document_number(prefix, year, last)


@operation("accounting", "PUT", BASE)
def update_invoice(call: Call):
    body = _body(call)
    general = body.get("generalInfoModel") or {}
    if blank(general.get("ettn")):
        raise refused("Validation failed", "generalInfoModel.ettn: The ettn of the invoice to update is required.")
    settle(call)
    at = now(call)
    with transaction.atomic():
        lock(call.customer)
        doc = find(call.customer, general["ettn"], (OUTGOING if body.get("isSend") is True else INCOMING,))
        if doc is None:
            direction = "outgoing" if body.get("isSend") is True else "incoming"
            raise refused("Not Found", f"generalInfoModel.ettn: No {direction} invoice with ettn {general['ettn']}.",
                          404)
        if doc.data["recordStatus"] == POSTED:
            raise refused("Update refused", f"The {_noun(doc)} is posted to accounting; reverse the posting first.")
        facts = _rules(call, body, doc)
        identifier = body["currentAccountIdentifier"]
        party = _counterpart(call.customer, body, identifier)
        data = _record(facts, party=party, body=body, identifier=identifier, alias=body.get("currentAccountAlias"),
                       at=at, branch=body.get("branchId"))
        data.update(createDateUtc=doc.data["createDateUtc"], message=doc.data["message"],
                    machine=doc.data.get("machine"))
        doc.data = data
        if doc.status == ERROR:
            _queue(call.settings, doc, at)
        Document.objects.bulk_update([doc], ["status", "data", "due_at"])
    return invoice_view(doc)


@operation("accounting", "DELETE", BASE + "/{ettn}")
def delete_invoice(call: Call, ettn):
    is_send = _is_send(call, errors_as_error=True)
    settle(call)
    with transaction.atomic():
        lock(call.customer)
        doc = find(call.customer, ettn, (OUTGOING if is_send else INCOMING,))
        if doc is None:
            raise _error(f"No {'outgoing' if is_send else 'incoming'} invoice with ettn {ettn}.", 404)
        if doc.data["recordStatus"] == POSTED:
            raise _error(f"The {_noun(doc)} is posted to accounting: reverse the posting before deleting it.")
        if doc.data["recordType"] == E_INVOICE:
            raise _error(f"The {_noun(doc)} is an e-invoice: e-invoices cannot be deleted.")
        doc.delete()
    return {}


# --- post to accounting and reverse -------------------------------------------------------------------------------

def _moves(call: Call) -> list[tuple[str, bool]]:
    """The (ettn, isSend) of the body, each once; 422 for members of another type, Error for a bad shape."""
    body = read_body(call)
    if not isinstance(body, list) or not body:
        raise _error("The body must be a non-empty array of {ettn, isSend}.")
    errors = {}
    for index, item in enumerate(body):
        bind(item, MOVE_MODEL, f"[{index}]", errors)
    if errors:
        raise binding_failed(errors)
    missing = [f"[{index}]" for index, item in enumerate(body)
               if blank(item.get("ettn")) or item.get("isSend") is None]
    if missing:
        raise _error(f"Each item needs ettn and isSend (missing in {', '.join(missing)}).")
    return list(dict.fromkeys((item["ettn"], item["isSend"]) for item in body))


def _move(call: Call, posting: bool):
    moves = _moves(call)
    settle(call)
    at = now(call)
    with transaction.atomic():
        lock(call.customer)
        docs, refusals = [], []
        for ettn, is_send in moves:
            doc = find(call.customer, ettn, (OUTGOING if is_send else INCOMING,))
            if doc is None:
                refusals.append(f"no {'outgoing' if is_send else 'incoming'} invoice with ettn {ettn}")
            elif posting and doc.data["recordStatus"] == POSTED:
                refusals.append(f"{_noun(doc)} is already posted")
            elif posting and not doc.data["invoice"]["invoiceLines"]:
                refusals.append(f"{_noun(doc)} has no lines")
            elif posting and doc.status in (CANCELLED, EARCHIVE_CANCELLED):
                refusals.append(f"{_noun(doc)} is cancelled (status {doc.status})")
            elif posting and (unmapped := accounting.posting_refusal(
                    call.customer, doc.data["targetVknTckn"], doc.data["invoice"].get("currentAccountCode"))):
                refusals.append(f"{_noun(doc)}: {unmapped}")
            elif not posting and doc.data["recordStatus"] != POSTED:
                refusals.append(f"{_noun(doc)} is not posted")
            else:
                docs.append(doc)
        if refusals:
            what = "posted" if posting else "reversed"
            raise _error(f"Nothing was {what}: " + "; ".join(refusals) + ".")
        for doc in docs:
            doc.data = {**doc.data, "recordStatus": POSTED if posting else NOT_POSTED, "updateDateUtc": stamp(at)}
        Document.objects.bulk_update(docs, ["data"])
    return {}


@operation("accounting", "POST", BASE + "/post")
def post_invoices(call: Call):
    return _move(call, posting=True)


@operation("accounting", "POST", BASE + "/reverse")
def reverse_postings(call: Call):
    return _move(call, posting=False)


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
