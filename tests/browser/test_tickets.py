"""An event ticket in a real browser, against the sandbox over HTTP and a real RQ worker process:
the accountant fills the form with one field wrong and sees the error on it, fixes it, sends the ticket
and watches it become approved once the worker has pushed it and the poll has run; cancels it; starts
an Excel export and downloads the file."""

import io
import os
import re
import zipfile

import pytest
from django.contrib.auth.models import Group
from django.utils import timezone

from backoffice.core.choices import Role, SyncState
from backoffice.tickets.choices import TicketStatus
from backoffice.tickets.models import EventTicket
from tests.browser.conftest import CHROMIUM, screenshot, sign_in
from tests.conftest import make_user
from tests.testapp.testing import output, running_worker
from tests.tickets.conftest import VKN

pytestmark = [
    pytest.mark.browser,
    pytest.mark.worker,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's Chromium at /usr/bin/chromium"),
    pytest.mark.django_db(transaction=True),
]

WORKER_ENV = {"TICKET_POLL_DELAY_SECONDS": "1", "TICKET_EXPORT_POLL_SECONDS": "1", "JOB_RETRY_BASE_SECONDS": "1"}


@pytest.fixture
def rq_worker():
    with running_worker(WORKER_ENV) as process:
        yield process


def examples(company):
    """A few tickets already on the platform, so that the list looks like a working day."""
    now = timezone.now()
    rows = [("Gece Konseri", "Mehmet", "Kaya", TicketStatus.APPROVED, "1840.00"),
            ("Çocuk Tiyatrosu", "Elif", "Şahin", TicketStatus.ERROR, "360.00"),
            ("Caz Akşamı", "Can", "Öztürk", TicketStatus.DRAFT, "720.50")]
    for index, (event, first, last, status, payable) in enumerate(rows, start=1):
        EventTicket.objects.create(
            company=company, ticket_number=f"KNS2026{index:09d}", prefix="KNS", ticket_date=now, payment_type="NAKIT",
            customer_first_name=first, customer_last_name=last, event_name=event, event_location="Salon B",
            event_city_id=6, event_municipality="Çankaya", event_organizer_vkn_tckn=VKN, seat_number=f"A-{index}",
            remote_id=f"00000000-0000-0000-0000-00000000000{index}", remote_status=status,
            sync_state=SyncState.SYNCED, payable_amount=payable, total_amount=payable)


