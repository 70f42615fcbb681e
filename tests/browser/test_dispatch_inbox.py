"""An incoming dispatch note answered in a real browser, between two sandbox customers over HTTP and with a real RQ
worker process (the acceptance of issue 16): our supplier's note arrives, the receiver accepts two lines, rejects
part of the third with a reason, sends the reply and watches the note become partially accepted (90); on the
sender's side the outgoing note shows the answer line by line.
"""

import os
import re
import time
from datetime import timedelta
from decimal import Decimal

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext

from backoffice.core.choices import JobStatus, Role, SyncState
from backoffice.core.models import JobRun, RemoteCall
from backoffice.current_accounts.models import Address, CurrentAccount
from backoffice.dispatch import services, taxpayers
from backoffice.dispatch.choices import Answer, DispatchStatus, Numbering
from backoffice.dispatch.models import DispatchDriver, DispatchLine, DispatchNote
from backoffice.dispatch_inbox.models import DispatchReply, IncomingNote
from tests.browser.conftest import CHROMIUM, screenshot, sign_in
from tests.conftest import make_user
from tests.dispatch.inbox_helpers import sandbox_vkn
from tests.testapp.testing import output, running_worker, wait_for

pytestmark = [
    pytest.mark.browser,
    pytest.mark.worker,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's Chromium at /usr/bin/chromium"),
    pytest.mark.django_db(transaction=True),
]

WORKER_ENV = {"JOB_RETRY_BASE_SECONDS": "1", "JOB_RETRY_MAX_SECONDS": "2", "PLATFORM_READ_TIMEOUT": "5",
              "DISPATCH_POLL_DELAY_SECONDS": "1"}
SETTLES = 90_000  # ms: what the worker and the platform do, followed by the page's own refresh
READS = 120  # s: reading the platform's lists again until what we wait for shows (a busy 2-core machine)
MIRROR_JOB = "dispatch_inbox_mirror"
ACTIVE_RUNS = (JobStatus.QUEUED, JobStatus.RUNNING, JobStatus.RETRYING, JobStatus.DEFERRED)


@pytest.fixture
def rq_worker():
    with running_worker(WORKER_ENV) as process:
        yield process


def in_turkish(text) -> str:
    with translation.override("tr"):
        return gettext(str(text))


def sender_note(sender, receiver) -> DispatchNote:
    """The sender's note to the receiving sandbox customer's VKN (no dispatch-note user of the sandbox's list: the
    generic mailbox), three lines, sent at once: the worker pushes it and follows it to 60."""
    identifier = sandbox_vkn(receiver)
    account = CurrentAccount.objects.create(company=sender, name=receiver.name, identifier=identifier,
                                            remote_id="31", sync_state=SyncState.SYNCED)
    Address.objects.create(company=sender, current_account=account, address_name="Şantiye", city="Ankara",
                           sub_division_name="Çankaya", country="Türkiye", postal_zone="06690", is_default=True,
                           remote_id="41", sync_state=SyncState.SYNCED)
    now = timezone.localtime()
    note = DispatchNote(
        company=sender, current_account=account, receiver_identifier=identifier, receiver_name=account.name,
        target_alias=taxpayers.generic_alias(), receiver_city="Ankara", receiver_district="Çankaya",
        delivery_city="Ankara", delivery_district="Çankaya", delivery_zip_code="06690", numbering=Numbering.SERIES,
        prefix="IRS", issue_date=now.date(), issue_time=now.time(), shipment_date=now,
        requested_status=DispatchStatus.QUEUED, plate_number="34ABC123")
    lines = [DispatchLine(product_name="Çimento 50 kg", quantity=40, unit_code="C62", unit_price="125.50", vat_rate=20),
             DispatchLine(product_name="Kum", quantity="2.5", unit_code="TNE", unit_price=0, vat_rate=0),
             DispatchLine(product_name="Tuğla", quantity=500, unit_code="C62", unit_price="4.75", vat_rate=20)]
    drivers = [DispatchDriver(name="Ayşe", surname="Yılmaz", tckn="10000000146")]
    return services.note_save(note, lines, drivers)


