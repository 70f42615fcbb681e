"""The documents of a stored invoice as the invoice service hands them over (invoice.py wraps them): UBL-TR
1.2.1 built with lxml, a one-page PDF and a small HTML page; and the tax authority's list of registered users
as a ZIP. Every figure is the one invoice_store.py computed and stored when the invoice was saved.

Choices where the documents say "not shown":
- The UBL is an unsigned draft: ext:UBLExtensions/ext:UBLExtension/ext:ExtensionContent is present and empty
  (the integrator's seal goes there). The issuing company is the sandbox customer, with a VKN decided by its
  customerUniqueId and an address in Kadıköy, İstanbul.
- One TaxTotal (UBL-TR allows one on a line) holds a subtotal per tax, rate and exemption code: VAT (0015),
  the other added taxes and stopaj (0003, 0011); its TaxAmount is their sum. Withholding is
  WithholdingTaxTotal (Percent its share of the VAT). Lines carry the same, and their discount as an
  AllowanceCharge on the gross (BaseAmount). LegalMonetaryTotal: LineExtensionAmount and TaxExclusiveAmount
  the sum of the line nets, TaxInclusiveAmount that + VAT + added taxes, PayableAmount that - withholding -
  stopaj (invoices.py); no AllowanceTotalAmount, as there is no document-level AllowanceCharge (the discounts
  are the lines'). An exemption carries its code and the code list's text (TaxExemptionReason); a return's
  BillingReference is typed IADE: the tax authority's schematron wants both.
- The PDF writes Turkish letters outside its font's encoding (ş ğ ı İ Ş Ğ) without their marks, and amounts
  in Turkish notation (1.234,56).
- The taxpayer list ZIP holds one file, users.json: a UTF-8 byte-order mark, then the JSON array.
- An incoming invoice seeded with its own content (invoice_control.py, invoices/incoming) names the dispatch notes
  it invoices as cac:DespatchDocumentReference (cbc:ID the note's number, cbc:IssueDate its date) after any
  BillingReference, and its lines' goods as cac:Item/cbc:Name.
"""

import codecs
import functools
import json
import uuid
from collections import defaultdict
from datetime import date, datetime
from datetime import timezone as dt_timezone
from decimal import Decimal
from pathlib import Path

from django.utils.html import format_html, format_html_join
from lxml import etree

from .. import fakes
from ..models import Document
from . import exports
from .common import document_root, element_maker
from .invoice_store import (DEDUCTED_TAXES, DEFAULT_ADDRESS, E_ARCHIVE, EARSIVFATURA, OUTGOING, VAT_CODE, money,
                            number, priced, record)
from .invoice_taxpayers import generated_vkn, taxpayers

NS = {
    None: "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2",
    "cac": "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2",
    "cbc": "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2",
    "ext": "urn:oasis:names:specification:ubl:schema:xsd:CommonExtensionComponents-2",
}
COMPANY_ADDRESS = {"street": "Caferağa Mah. Moda Cad. No:1", "district": "Kadıköy", "city": "İstanbul",
                   "country": "Türkiye", "postalZone": "34710"}
CODE_LISTS = Path(__file__).resolve().parents[2] / "core" / "data" / "codelists.json"


@functools.cache
def _exemption_reasons() -> dict:
    """{code: the tax authority's name} of the VAT exemption reasons (the list the platform, like the back office,
    keeps: the UBL-TR code list; read as data, the sandbox imports no app)."""
    try:
        rows = json.loads(CODE_LISTS.read_text(encoding="utf-8"))["vat_exemption_reasons"]
    except (OSError, ValueError, KeyError):
        return {}
    return {row[0]: row[1] for row in rows}


def exemption_reason(code: str) -> str:
    return _exemption_reasons().get(code) or f"KDV istisnası {code}"


# --- the parties and the tax groups ---------------------------------------------------------------------------

