"""Every ticket operation through the sandbox over HTTP: the job bodies are called here, in this process
(the runner itself is tested in tests/core; a real worker runs push and poll in test_worker.py)."""

import io
import zipfile
from datetime import date, datetime, time, timedelta
from unittest import mock
from decimal import Decimal

import pytest
from django.urls import reverse
from django.utils import timezone, translation

from backoffice.core import actions
from backoffice.core.choices import SyncState
from backoffice.core.exports import ExportError, ExportState
from backoffice.core.families import daily_slot, export_job, report_job, reports_daily_job
from backoffice.core.models import RemoteCall
from backoffice.core.platform import client_for
from backoffice.core.provinces import PROVINCES
from backoffice.core.reports import ReportState
from backoffice.remote.errors import RemoteError
from backoffice.remote.tickets import CitiesClient, EventTicketClient
from backoffice.tickets import services
from backoffice.tickets.choices import TicketKind, TicketStatus
from backoffice.tickets.families import TICKET_EXPORTS, TICKET_REPORTS
from backoffice.tickets.models import (
    EventTicket,
    EventTicketReportItem,
    PassengerTicket,
    PassengerTicketReportItem,
    ReportRun,
    TicketExport,
)
from tests.testapp.testing import wait_for

from .conftest import TCKN, VKN, login

pytestmark = pytest.mark.django_db

CREATE_PATH = "/ticket/v1/event-ticket"


@pytest.fixture(autouse=True)
def english():
    with translation.override("en"):
        yield


@pytest.fixture
def fast(sandbox, settings):
    """Queued tickets settle at once, exports are ready at once; our read timeout is short."""
    sandbox.configure(ticket_processing_seconds=0, export_ready_seconds=0)
    settings.PLATFORM_TIMEOUT = (5, 1.5)
    settings.MEDIA_ROOT = settings.MEDIA_ROOT / "test-tickets"
    return sandbox


def new_event(company, *, status=TicketStatus.DRAFT, prefix="ETK", payment_type="KREDIKARTI", **fields):
    ticket = EventTicket(
        company=company, prefix=prefix, ticket_date=timezone.now(), payment_type=payment_type,
        customer_first_name="Ayşe", customer_last_name="Yılmaz", seat_number="B-12", event_name="Bahar Konseri",
        event_location="Salon A", event_city_id=34, event_city="İstanbul", event_municipality="Kadıköy",
        event_organizer_vkn_tckn=VKN, event_time=timezone.now() + timedelta(days=3), **fields)
    lines = [{"service_description": "Bilet", "amount": Decimal("250.00"), "discount_rate": Decimal("10"),
              "vat_rate": Decimal("20"), "taxes": [{"tax_code": "9021", "tax_name": "ÖİV", "taxt_rate": Decimal("5")}]}]
    return services.ticket_create(ticket=ticket, lines=lines, notes=["Kapı 3"], requested_status=status)


def new_passenger(company, *, status=TicketStatus.DRAFT, **fields):
    ticket = PassengerTicket(
        company=company, prefix="YLC", ticket_date=timezone.now(), payment_type="NAKIT", identifier=TCKN,
        vehicle_plate="34ABC123", expedition_number="S-1001", expedition_time=timezone.now(),
        departure_date=timezone.now(), departure_location="İstanbul", destination="Ankara", seat_number="14",
        **fields)
    lines = [{"service_description": "Yolcu", "amount": Decimal("400"), "vat_rate": Decimal("10"), "taxes": []}]
    return services.ticket_create(ticket=ticket, lines=lines, requested_status=status)


def push(ticket):
    push_job = services.event_ticket_push if isinstance(ticket, EventTicket) else services.passenger_ticket_push
    try:
        return push_job(ticket.pk)
    finally:
        ticket.refresh_from_db()


def poll(company):
    services.tickets_poll(company.pk)


def creates(sandbox, path=CREATE_PATH):
    return sum(row["count"] for row in sandbox.stats()["requests"] if row["method"] == "POST" and row["path"] == path)


# --- create, update, reconcile ------------------------------------------------------------------------

def test_create_as_draft(fast, sandbox_company):
    ticket = new_event(sandbox_company)
    assert push(ticket) == "Sent to the platform."
    assert ticket.sync_state == SyncState.SYNCED and ticket.remote_status == TicketStatus.DRAFT
    remote = client_for(sandbox_company, EventTicketClient).get(ticket.remote_id)
    assert remote["status"] == 0 and remote["ticketNumber"] == ticket.ticket_number
    assert remote["prefix"] == "ETK" and remote["currencyCode"] == "TRY" and remote["eventCityId"] == 34
    [line] = remote["ticketLines"]
    assert (line["amount"], line["discountAmount"], line["vatAmount"]) == (250, 25, 45)
    assert line["taxes"] == [{"taxCode": "9021", "taxName": "ÖİV", "taxtRate": 5, "taxtAmount": 11.25}]
    assert remote["notes"] == [{"note": "Kapı 3"}]


