"""Every passenger-list operation through the sandbox over HTTP: the job bodies are called here, in this
process (a real worker runs them in the browser test)."""

import io
import zipfile
from datetime import date, timedelta
from decimal import Decimal

import pytest
from django.urls import reverse
from django.utils import timezone
from openpyxl import load_workbook

from backoffice.core import jobs as core_jobs
from backoffice.core.choices import SyncState
from backoffice.core.exports import ExportError, ExportState
from backoffice.core.families import export_history_job, export_job, report_job, reports_nightly_job, reports_today_job
from backoffice.core.platform import client_for
from backoffice.core.reports import ReportState
from backoffice.passenger_lists import services
from backoffice.passenger_lists.choices import ListState
from backoffice.passenger_lists.families import LIST_EXPORTS, LIST_REPORTS
from backoffice.passenger_lists.models import (
    PassengerList,
    PassengerListExport,
    PassengerListReportItem,
    PassengerListReportRun,
)
from backoffice.remote.passenger_lists import PassengerListClient
from backoffice.tickets.models import PassengerTicket

from .conftest import EXPEDITION, OPERATOR, login, push, ticket

# The database engine matters here (list totals and bulk writes): CI's SQLite pass runs these too.
pytestmark = [pytest.mark.django_db, pytest.mark.database]

SAVE_PATH = "/ticket/v1/passenger-list"


@pytest.fixture
def slow(sandbox, settings):
    """Tickets stay queued (issued) and lists are reported ten minutes after their last save; exports are
    ready at once; our read timeout is short."""
    sandbox.configure(ticket_processing_seconds=600, export_ready_seconds=0)
    settings.PLATFORM_TIMEOUT = (5, 1.5)
    settings.MEDIA_ROOT = settings.MEDIA_ROOT / "test-passenger-lists"
    return sandbox


@pytest.fixture
def expedition(slow, sandbox_company):
    """Three tickets of expedition S-1001 on the platform (payable 440 each)."""
    return [push(ticket(sandbox_company, seat=str(seat))) for seat in (1, 2, 3)]


def build(company, user=None, **fields):
    plist = PassengerList(company=company, expedition_number="S-1001", expedition_time=EXPEDITION,
                          vehicle_plate="34ABC123", **fields)
    return services.passenger_list_create(plist=plist, user=user)


def send(plist):
    try:
        return services.passenger_list_push(plist.pk)
    finally:
        plist.refresh_from_db()


def saves(sandbox):
    return sum(row["count"] for row in sandbox.stats()["requests"]
               if row["method"] == "POST" and row["path"] == SAVE_PATH)


def report_now(sandbox, company):
    return sandbox.control("POST", "passenger-lists/report", {"customer_unique_id": str(company.customer_unique_id)})


def platform_report(company):
    today = timezone.localdate()
    return [item for page in client_for(company, PassengerListClient).report_pages(today) for item in page["items"]]


# --- create and update ------------------------------------------------------------------------------------

def test_build_from_the_selected_tickets_and_send(expedition, sandbox_company, accountant):
    found = services.expedition_of(company=sandbox_company, pks=[t.pk for t in expedition[:2]])
    assert (found.expedition_number, found.expedition_time, found.plates, found.existing) == (
        "S-1001", EXPEDITION, ["34ABC123"], None)
    assert found.initial["is_manual_plate"] is False
    plist = build(sandbox_company, user=accountant)
    # The list covers the whole expedition, not only the two selected tickets.
    assert plist.ticket_count == 3 and plist.total_payable_amount == Decimal("1320.00")
    assert set(plist.tickets.all()) == set(expedition)
    assert send(plist) == "Sent to the platform."
    assert plist.sync_state == SyncState.SYNCED and plist.remote_id and plist.passenger_list_number.startswith("YLS")
    [item] = client_for(sandbox_company, PassengerListClient).query()["items"]
    assert (item["id"], item["passengerListNumber"], item["vehiclePlate"]) == (
        plist.remote_id, plist.passenger_list_number, "34ABC123")