def parties(doc: Document, customer) -> tuple[dict, dict]:
    """(supplier, customer) of the invoice: the sandbox customer issues the outgoing ones, receives the others."""
    ours = {"identifier": generated_vkn(customer.customer_unique_id, "company"), "name": customer.name,
            "taxOffice": "Kadıköy", "address": COMPANY_ADDRESS}
    saved = doc.data["invoice"]
    theirs = {"identifier": doc.data["targetVknTckn"], "name": doc.data["targetTitle"],
              "taxOffice": saved.get("taxOffice"), "address": saved["address"]}
    return (ours, theirs) if doc.data["isSend"] else (theirs, ours)


def tax_groups(lines: list[dict]) -> dict:
    """{"added" | "deducted" | "withholding": {(code, name, percent, exemption): [base, amount]}} over the lines."""
    groups = {"added": defaultdict(lambda: [Decimal(0), Decimal(0)]),
              "deducted": defaultdict(lambda: [Decimal(0), Decimal(0)]),
              "withholding": defaultdict(lambda: [Decimal(0), Decimal(0)])}
    for line in lines:
        net, vat = number(line["lineExtensionAmount"]), number(line["vatAmount"])
        key = (VAT_CODE, "KDV", number(line["vatRate"]), line.get("vatExemptionReasonCode") or None)
        groups["added"][key][0] += net
        groups["added"][key][1] += vat
        for tax in line["taxes"]:
            withholding = tax.get("isWithHolding") is True
            part = "withholding" if withholding else "deducted" if tax["taxTypeCode"] in DEDUCTED_TAXES else "added"
            name = (tax.get("withHoldingName") if withholding else tax.get("taxName")) or tax["taxTypeCode"]
            key = (tax["taxTypeCode"], name, number(tax["taxRate"]), tax.get("vatExemptionReasonCode") or None)
            groups[part][key][0] += vat if withholding else net
            groups[part][key][1] += number(tax["taxAmount"])
    return groups


# --- UBL-TR 1.2.1 -------------------------------------------------------------------------------------------------

_add = element_maker(NS)


def _amount(parent, tag: str, value, currency: str):
    return _add(parent, tag, money(number(value)), currencyID=currency)


def _percent(value: Decimal) -> str:
    return format(value.normalize(), "f")


def _party(parent, tag: str, party: dict) -> None:
    element = _add(_add(parent, tag), "cac:Party")
    identifier = party["identifier"]
    person = len(identifier) == 11
    _add(_add(element, "cac:PartyIdentification"), "cbc:ID", identifier, schemeID="TCKN" if person else "VKN")
    if not person:
        _add(_add(element, "cac:PartyName"), "cbc:Name", party["name"])
    _address(element, party["address"])
    if party.get("taxOffice"):
        _add(_add(_add(element, "cac:PartyTaxScheme"), "cac:TaxScheme"), "cbc:Name", party["taxOffice"])
    if person:
        first, _, family = party["name"].rpartition(" ")
        holder = _add(element, "cac:Person")
        _add(holder, "cbc:FirstName", first or party["name"])
        _add(holder, "cbc:FamilyName", family)


def _address(parent, address: dict) -> None:
    element = _add(parent, "cac:PostalAddress")
    if address.get("street"):
        _add(element, "cbc:StreetName", address["street"])
    _add(element, "cbc:CitySubdivisionName", address["district"])  # the district (ilçe)
    _add(element, "cbc:CityName", address["city"])  # the province (il)
    if address.get("postalZone"):
        _add(element, "cbc:PostalZone", address["postalZone"])
    _add(_add(element, "cac:Country"), "cbc:Name", address["country"])


def _signature(parent, supplier: dict, invoice_number: str) -> None:
    """Who seals the invoice (UBL-TR requires the element; the seal itself goes into the UBLExtensions)."""
    element = _add(parent, "cac:Signature")
    _add(element, "cbc:ID", supplier["identifier"], schemeID="VKN_TCKN")
    signatory = _add(element, "cac:SignatoryParty")
    _add(_add(signatory, "cac:PartyIdentification"), "cbc:ID", supplier["identifier"],
         schemeID="TCKN" if len(supplier["identifier"]) == 11 else "VKN")
    _address(signatory, supplier["address"])
    _add(_add(_add(element, "cac:DigitalSignatureAttachment"), "cac:ExternalReference"), "cbc:URI",
         f"#Signature_{invoice_number}")


