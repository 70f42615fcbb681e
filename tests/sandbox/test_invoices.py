"""The sandbox's invoices over real HTTP: the accounting service's invoice operations (document 3, 2.6, 3.1 and
4.2) with their rules, numbers and totals, the status machine, and the invoice service's status, PDF, HTML and
UBL answered from the same store; the taxpayer list; the control actions."""

import base64
import codecs
import io
import json
import re
import time
import uuid
import zipfile
from decimal import Decimal

import pytest
from lxml import etree

from tests.sandbox.test_accounting import an_account, an_address, call, error, map_customer
from tests.sandbox.test_tickets import refusal, unbound

INVOICES = "/v1/invoice"
SANDBOX_VKN = "1234567890"  # an e-invoice user of every customer's taxpayer list
ALIAS = "urn:mail:defaultpk@sandbox-musteri.com.tr"
OTHER_ALIAS = "urn:mail:fatura@sandbox-musteri.com.tr"
ARCHIVE_VKN, ARCHIVE_TCKN = "4840000006", "10000000146"  # not registered: e-archive customers
NUMBER = re.compile(r"^[A-Z0-9]{3}20[0-9]{2}[0-9]{9}$")
UBL = {"inv": "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2",
       "cac": "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2",
       "cbc": "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2",
       "ext": "urn:oasis:names:specification:ubl:schema:xsd:CommonExtensionComponents-2"}
LIST_KEYS = {"ettn", "branchId", "invoiceNumber", "profile", "type", "recordType", "invoiceProcessStatus",
             "recordStatus", "invoiceStatus", "issueDate", "lineCount", "targetAlias", "targetTitle", "targetVknTckn",
             "currencyId", "exchangeRate", "exchangeRateComment", "exchangeRateSource", "payableAmount",
             "taxExclusiveAmount", "taxTotal", "totalAmount", "createDateUtc", "updateDateUtc"}
TOTALS_KEYS = {"lineExtensionAmount", "taxExclusiveAmount", "taxInclusiveAmount", "allowanceTotalAmount",
               "payableAmount"}


def a_line(**fields):
    line = {"inventoryServiceCode": "HZM-01", "amount": 2, "unitPrice": 100, "unitCode": "C62", "vatRate": 20}
    line.update(fields)
    return {name: value for name, value in line.items() if value is not ...}


def an_archive(general=None, **fields):
    """An outgoing e-archive invoice to a customer that is no e-invoice user."""
    body = {"description": "Danışmanlık hizmeti", "currentAccountIdentifier": ARCHIVE_VKN, "isSend": True,
            "recordType": 0, "invoiceLines": [a_line()],
            "generalInfoModel": {"prefix": "ARS", "type": 1, "currencyCode": "TRY", "issueDate": "2025-03-14",
                                 **(general or {})}}
    body.update(fields)
    return {name: value for name, value in body.items() if value is not ...}


def an_einvoice(general=None, **fields):
    """An outgoing e-invoice to the registered user of the examples."""
    return an_archive({"prefix": "EFT", "invoiceProfileType": 0, **(general or {})}, **{
        "recordType": 1, "currentAccountIdentifier": SANDBOX_VKN, "currentAccountAlias": ALIAS, **fields})


def an_incoming(general=None, **fields):
    return an_archive({"prefix": None, "invoiceNumber": "TDR2025000000042", **(general or {})}, **{
        "isSend": False, "recordType": 1, "currentAccountIdentifier": SANDBOX_VKN, "currentAccountAlias": ALIAS,
        **fields})


def save(api, body, status=200):
    return call(api, "POST", INVOICES, status, json=body)


def saving(api, body):
    return api.request("POST", "accounting", INVOICES, json=body)


def get(api, ettn, is_send=True, status=200):
    return call(api, "GET", f"{INVOICES}/{ettn}", status, params={"isSend": str(is_send).lower()})


def listing(api, direction="outgoing", status=200, **params):
    return call(api, "GET", f"{INVOICES}/{direction}/list", status,
                params={"pageIndex": 1, "pageSize": 500, **params})


def where(*conditions) -> str:
    return json.dumps([{"category": c, "operator": o, "value": v} for c, o, v in conditions])


def moved(api, path, items):
    return api.request("POST", "accounting", f"{INVOICES}/{path}", json=items)


def problems(response) -> dict:
    """field -> message of a "Validation failed" refusal; fields of lines are named like invoiceLines[0].amount."""
    body = refusal(response)
    assert body["title"] == "Validation failed", body
    return dict(part.split(": ", 1) for part in re.split(r"; (?=[\w.\[\]]+: )", body["detail"].rstrip(".")))


def wait_for(read, condition, seconds=10.0):
    """Read until the condition holds (the sandbox settles on reads); the last value read."""
    deadline = time.monotonic() + seconds
    value = read()
    while not condition(value):
        assert time.monotonic() < deadline, f"still {value}"
        time.sleep(0.05)
        value = read()
    return value


def ubl_of(api, path) -> etree._Element:
    response = api.get("invoice", path)
    assert response.status_code == 200, response.text
    return etree.fromstring(base64.b64decode(response.json()["Response"]))


def amount(element, path) -> Decimal:
    return Decimal(element.findtext(path, namespaces=UBL))


# --- save: numbers and the answer -------------------------------------------------------------------------------

def test_save_answers_the_invoice_with_its_number_totals_and_status(sandbox, api):
    saved = save(api, an_archive(note="Teşekkürler"))
    general = saved["generalInfoModel"]
    assert general["invoiceNumber"] == "ARS2025000000001" and NUMBER.match(general["invoiceNumber"])
    assert uuid.UUID(general["ettn"]) and general["invoiceProfileType"] == 4  # EARSIVFATURA
    assert (saved["isSend"], saved["recordType"], saved["recordStatus"], saved["invoiceStatus"]) == (True, 0, 0, 20)
    assert saved["invoiceTotalsModel"] == {"lineExtensionAmount": 200.0, "taxExclusiveAmount": 200.0,
                                           "taxInclusiveAmount": 240.0, "allowanceTotalAmount": 0.0,
                                           "payableAmount": 240.0}
    line = saved["invoiceLines"][0]
    assert (line["lineExtensionAmount"], line["vatAmount"], line["unitCode"]) == (200.0, 40.0, "C62")
    assert saved["notes"] == [{"note": "Teşekkürler"}] and saved["currentAccountIdentifier"] == ARCHIVE_VKN

    assert get(api, general["ettn"]) == saved
    item = listing(api)["items"][0]
    assert set(item) == LIST_KEYS - {"invoiceProcessStatus"}
    assert (item["ettn"], item["invoiceNumber"], item["profile"], item["type"], item["currencyId"]) == \
        (general["ettn"], "ARS2025000000001", "EARSIVFATURA", "SATIS", 1)
    assert (item["payableAmount"], item["taxExclusiveAmount"], item["taxTotal"], item["totalAmount"]) == \
        (240.0, 200.0, 40.0, 240.0)
    assert item["createDateUtc"] == item["updateDateUtc"] and item["lineCount"] == 1