def test_create_queued_is_polled_until_approved(fast, sandbox_company):
    event, passenger = new_event(sandbox_company, status=TicketStatus.QUEUED), new_passenger(
        sandbox_company, status=TicketStatus.QUEUED)
    push(event)
    push(passenger)
    assert event.remote_status == passenger.remote_status == TicketStatus.QUEUED
    poll(sandbox_company)
    event.refresh_from_db()
    passenger.refresh_from_db()
    assert event.remote_status == passenger.remote_status == TicketStatus.APPROVED
    assert not services.tickets_waiting(company=sandbox_company)


def test_error_status_keeps_the_platforms_message(fast, sandbox_company):
    fast.configure(ticket_error_rate=1)
    ticket = new_event(sandbox_company, status=TicketStatus.QUEUED)
    push(ticket)
    poll(sandbox_company)
    ticket.refresh_from_db()
    assert ticket.remote_status == TicketStatus.ERROR and "doğrulama hatası" in ticket.status_message
    assert ticket.is_editable


def test_polling_goes_in_batches_oldest_first(fast, sandbox_company):
    tickets = [new_event(sandbox_company, status=TicketStatus.QUEUED) for _ in range(5)]
    for ticket in tickets:
        push(ticket)
    changed = services.ticket_statuses_poll(company=sandbox_company, model=EventTicket, batch_size=2)
    assert changed == 2
    assert services.ticket_statuses_poll(company=sandbox_company, model=EventTicket, batch_size=2) == 2
    assert services.ticket_statuses_poll(company=sandbox_company, model=EventTicket, batch_size=2) == 1
    assert set(EventTicket.objects.values_list("remote_status", flat=True)) == {TicketStatus.APPROVED}


def test_a_push_that_times_out_after_the_platform_received_it_is_not_sent_twice(fast, sandbox_company):
    fast.add_fault(path=CREATE_PATH, method="POST", timeout_seconds=3, timeout_after=True, remaining=1)
    ticket = new_event(sandbox_company)
    with pytest.raises(RemoteError) as info:
        push(ticket)
    assert info.type.__name__ == "MaybeSent"
    assert ticket.sync_state == SyncState.QUEUED and ticket.remote_id == ""  # waits for the retry
    assert push(ticket) == "Found on the platform; not sent again."
    assert ticket.sync_state == SyncState.SYNCED and ticket.remote_id
    page = client_for(sandbox_company, EventTicketClient).list(1, 50)
    assert [item["ticketNumber"] for item in page["items"]] == [ticket.ticket_number]
    wait_for(lambda: creates(fast) == 1, timeout=10, message="the slow create to be logged")  # logged when answered
    assert creates(fast) == 1


def test_a_lost_create_is_sent_again_after_asking(fast, sandbox_company):
    # The request never reached the platform (timeout before it processed anything): reconcile finds
    # nothing, so the create is sent again, once.
    fast.add_fault(path=CREATE_PATH, method="POST", timeout_seconds=3, remaining=1)
    ticket = new_event(sandbox_company)
    with pytest.raises(RemoteError):
        push(ticket)
    assert push(ticket) == "Sent to the platform."
    assert len(client_for(sandbox_company, EventTicketClient).list(1, 50)["items"]) == 1


def test_a_refused_create_fails_with_the_platforms_words(fast, sandbox_company):
    ticket = new_event(sandbox_company)
    EventTicket.objects.filter(pk=ticket.pk).update(event_organizer_vkn_tckn="12")  # past our form
    with pytest.raises(RemoteError):
        push(ticket)
    assert ticket.sync_state == SyncState.FAILED
    assert "Validation failed" in ticket.last_error and "eventOrganizerVknTckn" in ticket.last_error


def test_update_in_draft_and_in_error(fast, sandbox_company):
    fast.configure(ticket_error_rate=1)
    ticket = new_event(sandbox_company, status=TicketStatus.QUEUED)
    push(ticket)
    poll(sandbox_company)
    ticket.refresh_from_db()
    assert ticket.remote_status == TicketStatus.ERROR
    ticket.event_name = "Yaz Konseri"
    ticket.seat_number = ""  # optional at update: the platform keeps the seat
    services.ticket_update(ticket=ticket, lines=[{"amount": Decimal("100"), "vat_rate": Decimal("20")}],
                           requested_status=TicketStatus.DRAFT)
    push(ticket)
    assert ticket.sync_state == SyncState.SYNCED and ticket.remote_status == TicketStatus.DRAFT
    remote = client_for(sandbox_company, EventTicketClient).get(ticket.remote_id)
    assert remote["eventName"] == "Yaz Konseri" and remote["status"] == 0 and remote["seatNumber"] == "B-12"
    assert remote["ticketLines"][0]["vatAmount"] == 20