def _tax_total(parent, tag: str, groups: dict, currency: str) -> None:
    total = _add(parent, tag)
    _amount(total, "cbc:TaxAmount", sum((amount for _, amount in groups.values()), Decimal(0)), currency)
    for (code, name, percent, exemption), (base, amount) in groups.items():
        subtotal = _add(total, "cac:TaxSubtotal")
        _amount(subtotal, "cbc:TaxableAmount", base, currency)
        _amount(subtotal, "cbc:TaxAmount", amount, currency)
        _add(subtotal, "cbc:Percent", _percent(percent))
        category = _add(subtotal, "cac:TaxCategory")
        if exemption:  # the schematron wants the reason's text beside its code (TaxExemptionReasonCheck-1)
            _add(category, "cbc:TaxExemptionReasonCode", exemption)
            _add(category, "cbc:TaxExemptionReason", exemption_reason(exemption))
        scheme = _add(category, "cac:TaxScheme")
        _add(scheme, "cbc:Name", name)
        _add(scheme, "cbc:TaxTypeCode", code)


def _taxes(parent, groups: dict, currency: str) -> None:
    _tax_total(parent, "cac:TaxTotal", {**groups["added"], **groups["deducted"]}, currency)
    if groups["withholding"]:
        _tax_total(parent, "cac:WithholdingTaxTotal", groups["withholding"], currency)


def _invoice_line(parent, index: int, line: dict, currency: str, name: str | None = None) -> None:
    element = _add(parent, "cac:InvoiceLine")
    _add(element, "cbc:ID", index)
    _add(element, "cbc:InvoicedQuantity", _percent(number(line["amount"])), unitCode=line["unitCode"])
    _amount(element, "cbc:LineExtensionAmount", line["lineExtensionAmount"], currency)
    gross, net = number(line["lineAmount"]), number(line["lineExtensionAmount"])
    if gross != net:
        allowance = _add(element, "cac:AllowanceCharge")
        _add(allowance, "cbc:ChargeIndicator", "false")
        if number(line.get("discountRate")):
            _add(allowance, "cbc:MultiplierFactorNumeric", _percent(number(line["discountRate"]) / 100))
        _amount(allowance, "cbc:Amount", gross - net, currency)
        _amount(allowance, "cbc:BaseAmount", gross, currency)
    _taxes(element, tax_groups([line]), currency)
    item = _add(element, "cac:Item")
    _add(item, "cbc:Name", name or line.get("inventoryServiceCode") or f"Kalem {index}")
    if line.get("inventoryServiceCode"):
        _add(_add(item, "cac:SellersItemIdentification"), "cbc:ID", line["inventoryServiceCode"])
    _add(_add(element, "cac:Price"), "cbc:PriceAmount", _percent(number(line["unitPrice"])), currencyID=currency)