def test_numbers_count_per_prefix_and_year_for_each_customer(sandbox, customer_api):
    api, _ = customer_api()
    numbers = [save(api, body)["generalInfoModel"]["invoiceNumber"] for body in (
        an_archive(), an_archive(), an_archive({"issueDate": "2026-01-02"}), an_einvoice(),
        an_archive({"prefix": "B2C"}), an_archive())]
    assert numbers == ["ARS2025000000001", "ARS2025000000002", "ARS2026000000001", "EFT2025000000001",
                       "B2C2025000000001", "ARS2025000000003"]
    other, _ = customer_api()
    assert save(other, an_archive())["generalInfoModel"]["invoiceNumber"] == "ARS2025000000001"


# --- save and update: the rules ----------------------------------------------------------------------------------

def test_every_problem_of_a_body_is_named_at_once(sandbox, api):
    body = an_archive({"invoiceNumber": "ARS2025000000009", "prefix": None, "currencyCode": "USD"},
                      description=..., currentAccountIdentifier="1234567891",
                      invoiceLines=[a_line(amount=0, unitPrice=-1, unitCode=None, vatRate=0),
                                    a_line(discountRate=150, taxes=[{"taxTypeCode": "0015", "taxRate": 20}])])
    found = problems(saving(api, body))
    assert set(found) == {
        "description", "currentAccountIdentifier", "generalInfoModel.invoiceNumber", "generalInfoModel.prefix",
        "generalInfoModel.exchangeRate", "generalInfoModel.exchangeRateSource", "generalInfoModel.exchangeRateComment",
        "invoiceLines[0].amount", "invoiceLines[0].unitPrice", "invoiceLines[0].unitCode",
        "invoiceLines[0].vatExemptionReasonCode", "invoiceLines[1].discountRate",
        "invoiceLines[1].taxes[0].taxTypeCode"}
    assert "check digit" in found["currentAccountIdentifier"]
    assert "must not be sent" in found["generalInfoModel.invoiceNumber"]
    assert listing(api)["totalCount"] == 0


@pytest.mark.parametrize("body,name,message", [
    (an_einvoice(currentAccountIdentifier=ARCHIVE_VKN), "currentAccountAlias", "not registered as an e-invoice user"),
    (an_archive(currentAccountIdentifier=SANDBOX_VKN), "recordType", "is a registered e-invoice user"),
    (an_einvoice(currentAccountAlias=None), "currentAccountAlias", "required for an e-invoice"),
    (an_einvoice(currentAccountAlias="urn:mail:someone@else.com"), "currentAccountAlias", "not an e-invoice mailbox"),
    (an_archive({"prefix": "ar5"}), "generalInfoModel.prefix", "3 capital letters or digits"),
    (an_archive({"prefix": "ARSX"}), "generalInfoModel.prefix", "3 capital letters or digits"),
    (an_archive(currentAccountIdentifier="10000000147"), "currentAccountIdentifier", "not a valid TCKN"),
    (an_archive(currentAccountIdentifier="12345"), "currentAccountIdentifier", "10 digits (VKN) or 11 digits"),
    (an_archive({"ettn": "not-a-guid"}), "generalInfoModel.ettn", "must be a GUID"),
    (an_archive({"issueDate": "14.13.2025"}), "generalInfoModel.issueDate", "must be a date"),
    (an_archive({"issueDate": "1999-12-31"}), "generalInfoModel.issueDate", "must be 20xx"),
    (an_archive({"issueTime": "25:00:00"}), "generalInfoModel.issueTime", "must be a time"),
    (an_archive({"type": 12}), "generalInfoModel.type", "1 to 9"),
    (an_archive({"currencyCode": "XAU"}), "generalInfoModel.currencyCode", "one of TRY"),
    (an_archive({"currencyCode": "EUR", "exchangeRate": 0, "exchangeRateSource": "TCMB",
                 "exchangeRateComment": "Satış"}), "generalInfoModel.exchangeRate", "not TRY"),
    (an_einvoice({"invoiceProfileType": 4}), "generalInfoModel.invoiceProfileType", "0 to 3"),
    (an_einvoice({"invoiceProfileType": 6}), "generalInfoModel.invoiceProfileType", "0 to 5"),
    (an_incoming({"invoiceNumber": None}), "generalInfoModel.invoiceNumber", "required for an incoming"),
    (an_archive(recordType=2), "recordType", "0 (e-archive) or 1 (e-invoice)"),
    (an_archive(invoiceLines=[a_line(vatRate=120)]), "invoiceLines[0].vatRate", "between 0 and 100"),
    (an_archive(invoiceLines=[a_line(unitCode="adet")]), "invoiceLines[0].unitCode", "UN/ECE unit code"),
    (an_archive(invoiceLines=[a_line(amount=...)]), "invoiceLines[0].amount", "required"),
    (an_archive(invoiceLines=[a_line(discountAmount=-1)]), "invoiceLines[0].discountAmount", "not be negative"),
    (an_archive(invoiceLines=[a_line(discountRate=50, discountAmount=150)]), "invoiceLines[0].discountAmount",
     "exceed the line's amount (200.00)"),
    (an_archive(invoiceLines=[a_line(taxes=[{"taxTypeCode": "602", "taxRate": 0, "isWithHolding": True}])]),
     "invoiceLines[0].taxes[0].taxRate", "above 0"),
    (an_archive(invoiceLines=[a_line(taxes=[{"taxRate": 5}])]), "invoiceLines[0].taxes[0].taxTypeCode", "required"),
    # What the tax authority ties to the invoice type (its schematron; README-invoices.md).
    (an_archive(invoiceLines=[a_line(taxes=[{"taxTypeCode": "602", "taxRate": 90, "isWithHolding": True}])]),
     "invoiceLines[0].taxes[0].taxTypeCode", "only on a TEVKIFAT, IADE or SGK invoice"),
    (an_archive(invoiceLines=[a_line(taxes=[{"taxTypeCode": "4171", "taxRate": 5}])]),
     "invoiceLines[0].taxes[0].taxTypeCode", "only on a TEVKIFAT, IADE or SGK invoice"),
    (an_archive({"type": 3}, invoiceLines=[a_line(vatExemptionReasonCode="301")]),
     "invoiceLines[0].vatExemptionReasonCode", "only on a line with vatRate 0"),
    (an_archive(invoiceLines=[a_line(vatRate=0, vatExemptionReasonCode="301")]),
     "invoiceLines[0].vatExemptionReasonCode", "not for a SATIS invoice"),
    (an_archive({"type": 4}, invoiceLines=[a_line(vatExemptionReasonCode="701")]),
     "invoiceLines[0].vatExemptionReasonCode", "not for a OZELMATRAH invoice"),
    (an_archive({"type": 7}, invoiceLines=[a_line(vatExemptionReasonCode="801")]),
     "invoiceLines[0].vatExemptionReasonCode", "not for a IHRACKAYITLI invoice"),
    (an_archive(invoiceLines=[a_line(vatRate=0, vatExemptionReasonCode="555")]),
     "invoiceLines[0].vatExemptionReasonCode", "for a line with VAT"),
    (an_archive(invoiceLines=[a_line(vatExemptionReasonCode="555"), a_line(vatRate=0, vatExemptionReasonCode="351")]),
     "invoiceLines[1].vatRate", "555 (fixed assets) is on this invoice"),
    (an_archive(invoiceLines=[a_line(vatExemptionReasonCode="555", vatRate=1, amount=1, unitPrice=0.1)]),
     "invoiceLines[0].vatRate", "VAT amount of 0.00; got vatRate 1, VAT 0.00"),
    (an_einvoice({"invoiceProfileType": 1, "type": 2}), "generalInfoModel.type", "TEMELFATURA"),
    (an_archive({"issueDate": "2004-12-31"}), "generalInfoModel.issueDate", "not be before 2005-01-01"),
    (an_archive(invoiceLines=[a_line(taxes=[{"taxTypeCode": "0071"}])]), "invoiceLines[0].taxes[0].taxRate",
     "required"),
])
def test_each_rule_is_refused_with_its_message(sandbox, api, body, name, message):
    found = problems(saving(api, body))
    assert message in found[name], found


