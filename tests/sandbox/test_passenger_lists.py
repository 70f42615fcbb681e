"""The sandbox's passenger lists (document 2, section 4.3) over real HTTP: create or update by isNewList,
grouping with and without a manual plate, the vehicle-operator rule, reporting, replacement, the paged
query, Excel exports and the by-date report."""

import datetime
import io
import zipfile

import pytest
from openpyxl import load_workbook

from tests.sandbox.test_tickets import ISTANBUL, PASSENGER, create, passenger_ticket, refusal, ticket, today, unbound

LISTS = "/v1/passenger-list"
REPORT = "/v1/passengerticketlistreport/partsbydate/{}"
VKN = "1234567890"  # valid check digit


def a_list(**fields):
    body = {"expeditionNumber": "S100", "expeditionTime": "2025-06-01T08:00:00", "vehiclePlate": "34 ABC 123",
            "isManualPlate": "false", "isNewList": True}
    body.update(fields)
    return {name: value for name, value in body.items() if value is not ...}


def operator(**fields):
    body = {"vehicleOperatingVknTckn": VKN, "vehicleOperatingTitle": "Anadolu Turizm A.Ş.",
            "vehicleOperatingTaxCenter": "Kadıköy", "commissionAmount": 120.5, "commissionTaxAmount": 24.1}
    body.update(fields)
    return {name: value for name, value in body.items() if value is not ...}


@pytest.fixture
def slow(sandbox):
    """Tickets stay queued (issued) and lists wait ten minutes before they are reported."""
    sandbox.configure(ticket_processing_seconds=600)
    return sandbox


def issue(api, counter, **fields):
    """A passenger ticket sent for issuing (queued, 20): payable 550 (500 + VAT 50)."""
    return create(api, passenger_ticket(counter, status=20, **fields), PASSENGER)


def save(api, body, status=200):
    response = api.post("ticket", LISTS, json=body)
    assert response.status_code == status, response.text
    return response.json()


def query(api, page_index=1, page_size=500):
    response = api.get("ticket", LISTS, params={"pageIndex": page_index, "pageSize": page_size})
    assert response.status_code == 200, response.text
    return response.json()


def report_now(sandbox, customer, ettn=None):
    body = {"customer_unique_id": customer["customer_unique_id"]}
    if ettn:
        body["ettn"] = ettn
    return sandbox.control("POST", "passenger-lists/report", body)["reported"]


def report_items(api, day=None):
    response = api.get("ticket", REPORT.format(day or today()), params={"pageIndex": 1, "pageSize": 500})
    assert response.status_code == 200, response.text
    return response.json()["items"]


def problems(body) -> dict:
    """field -> message of a "Validation failed" refusal."""
    assert body["title"] == "Validation failed", body
    return dict(part.split(": ", 1) for part in body["detail"].rstrip(".").split("; "))


# --- create and update ----------------------------------------------------------------------------------------

def test_a_new_list_covers_the_expeditions_tickets(slow, customer_api):
    api, customer = customer_api()
    for counter in (1, 2, 3):
        issue(api, counter)
    issue(api, 4, expeditionNumber="S200")  # another expedition
    create(api, passenger_ticket(5, status=0), PASSENGER)  # a draft is not issued
    created = save(api, a_list(vehiclePlate="34abc-123"))  # the plate compares without spaces or case
    assert set(created) == {"ettn", "passengerListNumber"}
    assert created["passengerListNumber"] == f"YLS{today().year}000000001"
    [item] = query(api)["items"]
    assert item == {"id": created["ettn"], "passengerListNumber": created["passengerListNumber"],
                    "expeditionNumber": "S100", "vehiclePlate": "34abc-123", "expeditionTime": "2025-06-01T08:00:00",
                    "createDate": item["createDate"]}
    assert report_now(slow, customer) == 1
    [reported] = report_items(api)
    assert reported == {"passengerListNumber": created["passengerListNumber"], "expeditionNumber": "S100",
                        "vehiclePlate": "34abc-123", "expeditionTime": "2025-06-01T08:00:00",
                        "totalPayableAmount": 1650.0, "totalCommissionAmount": 0.0,
                        "totalCommissionTaxAmount": 0.0, "partIndex": 1, "createdDate": reported["createdDate"]}