def test_update_refused_outside_0_and_40(fast, sandbox_company):
    ticket = new_event(sandbox_company, status=TicketStatus.QUEUED)
    push(ticket)
    poll(sandbox_company)
    ticket.refresh_from_db()
    with pytest.raises(services.TicketError, match="only a draft"):
        services.ticket_update(ticket=ticket, lines=[], requested_status=TicketStatus.DRAFT)


# --- cancel and status change ---------------------------------------------------------------------------

def test_cancel_one_and_many(fast, sandbox_company):
    tickets = [new_event(sandbox_company, status=TicketStatus.QUEUED) for _ in range(3)]
    for ticket in tickets:
        push(ticket)
    poll(sandbox_company)
    run = services.tickets_cancel_request(tickets=EventTicket.objects.filter(pk=tickets[0].pk))
    assert run.name == "tickets_cancel"
    actions.action_job("tickets.eventticket", "cancel", [tickets[0].pk])
    services.tickets_cancel_request(tickets=EventTicket.objects.filter(pk__in=[t.pk for t in tickets[1:]]))
    assert actions.action_job("tickets.eventticket", "cancel", [t.pk for t in tickets[1:]]) == "2 tickets cancelled."
    assert list(EventTicket.objects.order_by().values_list("remote_status", "pending_action").distinct()) == [
        (TicketStatus.CANCELLED, "")]
    remote = client_for(sandbox_company, EventTicketClient).statuses([t.remote_id for t in tickets])
    assert {item["status"] for item in remote} == {100}


def test_cancel_refused_by_the_platform_keeps_title_and_detail(fast, sandbox_company, client, accountant):
    fast.configure(ticket_processing_seconds=3600)  # stays queued: the platform refuses to cancel it
    ticket = new_event(sandbox_company, status=TicketStatus.QUEUED)
    push(ticket)
    EventTicket.objects.filter(pk=ticket.pk).update(remote_status=TicketStatus.APPROVED)  # we think it is done
    services.tickets_cancel_request(tickets=[EventTicket.objects.get(pk=ticket.pk)])
    with pytest.raises(RemoteError) as info:
        actions.action_job("tickets.eventticket", "cancel", [ticket.pk])
    assert info.value.title == "Cancel refused"
    ticket.refresh_from_db()
    assert ticket.pending_action == ""
    assert ticket.last_error.startswith("Cancel refused: Ticket " + ticket.ticket_number)
    assert "queued and being processed" in ticket.last_error


def test_cancel_refused_locally_for_a_ticket_not_on_the_platform(company):
    ticket = new_event(company)
    with pytest.raises(services.TicketError, match="not on the platform yet"):
        services.tickets_cancel_request(tickets=[ticket])


def test_status_change_error_to_draft_and_draft_to_queued(fast, sandbox_company):
    fast.configure(ticket_error_rate=1)
    ticket = new_event(sandbox_company, status=TicketStatus.QUEUED)
    push(ticket)
    poll(sandbox_company)
    ticket.refresh_from_db()
    assert ticket.remote_status == TicketStatus.ERROR
    services.tickets_status_change_request(tickets=[ticket], status=TicketStatus.DRAFT)
    actions.action_job("tickets.eventticket", "draft", [ticket.pk])
    ticket.refresh_from_db()
    assert (ticket.remote_status, ticket.pending_action, ticket.status_message) == (TicketStatus.DRAFT, "", "")
    fast.configure(ticket_error_rate=0)
    services.tickets_status_change_request(tickets=[ticket], status=TicketStatus.QUEUED)
    actions.action_job("tickets.eventticket", "send", [ticket.pk])
    poll(sandbox_company)
    ticket.refresh_from_db()
    assert ticket.remote_status == TicketStatus.APPROVED


@pytest.mark.parametrize("status, target", [(TicketStatus.APPROVED, 0), (TicketStatus.ERROR, 20),
                                            (TicketStatus.QUEUED, 0), (TicketStatus.CANCELLED, 20)])
def test_status_change_refuses_other_transitions_before_asking(company, status, target):
    ticket = new_event(company)
    EventTicket.objects.filter(pk=ticket.pk).update(remote_id="e-1", remote_status=status)
    ticket.refresh_from_db()
    with pytest.raises(services.TicketError, match="Only tickets in status"):
        services.tickets_status_change_request(tickets=[ticket], status=target)
    with pytest.raises(services.TicketError, match="only be changed to draft"):
        services.tickets_status_change_request(tickets=[ticket], status=TicketStatus.APPROVED)


