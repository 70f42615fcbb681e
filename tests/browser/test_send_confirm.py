"""Issue 29, the acceptance: a legally binding document is never sent by accident. In a real browser, against the
sandbox over HTTP and a real RQ worker: Enter pressed in every field of the invoice form and of the dispatch form
(the required ones filled first) moves to the next field and submits nothing; saving keeps a draft (an invoice:
local, no push queued; a dispatch note: status 0 on the platform, never 20); sending needs the confirmation, which
shows the recipient, its mailbox and the payable total; once confirmed, the document reaches the sandbox."""

import os
import re

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext

from backoffice.core.choices import Role, SyncState
from backoffice.core.models import JobRun
from backoffice.current_accounts.models import Address, CurrentAccount
from backoffice.dispatch import taxpayers as dispatch_taxpayers
from backoffice.dispatch.choices import DispatchStatus
from backoffice.dispatch.models import DispatchNote
from backoffice.invoices import services as invoice_services
from backoffice.invoices import taxpayers as invoice_taxpayers
from backoffice.invoices.models import Invoice
from tests.browser.conftest import CHROMIUM, screenshot, sign_in
from tests.conftest import make_user
from tests.testapp.testing import output, running_worker

pytestmark = [
    pytest.mark.browser,
    pytest.mark.worker,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's Chromium at /usr/bin/chromium"),
    pytest.mark.django_db(transaction=True),
]

WORKER_ENV = {"JOB_RETRY_BASE_SECONDS": "1", "JOB_RETRY_MAX_SECONDS": "2", "PLATFORM_READ_TIMEOUT": "5",
              "INVOICE_POLL_FOLLOW_SECONDS": "1", "DISPATCH_POLL_DELAY_SECONDS": "1"}
EARCHIVE_VKN = "4840000006"  # not on the sandbox's taxpayer list: an e-archive invoice
RECEIVER_VKN = "5550000008"  # not a dispatch-note user: the generic mailbox
SETTLES = 90_000

# The stops Enter walks through, as backoffice.js finds them: fields (not buttons, not hidden), enabled, shown; a
# radio group is one stop. Each stop's key: the radio group's name, else the element's id.
STOPS = """(selector) => {
  const form = document.querySelector(selector);
  const skip = ["hidden", "submit", "button", "reset", "image"];
  const stops = [];
  for (const element of form.elements) {
    const typable = element.tagName === "SELECT" || element.tagName === "TEXTAREA" ||
      (element.tagName === "INPUT" && !skip.includes(element.type));
    if (!typable || element.disabled || element.readOnly || element.tabIndex === -1 ||
        !element.getClientRects().length || getComputedStyle(element).visibility === "hidden" ||
        element.closest("details:not([open])")) { continue; }
    const key = element.type === "radio" ? "radio:" + element.name : element.id;
    if (stops.length && stops[stops.length - 1].key === key) { continue; }
    stops.push({key: key, tag: element.tagName, selector: element.type === "radio"
      ? `input[name="${element.name}"]:checked` : "#" + CSS.escape(element.id)});
  }
  return stops;
}"""
ACTIVE_KEY = """() => { const e = document.activeElement; return e.type === "radio" ? "radio:" + e.name : e.id; }"""


@pytest.fixture
def rq_worker():
    with running_worker(WORKER_ENV) as process:
        yield process


def in_turkish(text) -> str:
    with translation.override("tr"):
        return gettext(str(text))


def press_enter_everywhere(page, form_selector, url_before):
    """Enter in each stop of the form, one after another: focus goes to the next stop (the last keeps it) and the
    page never leaves the form. Returns how many stops it pressed Enter in."""
    stops = page.evaluate(STOPS, form_selector)
    assert len(stops) > 10, stops
    textareas = [stop for stop in stops if stop["tag"] == "TEXTAREA"]
    for index, stop in enumerate(stops):
        if stop["tag"] == "TEXTAREA":
            continue  # Enter is a new line there
        page.focus(stop["selector"])
        page.keyboard.press("Enter")
        expected = stops[index + 1]["key"] if index + 1 < len(stops) else stop["key"]
        assert page.evaluate(ACTIVE_KEY) == expected, (stop, expected)
        assert page.url == url_before
    return len(stops) - len(textareas)