WITHHELD = {"taxTypeCode": "602", "taxRate": 90, "isWithHolding": True}


@pytest.mark.parametrize("general,line", [
    ({"type": 5}, a_line(taxes=[WITHHELD])),
    ({"type": 2, "returnInvoiceNumber": "ARS2025000000001", "returnInvoiceDate": "2025-03-01"},
     a_line(taxes=[WITHHELD])),
    ({"type": 8}, a_line(taxes=[{**WITHHELD, "taxTypeCode": "4171", "isWithHolding": False, "taxRate": 5}])),
    ({"type": 7}, a_line(vatExemptionReasonCode="701")),  # export-registered: VAT shown, with its reason
    ({"type": 4}, a_line(vatExemptionReasonCode="801")),
    ({"type": 3}, a_line(vatRate=0, vatExemptionReasonCode="301")),
    ({"type": 1}, a_line(vatExemptionReasonCode="555")),
    ({"type": 9}, a_line(vatRate=0, vatExemptionReasonCode="351")),
])
def test_what_the_invoice_type_allows_is_saved(sandbox, api, general, line):
    saved = save(api, an_archive(general, invoiceLines=[line]))
    assert saved["generalInfoModel"]["type"] == general["type"]


def test_list_parameters_are_read_as_document_3_spells_them(sandbox, api):
    number = save(api, an_archive())["generalInfoModel"]["invoiceNumber"]
    assert [item["invoiceNumber"] for item in listing(api, sortedColumn="createDateUtc", filterQuery=json.dumps(
        [{"category": "invoiceNumber", "operator": "eşittir", "value": number}]))["items"]] == [number]
    for params in ({"sortedColumn": "CreateDateUtc"}, {"sortedColumn": "issuedate"},
                   {"filterQuery": where(("InvoiceNumber", "eşittir", number))},
                   {"filterQuery": where(("issuedate", "büyük ve eşittir", "2025-01-01"))},
                   {"filterQuery": json.dumps([{"Category": "invoiceNumber", "operator": "eşittir", "value": number}])},
                   {"filterQuery": json.dumps([{"category": "issueDate", "Operator": "eşittir",
                                                "value": "2025-03-14"}])}):
        assert "spelled so" in listing(api, status=400, **params)["detail"], params


def test_an_archive_invoice_may_go_to_a_tckn_and_keeps_its_own_profile(sandbox, api):
    saved = save(api, an_archive({"invoiceProfileType": 1}, currentAccountIdentifier=ARCHIVE_TCKN,
                                 currentAccountName="Ayşe Yılmaz"))
    assert saved["generalInfoModel"]["invoiceProfileType"] == 4 and saved["currentAccountName"] == "Ayşe Yılmaz"


def test_record_type_follows_the_taxpayer_list_when_left_out(sandbox, api):
    assert save(api, an_einvoice(recordType=...))["recordType"] == 1
    assert save(api, an_archive(recordType=...))["recordType"] == 0


def test_another_mailbox_of_the_user_is_accepted(sandbox, api):
    assert save(api, an_einvoice(currentAccountAlias=OTHER_ALIAS))["currentAccountAlias"] == OTHER_ALIAS


@pytest.mark.parametrize("change,name", [
    (lambda body: body["invoiceLines"][0].update(amount="2"), "invoiceLines[0].amount"),
    (lambda body: body.update(isSend="true"), "isSend"),
    (lambda body: body["generalInfoModel"].update(type="1"), "generalInfoModel.type"),
    (lambda body: body.update(invoiceLine=[]), "invoiceLine"),
    (lambda body: body["invoiceLines"][0].update(taxes={"taxTypeCode": "0071"}), "invoiceLines[0].taxes"),
])
def test_members_of_another_json_type_or_unknown_are_422(sandbox, api, change, name):
    body = an_archive()
    change(body)
    assert name in unbound(saving(api, body))


def test_payment_means_code_may_be_a_whole_number(sandbox, api):
    saved = save(api, an_archive(paymentMeansModel={"paymentMeansCode": 1, "paymentDueDate": "2025-04-14"}))
    assert saved["paymentMeansModel"]["paymentMeansCode"] == "1"


def test_a_client_given_ettn_is_kept_and_saving_it_again_is_refused(sandbox, api):
    ettn = str(uuid.uuid4())
    assert save(api, an_archive({"ettn": ettn.upper()}))["generalInfoModel"]["ettn"] == ettn
    found = problems(saving(api, an_archive({"ettn": ettn})))
    assert found["generalInfoModel.ettn"].startswith("already exists")
    assert "ettn: already exists" in saving(api, an_archive({"ettn": ettn})).json()["detail"]
    assert listing(api)["totalCount"] == 1