def test_tickets_of_two_expeditions_cannot_make_one_list(expedition, sandbox_company):
    other = push(ticket(sandbox_company, seat="9", number="S-2002"))
    with pytest.raises(services.PassengerListError, match="belong to 2"):
        services.expedition_of(company=sandbox_company, pks=[expedition[0].pk, other.pk])


def test_update_regroups_the_tickets_sold_since_with_is_new_list_false(expedition, sandbox, sandbox_company):
    plist = build(sandbox_company)
    send(plist)
    ettn, number = plist.remote_id, plist.passenger_list_number
    push(ticket(sandbox_company, seat="4", amount="100"))  # sold after the list was built
    for name, value in OPERATOR.items():
        setattr(plist, name, Decimal(value) if "commission" in name else value)
    services.passenger_list_update(plist=plist)
    assert services.passenger_list_payload(plist)["isNewList"] is False
    assert send(plist) == "Sent to the platform."
    assert (plist.remote_id, plist.passenger_list_number, plist.ticket_count) == (ettn, number, 4)
    # Commission and its VAT are the list's own when it names the vehicle operator.
    assert (plist.total_payable_amount, plist.total_commission_amount, plist.total_commission_tax_amount) == (
        Decimal("1430.00"), Decimal("120.50"), Decimal("24.10"))
    assert client_for(sandbox_company, PassengerListClient).query()["totalCount"] == 1
    report_now(sandbox, sandbox_company)
    [item] = platform_report(sandbox_company)
    assert (item["totalPayableAmount"], item["totalCommissionAmount"], item["totalCommissionTaxAmount"]) == (
        1430.0, 120.5, 24.1)  # the platform counts the same


def test_the_platform_refuses_a_list_when_no_ticket_matches_and_the_refusal_is_kept(expedition, sandbox_company,
                                                                                    client, accountant):
    # Here the tickets look issued with this plate, but the platform's tickets have another one.
    PassengerTicket.objects.filter(pk__in=[t.pk for t in expedition]).update(vehicle_plate="06XYZ99")
    plist = PassengerList(company=sandbox_company, expedition_number="S-1001", expedition_time=EXPEDITION,
                          vehicle_plate="06XYZ99")
    plist = services.passenger_list_create(plist=plist)
    with pytest.raises(Exception) as caught:
        send(plist)
    assert getattr(caught.value, "title", "") == "No matching tickets"
    assert plist.sync_state == SyncState.FAILED and plist.last_error.startswith("No matching tickets: No issued")
    login(client, accountant, sandbox_company)
    page = client.get(reverse("passenger_lists:passengerlist_detail", args=[plist.pk])).content.decode()
    assert "The platform refused" in page and "No matching tickets" in page


def test_no_matching_ticket_is_refused_here_before_sending(expedition, sandbox, sandbox_company):
    plist = PassengerList(company=sandbox_company, expedition_number="S-1001", expedition_time=EXPEDITION,
                          vehicle_plate="06XYZ99")
    with pytest.raises(services.PassengerListError) as caught:
        services.passenger_list_create(plist=plist)
    assert caught.value.field == "vehicle_plate" and not PassengerList.objects.exists()
    # Given by hand, the plate is stored on the list and the expedition's tickets are grouped.
    plist.is_manual_plate = True
    services.passenger_list_create(plist=plist)
    send(plist)
    assert plist.sync_state == SyncState.SYNCED and plist.ticket_count == 3
    assert client_for(sandbox_company, PassengerListClient).query()["items"][0]["vehiclePlate"] == "06XYZ99"
    assert saves(sandbox) == 1


# --- reported lists -----------------------------------------------------------------------------------------

