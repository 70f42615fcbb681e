"""Every input rule of the invoice form (document 3, 2.6, 4.2 save and update, 3.1) fed bad input through the
page: the message on its field, nothing saved, never a server error (also for any input: a property-based
test). Rules of state (posted, issued, e-invoice) refuse on the field or as a message."""

from decimal import Decimal

import pytest
from django.urls import reverse
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backoffice.core.choices import SyncState
from backoffice.current_accounts.models import Address, CurrentAccount
from backoffice.invoices import totals
from backoffice.invoices.choices import InvoiceStatus, PostingStatus, RecordType
from backoffice.invoices.models import Invoice, InvoiceLine, Taxpayer
from tests.conftest import form_post
from tests.tickets.conftest import login
from tests.properties import examples

pytestmark = pytest.mark.django_db

EARCHIVE_VKN, EINVOICE_VKN = "4840000006", "1234567890"
ADD = reverse("invoices:invoice_add")


@pytest.fixture
def web(client, accountant, company):
    return login(client, accountant, company)


@pytest.fixture
def customers(company):
    """An e-archive customer (with its default address), an e-invoice customer with two mailboxes, and two
    accounts sharing one id told apart by their codes."""
    archive = CurrentAccount.objects.create(company=company, name="Ayşe Yılmaz Ltd.", identifier=EARCHIVE_VKN,
                                            remote_id="11", sync_state=SyncState.SYNCED)
    Address.objects.create(company=company, current_account=archive, address_name="Merkez", city="İstanbul",
                           sub_division_name="Kadıköy", country="Türkiye", is_default=True)
    einvoice = CurrentAccount.objects.create(company=company, name="Örnek Ticaret A.Ş.", identifier=EINVOICE_VKN,
                                             remote_id="12", sync_state=SyncState.SYNCED)
    now = timezone.now()
    Taxpayer.objects.bulk_create([
        Taxpayer(identifier=EINVOICE_VKN, alias="urn:mail:defaultpk@ornek.com.tr", app_type="1", seen_at=now),
        Taxpayer(identifier=EINVOICE_VKN, alias="urn:mail:fatura@ornek.com.tr", app_type="1", seen_at=now),
        Taxpayer(identifier=EARCHIVE_VKN, alias="urn:mail:irsaliye@ornek.com.tr", app_type="3", seen_at=now)])
    return {"archive": archive, "einvoice": einvoice}


def line(index=0, **fields):
    values = {"inventory_service_code": "HZM-01", "quantity": "2", "unit_code": "C62", "unit_price": "100",
              "vat_rate": "20", **fields}
    return {f"lines-{index}-{name}": value for name, value in values.items()}


def invoice_data(lines=None, **fields):
    lines = lines if lines is not None else [line()]
    data = {"account": EARCHIVE_VKN, "kind": "", "prefix": "ABC", "invoice_type": "SATIS",
            "issue_date": timezone.localdate().isoformat(), "description": "Danışmanlık hizmeti",
            "currency_code": "TRY", "lines-TOTAL_FORMS": str(len(lines)), "lines-INITIAL_FORMS": "0",
            "lines-MIN_NUM_FORMS": "1", "lines-MAX_NUM_FORMS": "500"}
    for values in lines:
        data.update(values)
    data.update(fields)
    return data


def errors_of(response, name):
    return " ".join(str(message) for message in response.context["form"].errors.get(name, []))


def line_errors(response, index, name):
    return " ".join(str(m) for m in response.context["lines"].forms[index].errors.get(name, []))


def test_an_earchive_invoice_in_a_foreign_currency_is_saved_with_our_ettn_and_totals(web, customers, company):
    data = invoice_data(lines=[line(0, quantity="3", unit_price="1.250,50", discount_rate="10"),
                               line(1, unit_price="99,99", vat_rate="10", withholding_code="602")],
                        currency_code="USD", exchange_rate="32,1234", exchange_rate_source="TCMB",
                        exchange_rate_comment="24.11.2026 döviz satış", notes="Teşekkürler\nİyi çalışmalar",
                        invoice_type="TEVKIFAT")  # a line withholds
    response = form_post(web, ADD, data)
    invoice = Invoice.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("invoices:invoice_detail", args=[invoice.pk])
    assert invoice.record_type == RecordType.EARCHIVE and invoice.profile == "EARSIVFATURA"
    # A local draft (issue 29): nothing is queued until it is sent from its page.
    assert invoice.sync_state == SyncState.LOCAL and len(invoice.ettn) == 36 and invoice.target_alias == ""
    assert invoice.current_account == customers["archive"] and invoice.exchange_rate == Decimal("32.1234")
    # 3 x 1250.50 = 3751.50, -10 % = 375.15 -> 3376.35, VAT 20 % 675.27; 2 x 99.99 = 199.98, VAT 10 % 20.00,
    # withheld 9/10 of it 18.00. Payable: 3576.33 + 695.27 - 18.00 = 4253.60.
    assert (invoice.tax_exclusive_amount, invoice.payable_amount, invoice.withholding_total) == (
        Decimal("3576.33"), Decimal("4253.60"), Decimal("18.00"))
    assert list(invoice.lines.values_list("position", "line_extension_amount")) == [
        (1, Decimal("3376.35")), (2, Decimal("199.98"))]