def test_incoming_invoices_keep_the_suppliers_number_and_are_approved(sandbox, api):
    saved = save(api, an_incoming())
    assert (saved["generalInfoModel"]["invoiceNumber"], saved["invoiceStatus"], saved["isSend"]) == \
        ("TDR2025000000042", 60, False)
    item = listing(api, "incoming")["items"][0]
    assert set(item) == LIST_KEYS and item["invoiceProcessStatus"] == 0
    assert listing(api)["totalCount"] == 0
    get(api, saved["generalInfoModel"]["ettn"], is_send=True, status=404)  # isSend names the direction


def test_update_keeps_the_number_and_applies_the_update_rules(sandbox, api):
    saved = save(api, an_einvoice())
    ettn, number = saved["generalInfoModel"]["ettn"], saved["generalInfoModel"]["invoiceNumber"]
    body = an_einvoice({"ettn": ettn}, description="Düzeltilmiş",
                       invoiceLines=[a_line(), a_line(amount=1, unitPrice=50, vatRate=10)])
    updated = call(api, "PUT", INVOICES, json=body)
    assert (updated["generalInfoModel"]["invoiceNumber"], updated["description"]) == (number, "Düzeltilmiş")
    assert updated["invoiceTotalsModel"]["payableAmount"] == 295.0
    assert get(api, ettn)["invoiceTotalsModel"]["payableAmount"] == 295.0

    put = lambda body: api.request("PUT", "accounting", INVOICES, json=body)  # noqa: E731
    assert "required to update an outgoing e-invoice" in problems(
        put(an_einvoice({"ettn": ettn, "invoiceProfileType": None})))["generalInfoModel.invoiceProfileType"]
    assert "stays" in problems(put(an_einvoice({"ettn": ettn, "prefix": "XYZ"})))["generalInfoModel.prefix"]
    assert "stays" in problems(put(an_einvoice({"ettn": ettn, "invoiceNumber": "EFT2025000000099"})))[
        "generalInfoModel.invoiceNumber"]
    assert "required" in problems(put(an_einvoice({"ettn": ettn, "prefix": None})))["generalInfoModel.prefix"]
    assert "not TRY" in problems(put(an_einvoice({"ettn": ettn, "currencyCode": "USD"})))[
        "generalInfoModel.exchangeRate"]
    assert put(an_einvoice({"ettn": str(uuid.uuid4())})).status_code == 404
    assert put(an_einvoice({"ettn": ettn}, isSend=False)).status_code == 404  # not an incoming one
    assert "ettn" in put(an_einvoice()).json()["detail"]


# --- totals, checked by hand ------------------------------------------------------------------------------------

@pytest.mark.parametrize("lines,general,expected", [
    # 3 x 33.33 = 99.99; 10% of it 9.999 -> 10.00, then 0.99: net 89.00; VAT 20% 17.80; payable 106.80.
    ([a_line(amount=3, unitPrice=33.33, discountRate=10, discountAmount=0.99)], {},
     {"lineExtensionAmount": 89.0, "allowanceTotalAmount": 10.99, "taxInclusiveAmount": 106.8, "payableAmount": 106.8}),
    # 2 x 100 at 20% (40.00); 5 x 12.5 = 62.50 at 10% (6.25); 50 at 0% (exemption 351): 312.50 + 46.25.
    ([a_line(), a_line(amount=5, unitPrice=12.5, vatRate=10),
      a_line(amount=1, unitPrice=50, vatRate=0, vatExemptionReasonCode="351")], {},
     {"lineExtensionAmount": 312.5, "allowanceTotalAmount": 0.0, "taxInclusiveAmount": 358.75,
      "payableAmount": 358.75}),
    # 1,000 at 20% = 200 VAT; withholding 602 takes 90% of it (180): payable 1,200 - 180 = 1,020.
    ([a_line(amount=1, unitPrice=1000, taxes=[{"taxTypeCode": "602", "taxRate": 90, "isWithHolding": True,
                                                "withHoldingName": "Yapım işleri"}])], {"type": 5},
     {"lineExtensionAmount": 1000.0, "allowanceTotalAmount": 0.0, "taxInclusiveAmount": 1200.0,
      "payableAmount": 1020.0}),
    # Stopaj 0003 at 20% of 1,000 is deducted: 1,200 - 200 = 1,000.
    ([a_line(amount=1, unitPrice=1000, taxes=[{"taxTypeCode": "0003", "taxRate": 20, "taxName": "GV Stopajı"}])], {},
     {"lineExtensionAmount": 1000.0, "allowanceTotalAmount": 0.0, "taxInclusiveAmount": 1200.0,
      "payableAmount": 1000.0}),
    # ÖTV 0071 at 25% of 400 (100) is added: 400 + 80 + 100.
    ([a_line(amount=1, unitPrice=400, taxes=[{"taxTypeCode": "0071", "taxRate": 25}])], {},
     {"lineExtensionAmount": 400.0, "allowanceTotalAmount": 0.0, "taxInclusiveAmount": 580.0, "payableAmount": 580.0}),
    # USD: 3 x 19.99 = 59.97; VAT 11.994 -> 11.99.
    ([a_line(amount=3, unitPrice=19.99)], {"currencyCode": "USD", "exchangeRate": 34.5, "exchangeRateSource": "TCMB",
                                           "exchangeRateComment": "Döviz satış"},
     {"lineExtensionAmount": 59.97, "allowanceTotalAmount": 0.0, "taxInclusiveAmount": 71.96, "payableAmount": 71.96}),
    # Half up: 0.125 -> 0.13; its VAT 0.026 -> 0.03.
    ([a_line(amount=1, unitPrice=0.125)], {},
     {"lineExtensionAmount": 0.13, "allowanceTotalAmount": 0.0, "taxInclusiveAmount": 0.16, "payableAmount": 0.16}),
])
def test_totals_as_integrators_compute_them(sandbox, api, lines, general, expected):
    saved = save(api, an_archive(general, invoiceLines=lines))
    totals = saved["invoiceTotalsModel"]
    assert {name: totals[name] for name in expected} == expected
    assert totals["taxExclusiveAmount"] == totals["lineExtensionAmount"]
    assert sum(Decimal(str(line["lineExtensionAmount"])) for line in saved["invoiceLines"]) == \
        Decimal(str(totals["lineExtensionAmount"]))
    item = listing(api)["items"][0]
    assert item["payableAmount"] == expected["payableAmount"]
    if general.get("currencyCode"):
        assert (item["currencyId"], item["exchangeRate"], item["exchangeRateSource"]) == (2, 34.5, "TCMB")


def test_figures_sent_for_computed_fields_are_not_taken(sandbox, api):
    saved = save(api, an_archive(invoiceLines=[a_line(vatAmount=1, lineExtensionAmount=1)]))
    assert (saved["invoiceLines"][0]["vatAmount"], saved["invoiceLines"][0]["lineExtensionAmount"]) == (40.0, 200.0)