def ubl(doc: Document, customer) -> bytes:
    """The invoice as a UBL-TR 1.2.1 Invoice (UTF-8, with its XML declaration)."""
    data, saved = doc.data, doc.data["invoice"]
    general, lines = saved["generalInfoModel"], saved["invoiceLines"]
    currency = general["currencyCode"]
    root = document_root(f"{{{NS[None]}}}Invoice", NS, data["profile"], doc.number, doc.key, data["issueDate"],
                         general["issueTime"])
    _add(root, "cbc:InvoiceTypeCode", data["type"])
    for note in saved["notes"]:
        if note.get("note"):
            _add(root, "cbc:Note", note["note"])
    _add(root, "cbc:DocumentCurrencyCode", currency)
    _add(root, "cbc:LineCountNumeric", len(lines))
    if general.get("returnInvoiceNumber"):
        reference = _add(_add(root, "cac:BillingReference"), "cac:InvoiceDocumentReference")
        _add(reference, "cbc:ID", general["returnInvoiceNumber"])
        _add(reference, "cbc:IssueDate", (general.get("returnInvoiceDate") or data["issueDate"])[:10])
        if data["type"] == "IADE":  # the returned invoice, as the schematron's IADEInvioceCheck-1 wants it named
            _add(reference, "cbc:DocumentTypeCode", "IADE")
    received = data.get("received") or {}
    for note in received.get("despatches") or []:  # the dispatch notes the supplier invoices (UBL 2.1 order)
        reference = _add(root, "cac:DespatchDocumentReference")
        _add(reference, "cbc:ID", note["id"])
        _add(reference, "cbc:IssueDate", note["issueDate"])
    supplier, buyer = parties(doc, customer)
    _signature(root, supplier, doc.number)
    _party(root, "cac:AccountingSupplierParty", supplier)
    _party(root, "cac:AccountingCustomerParty", buyer)
    payment = saved["paymentMeansModel"]
    if payment.get("paymentMeansCode"):
        means = _add(root, "cac:PaymentMeans")
        _add(means, "cbc:PaymentMeansCode", payment["paymentMeansCode"])
        for name, tag in (("paymentDueDate", "cbc:PaymentDueDate"), ("paymentChannelCode", "cbc:PaymentChannelCode"),
                          ("instructionNote", "cbc:InstructionNote")):
            if payment.get(name):
                _add(means, tag, payment[name][:10] if name == "paymentDueDate" else payment[name])
        if payment.get("payeeFinancialAccountId"):
            _add(_add(means, "cac:PayeeFinancialAccount"), "cbc:ID", payment["payeeFinancialAccountId"])
    if data["exchangeRate"] is not None:
        rate = _add(root, "cac:PricingExchangeRate")
        _add(rate, "cbc:SourceCurrencyCode", currency)
        _add(rate, "cbc:TargetCurrencyCode", "TRY")
        _add(rate, "cbc:CalculationRate", _percent(number(data["exchangeRate"])))
    _taxes(root, tax_groups(lines), currency)
    totals = saved["invoiceTotalsModel"]
    monetary = _add(root, "cac:LegalMonetaryTotal")
    for name in ("lineExtensionAmount", "taxExclusiveAmount", "taxInclusiveAmount", "payableAmount"):
        _amount(monetary, "cbc:" + name[0].upper() + name[1:], totals[name], currency)
    names = received.get("lineNames") or []
    for index, line in enumerate(lines, start=1):
        _invoice_line(root, index, line, currency, names[index - 1] if index <= len(names) else None)
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)


def unchecked_ubl(body: dict, customer) -> bytes:
    """The UBL this writer makes of an outgoing save body that no save rule has checked (a number from its prefix,
    issued at noon): what the platform would write of it. Tests run the tax authority's own checks on it, to show
    that what the back office and this sandbox refuse, the tax authority refuses too."""
    general = body.get("generalInfoModel") or {}
    record_type = body.get("recordType", E_ARCHIVE)
    issue_date = date.fromisoformat(str(general["issueDate"])[:10])
    facts = {"is_send": True, "record_type": record_type, "type": general.get("type") or 1,
             "profile": EARSIVFATURA if record_type == E_ARCHIVE else general.get("invoiceProfileType") or 0,
             "currency": general.get("currencyCode") or "TRY", "issue_date": issue_date, "issue_time": "12:00:00",
             "rate": number(general["exchangeRate"]) if general.get("exchangeRate") is not None else None,
             "ettn": general.get("ettn") or str(uuid.uuid4()),
             "lines": [priced(line) for line in body.get("invoiceLines") or []]}
    identifier = body["currentAccountIdentifier"]
    party = {"name": body.get("currentAccountName") or identifier, "taxOffice": None, "accountName": None,
             "accountCode": None, "branchId": None, "address": dict(DEFAULT_ADDRESS)}
    data = record(facts, party=party, body=body, identifier=identifier, alias=body.get("currentAccountAlias"),
                  at=datetime.now(dt_timezone.utc))
    doc = Document(kind=OUTGOING, key=facts["ettn"], number=fakes.document_number(
        general.get("prefix") or "", issue_date.year, 1), data=data)
    return ubl(doc, customer)


# --- PDF and HTML -------------------------------------------------------------------------------------------------

def turkish(value) -> str:
    """An amount in Turkish notation: 1.234,56."""
    return f"{money(number(value)):,.2f}".replace(",", " ").replace(".", ",").replace(" ", ".")