def settled_on(page, rq_worker):
    def settled(selector, message):
        try:
            page.wait_for_selector(selector, state="attached", timeout=SETTLES)
        except Exception:
            raise AssertionError(f"timed out waiting for {message} ({selector})\n--- worker output ---\n"
                                 f"{output(rq_worker)[-5000:]}") from None
    return settled


def customer(company, identifier, name, city="İstanbul"):
    account = CurrentAccount.objects.create(company=company, name=name, identifier=identifier, remote_id=identifier,
                                            sync_state=SyncState.SYNCED)
    Address.objects.create(company=company, current_account=account, address_name="Merkez", city=city,
                           sub_division_name="Kadıköy", country="Türkiye", postal_zone="34710", is_default=True,
                           remote_id=f"a{identifier}", sync_state=SyncState.SYNCED)
    return account


def test_enter_never_sends_an_invoice_and_sending_needs_the_confirmation(live_server, browser_page, sandbox,
                                                                        make_sandbox_company, rq_worker):
    for role in Role:
        Group.objects.get_or_create(name=role.value)
    sandbox.configure(ticket_processing_seconds=1)
    company = make_sandbox_company(name="Marmara Kırtasiye A.Ş.")
    make_user("selin", Role.ACCOUNTING, [company])
    customer(company, EARCHIVE_VKN, "Ayşe Yılmaz Ltd.")
    invoice_taxpayers.taxpayers_refresh()
    page, url = browser_page, live_server.url
    settled = settled_on(page, rq_worker)
    sign_in(page, live_server, "selin")

    add = f"{url}{reverse('invoices:invoice_add')}"
    page.goto(add)
    page.fill("#id_account", EARCHIVE_VKN)
    page.wait_for_selector("#customer-info [data-kind]")
    page.fill("#id_prefix", "EAR")
    page.fill("#id_description", "Kırtasiye")
    page.fill("#id_lines-0-inventory_service_code", "DFT-A4")
    page.fill("#id_lines-0-quantity", "4")
    page.fill("#id_lines-0-unit_price", "250")
    page.fill("#id_lines-0-vat_rate", "20")
    page.wait_for_selector("[data-total=payable]:text-is('1.200,00')")
    pressed = press_enter_everywhere(page, "#invoice-form", add)
    assert pressed > 20
    assert not Invoice.objects.exists() and not JobRun.objects.filter(name="invoice_push").exists()

    # Saving (the button, reached with Tab and pressed with Enter: an explicit act) keeps a local draft.
    page.focus("#id_lines-0-vat_rate")
    page.locator("#invoice-save").focus()
    with page.expect_navigation():
        page.keyboard.press("Enter")
    page.wait_for_selector("#invoice-draft")
    invoice = Invoice.objects.get(company=company)
    assert invoice.sync_state == SyncState.LOCAL and not JobRun.objects.filter(name="invoice_push").exists()
    assert page.locator("#invoice-draft").inner_text() == in_turkish("Draft (not sent)")
    detail = page.url

    # Sending: the confirmation, with the recipient, "e-Arşiv" and the payable total.
    page.click("#invoice-send")
    page.wait_for_selector("#send-confirm")
    text = page.locator("#send-confirm").inner_text()
    assert in_turkish("It will be sent to the tax authority (GİB); this cannot be undone.") in text
    assert "Ayşe Yılmaz Ltd." in text and EARCHIVE_VKN in text and "e-Arşiv" in text and "1.200,00 TRY" in text
    screenshot(page, "send-confirm-invoice")
    page.click("#send-confirm-button")  # the box is not ticked: the browser keeps the page, nothing is sent
    assert page.locator("#send-confirm").count() == 1 and not JobRun.objects.filter(name="invoice_push").exists()
    page.check("#send-checked")
    with page.expect_navigation(url=detail):
        page.click("#send-confirm-button")
    settled(f"#invoice-sync-state:text-is('{in_turkish(SyncState.SYNCED.label)}')", "the worker to send it")
    invoice.refresh_from_db()
    assert invoice_services.accounting(company).invoice(invoice.remote_id, True) is not None
    assert JobRun.objects.filter(name="invoice_push").count() == 1
    assert rq_worker.poll() is None, output(rq_worker)