# --- the status machine ------------------------------------------------------------------------------------------

def test_outgoing_invoices_move_step_by_step_on_the_sandbox_clock(sandbox, api):
    sandbox.configure(ticket_processing_seconds=30)  # e-invoice: a step every 10 s; e-archive every 15 s
    einvoice = save(api, an_einvoice())["generalInfoModel"]["ettn"]
    archive = save(api, an_archive())["generalInfoModel"]["ettn"]
    seen = {}
    for offset in (0, 11, 16, 21, 31):
        sandbox.configure(clock_offset_seconds=offset)
        seen[offset] = (get(api, einvoice)["invoiceStatus"], get(api, archive)["invoiceStatus"])
    assert seen == {0: (20, 20), 11: (30, 20), 16: (30, 30), 21: (50, 30), 31: (60, 60)}
    item = listing(api, filterQuery=where(("invoiceNumber", "eşittir", get(api, einvoice)["generalInfoModel"][
        "invoiceNumber"])))["items"][0]
    assert item["updateDateUtc"] > item["createDateUtc"]


def test_statuses_settle_in_real_time_and_errors_carry_a_turkish_message(sandbox, api):
    sandbox.configure(ticket_processing_seconds=0.3)
    ettn = save(api, an_einvoice())["generalInfoModel"]["ettn"]
    assert wait_for(lambda: get(api, ettn), lambda got: got["invoiceStatus"] == 60)["message"] == ""

    sandbox.configure(ticket_error_rate=1)
    failing = save(api, an_archive())["generalInfoModel"]["ettn"]
    failed = wait_for(lambda: get(api, failing), lambda got: got["invoiceStatus"] == 40)
    assert "doğrulanamadı" in failed["message"]
    status = api.get("invoice", f"/v2/earchive/{failing}/status").json()
    assert status == {"id": failing, "status": 40, "message": failed["message"]}

    sandbox.configure(ticket_error_rate=0)
    again = call(api, "PUT", INVOICES, json=an_archive({"ettn": failing}))
    assert (again["invoiceStatus"], again["message"]) == (20, "")
    assert wait_for(lambda: get(api, failing), lambda got: got["invoiceStatus"] == 60)["message"] == ""


def test_the_control_action_sets_any_status(sandbox, api):
    customer = api.http.headers["x-api-key"]
    ettn = save(api, an_archive())["generalInfoModel"]["ettn"]
    answer = sandbox.control("POST", "invoices/status", {"api_key": customer, "ettn": ettn, "status": 10})
    assert answer == {"ettn": ettn, "status": 10, "message": ""}
    assert get(api, ettn)["invoiceStatus"] == 10
    sandbox.control("POST", "invoices/status", {"api_key": customer, "ettn": ettn, "status": 40,
                                                "message": "Alıcı reddetti."})
    assert (get(api, ettn)["invoiceStatus"], get(api, ettn)["message"]) == (40, "Alıcı reddetti.")


# --- the invoice service, from the same store ---------------------------------------------------------------------

def test_each_box_answers_its_own_invoices_and_404_for_the_others(sandbox, api):
    sandbox.configure(ticket_processing_seconds=3600)
    einvoice = save(api, an_einvoice())["generalInfoModel"]["ettn"]
    archive = save(api, an_archive())["generalInfoModel"]["ettn"]
    incoming = save(api, an_incoming())["generalInfoModel"]["ettn"]
    assert api.get("invoice", f"/v2/outboxinvoice/{einvoice}/status").json() == \
        {"id": einvoice, "status": 20, "message": ""}
    assert api.get("invoice", f"/v2/earchive/{archive}/status").json()["status"] == 20
    assert api.get("invoice", "/v2/earchive/status", params={"id": archive}).json()["status"] == 20
    assert api.get("invoice", f"/v2/inboxinvoice/{incoming}/status").json()["status"] == 60
    for path in (f"/v2/outboxinvoice/{archive}/status", f"/v2/earchive/{einvoice}/status",
                 f"/v2/outboxinvoice/{incoming}/status", f"/v2/inboxinvoice/{einvoice}/status",
                 f"/v2/outboxinvoice/{archive}/pdf/true", f"/v2/earchive/{einvoice}/ubl",
                 f"/v2/inboxinvoice/{archive}/html/false"):
        assert api.get("invoice", path).status_code == 404, path
    many = api.post("invoice", "/v2/outboxinvoice/status", json=[archive, einvoice, "INV-1", einvoice]).json()
    assert [item["id"] for item in many] == [einvoice, "INV-1"]  # the e-archive one left out; unknown ids faked
    assert many[0]["status"] == 20