def test_status_change_refused_by_the_platform_shows_title_and_detail(fast, sandbox_company, client, accountant):
    ticket = new_event(sandbox_company, status=TicketStatus.QUEUED)
    push(ticket)
    poll(sandbox_company)  # approved on the platform, then cancelled there behind our back
    client_for(sandbox_company, EventTicketClient).cancel([ticket.remote_id])
    EventTicket.objects.filter(pk=ticket.pk).update(remote_status=TicketStatus.DRAFT)  # our mirror is behind
    ticket.refresh_from_db()
    services.tickets_status_change_request(tickets=[ticket], status=TicketStatus.QUEUED)
    with pytest.raises(RemoteError) as info:
        actions.action_job("tickets.eventticket", "send", [ticket.pk])
    assert info.value.title == "Status change refused" and "only draft (0) tickets" in info.value.detail
    ticket.refresh_from_db()
    assert ticket.last_error == f"Status change refused: {info.value.detail}"
    assert ticket.remote_status == TicketStatus.CANCELLED  # the statuses read after the refusal: the mirror learns
    login(client, accountant, sandbox_company)
    page = client.get(reverse("tickets:eventticket_detail", args=[ticket.pk])).content.decode()
    assert "The platform refused" in page and "Status change refused" in page and "only draft (0) tickets" in page


# --- HTML -------------------------------------------------------------------------------------------------

def test_html_in_both_layouts_and_the_page(fast, sandbox_company, client, accountant):
    ticket = new_event(sandbox_company)
    push(ticket)
    standard = services.ticket_html(ticket=ticket, standard=True)
    own = services.ticket_html(ticket=ticket, standard=False)
    assert ticket.ticket_number in standard and ticket.ticket_number in own and standard != own
    login(client, accountant, sandbox_company)
    url = reverse("tickets:eventticket_html", args=[ticket.pk])
    page = client.get(url)
    assert page.status_code == 200 and page["X-Frame-Options"] == "DENY"
    html = page.content.decode()
    assert '<iframe' in html and 'sandbox=""' in html and "srcdoc=\"&lt;" in html
    download = client.get(url, {"download": "1", "layout": "company"})
    assert download["Content-Disposition"] == f'attachment; filename="{ticket.ticket_number}.html"'
    assert download["Content-Security-Policy"].startswith("sandbox;") and download.content.decode() == own
    # The frame's HTML may style itself on this page only; script stays our own files.
    policy = {directive.strip() for directive in page["Content-Security-Policy"].split(";")}  # any order
    assert "style-src 'self' 'unsafe-inline'" in policy and "script-src 'self'" in policy
    assert "unsafe-inline" not in client.get(reverse("tickets:eventticket_detail", args=[ticket.pk]))[
        "Content-Security-Policy"]


def test_html_from_a_slow_platform_is_one_short_attempt_with_a_retry_button(fast, sandbox, sandbox_company, client,
                                                                              accountant, settings):
    ticket = new_event(sandbox_company)
    push(ticket)
    settings.PLATFORM_INTERACTIVE_READ_TIMEOUT = 0.5
    sandbox.add_fault(path="/ticket/v1/event-ticket/*/html/*", method="GET", latency_ms=3000)
    login(client, accountant, sandbox_company)
    before = RemoteCall.objects.filter(company=sandbox_company).count()
    page = client.get(reverse("tickets:eventticket_html", args=[ticket.pk]))
    assert page.status_code == 504
    html = page.content.decode()
    assert "did not answer within 0.5 seconds" in html and 'id="html-retry"' in html and "?layout=standard" in html
    calls = RemoteCall.objects.filter(company=sandbox_company).order_by("id")[before:]
    assert [(c.operation, c.status) for c in calls] == [("event_ticket.html", None)]  # one attempt, no retry


def test_html_of_a_ticket_the_platform_does_not_know_shows_the_error(fast, sandbox_company, client, accountant):
    ticket = new_event(sandbox_company)
    EventTicket.objects.filter(pk=ticket.pk).update(remote_id="00000000-0000-0000-0000-000000000001")
    login(client, accountant, sandbox_company)
    page = client.get(reverse("tickets:eventticket_html", args=[ticket.pk]))
    assert page.status_code == 502 and "Not Found" in page.content.decode()


# --- exports ----------------------------------------------------------------------------------------------

def run_export(export):
    return export_job("ticket_export", export.pk)


