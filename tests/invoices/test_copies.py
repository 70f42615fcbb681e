"""Copy, return (iade) and print of an invoice (issue 29, section 5): a copy is a local draft with the same customer
and lines, dated today, a new ettn and no number, nothing sent and nothing of the platform's copied; a return refers to
an approved sale invoice and is refused on any other; both through the pages (roles, another company's invoice is a
404, a double submission makes one draft) and through the sandbox up to approval."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.template.loader import render_to_string
from django.test import RequestFactory
from django.urls import reverse
from django.utils import timezone, translation

from backoffice.core import polling
from backoffice.core.choices import SyncState
from backoffice.core.models import FormSubmission, JobRun, RemoteCall
from backoffice.current_accounts.models import CurrentAccount
from backoffice.invoices import copies, mirror, services, totals
from backoffice.invoices.choices import InvoiceStatus, InvoiceType, PostingStatus, Profile, RecordType
from backoffice.invoices.models import Invoice, InvoiceLine
from tests.conftest import form_post, guard_fields, make_user
from tests.testapp.testing import wait_for
from tests.tickets.conftest import login

# The database engine matters here (the mirror's bulk upserts): CI's SQLite pass runs these too.
pytestmark = [pytest.mark.django_db, pytest.mark.database]

EARCHIVE_VKN, EINVOICE_VKN = "4840000006", "1234567890"
EINVOICE_ALIAS = "urn:mail:defaultpk@sandbox-musteri.com.tr"


@pytest.fixture(autouse=True)
def english():
    with translation.override("en"):
        yield


@pytest.fixture
def web(client, accountant, company):
    return login(client, accountant, company)


def account(company, einvoice=False):
    identifier = EINVOICE_VKN if einvoice else EARCHIVE_VKN
    found, _created = CurrentAccount.objects.get_or_create(
        company=company, identifier=identifier, defaults={
            "name": "Örnek Ticaret A.Ş." if einvoice else "Ayşe Yılmaz Ltd.", "sync_state": SyncState.SYNCED,
            "remote_id": identifier})
    return found


def sale_lines():
    return [InvoiceLine(inventory_service_code="HZM-01", quantity=Decimal(3), unit_price=Decimal("1250.50"),
                        discount_rate=Decimal(10), vat_rate=Decimal(20)),
            InvoiceLine(inventory_service_code="URN-02", quantity=Decimal(2), unit_price=Decimal("99.99"),
                        vat_rate=Decimal(10), unit_code="KGM")]


def issued(company, *, einvoice=False, status=InvoiceStatus.APPROVED, lines=True, **fields):
    """An invoice as it stands once the platform issued it: its ettn, number, status and figures are the platform's
    (the payable deliberately not ours, to show a copy computes its own)."""
    customer = account(company, einvoice)
    values = {"company": company, "current_account": customer, "target_vkn_tckn": customer.identifier,
              "target_title": customer.name, "record_type": RecordType.EINVOICE if einvoice else RecordType.EARCHIVE,
              "profile": Profile.TICARIFATURA if einvoice else Profile.EARSIVFATURA,
              "target_alias": EINVOICE_ALIAS if einvoice else "", "prefix": "ABC", "invoice_type": InvoiceType.SATIS,
              "issue_date": timezone.localdate() - timedelta(days=12), "description": "Danışmanlık",
              "payment_means_code": "1", "payment_due_date": timezone.localdate() + timedelta(days=18),
              "remote_id": "6f1c1f4e-4a39-4b55-9a57-2d0c8b2e6a11", "ettn": "6f1c1f4e-4a39-4b55-9a57-2d0c8b2e6a11",
              "invoice_number": "ABC2026000000042", "remote_status": status, "sync_state": SyncState.SYNCED,
              "record_status": PostingStatus.POSTED, "status_message": "Onaylandı", "payable_amount": Decimal("1"),
              "tax_total": Decimal("1"), "line_count": 2, **fields}
    invoice = Invoice.objects.create(**values)
    for position, line in enumerate(sale_lines() if lines else [], start=1):
        line.invoice, line.position = invoice, position
        line.save()
    return invoice


def copy_url(invoice):
    return reverse("invoices:invoice_copy", args=[invoice.pk])


def return_url(invoice):
    return reverse("invoices:invoice_return", args=[invoice.pk])


def line_values(invoice):
    return list(invoice.lines.values_list("position", "inventory_service_code", "quantity", "unit_code", "unit_price",
                                          "discount_rate", "vat_rate"))


def the_draft(original):
    return Invoice.objects.exclude(pk=original.pk).get()


# --- copy --------------------------------------------------------------------------------------------------
def test_a_copy_is_a_local_draft_with_the_customer_and_lines_dated_today_without_a_number(web, company):
    original = issued(company)
    response = form_post(web, copy_url(original), {})
    draft = the_draft(original)
    assert response.status_code == 302 and response["Location"] == reverse("invoices:invoice_edit", args=[draft.pk])
    assert (draft.current_account, draft.target_vkn_tckn, draft.target_title, draft.record_type, draft.prefix,
            draft.description, draft.invoice_type) == (
        original.current_account, original.target_vkn_tckn, original.target_title, original.record_type, "ABC",
        "Danışmanlık", InvoiceType.SATIS)
    assert line_values(draft) == line_values(original)
    # New date, new ettn, no number: the platform numbers it when it is sent.
    assert draft.issue_date == timezone.localdate() and draft.invoice_number == "" and draft.remote_id == ""
    assert draft.ettn and draft.ettn != original.ettn
    # None of the platform's values: status, posting, message; totals ours, from the lines.
    assert draft.remote_status is None and draft.record_status == PostingStatus.NOT_POSTED and not draft.status_message
    figures = totals.invoice_totals(list(draft.lines.all()))
    assert draft.payable_amount == figures.payable == Decimal("4271.60") and draft.line_count == 2
    # The same payment term (30 days) from the new date.
    assert draft.payment_due_date == timezone.localdate() + timedelta(days=30)
    # A draft: nothing queued, nothing sent.
    assert draft.sync_state == SyncState.LOCAL and not draft.pending_action
    assert not JobRun.objects.exists() and not RemoteCall.objects.exists()
    assert draft.created_by.username == "muhasebe"
    page = web.get(response["Location"], follow=True).content.decode()
    assert "saved as a draft dated today; nothing was sent" in page


def test_the_copy_page_asks_first_and_changes_nothing(web, company):
    original = issued(company)
    page = web.get(copy_url(original))
    assert page.status_code == 200 and 'id="copy-confirm"' in page.content.decode()
    assert Invoice.objects.count() == 1


def test_a_double_submission_makes_one_copy(web, company):
    original = issued(company)
    fields = guard_fields(web.get(copy_url(original)).content.decode())
    first = web.post(copy_url(original), fields)
    second = web.post(copy_url(original), fields)
    assert Invoice.objects.count() == 2
    assert second["Location"] == first["Location"]
    assert "already sent" in web.get(second["Location"], follow=True).content.decode()


def test_an_invoice_without_lines_here_cannot_be_copied(web, company):
    original = issued(company, lines=False)
    response = form_post(web, copy_url(original), {})
    assert response.status_code == 302 and response["Location"] == reverse("invoices:invoice_detail",
                                                                          args=[original.pk])
    assert Invoice.objects.count() == 1 and not FormSubmission.objects.exists()
    page = web.get(copy_url(original)).content.decode()
    assert "its lines are not kept here, so it cannot be copied" in page


def test_an_incoming_invoice_is_neither_copied_nor_returned(company):
    incoming = issued(company, is_send=False)
    with pytest.raises(copies.CopyRefused, match="supplier's"):
        copies.invoice_copy(incoming)
    with pytest.raises(copies.CopyRefused, match="incoming invoice"):
        copies.invoice_return(incoming)
    assert Invoice.objects.count() == 1


# --- return ------------------------------------------------------------------------------------------------
def test_a_return_refers_to_the_approved_sale_and_is_a_basic_invoice(web, company):
    original = issued(company, einvoice=True)
    response = form_post(web, return_url(original), {})
    draft = the_draft(original)
    assert response["Location"] == reverse("invoices:invoice_edit", args=[draft.pk])
    assert draft.invoice_type == InvoiceType.IADE
    assert (draft.return_invoice_number, draft.return_invoice_date) == ("ABC2026000000042", original.issue_date)
    # A return e-invoice is TEMELFATURA (the tax authority's schematron), even of a commercial one.
    assert draft.profile == Profile.TEMELFATURA and draft.record_type == RecordType.EINVOICE
    assert draft.target_alias == EINVOICE_ALIAS and line_values(draft) == line_values(original)
    assert draft.sync_state == SyncState.LOCAL and draft.invoice_number == "" and draft.remote_status is None
    # The edit page takes it as it is: the form's return rules pass.
    page = web.get(response["Location"]).content.decode()
    assert 'value="ABC2026000000042"' in page


@pytest.mark.parametrize(("fields", "message"), [
    ({"remote_status": InvoiceStatus.QUEUED}, "Only an approved invoice can be returned; this one is “Queued”."),
    ({"remote_status": None, "remote_id": "", "invoice_number": "", "sync_state": SyncState.LOCAL},
     "Only an approved invoice can be returned; this one is “not on the platform”."),
    ({"invoice_type": InvoiceType.TEVKIFAT}, "Only a sale invoice (SATIS) can be returned; this one is “Withholding”."),
    ({"is_send": False}, "An incoming invoice is returned by a return invoice written to its supplier"),
])
def test_a_return_is_refused_on_any_other_invoice(web, company, fields, message):
    original = issued(company, **fields)
    response = form_post(web, return_url(original), {})
    assert response["Location"] == reverse("invoices:invoice_detail", args=[original.pk])
    assert Invoice.objects.count() == 1
    assert message in web.get(response["Location"]).content.decode()


def test_an_automatically_approved_sale_can_be_returned(company):
    draft = copies.invoice_return(issued(company, remote_status=InvoiceStatus.AUTO_APPROVED))
    assert draft.invoice_type == InvoiceType.IADE and draft.profile == Profile.EARSIVFATURA


# --- who may ---------------------------------------------------------------------------------------------
def test_another_companys_invoice_is_not_found(web, other_company):
    theirs = issued(other_company)
    for url in (copy_url(theirs), return_url(theirs)):
        assert web.get(url).status_code == 404
        assert web.post(url, {"submission_key": "6f1c1f4e-4a39-4b55-9a57-2d0c8b2e6a12",
                              "opened_for": str(other_company.pk)}).status_code == 404
    assert Invoice.objects.count() == 1


def test_a_manager_may_not_copy(client, company):
    manager = make_user("okur", "manager", [company])
    web = login(client, manager, company)
    original = issued(company)
    assert web.get(copy_url(original)).status_code == 403
    assert web.post(return_url(original), {}).status_code == 403
    assert Invoice.objects.count() == 1


# --- the buttons and print ---------------------------------------------------------------------------------
def render_actions(user, invoice):
    request = RequestFactory().get("/")
    request.user = user
    request.company = invoice.company
    return render_to_string("invoices/includes/copy_actions.html", {"object": invoice}, request=request)


def test_the_buttons_offer_what_may_be_done(accountant, company):
    approved = issued(company)
    html = render_actions(accountant, approved)
    assert f'action="{copy_url(approved)}"' in html and f'action="{return_url(approved)}"' in html
    assert 'name="submission_key"' in html
    pdf = reverse("invoices:invoice_document", kwargs={"pk": approved.pk, "kind": "pdf"})
    assert f'href="{pdf}" target="_blank"' in html
    # Not approved yet: the return button says why instead.
    queued = issued(company, remote_status=InvoiceStatus.QUEUED, remote_id="", ettn="a" * 36,
                    invoice_number="")
    html = render_actions(accountant, queued)
    assert 'id="invoice-return-refused"' in html and "Only an approved invoice" in html
    assert 'id="invoice-print"' not in html  # not on the platform: no PDF to print


def test_a_manager_sees_print_but_no_copy(company):
    manager = make_user("okur", "manager", [company])
    html = render_actions(manager, issued(company))
    assert 'id="invoice-print"' in html and "invoice-copy" not in html and "invoice-return" not in html


def test_the_list_has_a_print_link_per_invoice_on_the_platform(web, company):
    on_platform = issued(company)
    draft = copies.invoice_copy(on_platform)
    page = web.get(reverse("invoices:invoice_list")).content.decode()
    pdf = reverse("invoices:invoice_document", kwargs={"pk": on_platform.pk, "kind": "pdf"})
    assert f'href="{pdf}" target="_blank"' in page
    assert f'data-print="{on_platform.pk}"' in page and f'data-print="{draft.pk}"' not in page


# --- through the sandbox, up to approval -------------------------------------------------------------------
def approved_on_sandbox(invoice, company):
    """Send a draft (the confirmed send, as the page does), push it and follow it until the platform approves it."""
    services.invoice_send([invoice])
    assert services.invoice_push(invoice.pk) == "Sent to the platform."

    def settled():
        polling.poll_job(mirror.INVOICES_POLL.name, company.pk)
        return Invoice.objects.get(pk=invoice.pk).remote_status == InvoiceStatus.APPROVED

    wait_for(settled, timeout=30, message="the invoice approved")
    return Invoice.objects.get(pk=invoice.pk)


def sandbox_sale(company, *, einvoice=False):
    customer = account(company, einvoice)
    invoice = Invoice(company=company, current_account=customer, target_vkn_tckn=customer.identifier,
                      target_title=customer.name, record_type=RecordType.EINVOICE if einvoice else RecordType.EARCHIVE,
                      profile=Profile.TICARIFATURA if einvoice else "",
                      target_alias=EINVOICE_ALIAS if einvoice else "", prefix="ABC", invoice_type=InvoiceType.SATIS,
                      issue_date=timezone.localdate(), description="Danışmanlık")
    return approved_on_sandbox(services.invoice_save(invoice, sale_lines()), company)


def test_a_copy_is_sent_and_approved_as_an_invoice_of_its_own(sandbox, sandbox_company):
    sandbox.configure(ticket_processing_seconds=1)
    original = sandbox_sale(sandbox_company)
    draft = copies.invoice_copy(original)
    assert draft.sync_state == SyncState.LOCAL and draft.remote_id == ""
    copy = approved_on_sandbox(draft, sandbox_company)
    assert copy.invoice_number.startswith(f"ABC{timezone.localdate().year}")
    assert copy.invoice_number != original.invoice_number and copy.remote_id == draft.ettn != original.remote_id
    on_platform = services.accounting(sandbox_company).invoice(copy.remote_id, True)
    assert Decimal(str(on_platform["invoiceTotalsModel"]["payableAmount"])) == copy.payable_amount \
        == original.payable_amount
    assert len(services.accounting(sandbox_company).invoices(True)["items"]) == 2


def test_a_return_of_a_commercial_e_invoice_is_sent_and_approved(sandbox, sandbox_company):
    sandbox.configure(ticket_processing_seconds=1)
    original = sandbox_sale(sandbox_company, einvoice=True)
    returned = approved_on_sandbox(copies.invoice_return(original), sandbox_company)
    on_platform = services.accounting(sandbox_company).invoice(returned.remote_id, True)
    general = on_platform["generalInfoModel"]
    assert general["returnInvoiceNumber"] == original.invoice_number
    assert str(general["returnInvoiceDate"])[:10] == original.issue_date.isoformat()
    assert returned.invoice_type == InvoiceType.IADE and returned.profile == Profile.TEMELFATURA
    assert returned.invoice_number != original.invoice_number