def test_is_new_list_false_or_empty_updates_the_list_of_the_expedition(slow, customer_api):
    api, customer = customer_api()
    issue(api, 1)
    first = save(api, a_list())
    issue(api, 2)  # sold after the list was built
    for flag in (False, None, "", ...):
        assert save(api, a_list(isNewList=flag, **operator())) == first
    assert len(query(api)["items"]) == 1
    report_now(slow, customer)
    [item] = report_items(api)
    assert (item["totalPayableAmount"], item["totalCommissionAmount"], item["totalCommissionTaxAmount"]) == (
        1100.0, 120.5, 24.1)


def test_an_update_needs_a_list_to_update(slow, api):
    issue(api, 1)
    body = refusal(api.post("ticket", LISTS, json=a_list(isNewList=False)), 404)
    assert body["title"] == "Not Found" and "isNewList true" in body["detail"]


@pytest.mark.parametrize("bad", ["true", "yes", 1, 0, [True]])
def test_is_new_list_takes_only_a_boolean_or_empty(slow, api, bad):
    issue(api, 1)
    assert list(unbound(api.post("ticket", LISTS, json=a_list(isNewList=bad)))) == ["isNewList"]


# --- grouping -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("change", [{"vehiclePlate": "06 XYZ 99"}, {"expeditionNumber": "S101"},
                                    {"expeditionTime": "2025-06-01T09:00:00"}])
def test_grouped_by_plate_a_list_is_refused_when_no_ticket_matches_all_three(slow, api, change):
    issue(api, 1)
    body = refusal(api.post("ticket", LISTS, json=a_list(**change)))
    assert body["title"] == "No matching tickets" and "isManualPlate true" in body["detail"]
    assert query(api)["totalCount"] == 0


def test_drafts_cancelled_tickets_and_tickets_in_error_are_not_matched(slow, api):
    create(api, passenger_ticket(1, status=0), PASSENGER)  # a draft
    cancelled = create(api, passenger_ticket(2, status=0), PASSENGER)
    assert api.post("ticket", PASSENGER + "/cancel", json={"ids": [cancelled]}).status_code == 200
    slow.configure(ticket_processing_seconds=0, ticket_error_rate=1)
    in_error = issue(api, 3)
    assert ticket(api, in_error, PASSENGER)["status"] == 40  # settled on this read
    slow.configure(ticket_processing_seconds=600, ticket_error_rate=0)
    assert refusal(api.post("ticket", LISTS, json=a_list()))["title"] == "No matching tickets"
    issue(api, 4)
    assert save(api, a_list())["ettn"]


def test_the_same_instant_in_another_spelling_matches(slow, api):
    issue(api, 1, expeditionTime="2025-06-01T08:00:00+03:00")
    assert save(api, a_list(expeditionTime="2025-06-01T05:00:00Z"))["ettn"]


def test_with_a_manual_plate_tickets_are_grouped_by_number_and_time_and_the_plate_is_stored(slow, customer_api):
    api, customer = customer_api()
    issue(api, 1, vehiclePlate="34 ABC 123")
    issue(api, 2, vehiclePlate="34 DEF 456")  # the bus was changed mid-sale
    created = save(api, a_list(isManualPlate="true", vehiclePlate="06 ZZ 1907"))
    assert query(api)["items"][0]["vehiclePlate"] == "06 ZZ 1907"
    # An update may change the stored plate.
    assert save(api, a_list(isManualPlate="TRUE", isNewList=False, vehiclePlate="06 ZZ 1908")) == created
    report_now(slow, customer)
    [item] = report_items(api)
    assert item["vehiclePlate"] == "06 ZZ 1908" and item["totalPayableAmount"] == 1100.0


@pytest.mark.parametrize("bad", ["yes", "maybe", "1"])
def test_is_manual_plate_takes_true_or_false(slow, api, bad):
    issue(api, 1)
    assert "isManualPlate" in problems(refusal(api.post("ticket", LISTS, json=a_list(isManualPlate=bad))))


@pytest.mark.parametrize("bad", [True, False, 1, 0, ["true"]])
def test_is_manual_plate_is_a_string_as_declared(slow, api, bad):
    """Document 2, 4.3: isManualPlate is "declared as string"; a JSON boolean or number is another type."""
    issue(api, 1)
    errors = unbound(api.post("ticket", LISTS, json=a_list(isManualPlate=bad)))
    assert list(errors) == ["isManualPlate"] and "string" in errors["isManualPlate"][0]
    assert query(api)["totalCount"] == 0


@pytest.mark.parametrize("flag", ["false", "False", "", None, ...])
def test_is_manual_plate_false_empty_or_missing_groups_by_plate(slow, api, flag):
    issue(api, 1)
    assert save(api, a_list(isManualPlate=flag))["ettn"]
    assert refusal(api.post("ticket", LISTS, json=a_list(isManualPlate=flag, vehiclePlate="06 XYZ 99")))[
        "title"] == "No matching tickets"