def test_export_is_fetched_and_kept(fast, sandbox_company):
    for _ in range(2):
        push(new_event(sandbox_company))
    export = TICKET_EXPORTS.start(company=sandbox_company, kind=TicketKind.EVENT,
                                   filters={"status": 0, "generateSummaryReport": True})
    assert run_export(export).startswith("Export downloaded")
    export.refresh_from_db()
    assert export.state == ExportState.READY and export.export_id and export.fetched_at
    with export.file.open("rb") as handle, zipfile.ZipFile(io.BytesIO(handle.read())) as archive:
        names = archive.namelist()
    assert any(name.endswith(".xlsx") for name in names) and len(names) == 2  # tickets + summary
    assert export.file_name.endswith(".zip") and export.size > 0


def test_an_export_not_ready_yet_is_asked_again_later(fast, sandbox_company):
    from backoffice.core.jobs import TryLater

    fast.configure(export_ready_seconds=3600)
    export = TICKET_EXPORTS.start(company=sandbox_company, kind=TicketKind.PASSENGER, filters={})
    with pytest.raises(TryLater):
        run_export(export)
    export.refresh_from_db()
    assert export.state == ExportState.PREPARING and export.export_id
    fast.configure(clock_offset_seconds=3601)  # an hour later on the platform: ready
    run_export(export)  # the export id is kept: not started a second time
    export.refresh_from_db()
    assert export.state == ExportState.READY
    starts = sum(r["count"] for r in fast.stats()["requests"] if r["path"].endswith("/passenger-ticket/export"))
    assert starts == 1


def test_an_export_past_its_24_hours_is_shown_expired(fast, sandbox_company):
    from backoffice.core.jobs import TryLater

    fast.configure(export_ready_seconds=3600)
    export = TICKET_EXPORTS.start(company=sandbox_company, kind=TicketKind.EVENT, filters={})
    with pytest.raises(TryLater):
        run_export(export)  # started on the platform, not ready
    fast.configure(clock_offset_seconds=25 * 3600)  # the platform's clock: a day later, the file is gone
    assert "24 hours" in run_export(export)
    export.refresh_from_db()
    assert export.state == ExportState.EXPIRED and not export.file


def test_export_history_shows_exports_started_elsewhere(fast, sandbox_company, client, accountant):
    export_id = client_for(sandbox_company, EventTicketClient).export({})
    assert TICKET_EXPORTS.history_sync(company=sandbox_company, kind=TicketKind.EVENT) == 1
    export = TicketExport.objects.get(export_id=export_id)
    assert export.state == ExportState.AVAILABLE and export.platform_created
    assert TICKET_EXPORTS.history_sync(company=sandbox_company, kind=TicketKind.EVENT) == 0
    TICKET_EXPORTS.fetch_request(export=export)
    run_export(export)
    export.refresh_from_db()
    assert export.state == ExportState.READY
    login(client, accountant, sandbox_company)
    download = client.get(reverse("tickets:ticketexport_download", args=[export.pk]))
    assert download.status_code == 200 and b"".join(download.streaming_content)[:2] == b"PK"
    detail = client.get(reverse("tickets:ticketexport_detail", args=[export.pk])).content.decode()
    assert "Download the ZIP" in detail and "hx-trigger" not in detail


def test_old_exports_expire_without_asking(company):
    old = TicketExport.objects.create(company=company, kind=TicketKind.EVENT, state=ExportState.AVAILABLE,
                                      export_id="x", platform_created=timezone.now() - timedelta(hours=25))
    fresh = TicketExport.objects.create(company=company, kind=TicketKind.EVENT, state=ExportState.AVAILABLE,
                                        export_id="y", platform_created=timezone.now())
    assert TICKET_EXPORTS.expire() == 1
    old.refresh_from_db()
    fresh.refresh_from_db()
    assert (old.state, fresh.state) == (ExportState.EXPIRED, ExportState.AVAILABLE)
    with pytest.raises(ExportError, match="older than 24 hours"):
        TicketExport.objects.filter(pk=old.pk).update(state=ExportState.AVAILABLE)
        old.refresh_from_db()
        TICKET_EXPORTS.fetch_request(export=old)


def test_export_start_view(client, accountant, company):
    login(client, accountant, company)
    url = reverse("tickets:ticketexport_start", args=["event"])
    response = client.post(url, {"status": "60", "startDate": "2026-03-01T00:00", "endDate": "2026-03-31T23:59",
                                 "generateSummaryReport": "on"})
    export = TicketExport.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("tickets:ticketexport_detail",
                                                                           args=[export.pk])
    assert export.filters == {"status": 60, "startDate": "2026-03-01T00:00:00+03:00",
                              "endDate": "2026-03-31T23:59:00+03:00", "generateSummaryReport": True}
    page = client.get(response["Location"]).content.decode()
    assert 'hx-trigger="every 2s"' in page and "export-progress" in page