@pytest.mark.slow
def test_a_partial_acceptance_is_sent_followed_and_shown_on_the_senders_note(live_server, browser_page, sandbox,
                                                                              make_sandbox_company, rq_worker):
    """Slow (over 10 s): both companies' sides of a reply in a real browser, each through a real worker and the
    sandbox."""
    for role in Role:
        Group.objects.get_or_create(name=role.value)
    sender = make_sandbox_company(name="Marmara Yapı Malzemeleri A.Ş.")
    receiver = make_sandbox_company(name="Anadolu İnşaat A.Ş.")
    for company in (sender, receiver):
        sandbox.control("POST", "dispatch/settings", {"customer": str(company.customer_unique_id),
                                                      "processing_seconds": 1, "approve_seconds": 1, "error_rate": 0})
    # one user per company: each lands on its own company, no switching
    make_user("murat", Role.ACCOUNTING, [sender])
    make_user("selin", Role.ACCOUNTING, [receiver])
    taxpayers.taxpayers_refresh()  # the dispatch-note users, as the daily job reads them
    assert taxpayers.directory_loaded() and not taxpayers.mailboxes(sandbox_vkn(receiver))
    page = browser_page
    url = live_server.url

    def worker_output() -> str:
        return f"\n--- worker output ---\n{output(rq_worker)[-5000:]}"

    def settled(selector, message):
        try:
            page.wait_for_selector(selector, state="attached", timeout=SETTLES)
        except Exception:
            raise AssertionError(f"timed out waiting for {message} ({selector}){worker_output()}") from None

    def read_until(company, button, list_url, selector, message):
        """Click "Read from the platform now" until `selector` shows on the list: the lists are read with an
        endDate a little behind now, so what arrived a moment ago shows on a later read."""
        deadline = time.monotonic() + READS
        while True:
            page.goto(list_url)
            if page.locator(selector).count():
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {READS} s waiting for {message} ({selector}){worker_output()}")
            with page.expect_navigation():  # the read is asked for once the POST is answered
                page.click(button)
            # the read asked for has finished (or failed: the next click asks again)
            wait_for(lambda: not JobRun.objects.filter(name=MIRROR_JOB, company=company,
                                                       status__in=ACTIVE_RUNS).exists(),
                     timeout=READS, interval=0.5, message=f"the read from the platform to finish{worker_output()}")

    # 1. The sender's note, pushed by the worker and followed until the platform approves it: then it is on its
    #    way to the receiver's inbox.
    ours = sender_note(sender, receiver)
    wait_for(lambda: DispatchNote.objects.filter(pk=ours.pk, remote_status=DispatchStatus.APPROVED).exists(),
             timeout=SETTLES / 1000, interval=0.5, message=f"the sender's note to be approved{worker_output()}")
    ours.refresh_from_db()
    assert ours.despatch_number and ours.remote_id

    # 2. The receiver reads its incoming notes until the note shows, and opens it.
    sign_in(page, live_server, "selin")
    incoming_url = f"{url}{reverse('dispatch_inbox:incomingnote_list')}"
    row = f"#object-list tbody tr:has(a:text-is('{ours.despatch_number}'))"
    read_until(receiver, "#incoming-mirror", incoming_url, row, "the note in the receiver's incoming list")
    assert sender.name in page.locator(row).inner_text()
    assert page.locator("#incoming-awaiting-count").inner_text() == "1"
    screenshot(page, "dispatch-incoming-list")
    theirs = IncomingNote.objects.get(company=receiver)
    assert theirs.remote_id == ours.remote_id and theirs.remote_status == DispatchStatus.AWAITING_APPROVAL
    page.click(f"{row} a:text-is('{ours.despatch_number}')")
    page.wait_for_url(re.compile(rf".*/dispatch/incoming/{theirs.pk}/$"))
    assert page.locator("#incoming-status").get_attribute("data-status") == str(DispatchStatus.AWAITING_APPROVAL)
    assert page.locator("#incoming-lines tbody tr[data-line]").count() == 3  # read from the note's UBL

    # 3. Accepted in part: lines 1 and 2 in full, 450 of the 500 bricks, 50 rejected with a reason.
    page.click("#answer-partial")
    page.wait_for_url(re.compile(rf".*/dispatch/incoming/{theirs.pk}/partial/$"))
    bricks = "#partial-lines tr[data-line='3']"
    assert "Tuğla" in page.locator(bricks).inner_text()
    page.fill(f"{bricks} input[name^=accepted_]", "450")
    page.fill(f"{bricks} input[name^=rejected_]", "50")
    page.fill(f"{bricks} input[name^=reason_]", "Kırık tuğla")
    now = timezone.localtime()
    # an hour ago, but not before the note's day (the form refuses a delivery before the note was issued)
    delivered = max(now - timedelta(hours=1), now.replace(hour=0, minute=0, second=0, microsecond=0))
    page.fill("#id_delivered_at", delivered.strftime("%Y-%m-%dT%H:%M"))
    page.fill("#id_delivery_contact", "Selin Kaya")
    page.fill("#id_prefix", "IRY")
    screenshot(page, "dispatch-incoming-partial")
    page.click("#partial-send")
    page.wait_for_url(re.compile(rf".*/dispatch/incoming/{theirs.pk}/$"))
    reply = DispatchReply.objects.get(note=theirs)
    assert reply.answer == Answer.PARTIAL and reply.delivery_contact == "Selin Kaya"
    assert [(line.line_id, line.accepted, line.rejected, line.reason) for line in reply.lines.order_by("pk")] == [
        ("1", 40, 0, ""), ("2", Decimal("2.5"), 0, ""), ("3", 450, 50, "Kırık tuğla")]
    card = f"#reply-{reply.pk}"
    page.wait_for_selector(f"{card}[data-answer=partial]")

    # 4. The worker sends it and follows it; the page refreshes itself until the note is partially accepted.
    settled(f"#incoming-status[data-status='{DispatchStatus.PARTIALLY_ACCEPTED}']",
            "the note to become partially accepted")
    assert page.locator("#incoming-status").inner_text() == in_turkish(DispatchStatus.PARTIALLY_ACCEPTED.label)
    assert not page.locator("#incoming-answer").count()  # answered: no second answer offered
    rejected = page.locator(f"{card} .reply-lines tr[data-line='3']").inner_text()
    assert "50" in rejected and "Kırık tuğla" in rejected
    reply.refresh_from_db()
    assert reply.sync_state == SyncState.SYNCED and reply.receipt_number.startswith("IRY")
    screenshot(page, "dispatch-incoming-answered")

    # 5. The sender reads the replies to its notes until this one shows, and opens its note.
    page.context.clear_cookies()  # signed out: the sender comes next
    sign_in(page, live_server, "murat")
    receipts_url = f"{url}{reverse('dispatch:receivedreply_list')}"
    note_url = reverse("dispatch:dispatchnote_detail", args=[ours.pk])
    # linked to our note, its lines read (the answer is decided by them)
    answered_row = (f"#object-list tbody tr:has(a[href='{note_url}'])"
                    f":has(.badge:text-is('{in_turkish(Answer.PARTIAL.label)}'))")
    read_until(sender, "#receipts-mirror", receipts_url, answered_row, "the reply in the sender's receipt list")
    page.click(f"{answered_row} a[href='{note_url}']")
    page.wait_for_url(f"{url}{note_url}")
    assert page.locator("#dispatch-receipt").get_attribute("data-answer") == Answer.PARTIAL
    assert page.locator("#dispatch-status").get_attribute("data-status") == str(DispatchStatus.PARTIALLY_ACCEPTED)
    lines = page.locator("#dispatch-lines tbody tr")
    assert lines.count() == 3
    assert [lines.nth(index).locator("td.answer-rejected").inner_text() for index in range(3)] == ["0", "0", "50"]
    assert lines.nth(2).locator("td.answer-accepted").inner_text() == "450"
    assert lines.nth(2).locator("td.answer-reason").inner_text() == "Kırık tuğla"
    assert reply.receipt_number in page.locator("#dispatch-receipt").inner_text()
    screenshot(page, "dispatch-note-answered")

    # The answer went to the platform exactly once.
    assert RemoteCall.objects.filter(operation="dispatch.reply_partial_accept").count() == 1
    assert rq_worker.poll() is None, output(rq_worker)