def _summary(doc: Document, customer) -> tuple[list[tuple[str, str]], list[list[str]], list[tuple[str, str]]]:
    """(header rows, line rows, total rows) that the PDF and the HTML show."""
    data, saved = doc.data, doc.data["invoice"]
    supplier, buyer = parties(doc, customer)
    currency = saved["generalInfoModel"]["currencyCode"]
    kind = "e-Fatura" if data["recordType"] == 1 else "e-Arşiv Fatura"
    header = [("Belge", f"{kind} ({data['profile']}, {data['type']})"), ("Fatura No", doc.number),
              ("ETTN", doc.key), ("Tarih", f"{data['issueDate']} {saved['generalInfoModel']['issueTime']}"),
              ("Satıcı", f"{supplier['name']} ({supplier['identifier']})"),
              ("Alıcı", f"{buyer['name']} ({buyer['identifier']})"),
              ("Alıcı adresi", f"{buyer['address']['district']} / {buyer['address']['city']}")]
    rows = [[line.get("inventoryServiceCode") or str(index), f"{_percent(number(line['amount']))} {line['unitCode']}",
             turkish(line["unitPrice"]), f"%{_percent(number(line['vatRate']))}", turkish(line["vatAmount"]),
             turkish(line["lineExtensionAmount"])] for index, line in enumerate(saved["invoiceLines"], start=1)]
    totals, groups = saved["invoiceTotalsModel"], tax_groups(saved["invoiceLines"])
    money_rows = [("Mal Hizmet Toplam Tutarı", totals["lineExtensionAmount"]),
                  ("Toplam İskonto", totals["allowanceTotalAmount"]),
                  ("Hesaplanan Vergiler", data["taxTotal"]),
                  ("Vergiler Dahil Toplam", totals["taxInclusiveAmount"])]
    if groups["withholding"]:
        money_rows.append(("Tevkifat", sum((amount for _, amount in groups["withholding"].values()), Decimal(0))))
    if groups["deducted"]:
        money_rows.append(("Stopaj", sum((amount for _, amount in groups["deducted"].values()), Decimal(0))))
    money_rows.append(("Ödenecek Tutar", totals["payableAmount"]))
    total_rows = [(label, f"{turkish(value)} {currency}") for label, value in money_rows]
    if data["exchangeRate"] is not None:
        total_rows.append(("Döviz Kuru", f"{_percent(number(data['exchangeRate'])).replace('.', ',')} TRY"))
    return header, rows, total_rows


def pdf(doc: Document, customer) -> bytes:
    """A one-page PDF of the invoice (text, Helvetica): header, lines and totals."""
    header, rows, total_rows = _summary(doc, customer)
    return fakes.text_pdf([f"{label}: {value}" for label, value in header] + [""], ["  ".join(row) for row in rows],
                          [""] + [f"{label}: {value}" for label, value in total_rows])


def html(doc: Document, customer) -> str:
    """A small HTML page of the invoice (no script)."""
    header, rows, total_rows = _summary(doc, customer)
    return format_html(
        '<!DOCTYPE html><html lang="tr"><head><meta charset="utf-8"><title>{}</title></head><body>'
        "<h1>{}</h1><table>{}</table><table><thead><tr><th>Kod</th><th>Miktar</th><th>Birim fiyat</th>"
        "<th>KDV oranı</th><th>KDV</th><th>Tutar</th></tr></thead><tbody>{}</tbody></table><table>{}</table>"
        "</body></html>",
        doc.number, header[0][1], format_html_join("", "<tr><th>{}</th><td>{}</td></tr>", header),
        format_html_join("", "<tr>{}</tr>", (
            (format_html_join("", "<td>{}</td>", ((cell,) for cell in row)),) for row in rows)),
        format_html_join("", "<tr><th>{}</th><td>{}</td></tr>", total_rows),
    )


# --- the taxpayer list --------------------------------------------------------------------------------------------

def taxpayer_zip(customer) -> bytes:
    """The tax authority's list of registered users as the platform hands it over."""
    return exports.archive({"users.json": codecs.BOM_UTF8 + json.dumps(taxpayers(customer), ensure_ascii=False)
                            .encode("utf-8")})

