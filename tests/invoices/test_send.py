"""Issue 29: a legally binding invoice is never sent by accident. Saving (the form, the service) keeps a local
draft and queues nothing; sending is its own step, behind a confirmation that shows the recipient, its mailbox and
the payable total and needs a box ticked; a second POST of that confirmation sends nothing again; a bulk send
refuses the invoices that are not drafts by name and sends none of the others."""

from decimal import Decimal

import pytest
from django.urls import reverse
from django.utils import timezone, translation

from backoffice.core.choices import SyncState
from backoffice.core.models import JobRun
from backoffice.current_accounts.models import CurrentAccount
from backoffice.invoices import services
from backoffice.invoices.choices import RecordType
from backoffice.invoices.models import Invoice, InvoiceLine
from tests.conftest import form_post
from tests.tickets.conftest import login

from .test_forms_and_views import ADD, customers, invoice_data  # noqa: F401 (customers: a fixture)

pytestmark = pytest.mark.django_db

SEND = reverse("invoices:invoice_bulk", kwargs={"action": "send"})
ALIAS = "urn:mail:fatura@ornek.com.tr"


@pytest.fixture
def web(client, accountant, company):
    return login(client, accountant, company)


def draft(company, *, number="", einvoice=False, currency="TRY", price="100", **fields):
    account, _created = CurrentAccount.objects.get_or_create(
        company=company, identifier="1234567890" if einvoice else "4840000006",
        defaults={"name": "Örnek Ticaret A.Ş." if einvoice else "Ayşe Yılmaz Ltd.", "sync_state": SyncState.SYNCED,
                  "remote_id": "x"})
    invoice = Invoice(company=company, current_account=account, target_vkn_tckn=account.identifier,
                      target_title=account.name, record_type=RecordType.EINVOICE if einvoice else RecordType.EARCHIVE,
                      profile="TEMELFATURA" if einvoice else "", target_alias=ALIAS if einvoice else "", prefix="ABC",
                      issue_date=timezone.localdate(), description="Danışmanlık", invoice_type="SATIS",
                      currency_code=currency, invoice_number=number, **fields)
    if currency != "TRY":
        invoice.exchange_rate, invoice.exchange_rate_source, invoice.exchange_rate_comment = Decimal("34.5"), "TCMB", "x"
    return services.invoice_save(invoice, [InvoiceLine(inventory_service_code="HZM-01", quantity=Decimal(10),
                                                       unit_price=Decimal(price), vat_rate=Decimal(20))])


def pushes():
    return JobRun.objects.filter(name="invoice_push").count()


def test_saving_keeps_a_local_draft_and_queues_nothing(company):
    invoice = draft(company)
    invoice.refresh_from_db()
    assert invoice.sync_state == SyncState.LOCAL and invoice.remote_id == "" and not JobRun.objects.exists()
    assert services.is_draft(invoice) and services.send_refusal(invoice) == ""
    # An edit of the draft is a draft again, still nothing queued.
    services.invoice_save(invoice, list(invoice.lines.all()))
    invoice.refresh_from_db()
    assert invoice.sync_state == SyncState.LOCAL and not JobRun.objects.exists()


def test_the_form_saves_a_draft_and_says_so(web, company, customers):  # noqa: F811
    response = form_post(web, ADD, invoice_data())
    invoice = Invoice.objects.get(company=company)
    assert response.status_code == 302 and response.url == reverse("invoices:invoice_detail", args=[invoice.pk])
    assert invoice.sync_state == SyncState.LOCAL and not JobRun.objects.exists()
    page = web.get(response.url).content.decode()
    assert "Draft saved; it is not sent." in page and 'id="invoice-draft"' in page and "Draft (not sent)" in page
    assert f'{SEND}?pk={invoice.pk}' in page  # the "Send to GİB" button
    form = web.get(ADD).content.decode()
    assert "Save draft" in form and "Issue and send" not in form


def test_send_queues_once_and_twice_is_already_done(company):
    invoice = draft(company)
    assert services.invoice_send([invoice]) == 1
    invoice.refresh_from_db()
    assert invoice.sync_state == SyncState.QUEUED and pushes() == 1
    with pytest.raises(services.AlreadySent):
        services.invoice_send([invoice])
    assert pushes() == 1
    Invoice.objects.filter(pk=invoice.pk).update(sync_state=SyncState.SYNCED, remote_id=invoice.ettn)
    with pytest.raises(services.AlreadySent):
        services.invoice_send([invoice])
    assert pushes() == 1


def test_bulk_send_refuses_the_invoices_that_are_not_drafts_by_name(company):
    first, second = draft(company), draft(company)
    sent = draft(company, number="ABC2026000000007")
    Invoice.objects.filter(pk=sent.pk).update(sync_state=SyncState.SYNCED, remote_id=sent.ettn)
    incoming = draft(company, number="XYZ2026000000001")
    Invoice.objects.filter(pk=incoming.pk).update(is_send=False)
    with translation.override("en"), pytest.raises(services.InvoiceError) as refused:
        services.invoice_send(list(Invoice.objects.order_by("pk")))
    assert not isinstance(refused.value, services.AlreadySent)
    assert "ABC2026000000007" in str(refused.value) and "XYZ2026000000001" in str(refused.value)
    assert str(first) not in str(refused.value)
    assert set(Invoice.objects.values_list("sync_state", flat=True)) == {SyncState.LOCAL, SyncState.SYNCED}
    assert pushes() == 0  # nothing half-sent
    assert services.invoice_send([first, second]) == 2 and pushes() == 2


