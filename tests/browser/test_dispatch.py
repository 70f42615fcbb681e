"""A dispatch note in a real browser, against the sandbox over HTTP and a real RQ worker process (the acceptance of
issue 15): a note carried by our driver, with the driver's national id mistyped, is refused on that field, fixed
and sent; the page follows it until the platform approves it (60); its PDF opens. A UBL file with a schema error is
refused with the schema's line and message, and nothing is saved.
"""

import os
import re

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext

from backoffice.core.choices import Role, SyncState
from backoffice.core.models import RemoteCall
from backoffice.current_accounts.models import Address, CurrentAccount
from backoffice.dispatch import taxpayers
from backoffice.dispatch.choices import DispatchStatus
from backoffice.dispatch.models import DispatchNote
from tests.browser.conftest import CHROMIUM, screenshot, sign_in
from tests.conftest import make_user
from tests.dispatch.ubl_samples import despatch_xml
from tests.testapp.testing import output, running_worker

pytestmark = [
    pytest.mark.browser,
    pytest.mark.worker,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's Chromium at /usr/bin/chromium"),
    pytest.mark.django_db(transaction=True),
]

WORKER_ENV = {"JOB_RETRY_BASE_SECONDS": "1", "JOB_RETRY_MAX_SECONDS": "2", "PLATFORM_READ_TIMEOUT": "5",
              "DISPATCH_POLL_DELAY_SECONDS": "1"}
RECEIVER_VKN = "5550000008"  # not a dispatch-note user of the sandbox's list: the generic mailbox
SETTLES = 90_000  # ms: what the worker and the platform do, followed by the page's own refresh


@pytest.fixture
def rq_worker():
    with running_worker(WORKER_ENV) as process:
        yield process


def in_turkish(text) -> str:
    with translation.override("tr"):
        return gettext(str(text))


