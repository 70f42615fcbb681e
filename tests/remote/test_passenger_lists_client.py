"""The passenger-list client through the sandbox with the real transport (services_for(company))."""

import datetime
import io
import zipfile
from zoneinfo import ZoneInfo

import pytest

from backoffice.core.platform import client_for
from backoffice.remote.errors import MaybeSent, RemoteError
from backoffice.remote.passenger_lists import PassengerListClient
from tests.remote.bundle import services_for
from tests.sandbox.test_tickets import passenger_ticket

ISTANBUL = ZoneInfo("Europe/Istanbul")


def a_list(**fields):
    body = {"expeditionNumber": "S100", "expeditionTime": datetime.datetime(2025, 6, 1, 8, 0, tzinfo=ISTANBUL),
            "vehiclePlate": "34 ABC 123", "isManualPlate": "false", "isNewList": True}
    body.update(fields)
    return body


@pytest.fixture
def client(sandbox, sandbox_company):
    sandbox.configure(ticket_processing_seconds=600, export_ready_seconds=0)
    platform = services_for(sandbox_company)
    for counter in (1, 2):
        platform.passenger_tickets.create(passenger_ticket(counter, status=20,
                                                           expeditionTime="2025-06-01T08:00:00+03:00"))
    return platform


def test_the_platform_client_has_passenger_lists(client):
    assert isinstance(client.passenger_lists, PassengerListClient) and client.passenger_lists.prefix == "passenger_list"


def test_save_query_and_update(client):
    lists = client.passenger_lists
    created = lists.save(a_list())
    assert set(created) == {"ettn", "passengerListNumber"} and created["passengerListNumber"].startswith("YLS")
    page = lists.query(1, 10)
    assert page["totalCount"] == 1 and page["items"][0]["id"] == created["ettn"]
    assert page["items"][0]["passengerListNumber"] == created["passengerListNumber"]
    assert lists.save(a_list(isNewList=False)) == created
    with pytest.raises(ValueError):
        lists.query(1, 501)


def test_refusals_carry_the_platforms_title_and_detail(client):
    with pytest.raises(RemoteError) as caught:
        client.passenger_lists.save(a_list(vehiclePlate="06 XYZ 99"))
    assert caught.value.permanent and caught.value.title == "No matching tickets"
    assert "06 XYZ 99" in caught.value.detail


def test_find_reconciles_a_create_that_timed_out_after_it_was_sent(client, sandbox, sandbox_company, settings):
    settings.PLATFORM_TIMEOUT = (5, 0.5)
    lists = client_for(sandbox_company, PassengerListClient)
    sandbox.add_fault(path="/ticket/v1/passenger-list", method="POST", timeout_seconds=2, timeout_after=True,
                      remaining=1)
    assert lists.find(expedition_number="S100", expedition_time="2025-06-01T08:00:00+03:00") is None
    with pytest.raises(MaybeSent):
        lists.save(a_list())
    # The same instant in UTC, and the plate in another spelling, find it.
    found = lists.find(expedition_number="S100", expedition_time="2025-06-01T05:00:00Z", vehicle_plate="34abc123")
    assert found is not None and found["passengerListNumber"].startswith("YLS")
    assert lists.find(expedition_number="S100", expedition_time="2025-06-01T05:00:00Z",
                      exclude={found["id"]}) is None
    assert lists.find(expedition_number="S101", expedition_time="2025-06-01T05:00:00Z") is None


def test_export_history_download_and_report(client, sandbox, sandbox_company):
    lists = client.passenger_lists
    created = lists.save(a_list())
    export_id = lists.export({"startDate": datetime.date(2025, 6, 1), "endDate": datetime.date(2025, 6, 1)})
    assert [item["exportId"] for item in lists.export_history()] == [export_id]
    with zipfile.ZipFile(io.BytesIO(lists.export_download(export_id))) as archive:
        assert archive.namelist() == ["yolcu-listeleri.xlsx"]
    sandbox.control("POST", "passenger-lists/report", {"customer_unique_id": str(sandbox_company.customer_unique_id)})
    today = datetime.datetime.now(ISTANBUL).date()
    [page] = list(lists.report_pages(today))
    assert page["totalCount"] == 1 and page["items"][0]["passengerListNumber"] == created["passengerListNumber"]
    assert page["items"][0]["totalPayableAmount"] == 1100