def test_the_confirmation_shows_recipient_mailbox_and_total_and_needs_the_box(web, company):
    invoice = draft(company, einvoice=True, price="1250.5")
    detail = reverse("invoices:invoice_detail", args=[invoice.pk])
    page = web.get(SEND, {"pk": invoice.pk, "return_url": detail})
    text = page.content.decode()
    assert page.status_code == 200 and pushes() == 0  # a GET only shows
    assert "It will be sent to the tax authority (GİB); this cannot be undone." in text
    assert "Örnek Ticaret A.Ş." in text and "1234567890" in text and ALIAS in text
    assert "15,006.00 TRY" in text  # 10 × 1,250.50 + 20 % VAT (the English page's number format)
    # Confirmed without the box: shown again with the reason, nothing sent.
    unchecked = web.post(SEND, {"pk": invoice.pk, "return_url": detail, "confirm": "1"})
    assert unchecked.status_code == 400 and 'id="send-checked-error"' in unchecked.content.decode()
    assert pushes() == 0
    done = web.post(SEND, {"pk": invoice.pk, "return_url": detail, "confirm": "1", "checked": "1"})
    assert done.status_code == 302 and done.url == detail and pushes() == 1
    invoice.refresh_from_db()
    assert invoice.sync_state == SyncState.QUEUED
    # Back and the same confirmation again: already sent, nothing more.
    again = web.post(SEND, {"pk": invoice.pk, "return_url": detail, "confirm": "1", "checked": "1"}, follow=True)
    assert "Already sent" in again.content.decode() and pushes() == 1


def test_the_turkish_confirmation(client, accountant, company):
    invoice = draft(company, price="1250.5")
    web = login(client, accountant, company, language="tr")
    text = web.get(SEND, {"pk": invoice.pk}).content.decode()
    assert "GİB&#x27;e gönderilecek, geri alınamaz." in text or "GİB'e gönderilecek, geri alınamaz." in text
    assert "15.006,00 TRY" in text and "e-Arşiv" in text and "Alıcıyı ve tutarı kontrol ettim." in text


def test_bulk_confirmation_lists_every_invoice_totals_per_currency_and_the_refused(web, company):
    lira, lira2 = draft(company), draft(company, price="50")
    dollars = draft(company, currency="USD", price="10")
    sent = draft(company, number="ABC2026000000009")
    Invoice.objects.filter(pk=sent.pk).update(sync_state=SyncState.SYNCED, remote_id=sent.ettn)
    pks = [lira.pk, lira2.pk, dollars.pk, sent.pk]
    text = web.post(SEND, {"pk": pks}).content.decode()
    assert 'id="send-refused"' in text and "ABC2026000000009" in text
    assert 'id="send-confirm-button" disabled' in text
    drafts = web.post(SEND, {"pk": pks[:3]}).content.decode()
    assert 'id="send-refused"' not in drafts and drafts.count("data-send-row=") == 3
    assert "1,800.00 TRY" in drafts and "120.00 USD" in drafts  # 1,200 + 600 TRY; 120 USD: never added together
    refused = web.post(SEND, {"pk": pks, "confirm": "1", "checked": "1"}, follow=True)
    assert "Only drafts are sent; nothing was sent." in refused.content.decode() and pushes() == 0
    assert web.post(SEND, {"pk": pks[:3], "confirm": "1", "checked": "1"}).status_code == 302 and pushes() == 3


def test_the_customer_lookup_fills_the_only_mailbox_and_offers_several(web, customers):  # noqa: F811
    url = reverse("invoices:invoice_customer")
    several = web.get(url, {"account": "1234567890"}).content.decode()
    assert several.count('data-fill-on="click"') == 2 and "urn:mail:fatura@ornek.com.tr" in several
    # One mailbox: filled in at once.
    from backoffice.invoices.models import Taxpayer

    Taxpayer.objects.filter(alias="urn:mail:fatura@ornek.com.tr").delete()
    single = web.get(url, {"account": "1234567890"}).content.decode()
    assert 'data-fill-target="id_target_alias" data-fill-value="urn:mail:defaultpk@ornek.com.tr"' in single
    assert 'data-fill-on="click"' not in single


def test_a_local_draft_is_deleted_locally(web, company):
    invoice = draft(company)
    response = web.post(reverse("invoices:invoice_delete", args=[invoice.pk]))
    assert response.status_code == 302 and not Invoice.objects.exists() and pushes() == 0


def test_another_companys_draft_is_not_found_and_a_manager_cannot_send(web, client, manager, company,
                                                                         other_company):
    theirs = draft(other_company)
    assert web.get(SEND, {"pk": theirs.pk}).status_code == 302  # nothing of theirs to confirm: back to the list
    assert web.post(SEND, {"pk": theirs.pk, "confirm": "1", "checked": "1"}).status_code == 302
    mine = draft(company)
    client.logout()
    as_manager = login(client, manager, company)
    assert as_manager.get(SEND, {"pk": mine.pk}).status_code == 403
    assert as_manager.post(SEND, {"pk": mine.pk, "confirm": "1", "checked": "1"}).status_code == 403
    assert pushes() == 0 and Invoice.objects.filter(sync_state=SyncState.LOCAL).count() == 2
