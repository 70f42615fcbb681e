"""The tax authority's own checks as the oracle of the invoice form (issue 28): its UBL-TR XSD and schematron, as
efatura-kontrol bundles them, run over the UBL the sandbox writes.

- Every (kind, profile, type) the form offers: an invoice built through the form, sent to the sandbox over
  HTTP, its UBL fetched as the back office fetches it: no XSD or schematron error.
- Every schematron rule on a field the JSON model carries: a bad invoice that the form refuses on that field,
  whose UBL (written by the sandbox's own writer, past the form and the sandbox's save rules) the schematron
  refuses by that rule. 0 disagreements either way.
"""

import copy
from datetime import timedelta

import pytest
from django.utils import timezone, translation

from backoffice.core.choices import SyncState
from backoffice.current_accounts.models import CurrentAccount
from backoffice.invoices import documents, forms, services
from backoffice.invoices.choices import DocumentKind, InvoiceType, Profile, RecordType
from backoffice.invoices.models import Invoice, Taxpayer
from backoffice.remote.common import jsonable
from tests.invoices.test_forms_and_views import invoice_data, line

pytestmark = pytest.mark.django_db

EARCHIVE_VKN, EINVOICE_VKN = "4840000006", "1234567890"
EINVOICE_ALIAS = "urn:mail:defaultpk@sandbox-musteri.com.tr"


class Oracle:
    """The tax authority's XSD and schematron (efatura-kontrol), compiled once; their errors ('hata'). Not its
    signature and totals checks: a draft is unsigned until the integrator seals it (kontrol_et says so as 'bilgi'),
    and its empty seal place gets a placeholder for the XSD (_sealed_place_filled)."""

    def __init__(self):
        from efatura_kontrol import kontrol

        kontrol.hazirla()  # compiles the schematron (about half a second)

    def errors(self, xml: bytes) -> list:
        from efatura_kontrol import belge, sematron, xsd

        document = belge.yukle(_sealed_place_filled(xml))
        return [finding for finding in (*xsd.dogrula(document), *sematron.dogrula(document))
                if finding.seviye == "hata"]

    def rules(self, xml: bytes) -> set[str]:
        return {finding.kod.removeprefix("sch-") for finding in self.errors(xml)}


def _sealed_place_filled(xml: bytes) -> bytes:
    """The draft with a placeholder in its empty ext:ExtensionContent: the bare UBL XSD wants an element of another
    namespace there, which the integrator's seal becomes (facts file; dispatch/ubl.py does the same)."""
    from lxml import etree

    root = etree.fromstring(xml)
    for content in root.iterfind("ext:UBLExtensions/ext:UBLExtension/ext:ExtensionContent",
                                 {"ext": "urn:oasis:names:specification:ubl:schema:xsd:CommonExtensionComponents-2"}):
        if not len(content) and not (content.text or "").strip():
            etree.SubElement(content, "{urn:x-backoffice:unsigned-draft}Placeholder")
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8")


@pytest.fixture(scope="session")
def oracle():
    return Oracle()


def _described(errors) -> str:
    return "\n".join(f"{e.kod} {e.konum or ''}: {e.mesaj}" for e in errors)


# --- the invoices, through the form -------------------------------------------------------------------------

def bound(company, data):
    """The invoice form and its lines, bound as the page binds them (views.InvoiceEditView)."""
    form = forms.InvoiceForm(data=data, instance=Invoice(), company=company)
    lines = forms.LineFormSet(data=data, instance=form.instance, prefix="lines")
    return form, lines, all([form.is_valid(), lines.is_valid()])


def through_the_form(company, data) -> Invoice:
    form, lines, valid = bound(company, data)
    assert valid, {"form": form.errors, "lines": [line_form.errors for line_form in lines.forms],
                   "all": lines.non_form_errors()}
    invoice = services.invoice_save(form.save(commit=False), lines.kept())
    services.invoice_send([invoice])  # the confirmed step (issue 29): saving alone sends nothing
    return invoice


