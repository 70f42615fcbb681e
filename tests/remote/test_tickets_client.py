"""The ticket client through the sandbox with the real transport (services_for(company))."""

import datetime
import io
import json
import zipfile
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest
from openpyxl import load_workbook

from backoffice.core.platform import client_for
from backoffice.remote.common import jsonable
from backoffice.remote.errors import MaybeSent, RemoteError
from backoffice.remote.exports import ExportsAndReports
from backoffice.remote.tickets import PassengerTicketClient, TicketClient
from tests.remote.bundle import services_for
from tests.sandbox.test_tickets import event_ticket, passenger_ticket


def today():
    return datetime.datetime.now(ZoneInfo("Europe/Istanbul")).date()


@pytest.fixture
def client(sandbox, sandbox_company):
    return services_for(sandbox_company)


def test_the_platform_client_has_both_ticket_kinds_and_the_cities(client):
    assert isinstance(client.event_tickets, TicketClient) and client.event_tickets.kind == "event_ticket"
    assert client.passenger_tickets.kind == "passenger_ticket"
    with pytest.raises(ValueError):
        TicketClient(client.transport, "passenger_list")


def test_create_get_update(client):
    tickets = client.event_tickets
    # Decimals and dates go out as JSON numbers and ISO strings.
    created = tickets.create(event_ticket(ticketDate=datetime.datetime(2025, 6, 1, 20, 0),
                                          exchangeRate=Decimal("1.00"),
                                          ticketLines=[{"amount": Decimal("100.50"), "vatAmount": Decimal("20.10")}]))
    assert set(created) == {"ettn", "ticketNumber"} and created["ticketNumber"] == "ETK2025000000001"
    ticket = tickets.get(created["ettn"])
    assert ticket["ettn"] == created["ettn"] and ticket["status"] == 0 and ticket["message"] == ""
    assert ticket["ticketDate"] == "2025-06-01T20:00:00" and ticket["ticketLines"][0]["amount"] == 100.5
    # eventCityId is not part of the update model (document 2, 2.2).
    updated = tickets.update(created["ettn"], event_ticket(eventName="Kış Konseri", seatNumber=..., eventCityId=...))
    assert updated == created
    assert tickets.get(created["ettn"])["eventName"] == "Kış Konseri"


def test_validation_failure_is_a_permanent_error_with_the_platforms_words(client):
    with pytest.raises(RemoteError) as caught:
        client.passenger_tickets.create(passenger_ticket(currencyCode=""))
    error = caught.value
    assert error.permanent and error.status == 400
    assert error.title == "Validation failed" and error.detail.startswith("currencyCode: ")


def test_find_by_number_reconciles_a_create_that_timed_out_after_it_was_sent(sandbox, sandbox_company, settings):
    settings.PLATFORM_TIMEOUT = (5, 0.5)
    sandbox.add_fault(path="/ticket/v1/passenger-ticket", method="POST", timeout_seconds=2, timeout_after=True,
                      remaining=1)
    tickets = client_for(sandbox_company, PassengerTicketClient)
    assert tickets.find_by_number("YLC2025000000001") is None
    with pytest.raises(MaybeSent):
        tickets.create(passenger_ticket(1))
    found = tickets.find_by_number("YLC2025000000001")
    assert found is not None and found["ticketNumber"] == "YLC2025000000001" and found["status"] == 0
    assert tickets.get(found["ettn"])["vehiclePlate"] == "34 ABC 123"
    assert tickets.find_by_number("YLC2025000000002") is None
    # Sending it again would have been refused as a duplicate.
    with pytest.raises(RemoteError) as caught:
        tickets.create(passenger_ticket(1))
    assert caught.value.title == "Duplicate ticket number"


def test_list_with_a_query_filter(sandbox, client):
    sandbox.configure(ticket_processing_seconds=0)
    for counter in range(1, 6):
        client.event_tickets.create(event_ticket(counter, status=20 if counter <= 2 else 0))
    page = client.event_tickets.list(1, 2, query_filter=[{"category": "status", "operator": "eşittir", "value": 0}],
                                     sorted_column="ticketNumber", is_desc=True)
    assert (page["totalCount"], page["totalPages"], page["hasNextPage"]) == (3, 2, True)
    assert [item["ticketNumber"][-1] for item in page["items"]] == ["5", "4"]


