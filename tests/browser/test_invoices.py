"""An e-archive invoice in a real browser, against the sandbox over HTTP and a real RQ worker process, as an
accountant issues one (the acceptance of issue 13): a foreign-currency invoice with the exchange-rate comment
left out is refused on that field, fixed and sent; the page follows it until the platform approves it; its PDF
opens; it is posted to accounting, its deletion is refused with the reason, and the posting is reversed.
"""

import os
import re

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext
from playwright.sync_api import expect

from backoffice.core.choices import Role, SyncState
from backoffice.current_accounts.models import Address, CurrentAccount
from backoffice.invoices import services, taxpayers
from backoffice.invoices.choices import InvoiceStatus, PostingStatus, RecordType
from backoffice.invoices.models import Invoice
from tests.browser.conftest import CHROMIUM, screenshot, sign_in
from tests.conftest import make_user
from tests.invoices.test_posting_mapping import map_customer
from tests.testapp.testing import output, running_worker

pytestmark = [
    pytest.mark.browser,
    pytest.mark.worker,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's Chromium at /usr/bin/chromium"),
    pytest.mark.django_db(transaction=True),
]

WORKER_ENV = {"JOB_RETRY_BASE_SECONDS": "1", "JOB_RETRY_MAX_SECONDS": "2", "PLATFORM_READ_TIMEOUT": "5",
              "INVOICE_POLL_FOLLOW_SECONDS": "1"}
EARCHIVE_VKN = "4840000006"  # not on the sandbox's taxpayer list: its invoices are e-archive invoices
SETTLES = 90_000  # ms: what the worker and the platform do, followed by the page's own refresh


@pytest.fixture
def rq_worker():
    with running_worker(WORKER_ENV) as process:
        yield process


def in_turkish(text) -> str:
    with translation.override("tr"):
        return gettext(str(text))


def label_in_turkish(choice) -> str:
    with translation.override("tr"):
        return str(choice.label)