@pytest.mark.parametrize("change,field", [
    ({"isManuelPlate": "true"}, "isManuelPlate"), ({"ExpeditionNumber": "S100"}, "ExpeditionNumber"),
    ({"vehicleOperatorTitle": "Anadolu"}, "vehicleOperatorTitle"), ({"ettn": "x"}, "ettn"),
    ({"expeditionNumber": 100}, "expeditionNumber"), ({"commissionAmount": "120.5"}, "commissionAmount"),
    ({"commissionTaxAmount": True}, "commissionTaxAmount"),
])
def test_a_list_body_of_another_shape_is_422_naming_the_field(slow, api, change, field):
    issue(api, 1)
    assert list(unbound(api.post("ticket", LISTS, json=a_list(**change)))) == [field]


@pytest.mark.parametrize("missing", ["expeditionNumber", "expeditionTime", "vehiclePlate"])
def test_expedition_number_time_and_plate_are_required(slow, api, missing):
    assert missing in problems(refusal(api.post("ticket", LISTS, json=a_list(**{missing: ...}))))


def test_a_bad_expedition_time_is_refused(slow, api):
    assert "expeditionTime" in problems(refusal(api.post("ticket", LISTS, json=a_list(expeditionTime="01.06.2025"))))


# --- the vehicle-operator rule -------------------------------------------------------------------------------

@pytest.mark.parametrize("given", ["vehicleOperatingVknTckn", "vehicleOperatingTitle", "vehicleOperatingTaxCenter",
                                   "commissionAmount", "commissionTaxAmount"])
def test_one_operator_field_makes_all_five_required(slow, api, given):
    issue(api, 1)
    body = a_list(**{given: operator()[given]})
    found = problems(refusal(api.post("ticket", LISTS, json=body)))
    assert set(found) == set(operator()) - {given}


@pytest.mark.parametrize("value, words", [("1234567891", "check digit"), ("12345678950x", "10 digits"),
                                          ("10000000147", "check digits")])
def test_the_operators_tax_number_or_national_id_has_valid_check_digits(slow, api, value, words):
    issue(api, 1)
    found = problems(refusal(api.post("ticket", LISTS, json=a_list(**operator(vehicleOperatingVknTckn=value)))))
    assert words in found["vehicleOperatingVknTckn"]


def test_commissions_are_non_negative_numbers(slow, api):
    issue(api, 1)
    found = problems(refusal(api.post("ticket", LISTS, json=a_list(**operator(commissionAmount=-1,
                                                                              commissionTaxAmount=-0.5)))))
    assert set(found) == {"commissionAmount", "commissionTaxAmount"}
    errors = unbound(api.post("ticket", LISTS, json=a_list(**operator(commissionAmount="x", commissionTaxAmount="5"))))
    assert set(errors) == {"commissionAmount", "commissionTaxAmount"}


# --- reported lists and replacement ----------------------------------------------------------------------------

def test_a_reported_list_cannot_be_updated(slow, customer_api):
    api, customer = customer_api()
    issue(api, 1)
    created = save(api, a_list())
    assert report_now(slow, customer, created["ettn"]) == 1
    body = refusal(api.post("ticket", LISTS, json=a_list(isNewList=False)))
    assert body["title"] == "Update refused" and created["passengerListNumber"] in body["detail"]


def test_a_list_is_reported_after_the_processing_delay(slow, api):
    issue(api, 1)
    save(api, a_list())
    assert report_items(api) == []
    slow.configure(clock_offset_seconds=601)  # ten minutes later on the platform's clock
    # In the report of the day it was reported on, by the platform's clock: after 23:50 in Istanbul, tomorrow's.
    [item] = report_items(api, (datetime.datetime.now(ISTANBUL) + datetime.timedelta(seconds=601)).date())
    assert item["totalPayableAmount"] == 550.0
    assert refusal(api.post("ticket", LISTS, json=a_list(isNewList=False)))["title"] == "Update refused"


def test_creating_again_with_the_same_information_replaces_the_old_list(slow, customer_api):
    api, customer = customer_api()
    issue(api, 1)
    old = save(api, a_list())
    issue(api, 2)
    new = save(api, a_list())
    assert new["ettn"] != old["ettn"] and new["passengerListNumber"] != old["passengerListNumber"]
    assert [item["id"] for item in query(api)["items"]] == [new["ettn"]]
    # Only the valid list is reported; an update now goes to the new one.
    assert report_now(slow, customer) == 1
    [item] = report_items(api)
    assert item["passengerListNumber"] == new["passengerListNumber"] and item["totalPayableAmount"] == 1100.0
    # A reported list is corrected by creating it again: it is replaced, its report item stays.
    newest = save(api, a_list())
    assert [item["id"] for item in query(api)["items"]] == [newest["ettn"]]
    assert len(report_items(api)) == 1