def test_an_einvoice_customer_gets_an_einvoice_at_one_of_its_mailboxes(web, customers):
    response = form_post(web, ADD, invoice_data(account=EINVOICE_VKN))
    assert "choose one of the customer's" in errors_of(response, "target_alias")
    assert "needs a profile" in errors_of(response, "profile")
    response = form_post(web, ADD, invoice_data(account=EINVOICE_VKN, target_alias="urn:mail:baska@x.com",
                                                profile="TEMELFATURA"))
    assert "not one of the customer's mailboxes" in errors_of(response, "target_alias")
    assert not Invoice.objects.exists()
    form_post(web, ADD, invoice_data(account=EINVOICE_VKN, target_alias="urn:mail:fatura@ornek.com.tr",
                                     profile="TICARIFATURA"))
    invoice = Invoice.objects.get()
    assert (invoice.record_type, invoice.profile, invoice.target_alias) == (
        RecordType.EINVOICE, "TICARIFATURA", "urn:mail:fatura@ornek.com.tr")


@pytest.mark.parametrize("fields, field, message", [
    ({"account": ""}, "account", "required"),
    ({"account": "123"}, "account", "10 or 11 digits"),
    ({"account": "10000000146"}, "account", "No current account with this id"),
    ({"prefix": ""}, "prefix", "required"),
    ({"prefix": "AB"}, "prefix", "three capital letters"),
    ({"prefix": "AB-"}, "prefix", "three capital letters"),
    ({"description": ""}, "description", "required"),
    ({"issue_date": ""}, "issue_date", "required"),
    ({"issue_date": "2999-01-01"}, "issue_date", "in the future"),
    ({"currency_code": "USD"}, "exchange_rate", "the currency is not TRY"),
    ({"currency_code": "EUR", "exchange_rate": "35"}, "exchange_rate_source", "comes from"),
    ({"currency_code": "EUR", "exchange_rate": "35", "exchange_rate_source": "TCMB"}, "exchange_rate_comment",
     "comment"),
    ({"currency_code": "USD", "exchange_rate": "0", "exchange_rate_source": "T", "exchange_rate_comment": "c"},
     "exchange_rate", "more than 0"),
    ({"currency_code": "XXX1"}, "currency_code", "valid choice"),
    ({"kind": "1"}, "kind", "not a registered e-invoice user"),
    ({"invoice_type": "IADE"}, "return_invoice_number", "names the invoice it returns"),
    ({"invoice_type": "IADE", "return_invoice_number": "ABC2026"}, "return_invoice_number", "16 characters"),
    ({"is_internet_sale": "on"}, "website_url", "website"),
    ({"payee_financial_account_id": "TR00 0000"}, "payee_financial_account_id", "IBAN"),
    ({"shipment_sender_tckn_vkn": "1234567891"}, "shipment_sender_tckn_vkn", "check digit"),
])
def test_invoice_rules_on_their_field(web, customers, fields, field, message):
    response = form_post(web, ADD, invoice_data(**fields))
    assert response.status_code == 400 and message in errors_of(response, field), errors_of(response, field)
    assert not Invoice.objects.exists() and not InvoiceLine.objects.exists()


def test_an_einvoice_user_cannot_get_an_earchive(web, customers):
    response = form_post(web, ADD, invoice_data(account=EINVOICE_VKN, kind="0"))
    assert "registered e-invoice user: its invoice is an e-invoice" in errors_of(response, "kind")


def test_without_the_taxpayer_list_the_kind_is_asked_for(web, customers):
    Taxpayer.objects.all().delete()
    response = form_post(web, ADD, invoice_data())
    assert "not loaded yet" in errors_of(response, "kind")
    form_post(web, ADD, invoice_data(kind="0"))
    assert Invoice.objects.get().record_type == RecordType.EARCHIVE