# --- by-date reports --------------------------------------------------------------------------------------

def test_report_walks_every_page_and_replaces_the_previous_fetch(fast, sandbox_company, client, accountant):
    day = date(2026, 3, 14)
    fast.add_report_items("passenger_ticket", day, 1201, customer_unique_id=str(sandbox_company.customer_unique_id))
    run = TICKET_REPORTS.request(company=sandbox_company, kind=TicketKind.PASSENGER, report_date=day)
    assert report_job("ticket_report_sync", run.pk) == "1201 items stored."
    run.refresh_from_db()
    assert (run.state, run.pages_done, run.total_pages, run.total_count, run.item_count, run.is_current) == (
        ReportState.DONE, 3, 3, 1201, 1201, True)
    pages = [r for r in fast.stats()["requests"] if "passengerticketreport" in r["path"]]
    assert sum(r["count"] for r in pages) == 3
    item = PassengerTicketReportItem.objects.order_by("id").first()
    assert item.ticket_number == "BNC2026000000001" and item.total_amount == Decimal("100.00")
    assert item.expedition_number == "S0000" and item.report_date == day

    again = TICKET_REPORTS.request(company=sandbox_company, kind=TicketKind.PASSENGER, report_date=day)
    report_job("ticket_report_sync", again.pk)
    assert PassengerTicketReportItem.objects.count() == 1201
    assert list(ReportRun.objects.values_list("pk", flat=True)) == [again.pk]

    login(client, accountant, sandbox_company)
    url = reverse("tickets:passengerticketreportitem_list")
    page = client.get(url, {"date": "2026-03-14"})
    totals = page.context["totals"]
    assert totals["count"] == 1201 and totals["total_amount"] == sum(
        PassengerTicketReportItem.objects.values_list("total_amount", flat=True))
    excel = client.get(url, {"date": "2026-03-14", "export": "xlsx"})
    assert excel.status_code == 200 and "passenger-report-2026-03-14" in excel["Content-Disposition"]
    assert client.get(url, {"date": "2026-03-13"}).context["totals"]["count"] == 0


def test_an_empty_report_is_not_an_error(fast, sandbox_company):
    run = TICKET_REPORTS.request(company=sandbox_company, kind=TicketKind.EVENT, report_date=date(2026, 1, 2))
    assert report_job("ticket_report_sync", run.pk) == "0 items stored."
    run.refresh_from_db()
    assert (run.state, run.total_count, run.item_count) == (ReportState.DONE, 0, 0)


def test_a_report_without_the_listing_permission_says_which_permission(fast, db):
    """Document 1, section 5, rule 5: the ticket reports need the e-ticket listing permission; its absence is
    named, not a generic refusal."""
    from backoffice.core.models import Company

    customer = fast.add_customer(name="İzinsiz", api_key="sbx-no-listing", listing_permission=False)
    company = Company.objects.create(name="İzinsiz", environment="sandbox", api_key="sbx-no-listing",
                                     customer_unique_id=customer["customer_unique_id"])
    run = TICKET_REPORTS.request(company=company, kind=TicketKind.EVENT, report_date=date(2026, 1, 2))
    with pytest.raises(RemoteError):
        report_job("ticket_report_sync", run.pk)
    run.refresh_from_db()
    assert run.state == ReportState.FAILED
    assert "e-ticket listing permission" in run.message and "ticket reports need" in run.message


def test_a_report_walk_that_stopped_resumes_at_the_next_page(fast, sandbox_company):
    day = date(2026, 3, 15)
    fast.add_report_items("event_ticket", day, 1100, customer_unique_id=str(sandbox_company.customer_unique_id))
    run = TICKET_REPORTS.request(company=sandbox_company, kind=TicketKind.EVENT, report_date=day)
    # A first walk stored page 1 and stopped (worker gone): its progress was saved with the page.
    first = client_for(sandbox_company, EventTicketClient).report(day, 1, 500)
    TICKET_REPORTS.store_page(run=run, page_index=1, envelope=first)
    run = ReportRun.objects.get(pk=run.pk)
    assert (run.pages_done, run.item_count, run.state) == (1, 500, ReportState.QUEUED)
    report_job("ticket_report_sync", run.pk)
    run.refresh_from_db()
    assert (run.pages_done, run.item_count, run.state) == (3, 1100, ReportState.DONE)
    numbers = list(EventTicketReportItem.objects.values_list("ticket_number", flat=True))
    assert len(numbers) == len(set(numbers)) == 1100
    pages = sum(r["count"] for r in fast.stats()["requests"] if "eventticketreport" in r["path"])
    assert pages == 3  # page 1 was not asked again