def test_another_plate_is_other_information(slow, api):
    issue(api, 1, vehiclePlate="34 ABC 123")
    issue(api, 2, vehiclePlate="34 DEF 456")
    save(api, a_list(vehiclePlate="34 ABC 123"))
    save(api, a_list(vehiclePlate="34 DEF 456"))
    assert query(api)["totalCount"] == 2


# --- query -----------------------------------------------------------------------------------------------------

def test_query_pages_at_most_500(slow, customer_api):
    api, _ = customer_api()
    other, _ = customer_api()
    for counter in range(1, 4):
        issue(api, counter, expeditionNumber=f"S{counter}")
        save(api, a_list(expeditionNumber=f"S{counter}"))
    pages = [query(api, index, 2) for index in (1, 2)]
    assert [(p["totalCount"], p["totalPages"], len(p["items"]), p["hasNextPage"], p["hasPreviousPage"])
            for p in pages] == [(3, 2, 2, True, False), (3, 2, 1, False, True)]
    assert [i["expeditionNumber"] for p in pages for i in p["items"]] == ["S1", "S2", "S3"]
    assert query(other)["totalCount"] == 0  # customers are kept apart
    for params, field in (({"pageIndex": 1, "pageSize": 501}, "pageSize"), ({"pageIndex": 0, "pageSize": 5},
                                                                             "pageIndex"), ({"pageSize": 5}, "pageIndex")):
        assert refusal(api.get("ticket", LISTS, params=params))["detail"].startswith(field)


# --- exports and the report --------------------------------------------------------------------------------------

def test_export_by_expedition_time_range(slow, api):
    slow.configure(export_ready_seconds=0)
    for counter, day in ((1, "01"), (2, "02"), (3, "03")):
        issue(api, counter, expeditionNumber=f"S{counter}", expeditionTime=f"2025-06-{day}T08:00:00")
        save(api, a_list(expeditionNumber=f"S{counter}", expeditionTime=f"2025-06-{day}T08:00:00"))
    response = api.post("ticket", LISTS + "/export", json={"startDate": "2025-06-02", "endDate": "2025-06-03"})
    assert response.status_code == 200, response.text
    export_id = response.json()["exportId"]
    [entry] = api.get("ticket", LISTS + "/export/history").json()
    assert entry["exportId"] == export_id and entry["fileName"].startswith("yolcu-listeleri")
    download = api.get("ticket", f"{LISTS}/export/{export_id}/download")
    assert download.status_code == 200
    with zipfile.ZipFile(io.BytesIO(download.content)) as archive:
        assert archive.namelist() == ["yolcu-listeleri.xlsx"]
        book = load_workbook(io.BytesIO(archive.read("yolcu-listeleri.xlsx")))
    lists = list(book["Listeler"].values)
    assert [row[2] for row in lists[1:]] == ["S2", "S3"]
    assert lists[0][9] == "Ödenecek Toplam" and lists[1][9] == 550
    tickets = list(book["Biletler"].values)
    assert [row[1] for row in tickets[1:]] == ["YLC2025000000002", "YLC2025000000003"]


@pytest.mark.parametrize("body, field", [({"startDate": "yesterday"}, "startDate"),
                                         ({"startDate": "2025-06-03", "endDate": "2025-06-01"}, "endDate")])
def test_export_filters_are_checked(slow, api, body, field):
    assert problems(refusal(api.post("ticket", LISTS + "/export", json=body)))[field]


@pytest.mark.parametrize("body, field", [({"ids": "x"}, "ids"), ({"startdate": "2025-06-01"}, "startdate"),
                                         ({"expeditionStartDate": "2025-06-01"}, "expeditionStartDate")])
def test_export_bodies_of_another_shape_are_422(slow, api, body, field):
    assert list(unbound(api.post("ticket", LISTS + "/export", json=body))) == [field]


def test_the_report_answers_the_empty_day_and_bad_dates(slow, api):
    assert report_items(api, "2025-01-01") == []
    body = refusal(api.get("ticket", REPORT.format("01-01-2025"), params={"pageIndex": 1, "pageSize": 10}))
    assert "yyyy-MM-dd" in body["detail"]