def test_the_ubl_is_well_formed_ubl_tr_with_the_saved_totals(sandbox, api):
    account = call(api, "POST", "/v1/currentaccount", json=an_account(
        identifier=ARCHIVE_VKN, name="Başkent Yapı Ltd.", currentAccountAddress=an_address(
            subDivisionName="Çankaya", city="Ankara", streetName="Atatürk Bulvarı", buildingNumber="12")))
    lines = [a_line(amount=3, unitPrice=33.33, discountRate=10, discountAmount=0.99),
             a_line(amount=5, unitPrice=12.5, vatRate=10),
             a_line(amount=1, unitPrice=50, vatRate=0, vatExemptionReasonCode="351"),
             a_line(amount=1, unitPrice=1000, taxes=[{"taxTypeCode": "602", "taxRate": 90, "isWithHolding": True}]),
             a_line(amount=1, unitPrice=500, taxes=[{"taxTypeCode": "0003", "taxRate": 20}])]
    saved = save(api, an_archive({"currencyCode": "USD", "exchangeRate": 34.5, "exchangeRateSource": "TCMB",
                                  "exchangeRateComment": "Satış", "type": 5}, invoiceLines=lines,
                                 notes=[{"note": "Not 1"}]))
    assert saved["currentAccountName"] == account["name"]
    general, totals = saved["generalInfoModel"], saved["invoiceTotalsModel"]
    root = ubl_of(api, f"/v2/earchive/{general['ettn']}/ubl")
    text = lambda path: root.findtext(path, namespaces=UBL)  # noqa: E731
    assert root.tag == f"{{{UBL['inv']}}}Invoice"
    assert (text("cbc:UBLVersionID"), text("cbc:CustomizationID"), text("cbc:ProfileID")) == \
        ("2.1", "TR1.2.1", "EARSIVFATURA")
    assert (text("cbc:ID"), text("cbc:UUID"), text("cbc:IssueDate"), text("cbc:InvoiceTypeCode")) == \
        (general["invoiceNumber"], general["ettn"], "2025-03-14", "TEVKIFAT")
    assert (text("cbc:CopyIndicator"), text("cbc:DocumentCurrencyCode"), text("cbc:LineCountNumeric")) == \
        ("false", "USD", "5")
    assert text("cbc:Note") == "Not 1" and text("cac:PricingExchangeRate/cbc:CalculationRate") == "34.5"
    content = root.find("ext:UBLExtensions/ext:UBLExtension/ext:ExtensionContent", UBL)
    assert content is not None and len(content) == 0 and not (content.text or "").strip()
    customer = root.find("cac:AccountingCustomerParty/cac:Party", UBL)
    identification = customer.find("cac:PartyIdentification/cbc:ID", UBL)
    assert (identification.text, identification.get("schemeID")) == (ARCHIVE_VKN, "VKN")
    assert (customer.findtext("cac:PostalAddress/cbc:CitySubdivisionName", namespaces=UBL),
            customer.findtext("cac:PostalAddress/cbc:CityName", namespaces=UBL)) == ("Çankaya", "Ankara")
    supplier = root.find("cac:AccountingSupplierParty/cac:Party/cac:PartyIdentification/cbc:ID", UBL)
    assert supplier.get("schemeID") == "VKN" and len(supplier.text) == 10

    named = TOTALS_KEYS - {"allowanceTotalAmount"}  # the discounts are the lines' (AllowanceCharge)
    monetary = {name: amount(root, f"cac:LegalMonetaryTotal/cbc:{name[0].upper()}{name[1:]}") for name in named}
    assert monetary == {name: Decimal(str(totals[name])).quantize(Decimal("0.01")) for name in named}
    assert root.find("cac:LegalMonetaryTotal/cbc:PayableAmount", UBL).get("currencyID") == "USD"
    (tax_total,) = root.findall("cac:TaxTotal", UBL)
    subtotals = {(sub.findtext("cac:TaxCategory/cac:TaxScheme/cbc:TaxTypeCode", namespaces=UBL),
                  sub.findtext("cbc:Percent", namespaces=UBL)): amount(sub, "cbc:TaxAmount")
                 for sub in tax_total.findall("cac:TaxSubtotal", UBL)}
    assert set(subtotals) == {("0015", "20"), ("0015", "10"), ("0015", "0"), ("0003", "20")}
    stopaj, withholding = subtotals["0003", "20"], amount(root, "cac:WithholdingTaxTotal/cbc:TaxAmount")
    assert (stopaj, withholding) == (Decimal("100.00"), Decimal("180.00"))
    assert amount(tax_total, "cbc:TaxAmount") == sum(subtotals.values())
    taxes = monetary["taxInclusiveAmount"] - monetary["taxExclusiveAmount"]
    assert amount(tax_total, "cbc:TaxAmount") - stopaj == taxes
    assert monetary["payableAmount"] == monetary["taxInclusiveAmount"] - stopaj - withholding
    invoice_lines = root.findall("cac:InvoiceLine", UBL)
    assert [amount(line, "cbc:LineExtensionAmount") for line in invoice_lines] == \
        [Decimal(str(line["lineExtensionAmount"])).quantize(Decimal("0.01")) for line in saved["invoiceLines"]]
    discounts = [amount(line, "cac:AllowanceCharge/cbc:Amount") for line in invoice_lines
                 if line.find("cac:AllowanceCharge", UBL) is not None]
    assert discounts == [Decimal("10.99")] == [Decimal(str(totals["allowanceTotalAmount"]))]
    assert invoice_lines[0].find("cbc:InvoicedQuantity", UBL).get("unitCode") == "C62"


def test_the_ubl_names_the_exemption_reason_and_the_returned_invoice(sandbox, api):
    """As the tax authority's schematron wants them: the reason's text beside its code (TaxExemptionReasonCheck-1),
    the returned invoice typed IADE (IADEInvioceCheck-1)."""
    saved = save(api, an_archive({"type": 2, "returnInvoiceNumber": "ARS2025000000001",
                                  "returnInvoiceDate": "2025-03-01"},
                                 invoiceLines=[a_line(vatRate=0, vatExemptionReasonCode="301")]))
    root = ubl_of(api, f"/v2/earchive/{saved['generalInfoModel']['ettn']}/ubl")
    category = root.find("cac:TaxTotal/cac:TaxSubtotal/cac:TaxCategory", UBL)
    assert [child.text for child in category if child.tag.endswith("Reason") or child.tag.endswith("ReasonCode")] == \
        ["301", "11/1-a Mal ihracatı"]
    reference = root.find("cac:BillingReference/cac:InvoiceDocumentReference", UBL)
    assert [reference.findtext(f"cbc:{name}", namespaces=UBL) for name in ("ID", "IssueDate", "DocumentTypeCode")] == \
        ["ARS2025000000001", "2025-03-01", "IADE"]


def test_an_e_invoice_ubl_names_a_tckn_customer_and_its_profile(sandbox, api):
    sandbox.control("POST", "invoices/taxpayers", {"api_key": api.http.headers["x-api-key"], "add": [
        {"Identifier": ARCHIVE_TCKN, "Title": "Ayşe Yılmaz", "Alias": "urn:mail:ayse@example.com", "AppType": 1}]})
    saved = save(api, an_einvoice({"invoiceProfileType": 1}, currentAccountIdentifier=ARCHIVE_TCKN,
                                  currentAccountAlias="urn:mail:ayse@example.com"))
    root = ubl_of(api, f"/v2/outboxinvoice/{saved['generalInfoModel']['ettn']}/ubl")
    assert root.findtext("cbc:ProfileID", namespaces=UBL) == "TICARIFATURA"
    party = root.find("cac:AccountingCustomerParty/cac:Party", UBL)
    assert party.find("cac:PartyIdentification/cbc:ID", UBL).get("schemeID") == "TCKN"
    assert (party.findtext("cac:Person/cbc:FirstName", namespaces=UBL),
            party.findtext("cac:Person/cbc:FamilyName", namespaces=UBL)) == ("Ayşe", "Yılmaz")


def test_the_pdf_and_html_show_the_number_the_customer_and_the_payable_amount(sandbox, api):
    saved = save(api, an_archive(currentAccountName="Kuzey Yazılım A.Ş.",
                                 invoiceLines=[a_line(amount=10, unitPrice=123.45)]))
    ettn, number = saved["generalInfoModel"]["ettn"], saved["generalInfoModel"]["invoiceNumber"]
    pdf = base64.b64decode(api.get("invoice", f"/v2/earchive/{ettn}/pdf/true").json()["Response"])
    assert pdf.startswith(b"%PDF-") and pdf.rstrip().endswith(b"%%EOF")
    assert number.encode() in pdf and b"1.481,40 TRY" in pdf and b"Kuzey Yaz" in pdf
    page = base64.b64decode(api.get("invoice", f"/v2/earchive/{ettn}/html/false").json()["Response"]).decode()
    assert number in page and "1.481,40 TRY" in page and "Kuzey Yazılım A.Ş." in page
    assert "<script" not in page.lower()
    incoming = save(api, an_incoming())["generalInfoModel"]["ettn"]
    assert api.get("invoice", f"/v2/inboxinvoice/{incoming}/pdf").status_code == 200
    assert b"<cbc:ID>TDR2025000000042</cbc:ID>" in base64.b64decode(
        api.get("invoice", f"/v2/inboxinvoice/{incoming}/ubl").json()["Response"])