def test_accounts_sharing_an_id_are_told_apart_by_their_code(web, customers, company):
    CurrentAccount.objects.create(company=company, name="Şube 1", identifier=EARCHIVE_VKN, code="S1")
    customers["archive"].code = "MRK"
    customers["archive"].save()
    response = form_post(web, ADD, invoice_data())
    assert "add its code after a dot" in errors_of(response, "account") and "S1" in errors_of(response, "account")
    form_post(web, ADD, invoice_data(account=f"{EARCHIVE_VKN} · S1"))
    invoice = Invoice.objects.get()
    assert (invoice.current_account.code, invoice.current_account_code) == ("S1", "S1")


@pytest.mark.parametrize("fields, field, message", [
    ({"inventory_service_code": ""}, "inventory_service_code", "required"),
    ({"quantity": "0"}, "quantity", "greater than or equal to"),
    ({"quantity": "abc"}, "quantity", "Enter a number"),
    ({"unit_price": "-1"}, "unit_price", "greater than or equal to 0"),
    ({"unit_code": "ZZZ"}, "unit_code", "valid choice"),
    ({"vat_rate": "120"}, "vat_rate", "less than or equal to 100"),
    ({"vat_rate": "0"}, "vat_exemption_reason_code", "exemption reason"),
    ({"vat_exemption_reason_code": "301"}, "vat_exemption_reason_code", "only for a line without VAT"),
    ({"vat_rate": "0", "vat_exemption_reason_code": "301", "withholding_code": "602"}, "withholding_code",
     "a line without VAT has none"),
    ({"discount_rate": "101"}, "discount_rate", "less than or equal to 100"),
    ({"discount_amount": "500"}, "discount_amount", "larger than the line's amount"),
    ({"other_tax_code": "0071"}, "other_tax_rate", "rate of the other tax"),
    ({"other_tax_rate": "5"}, "other_tax_code", "Choose which tax"),
    ({"quantity": "999999999999", "unit_price": "999999999999"}, "quantity", "too large"),
    # What the tax authority ties to the invoice type (a sale here): on the line's field.
    ({"withholding_code": "602"}, "withholding_code", "withholding (TEVKIFAT) invoice"),
    ({"vat_exemption_reason_code": "801"}, "vat_exemption_reason_code", "special-base (OZELMATRAH) invoice"),
    ({"vat_rate": "0", "vat_exemption_reason_code": "301"}, "vat_exemption_reason_code", "exemption (ISTISNA)"),
    ({"unit_price": "0"}, "vat_rate", "comes to 0.00"),
])
def test_line_rules_on_their_field(web, customers, fields, field, message):
    response = form_post(web, ADD, invoice_data(lines=[line(0, **fields)]))
    assert response.status_code == 400 and message in line_errors(response, 0, field), line_errors(response, 0, field)
    assert not Invoice.objects.exists()


@pytest.mark.parametrize("invoice_type, reason", [("IHRACKAYITLI", "701"), ("OZELMATRAH", "801")])
def test_export_registered_and_special_base_lines_carry_their_reason_with_vat(web, customers, invoice_type, reason):
    response = form_post(web, ADD, invoice_data(lines=[line(0, vat_exemption_reason_code=reason)],
                                                invoice_type=invoice_type))
    assert response.status_code == 302
    saved = InvoiceLine.objects.get()
    assert (saved.invoice.invoice_type, saved.vat_exemption_reason_code, saved.vat_amount) == (
        invoice_type, reason, Decimal("40.00"))


def test_an_invoice_needs_a_line(web, customers):
    response = form_post(web, ADD, invoice_data(lines=[line(0, DELETE="on")]))
    assert response.status_code == 400 and "at least one line" in " ".join(response.context["lines"].non_form_errors())
    assert not Invoice.objects.exists()


def test_back_and_resubmit_makes_one_invoice(web, customers):
    page = web.get(ADD).content.decode()
    from tests.conftest import guard_fields

    data = {**guard_fields(page), **invoice_data()}
    first, second = web.post(ADD, data), web.post(ADD, data)
    assert first.status_code == second.status_code == 302 and Invoice.objects.count() == 1
    assert second["Location"] == first["Location"]


def test_a_company_switched_in_another_tab_saves_nothing(web, customers, company, other_company, accountant):
    from backoffice.core.models import Membership
    from tests.conftest import guard_fields

    Membership.objects.get_or_create(user=accountant, company=other_company)
    data = {**guard_fields(web.get(ADD).content.decode()), **invoice_data()}
    web.post(reverse("core:switch_company"), {"company": other_company.pk, "next": "/"})  # the other tab
    response = web.post(ADD, data)
    assert response.status_code == 400 and "in another tab" in response.content.decode()
    assert not Invoice.objects.exists()


