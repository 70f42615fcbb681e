"""A passenger list in a real browser, against the sandbox over HTTP and a real RQ worker process: three
passenger tickets of one expedition are issued (services + worker: pushed, polled until approved); the
accountant filters the passenger-ticket list to the expedition, selects all and builds its list in one
action, sees the list with its tickets and totals once the worker has sent it, starts its Excel export
and downloads the file."""

import io
import os
import zipfile
from datetime import datetime
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth.models import Group
from openpyxl import load_workbook

from backoffice.core.choices import Role, SyncState
from backoffice.passenger_lists.models import PassengerList
from backoffice.tickets import services as ticket_services
from backoffice.tickets.choices import TicketStatus
from backoffice.tickets.models import PassengerTicket
from tests.browser.conftest import CHROMIUM, screenshot, sign_in
from tests.conftest import make_user
from tests.testapp.testing import output, running_worker, wait_for
from tests.tickets.conftest import TCKN, TCKN_2

pytestmark = [
    pytest.mark.browser,
    pytest.mark.worker,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's Chromium at /usr/bin/chromium"),
    pytest.mark.django_db(transaction=True),
]

WORKER_ENV = {"TICKET_POLL_DELAY_SECONDS": "1", "PASSENGER_LIST_EXPORT_POLL_SECONDS": "1",
              "PASSENGER_LIST_TICKET_WAIT_SECONDS": "1", "JOB_RETRY_BASE_SECONDS": "1"}
EXPEDITION = datetime(2026, 12, 24, 22, 30, tzinfo=ZoneInfo("Europe/Istanbul"))
OPERATOR = {"vehicle_operating_vkn_tckn": "1234567890", "vehicle_operating_title": "Kervan Turizm A.Ş.",
            "vehicle_operating_tax_center": "Esenler", "commission_amount": Decimal("45.00"),
            "commission_tax_amount": Decimal("9.00")}
PASSENGERS = (("Ayşe", "Yılmaz", "3", TCKN, "650.00"), ("Mehmet", "Kaya", "4", TCKN_2, "650.00"),
              ("Elif", "Demir", "17", "U12345678", "520.00"))


@pytest.fixture
def rq_worker():
    with running_worker(WORKER_ENV) as process:
        yield process


def issue(company, first, last, seat, identifier, amount, number="K-2412"):
    row = PassengerTicket(company=company, prefix="KRV", ticket_date=EXPEDITION, payment_type="KREDIKARTI",
                          identifier=identifier, customer_first_name=first, customer_last_name=last,
                          vehicle_plate="34KRV2024", expedition_number=number, expedition_time=EXPEDITION,
                          departure_date=EXPEDITION, departure_location="İstanbul Esenler Otogarı",
                          destination="Ankara AŞTİ", seat_number=seat, **OPERATOR)
    lines = [{"service_description": "Yolcu bileti", "amount": Decimal(amount), "vat_rate": Decimal("10"),
              "taxes": []}]
    return ticket_services.ticket_create(ticket=row, lines=lines, requested_status=TicketStatus.QUEUED)


@pytest.mark.slow
def test_build_a_passenger_list_see_its_totals_export_and_download(live_server, browser_page, sandbox,  # noqa: F811
                                                                   make_sandbox_company, rq_worker):
    """Slow (over 10 s): a whole flow in a real browser through a real worker and the sandbox."""
    for role in Role:
        Group.objects.get_or_create(name=role.value)
    # Tickets settle (and lists are reported) a second after they are saved; exports are ready in two.
    sandbox.configure(ticket_processing_seconds=1, export_ready_seconds=2)
    company = make_sandbox_company(name="Kervan Turizm A.Ş.")
    make_user("selin", "accounting", [company])
    tickets = [issue(company, *passenger) for passenger in PASSENGERS]
    other = issue(company, "Can", "Öztürk", "9", "U87654321", "480.00", number="K-2413")  # another expedition
    try:
        wait_for(lambda: PassengerTicket.objects.filter(remote_status=TicketStatus.APPROVED).count() == 4,
                 timeout=60, message="the tickets to be approved")
    except AssertionError:
        raise AssertionError("tickets not approved in time\n" + output(rq_worker)[-4000:]) from None
    page = browser_page

    sign_in(page, live_server, "selin")

    # The passenger-ticket list, filtered to the expedition; select all and build its list in one action.
    page.goto(f"{live_server.url}/tickets/passenger/?expedition_number=K-2412")
    page.wait_for_selector("#object-list tbody tr")
    assert page.locator("#object-list tbody tr").count() == 3
    page.check("#object-list th input[data-select-all]")
    page.click("button[data-bulk-action=passenger_list]")
    page.wait_for_selector("#list-form")
    assert page.locator("#id_expedition_number").input_value() == "K-2412"
    assert page.locator("#id_vehicle_plate").input_value() == "34KRV2024"
    assert page.locator("#id_commission_amount").input_value() == "135,00"  # the three tickets' commissions
    assert page.locator("#build-tickets tbody tr").count() == 3
    assert other.ticket_number not in page.locator("#build-tickets").inner_text()
    page.click("#list-submit")

    # The worker sends it; the page follows until the platform has it.
    page.wait_for_url("**/passenger-lists/lists/*/")
    try:
        page.wait_for_selector(f"#list-sync-state[data-state='{SyncState.SYNCED}']", timeout=60_000)
    except Exception:
        raise AssertionError("list not sent in time\n" + output(rq_worker)[-4000:]) from None
    plist = PassengerList.objects.get()
    assert plist.remote_id and plist.passenger_list_number.startswith("YLS")
    assert page.locator("#list-number").inner_text() == plist.passenger_list_number
    assert page.locator("#list-ettn").inner_text() == plist.remote_id
    assert page.locator("#list-tickets tbody tr").count() == 3
    assert set(t.ticket_number for t in tickets) == set(
        page.locator("#list-tickets tbody tr td:first-child").all_inner_texts())
    totals = page.locator("#list-totals")
    assert totals.locator("[data-total=ticket_count]").inner_text() == "3"
    assert totals.locator("[data-total=total_payable_amount]").inner_text() == "2.002,00"  # (650+650+520) x 1.10
    assert totals.locator("[data-total=total_commission_amount]").inner_text() == "135,00"
    assert totals.locator("[data-total=total_commission_tax_amount]").inner_text() == "27,00"
    screenshot(page, "passenger-list")

    # Export: the platform prepares it, the worker fetches it, the page offers the file.
    page.click("#list-export")
    page.wait_for_url("**/passenger-lists/exports/*/")
    try:
        page.wait_for_selector("#export-download", timeout=60_000)
    except Exception:
        raise AssertionError("export not ready in time\n" + output(rq_worker)[-4000:]) from None
    with page.expect_download() as info:
        page.click("#export-download")
    download = info.value
    assert download.suggested_filename.endswith(".zip")
    with open(download.path(), "rb") as handle, zipfile.ZipFile(io.BytesIO(handle.read())) as archive:
        book = load_workbook(io.BytesIO(archive.read("yolcu-listeleri.xlsx")))
    [header, row] = list(book["Listeler"].values)
    assert (row[1], row[2], row[8], row[9], row[10]) == (plist.passenger_list_number, "K-2412", 3, 2002, 135)
    assert rq_worker.poll() is None, output(rq_worker)