def test_unknown_ids_keep_their_fake_answers(sandbox, api):
    assert api.get("invoice", "/v2/outboxinvoice/abc/status").json()["id"] == "abc"
    pdf = base64.b64decode(api.get("invoice", "/v2/earchive/abc/pdf/true").json()["Response"])
    assert pdf.startswith(b"%PDF-")
    assert api.get("invoice", "/v2/outboxinvoice/abc/html/true").status_code == 200


# --- the taxpayer list ------------------------------------------------------------------------------------------

def test_the_taxpayer_list_is_a_zip_of_one_json_file_with_a_byte_order_mark(sandbox, api):
    response = api.get("invoice", "/v2/gibuser/recipient/zip")
    assert response.status_code == 200 and response.headers["Content-Type"] == "application/zip"
    with zipfile.ZipFile(io.BytesIO(response.content)) as archive:
        (name,) = archive.namelist()
        raw = archive.read(name)
    assert raw.startswith(codecs.BOM_UTF8)
    users = json.loads(raw[len(codecs.BOM_UTF8):].decode("utf-8"))
    assert set(users[0]) == {"Identifier", "Title", "Alias", "AppType", "Type", "FirstCreationTime",
                             "AliasCreationTime"}
    mine = {user["Alias"] for user in users if user["Identifier"] == SANDBOX_VKN and user["AppType"] == 1}
    assert mine == {ALIAS, OTHER_ALIAS}
    identifiers = {user["Identifier"] for user in users}
    assert ARCHIVE_VKN not in identifiers and ARCHIVE_TCKN not in identifiers and len(identifiers) > 150
    dispatch_only = identifiers - {user["Identifier"] for user in users if user["AppType"] == 1}
    assert dispatch_only and any(user["AppType"] == 3 and user["Identifier"] == SANDBOX_VKN for user in users)
    assert api.get("invoice", "/v2/gibuser/recipient/zip").content == response.content  # deterministic

    # An e-dispatch user is no e-invoice user: an e-invoice to it is refused, an e-archive invoice taken.
    other = sorted(dispatch_only)[0]
    assert "not registered" in problems(saving(api, an_einvoice(currentAccountIdentifier=other)))[
        "currentAccountAlias"]


def test_users_registered_by_the_control_action_change_which_invoice_applies(sandbox, api):
    save(api, an_archive())
    sandbox.control("POST", "invoices/taxpayers", {"api_key": api.http.headers["x-api-key"], "add": [
        {"Identifier": ARCHIVE_VKN, "Title": "Yeni Mükellef A.Ş.", "Alias": "urn:mail:yeni@example.com",
         "AppType": 1}]})
    assert "registered e-invoice user" in problems(saving(api, an_archive()))["recordType"]
    assert save(api, an_einvoice(currentAccountIdentifier=ARCHIVE_VKN,
                                 currentAccountAlias="urn:mail:yeni@example.com"))["recordType"] == 1
    response = api.get("invoice", "/v2/gibuser/recipient/zip")
    with zipfile.ZipFile(io.BytesIO(response.content)) as archive:
        users = json.loads(archive.read(archive.namelist()[0]).decode("utf-8-sig"))
    assert {"Identifier": ARCHIVE_VKN, "Alias": "urn:mail:yeni@example.com", "AppType": 1}.items() <= \
        next(user for user in users if user["Identifier"] == ARCHIVE_VKN).items()


# --- lists: filters, sorting, paging ------------------------------------------------------------------------------

def test_lists_filter_and_sort_on_the_categories_the_back_office_uses(sandbox, api):
    bodies = [an_archive({"issueDate": "2025-01-10"}, invoiceLines=[a_line(amount=1, unitPrice=9)]),
              an_archive({"issueDate": "2025-02-10"}, invoiceLines=[a_line(amount=1, unitPrice=100)]),
              an_einvoice({"issueDate": "2025-03-10"}, invoiceLines=[a_line(amount=1, unitPrice=1000)]),
              an_archive({"issueDate": "2025-04-10"}, currentAccountIdentifier=ARCHIVE_TCKN,
                         currentAccountName="İnci Işıklı")]
    saved = [save(api, body) for body in bodies]
    numbers = [item["generalInfoModel"]["invoiceNumber"] for item in saved]

    def found(*conditions, **params):
        return [item["invoiceNumber"] for item in listing(api, filterQuery=where(*conditions), **params)["items"]]

    assert found(("invoiceNumber", "eşittir", numbers[1])) == [numbers[1]]
    assert found(("invoiceNumber", "ile başlayan", "EFT")) == [numbers[2]]
    assert found(("targetVknTckn", "eşittir", ARCHIVE_TCKN)) == [numbers[3]]
    assert found(("targetTitle", "içeren", "INCI IŞIK")) == [numbers[3]]  # the four i's are one letter
    assert found(("payableAmount", "büyüktür", 100)) == [numbers[1], numbers[2], numbers[3]]  # as numbers
    assert found(("payableAmount", "küçük ve eşittir", "10.8")) == [numbers[0]]
    assert found(("issueDate", "büyük ve eşittir", "2025-02-10"), ("issueDate", "küçüktür", "10.04.2025")) == \
        numbers[1:3]
    assert found(("recordType", "eşittir", 1)) == [numbers[2]]
    assert found(("invoiceStatus", "eşittir", 20), ("recordStatus", "eşittir", 0)) == numbers
    assert found(sortedColumn="payableAmount", isDesc="true") == [numbers[2], numbers[3], numbers[1], numbers[0]]
    assert found(sortedColumn="issueDate", isDesc="false") == numbers

    # Incremental sync: what changed since a moment, in the order it changed.
    since = listing(api, sortedColumn="updateDateUtc", isDesc="true")["items"][0]["updateDateUtc"]
    map_customer(api, ARCHIVE_VKN)  # posting needs the customer's mapping (document 3, 2.6)
    assert moved(api, "post", [{"ettn": saved[1]["generalInfoModel"]["ettn"], "isSend": True}]).status_code == 200
    changed = listing(api, sortedColumn="updateDateUtc", filterQuery=where(("updateDateUtc", "büyük ve eşittir",
                                                                            since)))["items"]
    assert [item["invoiceNumber"] for item in changed] == [numbers[3], numbers[1]]
    assert changed[1]["recordStatus"] == 1 and changed[1]["updateDateUtc"] > since
    local = since.replace("+00:00", "Z")
    assert len(listing(api, filterQuery=where(("updateDateUtc", "büyüktür", local)))["items"]) == 1

    for params in ({"filterQuery": where(("nothing", "eşittir", 1))},
                   {"filterQuery": where(("payableAmount", "içeren", "1"))},
                   {"filterQuery": where(("updateDateUtc", "eşittir", "dün"))},
                   {"filterQuery": "[{"}, {"sortedColumn": "size"}, {"isDesc": "maybe"}, {"pageSize": 501}):
        assert listing(api, status=400, **params)["title"] == "Bad Request", params