def _issued(company, **fields):
    values = {"company": company, "remote_id": "e7d3c3a0-0000-4000-8000-000000000001",
              "invoice_number": "ABC2026000000001", "sync_state": SyncState.SYNCED, "line_count": 1,
              "remote_status": InvoiceStatus.APPROVED, "record_type": RecordType.EARCHIVE, **fields}
    return Invoice.objects.create(ettn=values["remote_id"], **values)


def test_issued_posted_and_incoming_invoices_cannot_be_edited(web, company):
    for fields, message in (({}, "an issued invoice is corrected"),
                            ({"record_status": PostingStatus.POSTED, "remote_status": InvoiceStatus.ERROR},
                             "reverse the posting"),
                            ({"is_send": False}, None),
                            ({"remote_status": InvoiceStatus.ERROR}, "written outside this back office")):
        invoice = _issued(company, **fields)
        response = web.get(reverse("invoices:invoice_edit", args=[invoice.pk]), follow=True)
        if message:
            assert message in response.content.decode()
        else:
            assert response.status_code == 404  # the form is for outgoing invoices only
        invoice.delete()


def test_delete_refusals_are_shown_with_the_reason(web, company):
    posted = _issued(company, record_status=PostingStatus.POSTED)
    page = web.get(reverse("invoices:invoice_delete", args=[posted.pk])).content.decode()
    assert "A posted invoice cannot be deleted" in page
    web.post(reverse("invoices:invoice_delete", args=[posted.pk]))
    assert Invoice.objects.filter(pk=posted.pk, pending_action="").exists()
    einvoice = _issued(company, remote_id="e7d3c3a0-0000-4000-8000-000000000002", record_type=RecordType.EINVOICE)
    response = web.post(reverse("invoices:invoice_delete", args=[einvoice.pk]), follow=True)
    assert "An e-invoice cannot be deleted" in response.content.decode()
    assert Invoice.objects.filter(pk=einvoice.pk, pending_action="").exists()


def test_another_companys_invoice_is_a_404(web, other_company):
    invoice = _issued(other_company)
    for name in ("invoice_detail", "invoice_edit", "invoice_delete"):
        assert web.get(reverse(f"invoices:{name}", args=[invoice.pk])).status_code == 404
    assert web.get(reverse("invoices:invoice_document", args=[invoice.pk, "pdf"])).status_code == 404


def test_list_totals_are_per_currency_and_follow_the_filters(web, company, other_company):
    _issued(company, payable_amount=Decimal("100.10"), currency_code="TRY")
    _issued(company, remote_id="b", payable_amount=Decimal("50.00"), currency_code="TRY", is_send=False)
    _issued(company, remote_id="c", payable_amount=Decimal("7.25"), currency_code="USD")
    _issued(other_company, payable_amount=Decimal("999"), currency_code="TRY")
    rows = {row["currency_code"]: row for row in web.get(reverse("invoices:invoice_totals")).context["rows"]}
    assert (rows["TRY"]["count"], rows["TRY"]["payable"], rows["USD"]["payable"]) == (
        2, Decimal("150.10"), Decimal("7.25"))
    rows = web.get(reverse("invoices:invoice_totals"), {"direction": "in"}).context["rows"]
    assert [(row["currency_code"], row["payable"]) for row in rows] == [("TRY", Decimal("50.00"))]
    assert web.get(reverse("invoices:invoice_list"), {"amount_min": "60"}).status_code == 200


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(fields=st.dictionaries(
    st.sampled_from(["account", "kind", "prefix", "invoice_type", "issue_date", "description", "currency_code",
                     "exchange_rate", "target_alias", "profile", "lines-0-quantity", "lines-0-unit_price",
                     "lines-0-vat_rate", "lines-0-discount_rate", "lines-0-discount_amount", "lines-0-unit_code",
                     "lines-0-withholding_code", "lines-0-other_tax_rate", "lines-TOTAL_FORMS", "payment_due_date",
                     "lines-0-vat_exemption_reason_code", "lines-0-other_tax_code", "return_invoice_date"]),
    st.one_of(st.text(max_size=30), st.sampled_from(["999999999999", "0,000001", "1e400", "NaN", "-0", "0", "602",
                                                     "701", "555", "4171", "IADE", "IHRACKAYITLI", "2004-12-31"])),
    max_size=6))
def test_no_input_gives_a_server_error(web, customers, fields):
    response = form_post(web, ADD, invoice_data(**fields))
    assert response.status_code in (302, 400)