def test_report_fetch_view_enqueues(client, accountant, company):
    login(client, accountant, company)
    response = client.post(reverse("tickets:eventticketreportitem_fetch"), {"date": "2026-03-14"})
    assert response.status_code == 302 and response["Location"].endswith("?date=2026-03-14")
    run = ReportRun.objects.get()
    assert (run.kind, run.report_date, run.state) == ("event", date(2026, 3, 14), ReportState.QUEUED)
    future = (timezone.localdate() + timedelta(days=2)).isoformat()
    client.post(reverse("tickets:eventticketreportitem_fetch"), {"date": future})
    assert ReportRun.objects.count() == 1


def test_cities_match_the_local_province_list(fast, sandbox_company):
    cities = client_for(sandbox_company, CitiesClient).list()
    assert {city["id"]: city["name"] for city in cities} == PROVINCES
    assert EventTicketReportItem.objects.count() == 0


# --- cron ---------------------------------------------------------------------------------------------------

def test_cron_polls_only_companies_with_queued_tickets_and_fetches_yesterdays_reports(company, other_company):
    from django_rq.cron import DjangoCronScheduler

    scheduler = DjangoCronScheduler()
    scheduler.load_config_from_file("backoffice.cron")
    registered = {job.name: (job.func_name, job.args, job.interval, job.cron) for job in scheduler.get_jobs()}
    assert registered["tickets_poll"] == ("backoffice.tickets.services.tickets_poll_all", (), 60, None)
    assert registered["ticket_report_sync_daily"] == ("backoffice.core.families.reports_daily_job",
                                                      ("ticket_report_sync",), 900, None)

    ticket = new_event(company)
    EventTicket.objects.filter(pk=ticket.pk).update(sync_state=SyncState.SYNCED, remote_id="e-1",
                                                    remote_status=TicketStatus.QUEUED)
    assert services.tickets_poll_all() == 1
    assert services.tickets_poll_all() == 0  # one poll waits already
    from backoffice.core.models import JobRun

    assert list(JobRun.objects.filter(name="tickets_poll").values_list("company", flat=True)) == [company.pk]
    yesterday = timezone.localdate() - timedelta(days=1)
    # Each company at its own time of day (document 1, section 8: spread over the day): only the ones whose
    # time has come, once; a time missed is caught up at the next look.
    early, late = sorted((company, other_company), key=lambda c: daily_slot(c.pk))
    midnight = timezone.make_aware(datetime.combine(timezone.localdate(), time()))
    with mock.patch("django.utils.timezone.localtime", lambda *a: midnight + timedelta(seconds=daily_slot(early.pk))):
        assert reports_daily_job("ticket_report_sync") == 2
        assert reports_daily_job("ticket_report_sync") == 0
    assert set(ReportRun.objects.values_list("company", "kind", "report_date")) == {
        (early.pk, k, yesterday) for k in ("event", "passenger")}
    with mock.patch("django.utils.timezone.localtime", lambda *a: midnight + timedelta(hours=23, minutes=59)):
        assert reports_daily_job("ticket_report_sync") == 2
    assert set(ReportRun.objects.values_list("company", "kind", "report_date")) == {
        (c.pk, k, yesterday) for c in (company, other_company) for k in ("event", "passenger")}