def test_queued_tickets_settle_and_statuses_report_them(sandbox, client):
    sandbox.configure(ticket_processing_seconds=60)
    tickets = client.event_tickets
    approved = tickets.create(event_ticket(1, status=20))["ettn"]
    draft = tickets.create(event_ticket(2))["ettn"]
    assert [(s["id"], s["status"]) for s in tickets.statuses([approved, draft])] == [(approved, 20), (draft, 0)]
    sandbox.configure(clock_offset_seconds=61)
    statuses = tickets.statuses([approved, draft, "00000000-0000-0000-0000-000000000000"])
    assert statuses == [{"id": approved, "status": 60, "message": ""}, {"id": draft, "status": 0, "message": ""}]


def test_status_change_and_its_refusal(sandbox, client):
    sandbox.configure(ticket_processing_seconds=0, ticket_error_rate=1)
    tickets = client.passenger_tickets
    ettn = tickets.create(passenger_ticket(status=20))["ettn"]
    failed = tickets.get(ettn)
    assert failed["status"] == 40 and failed["message"]
    with pytest.raises(RemoteError) as caught:
        tickets.update_status([ettn], 20)  # 40 -> 20 is not a transition
    assert caught.value.title == "Status change refused" and "(40)" in caught.value.detail
    assert caught.value.permanent
    assert tickets.update_status([ettn], 0) is None
    sandbox.configure(ticket_error_rate=0)
    tickets.update_status([ettn], 20)
    assert tickets.get(ettn)["status"] == 60
    with pytest.raises(ValueError):
        tickets.update_status([ettn], 60)


def test_cancel_and_its_refusal(sandbox, client):
    tickets = client.event_tickets
    ettn = tickets.create(event_ticket())["ettn"]
    assert tickets.cancel([ettn]) is None
    assert tickets.get(ettn)["status"] == 100
    with pytest.raises(RemoteError) as caught:
        tickets.cancel([ettn])
    assert caught.value.title == "Cancel refused" and "already cancelled" in caught.value.detail
    with pytest.raises(ValueError):
        tickets.cancel([])


def test_html_in_both_layouts(sandbox, client):
    ettn = client.event_tickets.create(event_ticket(xsltCode="KURUMSAL"))["ettn"]
    standard = client.event_tickets.html(ettn)
    assert standard.startswith("<!DOCTYPE html>") and 'data-layout="standard"' in standard
    assert "Açıkhava" in standard and "ETK2025000000001" in standard
    company = client.event_tickets.html(ettn, standard=False)
    assert 'data-layout="company"' in company and "KURUMSAL" in company


class OneAnswer:
    """The transport's single point, answering one call with a fixed body (HTML as plain text in Response)."""

    def __init__(self, body: bytes, content_type="application/json"):
        self.body, self.content_type, self.calls = body, content_type, []

    def call(self, operation, **kwargs):
        self.calls.append((operation, kwargs))
        return self.body, self.content_type


@pytest.mark.parametrize("body,content_type", [
    (json.dumps({"Response": "<html><body>Bilet ğüş</body></html>"}).encode(), "application/json"),
    (json.dumps({"response": "<html><body>Bilet ğüş</body></html>"}).encode(), "application/json"),
    ("<html><body>Bilet ğüş</body></html>".encode(), "text/html; charset=utf-8"),
])
def test_html_given_as_plain_text_is_taken_as_it_is(body, content_type):
    transport = OneAnswer(body, content_type)
    html = TicketClient(transport, "event_ticket").html("e1", standard=False)
    assert html == "<html><body>Bilet ğüş</body></html>"
    assert transport.calls == [("event_ticket.html", {"path_params": {"id": "e1", "isStandartXslt": False},
                                                      "raw": True})]


