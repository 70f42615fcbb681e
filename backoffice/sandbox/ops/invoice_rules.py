"""Accounting service, invoices: the rules of a save or an update (document 3, 2.6, 3.1 and 4.2), each problem
named at once, and the lines priced as they are stored. The choices are listed in invoices.py.
"""

import re
import uuid
from datetime import date

from django.utils import timezone

from ..api import Call
from ..models import Document
from .common import Checks, blank, decimal, now, vkn_tckn_problem
from .invoice_store import (CURRENCY_IDS, E_ARCHIVE, E_INVOICE, EARSIVFATURA, PROFILES, TYPES, VAT_CODE, canonical, day,
                            find, money, noun, number, priced)
from .invoice_taxpayers import einvoice_aliases

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
PREFIX = re.compile(r"[A-Z0-9]{3}")
UNIT_CODE = re.compile(r"[A-Z0-9]{2,3}")
CLOCK = re.compile(r"([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\.[0-9]+)?)?")


# --- lines ------------------------------------------------------------------------------------------------------

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

def invoice_facts(call: Call, body: dict, doc: Document | None) -> dict:
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
    issue_date = day(general.get("issueDate")) if not blank(general.get("issueDate")) else today.date()
    if issue_date is None:
        info.add("issueDate", f"issueDate must be a date, yyyy-MM-dd (got '{general.get('issueDate')}').")
    elif is_send and not 2000 <= issue_date.year <= 2099:
        info.add("issueDate", f"The year of issueDate must be 20xx: the invoice number holds it (got {issue_date}).")
    elif issue_date < EARLIEST_ISSUE:
        info.add("issueDate", f"issueDate must not be before {EARLIEST_ISSUE} (got {issue_date}).")
    issue_time = general.get("issueTime") or today.strftime("%H:%M:%S")
    if not CLOCK.fullmatch(issue_time):
        info.add("issueTime", f"issueTime must be a time, HH:mm:ss (got '{issue_time}').")
    if not blank(general.get("returnInvoiceDate")) and day(general["returnInvoiceDate"]) is None:
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
        info.add("ettn", f"already exists: {noun(twin)} has this ettn; get it instead of saving again.")
    return ettn