@pytest.mark.slow
def test_earchive_invoice_issued_approved_posted_and_reversed(live_server, browser_page, sandbox,
                                                               make_sandbox_company, rq_worker):
    """Slow (over 10 s): an e-archive invoice's whole life in a real browser, each step through a real worker and the
    sandbox."""
    for role in Role:
        Group.objects.get_or_create(name=role.value)
    # Each status step of the e-archive path (queued, running, approved) takes a second.
    sandbox.configure(ticket_processing_seconds=2)
    company = make_sandbox_company(name="Marmara Kırtasiye A.Ş.")
    make_user("selin", Role.ACCOUNTING, [company])
    account = CurrentAccount.objects.create(company=company, name="Ayşe Yılmaz Ltd.", identifier=EARCHIVE_VKN,
                                            tax_office="Kadıköy", remote_id="11", sync_state=SyncState.SYNCED)
    Address.objects.create(company=company, current_account=account, address_name="Merkez", city="İstanbul",
                           sub_division_name="Kadıköy", country="Türkiye", is_default=True, remote_id="21",
                           sync_state=SyncState.SYNCED)
    map_customer(account)  # posting needs the customer's mapping (document 3, 2.6)
    # The registered users, read from the platform as the daily job does (an administrator's button).
    taxpayers.taxpayers_refresh()
    assert taxpayers.directory_loaded() and not taxpayers.mailboxes(EARCHIVE_VKN)
    page = browser_page
    url = live_server.url

    def settled(selector, message):
        try:
            page.wait_for_selector(selector, state="attached", timeout=SETTLES)
        except Exception:
            raise AssertionError(f"timed out waiting for {message} ({selector})\n--- worker output ---\n"
                                 f"{output(rq_worker)[-5000:]}") from None

    sign_in(page, live_server, "selin")

    # 1. The form: the customer's id tells it is an e-archive invoice; USD with everything but the comment.
    page.goto(f"{url}{reverse('invoices:invoice_add')}")
    page.fill("#id_account", EARCHIVE_VKN)
    page.wait_for_selector(f"#customer-info [data-kind='{RecordType.EARCHIVE}']")
    assert in_turkish("not a registered e-invoice user: this is an e-archive invoice.") in page.locator(
        "#customer-info").inner_text()
    assert page.locator("#address-warning").count() == 0  # the account has its default address
    # Dated today unless changed (a date input takes only yyyy-mm-dd: a localized value leaves it empty).
    expect(page.locator("#id_issue_date")).to_have_value(timezone.localdate().isoformat())
    page.fill("#id_prefix", "EAR")
    page.fill("#id_description", "Kırtasiye ihracatı")
    page.select_option("#id_currency_code", "USD")
    page.fill("#id_exchange_rate", "34,5678")
    page.fill("#id_exchange_rate_source", "TCMB")
    page.fill("#id_lines-0-inventory_service_code", "DFT-A4")
    page.fill("#id_lines-0-quantity", "3")
    page.fill("#id_lines-0-unit_price", "1.250,50")
    page.fill("#id_lines-0-vat_rate", "20")
    # 3 x 1250.50 = 3751.50, VAT 20 % 750.30: 4501.80 USD; at 34.5678 that is 155617.32 TRY.
    expect(page.locator("[data-total=payable]")).to_have_text("4.501,80")
    expect(page.locator("[data-total=vat_total]")).to_have_text("750,30")
    expect(page.locator("[data-total=payable_try]")).to_have_text("155.617,32")
    page.click("#invoice-save")

    page.wait_for_selector("#id_exchange_rate_comment_errors")
    assert page.locator("#id_exchange_rate_comment_errors").inner_text() == in_turkish(
        "Add a comment on the exchange rate (e.g. the date of the rate).")
    # Only that field is marked.
    assert page.eval_on_selector_all(".is-invalid", "nodes => nodes.map(node => node.id)") == [
        "id_exchange_rate_comment"]
    assert not Invoice.objects.exists()
    # The rest came back as typed, the totals computed again.
    assert page.locator("#id_exchange_rate").input_value() == "34,5678"
    expect(page.locator("[data-total=payable_try]")).to_have_text("155.617,32")
    page.locator("#id_exchange_rate_comment").scroll_into_view_if_needed()
    screenshot(page, "invoice-form")

    page.fill("#id_exchange_rate_comment", "Döviz satış kuru")
    page.click("#invoice-save")
    page.wait_for_url(re.compile(r".*/invoices/\d+/$"))
    invoice = Invoice.objects.get(company=company)
    detail_url = f"{url}{reverse('invoices:invoice_detail', args=[invoice.pk])}"
    assert page.url == detail_url
    assert (invoice.record_type, invoice.currency_code, invoice.exchange_rate_comment) == (
        RecordType.EARCHIVE, "USD", "Döviz satış kuru")

    def confirm_action(name):
        """A record action of the detail page: its confirmation page, confirmed, back on the invoice."""
        page.click(f"#invoice-actions button[data-action={name}]")
        page.wait_for_selector("form input[name=confirm]", state="attached")
        assert invoice.invoice_number in page.locator(".confirm-list").inner_text()
        with page.expect_navigation(url=detail_url):
            page.click("form:has(input[name=confirm]) button[type=submit]")

    # 2. Saved as a draft (issue 29), sent after its confirmation (recipient, e-Arşiv, the payable total), by the
    # worker, numbered by the platform, followed until approved: the page refreshes itself.
    assert invoice.sync_state == SyncState.LOCAL and page.locator("#invoice-draft").count() == 1
    page.click("#invoice-send")
    page.wait_for_selector("#send-confirm")
    assert "Ayşe Yılmaz Ltd." in page.locator("#send-confirm").inner_text()
    assert "4.501,80 USD" in page.locator("#send-confirm").inner_text()
    page.check("#send-checked")
    with page.expect_navigation(url=detail_url):
        page.click("#send-confirm-button")
    settled(f"#invoice-sync-state:text-is('{label_in_turkish(SyncState.SYNCED)}')", "the worker to send it")
    invoice.refresh_from_db()
    assert re.fullmatch(rf"EAR{invoice.issue_date.year}\d{{9}}", invoice.invoice_number)
    expect(page.locator("#invoice-number")).to_have_text(invoice.invoice_number)
    settled(f"#invoice-status[data-status='{InvoiceStatus.APPROVED}']", "the platform to approve the invoice")
    assert page.locator("#invoice-payable").inner_text() == "4.501,80"

    # 3. The PDF, in a new tab: a real PDF file.
    pdf = page.locator("#invoice-actions [data-document=pdf]")
    assert pdf.get_attribute("target") == "_blank"
    href = pdf.get_attribute("href")
    with page.context.expect_event("response", predicate=lambda answer: answer.url == f"{url}{href}") as answered, \
            page.expect_popup() as opened:
        pdf.click()
    assert answered.value.status == 200 and answered.value.headers["content-type"] == "application/pdf"
    opened.value.close()
    # The tab shows the browser's PDF viewer, not the bytes: those are fetched again with the session's cookies
    # (the kept copy, no second call to the platform).
    document = page.request.get(f"{url}{href}")
    assert document.ok and document.body().startswith(b"%PDF")

    # 4. Posted to accounting, after its confirmation.
    confirm_action("post")
    settled("#invoice-posting[data-posted='1']", "the posting")
    assert Invoice.objects.get(pk=invoice.pk).record_status == PostingStatus.POSTED
    page.wait_for_selector("#invoice-actions button[data-action=reverse]")
    screenshot(page, "invoice-detail")

    # 5. Deleting it is refused, with the reason; nothing is deleted.
    page.click("#invoice-delete")
    page.wait_for_selector("#delete-refusal")
    assert page.locator("#delete-refusal").inner_text().strip() == in_turkish(
        "A posted invoice cannot be deleted: reverse the posting first.")
    assert page.locator("#invoice-delete-confirm").count() == 0
    with page.expect_navigation(url=detail_url):
        page.click(f"a[href='{reverse('invoices:invoice_detail', args=[invoice.pk])}']")
    assert Invoice.objects.filter(pk=invoice.pk, pending_action="").exists()

    # 6. The posting reversed: here and on the platform.
    confirm_action("reverse")
    settled("#invoice-posting[data-posted='0']", "the reversal")
    assert services.accounting(company).invoice(invoice.remote_id, True)["recordStatus"] == PostingStatus.NOT_POSTED
    assert rq_worker.poll() is None, output(rq_worker)