def test_bulk_posting_checks_the_rules_first(web, company):
    from tests.conftest import confirm_post

    empty = _issued(company, line_count=0)
    cancelled = _issued(company, remote_id="c", remote_status=InvoiceStatus.CANCELLED)
    url = reverse("invoices:invoice_bulk", kwargs={"action": "post"})
    response = confirm_post(web, url, {"pk": [empty.pk, cancelled.pk], "confirm": "1"}, follow=True)
    assert "has lines and is not cancelled" in response.content.decode()
    assert not Invoice.objects.exclude(pending_action="").exists()


def test_the_detail_page_shows_lines_totals_and_the_reasons(web, company):
    invoice = _issued(company, record_status=PostingStatus.POSTED, detail_read_at=timezone.now())
    line = InvoiceLine(invoice=invoice, position=1, inventory_service_code="HZM-01", quantity=2,
                       unit_price=Decimal("100"), vat_rate=20)
    totals.apply_totals(invoice, [line])  # the figures kept as it was saved: what the page shows
    invoice.save()
    line.save()
    page = web.get(reverse("invoices:invoice_detail", args=[invoice.pk])).content.decode()
    assert "HZM-01" in page and 'id="invoice-payable">240' in page and 'data-posted="1"' in page
    assert 'data-action="reverse"' in page and 'data-action="post"' not in page
    assert 'id="invoice-edit"' not in page  # issued and posted: not changed here


def test_the_customer_lookup_tells_the_kind_the_mailboxes_and_the_address_warning(web, customers):
    url = reverse("invoices:invoice_customer")
    page = web.get(url, {"account": EINVOICE_VKN}).content.decode()
    assert 'data-kind="1"' in page and "urn:mail:fatura@ornek.com.tr" in page
    assert 'id="address-warning"' in page  # the e-invoice customer has no default address
    page = web.get(url, {"account": EARCHIVE_VKN}).content.decode()
    assert 'data-kind="0"' in page and 'id="address-warning"' not in page
    page = web.get(url, {"account": "Örnek"}).content.decode()
    assert f'value="{EINVOICE_VKN}"' in page  # matched by name, offered as its id


def test_the_excel_export_holds_the_filtered_invoices(web, company):
    import io

    from openpyxl import load_workbook

    _issued(company, invoice_number="ABC2026000000001")
    _issued(company, remote_id="b", invoice_number="GLN2026000000002", is_send=False)
    response = web.get(reverse("invoices:invoice_list"), {"export": "xlsx", "direction": "in"})
    rows = list(load_workbook(io.BytesIO(b"".join(response.streaming_content))).active.values)
    assert len(rows) == 2 and rows[1][0] == "GLN2026000000002"


def test_the_list_filters_by_issue_date_and_amount(web, company):
    from datetime import date

    _issued(company, invoice_number="ABC2026000000001", issue_date=date(2026, 3, 5), payable_amount=Decimal("1250.75"))
    _issued(company, remote_id="b", invoice_number="ABC2026000000002", issue_date=date(2026, 4, 5),
            payable_amount=Decimal("99"))
    response = web.get(reverse("invoices:invoice_list"), {"date_from": "2026-03-01", "date_to": "2026-03-31"})
    assert [row.record.invoice_number for row in response.context["table"].page.object_list] == ["ABC2026000000001"]
    response = web.get(reverse("invoices:invoice_list"), {"amount_min": "1.000,50"})
    assert [row.record.invoice_number for row in response.context["table"].page.object_list] == ["ABC2026000000001"]


def test_the_pdfs_of_the_filtered_invoices_go_into_one_bundle(web, company, settings):
    from backoffice.invoices.models import PdfBundle

    _issued(company, invoice_number="ABC2026000000001")
    _issued(company, remote_id="b", invoice_number="GLN2026000000002", is_send=False)
    _issued(company, remote_id="", sync_state=SyncState.QUEUED, invoice_number="")  # not on the platform yet
    response = web.post(reverse("invoices:invoice_pdfs"), {"query": "direction=in"})
    assert response.status_code == 302 and response["Location"] == reverse("invoices:pdfbundle_list")
    bundle = PdfBundle.objects.get()
    assert [i.invoice_number for i in bundle.invoices.all()] == ["GLN2026000000002"]
    settings.INVOICE_BUNDLE_MAX = 1
    response = web.post(reverse("invoices:invoice_pdfs"), {"query": ""}, follow=True)
    assert "At most 1 invoices go into one ZIP" in response.content.decode() and PdfBundle.objects.count() == 1