def test_a_list_known_as_reported_is_refused_here(expedition, sandbox, sandbox_company):
    plist = build(sandbox_company)
    send(plist)
    report_now(sandbox, sandbox_company)
    run = LIST_REPORTS.request(company=sandbox_company, report_date=timezone.localdate())
    assert report_job("passenger_list_report_sync", run.pk) == "1 item stored."
    plist.refresh_from_db()
    assert plist.state == ListState.REPORTED and plist.reported_at and not plist.is_editable
    with pytest.raises(services.PassengerListError, match="was reported to the tax authority and cannot be updated"):
        services.passenger_list_update(plist=plist)
    assert saves(sandbox) == 1


def test_the_platforms_refusal_to_update_a_reported_list_is_shown(expedition, sandbox, sandbox_company, client,
                                                                  accountant):
    plist = build(sandbox_company)
    send(plist)
    sandbox.configure(clock_offset_seconds=601)  # the platform reported it meanwhile; we do not know yet
    services.passenger_list_update(plist=plist)
    with pytest.raises(Exception) as caught:
        send(plist)
    assert getattr(caught.value, "title", "") == "Update refused"
    assert plist.sync_state == SyncState.FAILED and plist.last_error.startswith("Update refused: Passenger list")
    login(client, accountant, sandbox_company)
    page = client.get(reverse("passenger_lists:passengerlist_detail", args=[plist.pk])).content.decode()
    assert "Update refused" in page and "a reported list cannot be updated" in page


# --- replacement --------------------------------------------------------------------------------------------

def test_building_again_replaces_the_old_list_which_stays_marked_replaced(expedition, sandbox, sandbox_company,
                                                                          client, accountant):
    old = build(sandbox_company)
    send(old)
    assert services.expedition_of(company=sandbox_company, pks=[expedition[0].pk]).existing == old
    new = services.passenger_list_rebuild(plist=old, user=accountant)
    old.refresh_from_db()
    assert old.state == ListState.SAVED  # until the platform has the new one
    send(new)
    old.refresh_from_db()
    assert (old.state, old.replaced_by, new.state) == (ListState.REPLACED, new, ListState.SAVED)
    assert new.remote_id != old.remote_id and new.ticket_count == 3
    assert [i["id"] for i in client_for(sandbox_company, PassengerListClient).query()["items"]] == [new.remote_id]
    with pytest.raises(services.PassengerListError, match="was replaced by"):
        services.passenger_list_update(plist=old)
    login(client, accountant, sandbox_company)
    page = client.get(reverse("passenger_lists:passengerlist_detail", args=[old.pk])).content.decode()
    assert f"Replaced by <a href=\"{new.get_absolute_url()}\">{new}</a>" in page
    assert f"Replaces <a href=\"{old.get_absolute_url()}\">{old}</a>" in client.get(
        reverse("passenger_lists:passengerlist_detail", args=[new.pk])).content.decode()


def test_a_reported_list_is_corrected_by_building_it_again(expedition, sandbox, sandbox_company):
    old = build(sandbox_company)
    send(old)
    report_now(sandbox, sandbox_company)
    report_job("passenger_list_report_sync", LIST_REPORTS.request(company=sandbox_company, report_date=timezone.localdate()).pk)
    new = services.passenger_list_rebuild(plist=PassengerList.objects.get(pk=old.pk))
    send(new)
    old.refresh_from_db()
    assert old.state == ListState.REPLACED and old.reported_at and old.replaced_by == new


# --- reconcile, waiting for tickets ---------------------------------------------------------------------------

def test_a_create_that_timed_out_after_it_was_sent_is_not_sent_twice(expedition, sandbox, sandbox_company):
    sandbox.add_fault(path=SAVE_PATH, method="POST", timeout_seconds=3, timeout_after=True, remaining=1)
    plist = build(sandbox_company)
    with pytest.raises(Exception) as caught:
        send(plist)
    assert type(caught.value).__name__ == "MaybeSent" and plist.sync_state == SyncState.QUEUED
    assert send(plist) == "Found on the platform; not sent again."
    assert plist.sync_state == SyncState.SYNCED and plist.passenger_list_number.startswith("YLS")
    [item] = client_for(sandbox_company, PassengerListClient).query()["items"]  # one list: the create was not repeated
    assert item["id"] == plist.remote_id