@pytest.mark.slow
def test_event_ticket_from_form_to_approval_cancel_and_export(live_server, browser_page, sandbox,  # noqa: F811
                                                              make_sandbox_company, rq_worker):
    """Slow (over 10 s): one user's whole day with an event ticket in a real browser, through a real worker and the
    sandbox's settling: form, send, approval, cancel, export."""
    for role in Role:
        Group.objects.get_or_create(name=role.value)
    sandbox.configure(ticket_processing_seconds=1, export_ready_seconds=2)
    company = make_sandbox_company(name="Anadolu Etkinlik A.Ş.")
    make_user("zeynep", "accounting", [company])
    examples(company)
    page = browser_page

    sign_in(page, live_server, "zeynep")

    # The form: one field wrong (the organizer's id has 5 digits), the totals follow the typing.
    page.goto(f"{live_server.url}/tickets/event/add/")
    page.fill("#id_prefix", "etk")
    page.select_option("#id_payment_type", "KREDIKARTI")
    page.fill("#id_event_name", "Bahar Konseri")
    page.fill("#id_event_time", "2026-12-20T20:00")
    page.fill("#id_seat_number", "B-12")
    page.fill("#id_event_location", "Salon A")
    page.select_option("#id_event_city_id", "34")
    page.fill("#id_event_municipality", "Kadıköy")
    page.fill("#id_event_organizer_vkn_tckn", "12345")
    page.fill("#id_customer_first_name", "Ayşe")
    page.fill("#id_customer_last_name", "Yılmaz")
    page.fill("#id_lines-0-service_description", "Salon bileti")
    page.fill("#id_lines-0-amount", "250")
    page.fill("#id_lines-0-discount_rate", "10")
    page.fill("#id_lines-0-vat_rate", "20")
    page.click("[data-add-line]")
    page.fill("#id_lines-1-service_description", "Hizmet bedeli")
    page.fill("#id_lines-1-amount", "10.05")
    page.fill("#id_lines-1-vat_rate", "20")
    totals = page.locator("#ticket-totals")
    page.wait_for_function("() => document.querySelector('[data-total=payable_amount]').textContent.trim() === '282,06'")
    assert totals.locator("[data-total=total_vat]").inner_text() == "47,01"
    assert totals.locator("[data-total=total_discount]").inner_text() == "25,00"
    page.click("button[name=requested_status][value='20']")

    organizer = page.locator("#id_event_organizer_vkn_tckn")
    page.wait_for_selector("#id_event_organizer_vkn_tckn_errors")
    assert "is-invalid" in organizer.get_attribute("class")
    assert page.locator(".is-invalid").count() == 1  # only that field
    assert not EventTicket.objects.filter(prefix="ETK").exists()
    # The rest of the form came back as typed, totals recomputed by the server.
    assert page.locator("#id_event_name").input_value() == "Bahar Konseri"
    assert totals.locator("[data-total=payable_amount]").inner_text() == "282,06"
    organizer.scroll_into_view_if_needed()
    screenshot(page, "ticket-form")

    organizer.fill(VKN)
    page.click("button[name=requested_status][value='20']")
    page.wait_for_url(re.compile(r".*/tickets/event/\d+/$"))  # not add/
    ticket = EventTicket.objects.get(prefix="ETK")
    assert ticket.ticket_number == f"ETK{timezone.localdate().year}000000001"
    assert page.locator("h1 .font-monospace").inner_text() == ticket.ticket_number

    # The worker pushes it (queued, 20); the poll it schedules finds it approved; the page follows.
    try:
        page.wait_for_selector(f"#ticket-status[data-status='{TicketStatus.APPROVED}']", timeout=60_000)
    except Exception:
        raise AssertionError("not approved in time\n" + output(rq_worker)[-4000:]) from None
    assert page.locator("#ticket-ettn").inner_text() == EventTicket.objects.get(pk=ticket.pk).remote_id

    page.goto(f"{live_server.url}/tickets/event/")
    page.wait_for_selector("#object-list tbody tr")
    assert page.locator("#object-list tbody tr").count() == 4
    screenshot(page, "ticket-list")

    # Cancel: a confirmation first, then the platform says cancelled (100).
    page.click(f"#object-list a:has-text('{ticket.ticket_number}')")
    page.click("button[data-action=cancel]")
    page.wait_for_selector("form input[name=confirm]", state="attached")
    assert ticket.ticket_number in page.locator(".confirm-list").inner_text()
    page.click("form:has(input[name=confirm]) button[type=submit]")
    page.wait_for_url(f"**/tickets/event/{ticket.pk}/")
    try:
        page.wait_for_selector(f"#ticket-status[data-status='{TicketStatus.CANCELLED}']", timeout=60_000)
    except Exception:
        raise AssertionError("not cancelled in time\n" + output(rq_worker)[-4000:]) from None
    assert page.locator("button[data-action=cancel]").count() == 0

    # Export: the platform prepares it, the worker fetches it, the page offers the file.
    page.click(".tickets-tabs a[href$='/tickets/exports/']")
    page.click("a[href$='/tickets/exports/new/event/']")
    page.click("#export-form button[type=submit]")
    page.wait_for_url("**/tickets/exports/*/")
    try:
        page.wait_for_selector("#export-download", timeout=60_000)
    except Exception:
        raise AssertionError("export not ready in time\n" + output(rq_worker)[-4000:]) from None
    with page.expect_download() as info:
        page.click("#export-download")
    download = info.value
    assert download.suggested_filename.endswith(".zip")
    with open(download.path(), "rb") as handle, zipfile.ZipFile(io.BytesIO(handle.read())) as archive:
        assert any(name.endswith(".xlsx") for name in archive.namelist())
    assert rq_worker.poll() is None, output(rq_worker)