@pytest.mark.slow
def test_a_note_carried_by_our_driver_is_fixed_sent_approved_and_its_pdf_opens(live_server, browser_page, sandbox,
                                                                                  make_sandbox_company, rq_worker):
    """Slow (over 10 s): a dispatch note's whole life in a real browser through a real worker, its PDF opened."""
    for role in Role:
        Group.objects.get_or_create(name=role.value)
    company = make_sandbox_company(name="Marmara Yapı Malzemeleri A.Ş.")
    sandbox.control("POST", "dispatch/settings", {"customer": str(company.customer_unique_id),
                                                  "processing_seconds": 1, "approve_seconds": 1, "error_rate": 0})
    make_user("deniz", Role.ACCOUNTING, [company])
    account = CurrentAccount.objects.create(company=company, name="İnşaat Deposu Ltd.", identifier=RECEIVER_VKN,
                                            remote_id="11", sync_state=SyncState.SYNCED)
    Address.objects.create(company=company, current_account=account, address_name="Depo", city="Kocaeli",
                           sub_division_name="Gebze", country="Türkiye", postal_zone="41400", is_default=True,
                           remote_id="21", sync_state=SyncState.SYNCED)
    taxpayers.taxpayers_refresh()  # the dispatch-note users, as the daily job reads them
    assert taxpayers.directory_loaded() and not taxpayers.mailboxes(RECEIVER_VKN)
    page = browser_page
    url = live_server.url

    def settled(selector, message):
        try:
            page.wait_for_selector(selector, state="attached", timeout=SETTLES)
        except Exception:
            raise AssertionError(f"timed out waiting for {message} ({selector})\n--- worker output ---\n"
                                 f"{output(rq_worker)[-5000:]}") from None

    sign_in(page, live_server, "deniz")

    # 1. The form: the receiver tells its mailbox and address; our driver carries, her id mistyped.
    page.goto(f"{url}{reverse('dispatch:dispatchnote_add')}")
    page.fill("#id_account", RECEIVER_VKN)
    page.wait_for_selector("#receiver-address[data-city='Kocaeli']")
    assert taxpayers.generic_alias() in page.locator("#receiver-info").inner_text()
    page.check("#id_carrier_0")  # "Our driver(s)"
    assert page.locator("[data-carrier-part=company]").is_hidden()
    page.fill("#id_prefix", "irs")
    page.fill("#id_plate_number", "41 abc 123")
    page.fill("#id_drivers-0-name", "Ayşe")
    page.fill("#id_drivers-0-surname", "Yılmaz")
    page.fill("#id_drivers-0-tckn", "1000000014")  # ten digits
    page.fill("#id_lines-0-product_name", "Çimento 50 kg")
    page.fill("#id_lines-0-quantity", "40")
    page.fill("#id_lines-0-unit_price", "125,50")
    page.fill("#id_lines-0-vat_rate", "20")
    page.wait_for_selector("[data-total=total]:text-is('6.024,00')")  # 40 x 125.50 = 5020.00, VAT 1004.00
    page.click("#dispatch-save")

    page.wait_for_selector("#id_drivers-0-tckn_errors")
    assert page.locator("#id_drivers-0-tckn_errors").inner_text() == in_turkish(
        "A national id (TCKN) has exactly 11 digits.")
    assert page.eval_on_selector_all(".is-invalid", "nodes => nodes.map(node => node.id)") == ["id_drivers-0-tckn"]
    assert not DispatchNote.objects.exists()
    assert page.locator("#id_lines-0-unit_price").input_value() == "125,50"  # the rest came back as typed
    screenshot(page, "dispatch-form-error")

    page.fill("#id_drivers-0-tckn", "10000000146")
    page.click("#dispatch-save")
    page.wait_for_url(re.compile(r".*/dispatch/\d+/$"))
    note = DispatchNote.objects.get(company=company)
    assert note.target_alias == taxpayers.generic_alias() and note.plate_number == "41ABC123"
    assert (note.delivery_city, note.delivery_district, note.delivery_zip_code) == ("Kocaeli", "Gebze", "41400")

    # 2. Saved as a draft and pushed as status 0 (issue 29); sent after its confirmation, followed until approved:
    # the page refreshes itself.
    assert note.requested_status == DispatchStatus.DRAFT
    settled(f"#dispatch-status[data-status='{DispatchStatus.DRAFT}']", "the draft to reach the platform")
    detail_url = page.url
    page.click("#dispatch-actions button[data-action=send]")
    page.wait_for_selector("#send-confirm")
    assert "6.024,00 TRY" in page.locator("#send-confirm").inner_text()
    page.check("#send-checked")
    with page.expect_navigation(url=detail_url):
        page.click("#send-confirm-button")
    settled("#dispatch-status[data-status='20'], #dispatch-status[data-status='50'], "
            "#dispatch-status[data-status='60']", "the worker to send it")
    settled(f"#dispatch-status[data-status='{DispatchStatus.APPROVED}']", "the platform to approve the note")
    note.refresh_from_db()
    assert note.envelope_status == "1000" and re.fullmatch(rf"IRS{timezone.localdate().year}\d{{9}}",
                                                         note.despatch_number)
    screenshot(page, "dispatch-detail-approved")

    # 3. The PDF, in a new tab: a real PDF file.
    pdf = page.locator("#dispatch-actions [data-document=pdf]")
    href = pdf.get_attribute("href")
    with page.context.expect_event("response", predicate=lambda answer: answer.url == f"{url}{href}") as answered, \
            page.expect_popup() as opened:
        pdf.click()
    assert answered.value.status == 200 and answered.value.headers["content-type"] == "application/pdf"
    opened.value.close()
    document = page.request.get(f"{url}{href}")
    assert document.ok and document.body().startswith(b"%PDF")

    # 4. A UBL file with a schema error: the schema's line and message, nothing saved, no call.
    xml = despatch_xml(number=f"IRS{timezone.localdate().year}000000900").replace(
        b"<cbc:IssueDate>", b"<cbc:Bogus>x</cbc:Bogus><cbc:IssueDate>", 1)
    line = xml[:xml.index(b"<cbc:Bogus>")].count(b"\n") + 1
    calls = RemoteCall.objects.filter(operation="dispatch.outbox_post_ubl").count()
    page.goto(f"{url}{reverse('dispatch:dispatchnote_upload')}")
    page.set_input_files("#id_file", files=[{"name": "irsaliye.xml", "mimeType": "application/xml", "buffer": xml}])
    page.click("#ubl-upload")
    page.wait_for_selector("#ubl-findings")
    finding = page.locator("#ubl-findings .ubl-problem").first.inner_text()
    assert str(line) in finding and "Bogus" in finding
    assert DispatchNote.objects.filter(company=company).count() == 1
    assert RemoteCall.objects.filter(operation="dispatch.outbox_post_ubl").count() == calls
    screenshot(page, "dispatch-ubl-findings")
    assert rq_worker.poll() is None, output(rq_worker)