def error_on(form, lines, where: str) -> str:
    """The messages on a field: "name" of the invoice, "lines-0-name" of its first line."""
    if where.startswith("lines-"):
        _prefix, index, name = where.split("-", 2)
        return " ".join(str(message) for message in lines.forms[int(index)].errors.get(name, []))
    return " ".join(str(message) for message in form.errors.get(where, []))


@pytest.fixture
def customers(sandbox_company):
    """The sandbox's e-invoice user (on its taxpayer list) and an e-archive customer, with the taxpayer list kept
    here."""
    for identifier, name in ((EARCHIVE_VKN, "Ayşe Yılmaz Ltd."), (EINVOICE_VKN, "Sandbox Müşteri A.Ş.")):
        CurrentAccount.objects.create(company=sandbox_company, name=name, identifier=identifier, remote_id=identifier,
                                      sync_state=SyncState.SYNCED)
    Taxpayer.objects.create(identifier=EINVOICE_VKN, alias=EINVOICE_ALIAS, app_type="1", seen_at=timezone.now())
    return sandbox_company


# --- every (kind, profile, type) the form offers, each with a valid invoice ---------------------------------

# What each type is made of (the schematron ties exemption reasons and withholding to the type).
TYPE_LINES = {
    InvoiceType.SATIS: [line(0), line(1, vat_rate="0", vat_exemption_reason_code="351")],
    InvoiceType.IADE: [line(0, withholding_code="602"), line(1, vat_rate="0", vat_exemption_reason_code="301")],
    InvoiceType.ISTISNA: [line(0, vat_rate="0", vat_exemption_reason_code="301"), line(1)],
    InvoiceType.OZELMATRAH: [line(index, vat_exemption_reason_code=str(801 + index)) for index in range(12)],
    InvoiceType.TEVKIFAT: [line(0, withholding_code="602"), line(1, vat_rate="10", discount_rate="10")],
    InvoiceType.IHRACKAYITLI: [line(index, vat_exemption_reason_code=code)  # 702 needs customs codes: not offered
                               for index, code in enumerate(("701", "703", "704"))],
    InvoiceType.SGK: [line(0, withholding_code="624")],
    InvoiceType.KOMISYONCU: [line(0, other_tax_code="0071", other_tax_rate="5"),
                             line(1, vat_exemption_reason_code="555")],
}


def offered_combinations():
    """(record type, profile, invoice type) of every invoice the form offers."""
    form = forms.InvoiceForm(company=None)
    profiles = [value for value, _label in form.fields["profile"].choices if value]
    types = [value for value, _label in form.fields["invoice_type"].choices if value]
    combos = [(RecordType.EARCHIVE, Profile.EARSIVFATURA, kind) for kind in types]
    return combos + [(RecordType.EINVOICE, profile, kind) for profile in profiles for kind in types
                     if forms.type_allowed(profile, kind)]


def header_for(record_type, profile, kind) -> dict:
    fields = {"invoice_type": str(kind)}
    if record_type == RecordType.EINVOICE:
        fields.update(account=EINVOICE_VKN, profile=str(profile), target_alias=EINVOICE_ALIAS)
    if kind == InvoiceType.IADE:
        fields.update(return_invoice_number="ABC2026000000001",
                      return_invoice_date=(timezone.localdate() - timedelta(days=3)).isoformat())
    return fields


def test_the_form_offers_the_types_and_profiles_the_tax_authority_takes():
    combos = offered_combinations()
    assert {kind for _r, _p, kind in combos} == set(TYPE_LINES)  # no ARACTESCIL: not a type of the tax authority
    assert {profile for _r, profile, _k in combos} == {"EARSIVFATURA", "TEMELFATURA", "TICARIFATURA"}
    assert (RecordType.EINVOICE, Profile.TICARIFATURA, InvoiceType.IADE) not in combos
    assert len(combos) == 23