def test_daily_slots_spread_over_the_day_and_stay_put():
    slots = [daily_slot(pk) for pk in range(1, 2001)]
    assert slots == [daily_slot(pk) for pk in range(1, 2001)]  # stable
    assert min(slots) >= 1800 and max(slots) < 23 * 3600
    hours = {slot // 3600 for slot in slots}
    assert len(hours) >= 22  # not all at 02:30
    assert max(slots.count(s) for s in set(slots)) < 5


# --- many at once -------------------------------------------------------------------------------------------

def test_a_batch_push_sends_each_once_and_goes_on_after_a_refusal(fast, sandbox_company, settings):
    settings.TICKET_PUSH_CONCURRENCY = 1  # in this thread: the test's transaction is not visible to others
    # The refused one has a prefix of its own, pushed first: a refused number of a prefix leaves a gap the platform
    # refuses the next numbers for (document 2, 2.1: consecutive), see test_lanes.py.
    tickets = [new_event(sandbox_company, prefix=prefix) for prefix in ("ETK", "AAA", "ETK", "ETK")]
    EventTicket.objects.filter(pk=tickets[1].pk).update(event_organizer_vkn_tckn="12")  # the platform refuses it
    EventTicket.objects.filter(pk__in=[t.pk for t in tickets]).update(sync_state=SyncState.FAILED)
    [run] = services.tickets_queue(tickets=tickets)
    assert run.name == "tickets_push_batch"
    assert set(EventTicket.objects.values_list("sync_state", flat=True)) == {SyncState.QUEUED}
    assert services.tickets_push_batch("event", [t.pk for t in tickets]) == "3 tickets sent, 1 refused."
    states = dict(EventTicket.objects.values_list("pk", "sync_state"))
    assert states == {t.pk: SyncState.FAILED if t is tickets[1] else SyncState.SYNCED for t in tickets}
    assert "eventOrganizerVknTckn" in EventTicket.objects.get(pk=tickets[1].pk).last_error
    assert creates(fast) == 4
    # Run again (as after a retry): nothing is sent twice.
    assert services.tickets_push_batch("event", [t.pk for t in tickets]) == "Nothing to send."
    assert creates(fast) == 4


def test_a_batch_stops_at_a_transient_error_and_the_rest_waits(fast, sandbox_company, settings):
    settings.TICKET_PUSH_CONCURRENCY = 1
    tickets = [new_event(sandbox_company) for _ in range(3)]
    EventTicket.objects.update(sync_state=SyncState.LOCAL)
    services.tickets_queue(tickets=tickets)
    fast.add_fault(path=CREATE_PATH, method="POST", timeout_seconds=3, timeout_after=True, remaining=1)
    with pytest.raises(RemoteError):
        services.tickets_push_batch("event", [t.pk for t in tickets])
    assert set(EventTicket.objects.values_list("sync_state", flat=True)) == {SyncState.QUEUED}
    services.tickets_push_batch("event", [t.pk for t in tickets])  # the runner's retry
    assert set(EventTicket.objects.values_list("sync_state", flat=True)) == {SyncState.SYNCED}
    wait_for(lambda: creates(fast) == 3, timeout=10, message="the slow create to be logged")
    assert len(client_for(sandbox_company, EventTicketClient).list(1, 50)["items"]) == 3


# Document 2, 2.1: every paymentType value, written out here so that dropping one from the code fails a test.
DOCUMENTED_PAYMENT_TYPES = ("BANKAKARTI", "KREDIKARTI", "BEDELSIZ", "COKLU", "PUAN", "NAKIT", "PROMOSYON",
                            "ULASIMKARTI", "DIGER")


@pytest.mark.parametrize("payment_type", DOCUMENTED_PAYMENT_TYPES)
def test_every_documented_payment_type_is_offered_and_accepted(fast, sandbox_company, payment_type):
    from backoffice.tickets.choices import PaymentType
    from backoffice.tickets.forms import EventTicketForm

    assert payment_type in dict(EventTicketForm(company=sandbox_company).fields["payment_type"].choices)
    assert payment_type in PaymentType.values
    extra = {"payment_description": "Hediye çeki"} if payment_type == "DIGER" else {}
    ticket = new_event(sandbox_company, payment_type=payment_type, **extra)
    assert push(ticket) == "Sent to the platform."
    assert client_for(sandbox_company, EventTicketClient).get(ticket.remote_id)["paymentType"] == payment_type


def test_a_poll_asked_long_ago_follows_a_ticket_sent_just_now(fast, sandbox_company):
    """make chaos: pushes and actions that joined a poll queued a minute earlier (the worker was busy) were
    polled once before the platform settled them, and the poll stopped following because it was asked long
    ago. The follow-up now runs from the latest push or action (services.poll_follow)."""
    import django_rq

    from backoffice.core import jobs as core_jobs
    from backoffice.core.jobs import TryLater
    from backoffice.core.models import JobRun

    fast.configure(ticket_processing_seconds=3600)  # stays queued on the platform
    ticket = new_event(sandbox_company, status=TicketStatus.QUEUED)
    push(ticket)
    run = JobRun.objects.create(name="tickets_poll", company=sandbox_company,
                                enqueued_at=timezone.now() - timedelta(minutes=5))
    token = core_jobs._current_run.set(run)
    try:
        with pytest.raises(TryLater):  # the ticket was sent just now: ask again shortly
            services.tickets_poll(sandbox_company.pk)
        django_rq.get_connection("default").delete(services._follow_key(sandbox_company.pk))  # the window passed
        assert services.tickets_poll(sandbox_company.pk) == "0 tickets changed."  # left to the cron's minute
        services.poll_after([ticket])  # an action asks the same way
        with pytest.raises(TryLater):
            services.tickets_poll(sandbox_company.pk)
    finally:
        core_jobs._current_run.reset(token)
        django_rq.get_connection("default").delete(services._follow_key(sandbox_company.pk))