def test_export_history_download_and_expiry(sandbox, client):
    sandbox.configure(ticket_processing_seconds=0, export_ready_seconds=30)
    tickets = client.event_tickets
    for counter in range(1, 4):
        tickets.create(event_ticket(counter, status=20))
    export_id = tickets.export({"status": 60, "generateSummaryReport": True,
                                "startDate": datetime.date(2000, 1, 1), "endDate": today()})
    assert export_id and tickets.export_history() == []
    with pytest.raises(RemoteError) as caught:
        tickets.export_download(export_id)
    assert caught.value.status == 404 and "being prepared" in caught.value.detail

    sandbox.configure(clock_offset_seconds=31)
    history = tickets.export_history()
    assert [item["exportId"] for item in history] == [export_id]
    assert history[0]["fileName"].endswith(".zip") and history[0]["createdDate"]
    archive = zipfile.ZipFile(io.BytesIO(tickets.export_download(export_id)))
    assert sorted(archive.namelist()) == ["etkinlik-biletleri.xlsx", "ozet-rapor.xlsx"]
    rows = list(load_workbook(io.BytesIO(archive.read("etkinlik-biletleri.xlsx"))).active.values)
    assert len(rows) == 4

    sandbox.configure(clock_offset_seconds=24 * 3600 + 1)
    with pytest.raises(RemoteError) as caught:
        tickets.export_download(export_id)
    assert caught.value.status == 410 and caught.value.title == "Gone" and "24 hours" in caught.value.detail


def test_export_filters_are_checked_by_the_platform(sandbox, client):
    with pytest.raises(RemoteError) as caught:
        client.passenger_tickets.export({"status": 30})
    assert caught.value.detail.startswith("status: ")


def test_report_pages(sandbox, sandbox_company):
    client = services_for(sandbox_company)
    sandbox.add_report_items("passenger_ticket", "2025-03-10", 1001,
                             customer_unique_id=str(sandbox_company.customer_unique_id))
    first = client.passenger_tickets.report(datetime.date(2025, 3, 10), 1)
    assert (first["pageIndex"], first["pageSize"], first["totalCount"], first["totalPages"]) == (1, 500, 1001, 3)
    assert first["hasNextPage"] and not first["hasPreviousPage"] and len(first["items"]) == 500
    assert {"ticketNumber", "expeditionNumber", "payableAmount", "partIndex"} <= set(first["items"][0])
    pages = list(client.passenger_tickets.report_pages(datetime.date(2025, 3, 10)))
    assert [len(page["items"]) for page in pages] == [500, 500, 1]
    empty = client.event_tickets.report(datetime.date(2025, 3, 10), 1, 100)
    assert empty["items"] == [] and empty["totalCount"] == 0 and not empty["hasNextPage"]
    with pytest.raises(ValueError):
        client.event_tickets.report(datetime.date(2025, 3, 10), 0)
    with pytest.raises(ValueError):
        client.event_tickets.report(datetime.date(2025, 3, 10), 1, 501)


def test_approved_tickets_show_in_the_days_report(sandbox, client):
    sandbox.configure(ticket_processing_seconds=0)
    client.event_tickets.create(event_ticket(1, status=20))
    client.event_tickets.create(event_ticket(2))
    items = client.event_tickets.report(today(), 1)["items"]
    assert [item["ticketNumber"] for item in items] == ["ETK2025000000001"]


def test_a_malformed_report_date_gives_the_platforms_message(sandbox, client):
    with pytest.raises(RemoteError) as caught:
        client.event_tickets.report("2025-3-10", 1)
    assert caught.value.status == 400 and caught.value.detail.startswith("reportDate: ")


def test_passenger_list_reports_reuse_the_same_machinery(sandbox, client):
    lists = ExportsAndReports(client.transport, "passenger_list")
    page = lists.report(datetime.date(2025, 3, 10), 1)
    assert page["items"] == [] and page["totalCount"] == 0


def test_cities(sandbox, client):
    cities = client.cities.list()
    assert len(cities) == 81 and cities[33] == {"id": 34, "name": "İstanbul"}
    assert cities[0] == {"id": 1, "name": "Adana"} and cities[-1] == {"id": 81, "name": "Düzce"}


def test_jsonable():
    value = {"a": Decimal(2), "b": Decimal("2.50"), "c": [datetime.date(2025, 1, 2)],
             "d": datetime.datetime(2025, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)}
    assert jsonable(value) == {"a": 2, "b": 2.5, "c": ["2025-01-02"], "d": "2025-01-02T03:04:05+00:00"}