def test_the_push_waits_for_tickets_still_being_sent(slow, sandbox, sandbox_company):
    waiting = ticket(sandbox_company)  # queued here, not on the platform yet
    plist = build(sandbox_company)
    assert plist.ticket_count == 1
    with pytest.raises(core_jobs.TryLater):
        send(plist)
    assert plist.sync_state == SyncState.QUEUED and saves(sandbox) == 0
    push(waiting)
    assert send(plist) == "Sent to the platform."


# --- the platform's lists -----------------------------------------------------------------------------------

def test_query_sync_brings_lists_built_elsewhere(expedition, sandbox_company):
    ours = build(sandbox_company)
    send(ours)
    lists = client_for(sandbox_company, PassengerListClient)
    for index in range(2):
        push(ticket(sandbox_company, seat="7", number=f"S-30{index}"))
        lists.save({"expeditionNumber": f"S-30{index}", "expeditionTime": EXPEDITION.isoformat(),
                    "vehiclePlate": "34 ABC 123", "isManualPlate": "false", "isNewList": True})
    assert services.passenger_lists_query(sandbox_company.pk) == "2 new passenger lists from the platform."
    elsewhere = PassengerList.objects.get(expedition_number="S-300")
    assert (elsewhere.sync_state, elsewhere.ticket_count, elsewhere.is_new_list) == (SyncState.SYNCED, 1, False)
    assert elsewhere.passenger_list_number.startswith("YLS") and elsewhere.platform_created
    assert services.passenger_lists_query(sandbox_company.pk).startswith("0 new")
    assert PassengerList.objects.count() == 3


# --- exports ----------------------------------------------------------------------------------------------

def test_export_of_a_list_is_fetched_and_kept(expedition, sandbox_company):
    plist = build(sandbox_company)
    send(plist)
    export = LIST_EXPORTS.start(company=sandbox_company, filters={"ids": [plist.remote_id]})
    assert export_job("passenger_list_export", export.pk).startswith("Export downloaded")
    export.refresh_from_db()
    assert export.state == ExportState.READY and export.file_name.startswith("yolcu-listeleri")
    with export.file.open("rb") as handle, zipfile.ZipFile(io.BytesIO(handle.read())) as archive:
        book = load_workbook(io.BytesIO(archive.read("yolcu-listeleri.xlsx")))
    rows = list(book["Listeler"].values)
    assert len(rows) == 2 and rows[1][1] == plist.passenger_list_number and rows[1][9] == 1320
    assert len(list(book["Biletler"].values)) == 4


def test_export_by_expedition_range_and_its_24_hours(expedition, sandbox, sandbox_company):
    from backoffice.passenger_lists.forms import PassengerListExportForm

    form = PassengerListExportForm(data={"startDate": "2026-05-20", "endDate": "2026-05-21"})
    assert form.is_valid()
    filters = form.export_filters()
    assert filters == {"startDate": "2026-05-20T00:00:00+03:00", "endDate": "2026-05-21T00:00:00+03:00"}
    sandbox.configure(export_ready_seconds=3600)
    export = LIST_EXPORTS.start(company=sandbox_company, filters=filters)
    with pytest.raises(core_jobs.TryLater):
        export_job("passenger_list_export", export.pk)
    sandbox.configure(clock_offset_seconds=25 * 3600)  # a day later: the file is gone
    assert "24 hours" in export_job("passenger_list_export", export.pk)
    export.refresh_from_db()
    assert export.state == ExportState.EXPIRED and not export.file