def test_what_the_form_accepts_passes_the_tax_authoritys_checks(customers, oracle):
    """Each combination through the form, to the sandbox over HTTP and back as UBL, into the oracle (one company
    for them all: seconds, not minutes)."""
    found = {}
    for record_type, profile, kind in offered_combinations():
        invoice = through_the_form(customers, invoice_data(TYPE_LINES[kind], **header_for(record_type, profile, kind)))
        assert (invoice.record_type, invoice.profile, invoice.invoice_type) == (record_type, profile, kind)
        with translation.override("en"):
            assert services.invoice_push(invoice.pk) == "Sent to the platform."
        invoice.refresh_from_db()
        ubl = documents.INVOICE_DOCUMENTS.get(invoice, DocumentKind.UBL).file.open("rb").read()
        if errors := oracle.errors(ubl):
            found[(str(profile), str(kind))] = _described(errors)
    assert not found, found


# --- every schematron rule on a field the JSON model carries: the form refuses first, on the field --------------

def general(**members):
    return lambda body: body["generalInfoModel"].update(members)


def first_line(**members):
    return lambda body: body["invoiceLines"][0].update(members)


def second_line(**members):
    """A second line: the first as sent, changed by members."""
    return lambda body: body["invoiceLines"].append({**copy.deepcopy(body["invoiceLines"][0]), **members})


def einvoice(profile: int):
    def change(body):
        body.update(recordType=1, currentAccountIdentifier=EINVOICE_VKN, currentAccountAlias=EINVOICE_ALIAS)
        body.pop("archiveInfoModel", None)
        body["generalInfoModel"]["invoiceProfileType"] = profile
    return change


def both(*changes):
    def change(body):
        for one in changes:
            one(body)
    return change


EINVOICE_FORM = {"account": EINVOICE_VKN, "target_alias": EINVOICE_ALIAS}
RETURNED = {"return_invoice_number": "ABC2026000000001", "return_invoice_date": "2026-01-05"}
RETURNED_BODY = general(returnInvoiceNumber="ABC2026000000001", returnInvoiceDate="2026-01-05")
TOMORROW = timezone.localdate() + timedelta(days=1)
WITHHELD = {"taxTypeCode": "602", "taxName": "Etüt, plan-proje", "withHoldingName": "Etüt, plan-proje",
            "taxRate": 90, "isWithHolding": True}