def test_pages_of_a_list(sandbox, api):
    for _ in range(3):
        save(api, an_archive())
    page = listing(api, pageIndex=2, pageSize=2)
    assert (page["totalCount"], page["totalPages"], page["hasPreviousPage"], page["hasNextPage"]) == (3, 2, True, False)
    assert [item["invoiceNumber"] for item in page["items"]] == ["ARS2025000000003"]


# --- delete, post, reverse --------------------------------------------------------------------------------------

def test_delete_refuses_posted_invoices_and_every_e_invoice(sandbox, api):
    archive = save(api, an_archive())["generalInfoModel"]["ettn"]
    einvoice = save(api, an_einvoice())["generalInfoModel"]["ettn"]
    delete = lambda ettn, **params: api.request("DELETE", "accounting", f"{INVOICES}/{ettn}",  # noqa: E731
                                                params=params)
    assert "e-invoices cannot be deleted" in error(delete(einvoice, isSend="true"))
    assert "isSend" in error(delete(archive))
    assert "No incoming invoice" in error(delete(archive, isSend="false"), 404)
    map_customer(api, ARCHIVE_VKN)  # posting needs the customer's mapping (document 3, 2.6)
    assert moved(api, "post", [{"ettn": archive, "isSend": True}]).status_code == 200
    assert "reverse the posting" in error(delete(archive, isSend="true"))
    assert moved(api, "reverse", [{"ettn": archive, "isSend": True}]).status_code == 200
    response = delete(archive, isSend="true")
    assert response.status_code == 200 and response.json() == {}
    assert "No outgoing invoice" in error(delete(archive, isSend="true"), 404)
    get(api, archive, status=404)


def test_post_and_reverse_are_all_or_none(sandbox, api):
    for identifier in (ARCHIVE_VKN, SANDBOX_VKN):
        map_customer(api, identifier)  # posting needs the customer's mapping (document 3, 2.6)
    first = save(api, an_archive())["generalInfoModel"]
    second = save(api, an_einvoice())["generalInfoModel"]
    empty = save(api, an_archive(invoiceLines=[]))["generalInfoModel"]
    cancelled = save(api, an_archive())["generalInfoModel"]
    sandbox.control("POST", "invoices/status", {"api_key": api.http.headers["x-api-key"],
                                                "ettn": cancelled["ettn"], "status": 10})
    unknown = str(uuid.uuid4())
    refusal = error(moved(api, "post", [{"ettn": ettn, "isSend": True} for ettn in (
        first["ettn"], empty["ettn"], cancelled["ettn"], unknown)]))
    assert empty["invoiceNumber"] in refusal and "no lines" in refusal and "cancelled" in refusal and unknown in refusal
    assert first["invoiceNumber"] not in refusal
    assert get(api, first["ettn"])["recordStatus"] == 0  # nothing was posted

    items = [{"ettn": first["ettn"], "isSend": True}, {"ettn": second["ettn"], "isSend": True}]
    assert moved(api, "post", items).json() == {}
    assert [get(api, item["ettn"])["recordStatus"] for item in items] == [1, 1]
    assert "already posted" in error(moved(api, "post", items[:1]))
    refused = api.request("PUT", "accounting", INVOICES, json=an_archive({"ettn": first["ettn"]}))
    assert refused.status_code == 400 and "reverse the posting first" in refused.json()["detail"]

    assert moved(api, "reverse", items[:1]).json() == {}
    assert "not posted" in error(moved(api, "reverse", items))
    assert get(api, second["ettn"])["recordStatus"] == 1  # the refused reverse changed nothing
    assert call(api, "PUT", INVOICES, json=an_archive({"ettn": first["ettn"]}))["recordStatus"] == 0

    assert "non-empty array" in error(moved(api, "post", []))
    assert "isSend" in error(moved(api, "post", [{"ettn": first["ettn"]}]))
    assert "[0].isSend" in unbound(moved(api, "post", [{"ettn": first["ettn"], "isSend": "true"}]))


# --- seeding ----------------------------------------------------------------------------------------------------

def test_seeding_ten_thousand_invoices_is_fast_and_deterministic(sandbox, customer_api):
    api, customer = customer_api()
    started = time.monotonic()
    answer = sandbox.control("POST", "invoices/seed", {"customer": customer["customer_unique_id"], "count": 10_000,
                                                       "direction": "incoming"}, timeout=120)
    assert answer == {"created": 10_000, "first": 1, "last": 10_000}
    assert time.monotonic() - started < 30
    page = listing(api, "incoming", sortedColumn="updateDateUtc")
    assert page["totalCount"] == 10_000
    item = page["items"][0]
    assert (item["invoiceStatus"], item["invoiceProcessStatus"], item["recordType"]) == (60, 0, 1)
    assert len({item["updateDateUtc"] for item in page["items"]}) == 500
    full = get(api, item["ettn"], is_send=False)
    assert full["invoiceTotalsModel"]["payableAmount"] == item["payableAmount"] and full["invoiceLines"]

    more = sandbox.control("POST", "invoices/seed", {"customer": customer["customer_unique_id"], "count": 5,
                                                     "direction": "outgoing"})
    assert more == {"created": 5, "first": 1, "last": 5}
    outgoing = listing(api, sortedColumn="invoiceNumber")["items"]
    assert [item["invoiceNumber"] for item in outgoing] == [f"SND2025{n:09d}" for n in range(1, 6)]
    assert {item["recordType"] for item in outgoing} == {0, 1}
    assert save(api, an_archive({"prefix": "SND"}))["generalInfoModel"]["invoiceNumber"] == "SND2025000000006"
    again = sandbox.control("POST", "invoices/seed", {"customer": customer["customer_unique_id"], "count": 5,
                                                      "direction": "outgoing", "start": 1})
    assert again["created"] == 0  # the same sequence numbers are the same invoices