def test_export_history_shows_exports_started_elsewhere(expedition, sandbox_company, client, accountant):
    export_id = client_for(sandbox_company, PassengerListClient).export({})
    assert export_history_job("passenger_list_export", sandbox_company.pk) == "1 new export in the history."
    export = PassengerListExport.objects.get(export_id=export_id)
    assert export.state == ExportState.AVAILABLE
    LIST_EXPORTS.fetch_request(export=export)
    export_job("passenger_list_export", export.pk)
    export.refresh_from_db()
    assert export.state == ExportState.READY
    login(client, accountant, sandbox_company)
    download = client.get(reverse("passenger_lists:passengerlistexport_download", args=[export.pk]))
    assert download.status_code == 200 and b"".join(download.streaming_content)[:2] == b"PK"
    old = PassengerListExport.objects.create(company=sandbox_company, state=ExportState.AVAILABLE, export_id="x",
                                             platform_created=timezone.now() - timedelta(hours=25))
    assert LIST_EXPORTS.expire() == 1
    old.refresh_from_db()
    with pytest.raises(ExportError, match="older than 24 hours|Only an export waiting"):
        LIST_EXPORTS.fetch_request(export=old)


# --- the by-date report --------------------------------------------------------------------------------------

def test_report_walks_every_page_and_marks_the_lists_it_names_reported(expedition, sandbox, sandbox_company, client,
                                                                       accountant):
    plist = build(sandbox_company)
    send(plist)
    day = timezone.localdate()
    sandbox.add_report_items("passenger_list", day, 1001, customer_unique_id=str(sandbox_company.customer_unique_id))
    report_now(sandbox, sandbox_company)
    run = LIST_REPORTS.request(company=sandbox_company, report_date=day)
    assert LIST_REPORTS.request(company=sandbox_company, report_date=day) == run  # one fetch at a time
    assert report_job("passenger_list_report_sync", run.pk) == "1002 items stored."
    run.refresh_from_db()
    assert (run.state, run.pages_done, run.total_pages, run.total_count, run.is_current) == (
        ReportState.DONE, 3, 3, 1002, True)
    ours = PassengerListReportItem.objects.get(passenger_list_number=plist.passenger_list_number)
    assert (ours.total_payable_amount, ours.expedition_number, ours.expedition_time) == (
        Decimal("1320.00"), "S-1001", EXPEDITION)
    plist.refresh_from_db()
    assert plist.state == ListState.REPORTED

    again = LIST_REPORTS.request(company=sandbox_company, report_date=day)
    report_job("passenger_list_report_sync", again.pk)
    assert PassengerListReportItem.objects.count() == 1002
    assert list(PassengerListReportRun.objects.values_list("pk", flat=True)) == [again.pk]

    login(client, accountant, sandbox_company)
    url = reverse("passenger_lists:passengerlistreportitem_list")
    page = client.get(url, {"date": day.isoformat()})
    totals = page.context["totals"]
    assert totals["count"] == 1002 and totals["total_payable_amount"] == sum(
        PassengerListReportItem.objects.values_list("total_payable_amount", flat=True))
    excel = client.get(url, {"date": day.isoformat(), "export": "xlsx"})
    assert excel.status_code == 200 and f"passenger-list-report-{day:%Y-%m-%d}" in excel["Content-Disposition"]


def test_an_empty_report_is_not_an_error(slow, sandbox_company):
    run = LIST_REPORTS.request(company=sandbox_company, report_date=date(2026, 1, 2))
    assert report_job("passenger_list_report_sync", run.pk) == "0 items stored."
    run.refresh_from_db()
    assert (run.state, run.total_count) == (ReportState.DONE, 0)


def test_cron_fetches_todays_report_only_for_companies_with_lists_not_known_as_reported(company, other_company):
    PassengerList.objects.create(company=company, expedition_number="S", expedition_time=EXPEDITION,
                                 vehicle_plate="34ABC123", remote_id="e-1", sync_state=SyncState.SYNCED)
    PassengerList.objects.create(company=other_company, expedition_number="S", expedition_time=EXPEDITION,
                                 vehicle_plate="34ABC123", remote_id="e-2", state=ListState.REPORTED)
    assert reports_today_job("passenger_list_report_sync") == 1
    assert list(PassengerListReportRun.objects.values_list("company", "report_date")) == [
        (company.pk, timezone.localdate())]
    assert reports_nightly_job("passenger_list_report_sync") == 2