# (the form's data changed, the field that refuses, what it says; the same change to the body the back office
# sends, bypassing the form; the schematron rule that refuses its UBL)
DISAGREEMENTS = {
    "type not of the tax authority": (
        {"invoice_type": "ARACTESCIL"}, "invoice_type", "valid choice",
        general(type=6), "InvoiceTypeCodeCheck-1"),
    "return on a commercial invoice": (
        {**EINVOICE_FORM, "profile": "TICARIFATURA", "invoice_type": "IADE", **RETURNED}, "invoice_type",
        "basic profile", both(einvoice(1), general(type=2), RETURNED_BODY), "InvoiceTypeCodeCheck-2"),
    "export profile": (
        {**EINVOICE_FORM, "profile": "IHRACAT"}, "profile", "basic or commercial",
        einvoice(2), "IhracatYolcuBeraberCheck-4"),
    "passenger (tax-free) profile": (
        {**EINVOICE_FORM, "profile": "YOLCUBERABERFATURA"}, "profile", "basic or commercial",
        einvoice(3), "TaxRepresentativePartyCheck-1"),
    "withholding on a sale": (
        {"lines-0-withholding_code": "602"}, "lines-0-withholding_code", "withholding (TEVKIFAT) invoice",
        first_line(taxes=[WITHHELD]), "GeneralWithholdingTaxTotalCheck-1"),
    "tax 4171 on a sale": (
        {"lines-0-other_tax_code": "4171", "lines-0-other_tax_rate": "5"}, "lines-0-other_tax_code",
        "withholding (TEVKIFAT) invoice",
        first_line(taxes=[{"taxTypeCode": "4171", "taxRate": 5, "isWithHolding": False}]),
        "GeneralWithholdingTaxTotalCheck-2"),
    "full exemption on a sale": (
        {"lines-0-vat_rate": "0", "lines-0-vat_exemption_reason_code": "301"}, "lines-0-vat_exemption_reason_code",
        "exemption (ISTISNA) invoice", first_line(vatRate=0, vatExemptionReasonCode="301"),
        "TaxExemptionReasonCodeCheck-3"),
    "special base on a sale": (
        {"lines-0-vat_exemption_reason_code": "801"}, "lines-0-vat_exemption_reason_code",
        "special-base (OZELMATRAH) invoice", first_line(vatExemptionReasonCode="801"),
        "TaxExemptionReasonCodeCheck-4"),
    "export-registered on a special base": (
        {"invoice_type": "OZELMATRAH", "lines-0-vat_exemption_reason_code": "701"},
        "lines-0-vat_exemption_reason_code", "export-registered (IHRACKAYITLI) invoice",
        both(general(type=4), first_line(vatExemptionReasonCode="701")), "TaxExemptionReasonCodeCheck-5"),
    "702 without customs codes": (
        {"invoice_type": "IHRACKAYITLI", "lines-0-vat_exemption_reason_code": "702"},
        "lines-0-vat_exemption_reason_code", "valid choice",
        both(general(type=7), first_line(vatExemptionReasonCode="702")), "TaxExemptionReasonCodeCheck-6"),
    "fixed assets on an exemption invoice": (
        {"invoice_type": "ISTISNA", "lines-0-vat_exemption_reason_code": "555"}, "lines-0-vat_exemption_reason_code",
        "does not go on an exemption", both(general(type=3), first_line(vatExemptionReasonCode="555")),
        "DemirbasKDVTaxExemptionCheck-1"),
    "fixed assets without VAT": (
        {"lines-0-vat_rate": "0", "lines-0-vat_exemption_reason_code": "555"}, "lines-0-vat_exemption_reason_code",
        "for a line with VAT", first_line(vatRate=0, vatExemptionReasonCode="555"), "DemirbasKDVTaxExemptionCheck-2"),
    "fixed assets beside a line without VAT": (
        {"lines-TOTAL_FORMS": "2", "lines-0-vat_exemption_reason_code": "555",
         **line(1, vat_rate="0", vat_exemption_reason_code="351")}, "lines-1-vat_rate", "555 (fixed assets) line",
        both(second_line(vatRate=0, vatExemptionReasonCode="351"), first_line(vatExemptionReasonCode="555")),
        "DemirbasKDVTaxExemptionCheck-2"),
    "fixed assets whose VAT comes to 0,00": (
        {"lines-0-vat_exemption_reason_code": "555", "lines-0-vat_rate": "1", "lines-0-quantity": "1",
         "lines-0-unit_price": "0,10"}, "lines-0-vat_rate", "555 (fixed assets) line",
        first_line(vatExemptionReasonCode="555", vatRate=1, amount=1, unitPrice=0.1),
        "DemirbasKDVTaxExemptionCheck-2"),
    "VAT that comes to nothing": (
        {"lines-0-unit_price": "0"}, "lines-0-vat_rate", "comes to 0.00", first_line(unitPrice=0),
        "TaxExemptionReasonCheck-1"),
    "dated tomorrow": (
        {"issue_date": TOMORROW.isoformat()}, "issue_date", "in the future",
        general(issueDate=TOMORROW.isoformat()), "TimeCheck-1"),
    "dated before 2005": (
        {"issue_date": "2004-12-31"}, "issue_date", "before 1 January 2005",
        general(issueDate="2004-12-31"), "TimeCheck-2"),
    "returned invoice dated before 2005": (
        {"invoice_type": "IADE", **RETURNED, "return_invoice_date": "2004-12-31"}, "return_invoice_date",
        "before 1 January 2005", both(general(type=2), RETURNED_BODY, general(returnInvoiceDate="2004-12-31")),
        "TimeCheck-2"),
    "return without the returned invoice": (
        {"invoice_type": "IADE"}, "return_invoice_number", "names the invoice it returns", general(type=2),
        "IADEInvioceCheck-1"),
    "foreign currency without a rate": (
        {"currency_code": "USD"}, "exchange_rate", "the currency is not TRY", general(currencyCode="USD"),
        "CurrencyCodeCheck-6"),
    "rate with seven decimals": (
        {"currency_code": "USD", "exchange_rate": "32,1234567", "exchange_rate_source": "TCMB",
         "exchange_rate_comment": "c"}, "exchange_rate", "decimal places",
        general(currencyCode="USD", exchangeRate=32.1234567, exchangeRateSource="TCMB", exchangeRateComment="c"),
        "CurrencyCodeCheck-7"),
    "currency not on the list": (
        {"currency_code": "XXY"}, "currency_code", "valid choice",
        general(currencyCode="XXY", exchangeRate=1, exchangeRateSource="TCMB", exchangeRateComment="c"),
        "CurrencyCodeCheck-1"),
    "unit not on the list": (
        {"lines-0-unit_code": "ZZZ"}, "lines-0-unit_code", "valid choice", first_line(unitCode="ZZZ"),
        "GeneralUnitCodeCheck-1"),
    "tax not on the list": (
        {"lines-0-other_tax_code": "9999", "lines-0-other_tax_rate": "5"}, "lines-0-other_tax_code", "valid choice",
        first_line(taxes=[{"taxTypeCode": "9999", "taxRate": 5, "isWithHolding": False}]), "TaxTypeCheck-1"),
    "withholding not on the list": (
        {"invoice_type": "TEVKIFAT", "lines-0-withholding_code": "699"}, "lines-0-withholding_code", "valid choice",
        both(general(type=5), first_line(taxes=[{**WITHHELD, "taxTypeCode": "699"}])),
        "WithholdingTaxTotalCheck-2"),
    "payment means not on the list": (
        {"payment_means_code": "XX"}, "payment_means_code", "valid choice",
        lambda body: body.update(paymentMeansModel={"paymentMeansCode": "XX"}), "PaymentMeansCodeCheck-1"),
    "prefix not of letters and digits": (
        {"prefix": "AB-"}, "prefix", "three capital letters", general(prefix="AB-"), "InvoiceIDCheck-1"),
}