@pytest.mark.slow
def test_enter_never_sends_a_dispatch_note_and_sending_needs_the_confirmation(live_server, browser_page, sandbox,
                                                                             make_sandbox_company, rq_worker):
    """Slow (over 10 s): a whole flow in a real browser through a real worker and the sandbox."""
    for role in Role:
        Group.objects.get_or_create(name=role.value)
    company = make_sandbox_company(name="Marmara Yapı Malzemeleri A.Ş.")
    sandbox.control("POST", "dispatch/settings", {"customer": str(company.customer_unique_id),
                                                  "processing_seconds": 1, "approve_seconds": 1, "error_rate": 0})
    make_user("deniz", Role.ACCOUNTING, [company])
    customer(company, RECEIVER_VKN, "İnşaat Deposu Ltd.", city="Kocaeli")
    dispatch_taxpayers.taxpayers_refresh()
    generic = dispatch_taxpayers.generic_alias()
    page, url = browser_page, live_server.url
    settled = settled_on(page, rq_worker)
    sign_in(page, live_server, "deniz")

    add = f"{url}{reverse('dispatch:dispatchnote_add')}"
    page.goto(add)
    page.fill("#id_account", RECEIVER_VKN)
    page.wait_for_selector("#receiver-address[data-city='Kocaeli']")
    # The receiver's mailbox is filled in as soon as the receiver is known (here the generic one).
    page.wait_for_function(f"() => document.getElementById('id_target_alias').value === {generic!r}")
    page.check("#id_carrier_0")
    page.fill("#id_prefix", "IRS")
    page.fill("#id_plate_number", "41ABC123")
    page.fill("#id_drivers-0-name", "Ayşe")
    page.fill("#id_drivers-0-surname", "Yılmaz")
    page.fill("#id_drivers-0-tckn", "10000000146")
    page.fill("#id_lines-0-product_name", "Çimento 50 kg")
    page.fill("#id_lines-0-quantity", "40")
    page.fill("#id_lines-0-unit_price", "125,50")
    page.fill("#id_lines-0-vat_rate", "20")
    page.wait_for_selector("[data-total=total]:text-is('6.024,00')")
    assert page.locator("input[name=requested_status]").count() == 0  # no "save and send now"
    assert press_enter_everywhere(page, "#dispatch-form", add) > 15
    assert not DispatchNote.objects.exists()

    with page.expect_navigation():
        page.click("#dispatch-save")
    note = DispatchNote.objects.get(company=company)
    assert note.requested_status == DispatchStatus.DRAFT
    settled(f"#dispatch-status[data-status='{DispatchStatus.DRAFT}']", "the draft to reach the platform")
    note.refresh_from_db()
    assert note.remote_id and note.remote_status == DispatchStatus.DRAFT
    detail = page.url

    page.click("#dispatch-actions button[data-action=send]")
    page.wait_for_selector("#send-confirm")
    text = page.locator("#send-confirm").inner_text()
    assert in_turkish("It will be sent to the tax authority (GİB); this cannot be undone.") in text
    assert "İnşaat Deposu Ltd." in text and RECEIVER_VKN in text and generic in text and "6.024,00 TRY" in text
    screenshot(page, "send-confirm-dispatch")
    note.refresh_from_db()
    assert note.remote_status == DispatchStatus.DRAFT and not note.pending_action
    page.check("#send-checked")
    with page.expect_navigation(url=detail):
        page.click("#send-confirm-button")
    settled("#dispatch-status[data-status='20'], #dispatch-status[data-status='50'], "
            "#dispatch-status[data-status='60']", "the note to be sent")
    note.refresh_from_db()
    assert note.remote_status != DispatchStatus.DRAFT and re.fullmatch(r"IRS\d{13}", note.despatch_number)
    assert rq_worker.poll() is None, output(rq_worker)