def test_each_refusal_of_the_tax_authority_is_the_forms_first_on_the_field(customers, sandbox, oracle):
    """0 disagreements: the form refuses each case on its field (in English and in Turkish), and the tax
    authority's checks refuse the UBL of the same change made to the body, past the form and the sandbox's save
    rules (its control action writes the UBL of a body it does not check)."""
    valid = through_the_form(customers, invoice_data())
    sent = jsonable(services.invoice_body(valid))
    assert not oracle.errors(_unchecked(sandbox, customers, sent)), "the base invoice passes"
    disagreements = {}
    for case, (changes, where, message, change, rule) in DISAGREEMENTS.items():
        data = invoice_data(**changes)
        with translation.override("en"):
            form, lines, valid_form = bound(customers, data)
            english = error_on(form, lines, where)
        with translation.override("tr"):
            form, lines, _valid = bound(customers, data)
            turkish = error_on(form, lines, where)
        body = copy.deepcopy(sent)
        change(body)
        rules = oracle.rules(_unchecked(sandbox, customers, body))
        if valid_form or message not in english or not turkish or turkish == english or rule not in rules:
            disagreements[case] = {"form": english, "tr": turkish, "schematron": sorted(rules)}
    assert not disagreements, "\n".join(f"{case}: {found}" for case, found in disagreements.items())


def _unchecked(sandbox, company, body) -> bytes:
    answer = sandbox.control("POST", "invoices/ubl", {"customer": str(company.customer_unique_id), "invoice": body})
    return answer["ubl"].encode("utf-8")
