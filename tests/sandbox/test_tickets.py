"""The sandbox's ticket service (document 2) over real HTTP: validation, state machine, HTML, exports,
by-date reports and the timeout-after-processing fault."""

import base64
import datetime
import io
import json
import time
import zipfile
from zoneinfo import ZoneInfo

import pytest
import requests
from openpyxl import load_workbook

EVENT = "/v1/event-ticket"
PASSENGER = "/v1/passenger-ticket"
ISTANBUL = ZoneInfo("Europe/Istanbul")  # the sandbox's time zone: report days are Istanbul days


def today():
    return datetime.datetime.now(ISTANBUL).date()


def event_ticket(counter=1, **fields):
    body = {
        "status": 0, "documentType": 0, "ticketType": "ETKINLIK", "ticketDate": "2025-06-01T20:00:00",
        "ticketNumber": f"ETK2025{counter:09d}", "prefix": "ETK", "currencyCode": "TRY",
        "customerFirstName": "Ayşe", "customerLastName": "Yılmaz", "paymentType": "KREDIKARTI",
        "seatNumber": "B12", "eventTime": "2025-06-10T21:00:00", "eventName": "Yaz Konseri",
        "eventLocation": "Açıkhava", "eventMunicipality": "Harbiye", "eventCityId": 34,
        "eventOrganizerVknTckn": "1234567890",
        "ticketLines": [{"serviceType": "BILET", "serviceDescription": "Konser", "amount": 100, "discountRate": 0,
                         "discountAmount": 0, "vatRate": 20, "vatAmount": 20,
                         "taxes": [{"taxCode": "0059", "taxName": "Eğlence", "taxtRate": 10, "taxtAmount": 10}]}],
        "notes": [{"note": "İyi eğlenceler"}],
    }
    body.update(fields)
    return {name: value for name, value in body.items() if value is not ...}


def passenger_ticket(counter=1, **fields):
    body = {
        "status": 0, "ticketType": "YOLCU", "ticketNumber": f"YLC2025{counter:09d}", "prefix": "YLC",
        "currencyCode": "TRY", "identifier": "10000000146", "paymentType": "NAKIT", "vehiclePlate": "34 ABC 123",
        "expeditionTime": "2025-06-01T08:00:00", "expeditionNumber": "S100", "departureDate": "2025-06-01T08:30:00",
        "departureLocation": "İstanbul", "destination": "Ankara", "seatNumber": "14",
        "ticketLines": [{"amount": 500, "vatRate": 10, "vatAmount": 50}],
    }
    body.update(fields)
    return {name: value for name, value in body.items() if value is not ...}


def event_update(ettn, counter=1, **fields):
    """An update body of an event ticket: eventCityId is not part of the update model (document 2, 2.2)."""
    return event_ticket(counter, ettn=ettn, eventCityId=..., **fields)


def put(api, path, **kwargs):
    return api.request("PUT", "ticket", path, **kwargs)


def create(api, body, base=EVENT):
    response = api.post("ticket", base, json=body)
    assert response.status_code == 200, response.text
    return response.json()["ettn"]


def ticket(api, ettn, base=EVENT):
    response = api.get("ticket", f"{base}/{ettn}")
    assert response.status_code == 200, response.text
    return response.json()


def refusal(response, status=400):
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"title", "detail"} and body["title"] and body["detail"]
    return body


def unbound(response) -> dict:
    """{field: [messages]} of a body that does not fit the operation's model: 422 naming each field, also in
    the detail."""
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["title"] and body["errors"]
    for name, messages in body["errors"].items():
        assert f"{name}: " in body["detail"] and messages
    return body["errors"]


# --- create ------------------------------------------------------------------------------------------------

def test_create_returns_ettn_and_number_and_keeps_the_ticket(sandbox, api):
    response = api.post("ticket", EVENT, json=event_ticket())
    assert response.status_code == 200
    created = response.json()
    assert set(created) == {"ettn", "ticketNumber"} and created["ticketNumber"] == "ETK2025000000001"
    shown = ticket(api, created["ettn"])
    assert shown["status"] == 0 and shown["message"] == ""
    assert shown["eventName"] == "Yaz Konseri" and shown["ticketLines"][0]["taxes"][0]["taxtAmount"] == 10
    # amount 100 - discount 0, VAT 20, other taxes 10
    assert (shown["totalAmount"], shown["totalVat"], shown["payableAmount"]) == (100, 20, 130)


def test_create_of_a_passenger_ticket(sandbox, api):
    ettn = create(api, passenger_ticket(), PASSENGER)
    shown = ticket(api, ettn, PASSENGER)
    assert shown["ticketType"] == "YOLCU" and shown["vehiclePlate"] == "34 ABC 123"


def test_the_services_keep_customers_apart(sandbox, customer_api):
    first, _ = customer_api()
    second, _ = customer_api()
    ettn = create(first, event_ticket())
    refusal(second.get("ticket", f"{EVENT}/{ettn}"), 404)
    # The same number is free for another customer.
    assert second.post("ticket", EVENT, json=event_ticket()).status_code == 200


COMMON_RULES = [
    ({"ticketType": ...}, "ticketType"),
    ({"ticketType": "YOLCU"}, "ticketType"),
    ({"ticketNumber": ...}, "ticketNumber"),
    ({"ticketNumber": "ETK202500000001", "prefix": "ETK"}, "ticketNumber"),  # 15 characters
    ({"ticketNumber": "ETK1999000000001"}, "ticketNumber"),  # year not 20xx
    ({"ticketNumber": "etk2025000000001", "prefix": "etk"}, "ticketNumber"),  # lower case
    ({"prefix": ...}, "prefix"),
    ({"prefix": "ABC"}, "prefix"),
    ({"currencyCode": ...}, "currencyCode"),
    ({"currencyCode": ""}, "currencyCode"),
    ({"currencyCode": None}, "currencyCode"),
    ({"isEmailSend": True}, "customerEmail"),
    ({"isEmailSend": True, "customerEmail": "not-an-address"}, "customerEmail"),
    ({"paymentType": ...}, "paymentType"),
    ({"paymentType": "CEK"}, "paymentType"),
    ({"paymentType": "DIGER"}, "paymentDescription"),
    ({"recordExpensesVknTckn": "1234567890"}, "recordExpensesTitle"),
    ({"recordExpensesTitle": "Gider A.Ş."}, "recordExpensesVknTckn"),
    ({"status": 40}, "status"),
    ({"status": 60}, "status"),
    ({"documentType": 2}, "documentType"),
    ({"ticketDate": "yesterday"}, "ticketDate"),
    ({"customerCountry": "TUR"}, "customerCountry"),
    ({"ticketLines": [{"amount": 1, "taxes": [{"taxCode": "X", "taxtAmount": None}]}]}, None),
    ({"notes": [{"note": None}]}, "notes[0].note"),
    ({"recordExpensesVknTckn": "1234567891", "recordExpensesTitle": "Gider A.Ş."}, "recordExpensesVknTckn"),
]
EVENT_RULES = [
    ({"seatNumber": ...}, "seatNumber"),
    ({"eventName": ...}, "eventName"),
    ({"eventLocation": ""}, "eventLocation"),
    ({"eventMunicipality": ...}, "eventMunicipality"),
    ({"eventCityId": ...}, "eventCityId"),
    ({"eventCityId": 0}, "eventCityId"),
    ({"eventCityId": 82}, "eventCityId"),
    ({"eventOrganizerVknTckn": ...}, "eventOrganizerVknTckn"),
    ({"eventOrganizerVknTckn": "123456789"}, "eventOrganizerVknTckn"),
    ({"eventOrganizerVknTckn": "123456789012"}, "eventOrganizerVknTckn"),
    ({"eventOrganizerVknTckn": "12345678AB"}, "eventOrganizerVknTckn"),
    ({"eventOrganizerVknTckn": "1234567891"}, "eventOrganizerVknTckn"),  # 10 digits, wrong check digit
    ({"eventOrganizerVknTckn": "12345678901"}, "eventOrganizerVknTckn"),  # 11 digits, wrong check digits
    ({"eventTime": "31.12.2025"}, "eventTime"),
]
PASSENGER_RULES = [
    ({"identifier": ...}, "identifier"),
    ({"vehiclePlate": ...}, "vehiclePlate"),
    ({"expeditionTime": ...}, "expeditionTime"),
    ({"expeditionTime": "soon"}, "expeditionTime"),
    ({"expeditionNumber": " "}, "expeditionNumber"),
    ({"departureDate": ...}, "departureDate"),
    ({"departureLocation": ...}, "departureLocation"),
    ({"seatNumber": ...}, "seatNumber"),
    ({"vehicleOperatingVknTckn": "1234567891", "vehicleOperatingTitle": "Taşıma A.Ş.",
      "vehicleOperatingTaxCenter": "Kadıköy", "commissionAmount": 10, "commissionTaxAmount": 5},
     "vehicleOperatingVknTckn"),
]


@pytest.mark.parametrize("change,field", COMMON_RULES + EVENT_RULES)
def test_event_ticket_rule_refuses_bad_input_naming_the_field(sandbox, api, change, field):
    if field is None:  # a null optional member is no refusal
        assert api.post("ticket", EVENT, json=event_ticket(**change)).status_code == 200
        return
    body = refusal(api.post("ticket", EVENT, json=event_ticket(**change)))
    assert body["title"] == "Validation failed"
    assert body["detail"].startswith(f"{field}: "), body["detail"]


@pytest.mark.parametrize("change,field", [
    (change, field) for change, field in COMMON_RULES if "ticketType" not in change and "prefix" not in change
    and "ticketNumber" not in change and field
] + PASSENGER_RULES)
def test_passenger_ticket_rule_refuses_bad_input_naming_the_field(sandbox, api, change, field):
    body = refusal(api.post("ticket", PASSENGER, json=passenger_ticket(**change)))
    assert body["detail"].startswith(f"{field}: "), body["detail"]


# Document 2 gives these members a number type (integer, byte, decimal, numeric): a string, even of digits,
# and a boolean are refused (True is an int in Python, and "34" is what a careless client sends).
NUMBER_TYPES = [
    ({"status": "20"}, "status"), ({"status": True}, "status"), ({"status": 20.5}, "status"),
    ({"documentType": "0"}, "documentType"), ({"documentType": False}, "documentType"),
    ({"exchangeRate": "35.12"}, "exchangeRate"), ({"exchangeRate": True}, "exchangeRate"),
    ({"ticketLines": [{"amount": "100"}]}, "ticketLines[0].amount"),
    ({"ticketLines": [{"amount": True}]}, "ticketLines[0].amount"),
    ({"ticketLines": [{"amount": 100, "discountRate": "0"}]}, "ticketLines[0].discountRate"),
    ({"ticketLines": [{"amount": 100, "vatRate": "20", "vatAmount": 20}]}, "ticketLines[0].vatRate"),
    ({"ticketLines": [{"amount": 100, "vatAmount": "20"}]}, "ticketLines[0].vatAmount"),
    ({"ticketLines": [{"amount": 1, "taxes": [{"taxCode": "X", "taxtRate": "10"}]}]},
     "ticketLines[0].taxes[0].taxtRate"),
    ({"ticketLines": [{"amount": 1, "taxes": [{"taxCode": "X", "taxtAmount": "x"}]}]},
     "ticketLines[0].taxes[0].taxtAmount"),
    ({"isEmailSend": "true", "customerEmail": "a@example.com"}, "isEmailSend"),
    ({"isEmailSend": 1, "customerEmail": "a@example.com"}, "isEmailSend"),
    ({"ticketNumber": 2025000000001}, "ticketNumber"),
    ({"ticketLines": {"amount": 1}}, "ticketLines"),
    ({"ticketLines": ["not an object"]}, "ticketLines[0]"),
]
EVENT_NUMBER_TYPES = [({"eventCityId": "34"}, "eventCityId"), ({"eventCityId": True}, "eventCityId"),
                      ({"eventCityId": "İstanbul"}, "eventCityId"), ({"eventCityId": 34.0}, "eventCityId"),
                      ({"eventOrganizerVknTckn": 1234567890}, "eventOrganizerVknTckn")]
PASSENGER_NUMBER_TYPES = [
    ({"commissionAmount": "25", "commissionTaxAmount": 5}, "commissionAmount"),
    ({"commissionAmount": 25, "commissionTaxAmount": True}, "commissionTaxAmount"),
]


@pytest.mark.parametrize("change,field", NUMBER_TYPES + EVENT_NUMBER_TYPES)
def test_event_ticket_members_of_another_json_type_are_422(sandbox, api, change, field):
    assert list(unbound(api.post("ticket", EVENT, json=event_ticket(**change)))) == [field]


@pytest.mark.parametrize("change,field", NUMBER_TYPES + PASSENGER_NUMBER_TYPES)
def test_passenger_ticket_members_of_another_json_type_are_422(sandbox, api, change, field):
    operator = {"vehicleOperatingVknTckn": "1234567890", "vehicleOperatingTitle": "Taşıma A.Ş.",
                "vehicleOperatingTaxCenter": "Kadıköy"} if "commissionAmount" in change else {}
    body = passenger_ticket(**{**operator, **change})
    assert list(unbound(api.post("ticket", PASSENGER, json=body))) == [field]


# Renamed, misspelt or foreign members are noticed, so that a client sending a wrong name fails.
UNKNOWN_MEMBERS = [
    ({"ticketNo": "ETK2025000000001"}, "ticketNo"),
    ({"TicketNumber": "ETK2025000000001"}, "TicketNumber"),  # names are case-sensitive
    ({"isArchived": False}, "isArchived"),  # an export filter, not a ticket member
    ({"executionStartDate": "2025-06-01"}, "executionStartDate"),
    ({"ticketLines": [{"amount": 100, "taxes": [{"taxCode": "X", "taxRate": 10}]}]}, "ticketLines[0].taxes[0].taxRate"),
    ({"ticketLines": [{"amount": 100, "vat": 20}]}, "ticketLines[0].vat"),
    ({"notes": [{"text": "no note field"}]}, "notes[0].text"),
]


@pytest.mark.parametrize("change,field", UNKNOWN_MEMBERS + [({"vehiclePlate": "34 ABC 123"}, "vehiclePlate"),
                                                           ({"eventCityID": 34}, "eventCityID")])
def test_unknown_members_of_an_event_ticket_are_422_naming_them(sandbox, api, change, field):
    errors = unbound(api.post("ticket", EVENT, json=event_ticket(**change)))
    assert list(errors) == [field]
    assert field.rsplit(".", 1)[-1] in errors[field][0]


@pytest.mark.parametrize("change,field", UNKNOWN_MEMBERS + [({"eventCityId": 34}, "eventCityId"),
                                                           ({"eventName": "Konser"}, "eventName")])
def test_unknown_members_of_a_passenger_ticket_are_422_naming_them(sandbox, api, change, field):
    assert list(unbound(api.post("ticket", PASSENGER, json=passenger_ticket(**change)))) == [field]


def test_unknown_members_are_refused_at_update_too(sandbox, api):
    ettn = create(api, event_ticket())
    assert list(unbound(put(api, f"{EVENT}/{ettn}", json=event_update(ettn, eventname="x")))) == ["eventname"]
    ettn = create(api, passenger_ticket(), PASSENGER)
    body = passenger_ticket(ettn=ettn, departureTime="2025-06-01T08:30:00")
    assert list(unbound(put(api, f"{PASSENGER}/{ettn}", json=body))) == ["departureTime"]


def test_event_city_is_not_part_of_the_update_model(sandbox, api):
    """Document 2, 2.2: eventCityId "create: yes (not in the update model)"."""
    ettn = create(api, event_ticket())
    errors = unbound(put(api, f"{EVENT}/{ettn}", json=event_ticket(ettn=ettn, eventCityId=6)))
    assert list(errors) == ["eventCityId"] and "update model" in errors["eventCityId"][0]
    assert ticket(api, ettn)["eventCityId"] == 34
    assert put(api, f"{EVENT}/{ettn}", json=event_update(ettn)).status_code == 200


def test_organizer_and_other_tax_numbers_take_a_valid_vkn_or_tckn(sandbox, api):
    for counter, number in enumerate(("1234567890", "10000000146"), start=1):
        fields = {"eventOrganizerVknTckn": number, "recordExpensesVknTckn": number, "recordExpensesTitle": "Gider"}
        response = api.post("ticket", EVENT, json=event_ticket(counter, **fields))
        assert response.status_code == 200, response.text
    detail = refusal(api.post("ticket", EVENT, json=event_ticket(3, eventOrganizerVknTckn="10000000147")))["detail"]
    assert detail.startswith("eventOrganizerVknTckn: ") and "check digits" in detail


def test_every_failing_rule_is_named_at_once(sandbox, api):
    detail = refusal(api.post("ticket", EVENT, json=event_ticket(currencyCode="", eventCityId=99,
                                                                    paymentType="DIGER")))["detail"]
    assert "currencyCode: " in detail and "; eventCityId: " in detail and "; paymentDescription: " in detail


@pytest.mark.parametrize("given", ["vehicleOperatingVknTckn", "vehicleOperatingTitle", "vehicleOperatingTaxCenter",
                                   "commissionAmount", "commissionTaxAmount"])
def test_one_vehicle_operator_field_makes_all_five_required(sandbox, api, given):
    values = {"vehicleOperatingVknTckn": "1234567890", "vehicleOperatingTitle": "Taşıma A.Ş.",
              "vehicleOperatingTaxCenter": "Kadıköy", "commissionAmount": 25, "commissionTaxAmount": 5}
    detail = refusal(api.post("ticket", PASSENGER, json=passenger_ticket(**{given: values[given]})))["detail"]
    for name in values:
        assert (f"{name}: " in detail) == (name != given), detail
    assert api.post("ticket", PASSENGER, json=passenger_ticket(**values)).status_code == 200


def test_valid_boundaries_pass(sandbox, api):
    for counter, fields in enumerate([
        {"eventCityId": 1}, {"eventCityId": 81}, {"eventOrganizerVknTckn": "10000000146"},
        {"paymentType": "DIGER", "paymentDescription": "Hediye çeki"},
        {"isEmailSend": True, "customerEmail": "ayse@example.com"},
        {"recordExpensesVknTckn": "1234567890", "recordExpensesTitle": "Gider A.Ş."},
        {"status": 20}, {"currencyCode": "EUR", "exchangeRate": 35.12}, {"ticketLines": [], "notes": []},
        {"ticketLines": [{"amount": 100.5, "vatRate": 20, "vatAmount": 20.1, "taxes": []}]}, {"notes": None},
    ], start=1):
        response = api.post("ticket", EVENT, json=event_ticket(counter, **fields))
        assert response.status_code == 200, (fields, response.text)


def test_a_ticket_number_is_used_once(sandbox, api):
    create(api, event_ticket(1))
    body = refusal(api.post("ticket", EVENT, json=event_ticket(1)))
    assert body["title"] == "Duplicate ticket number" and "ETK2025000000001" in body["detail"]


def test_a_number_is_refused_while_the_one_before_it_is_not_there(sandbox, api):
    """Document 2, 2.1: the counter of a prefix and year starts at 1 and continues consecutively (issue 28)."""
    body = refusal(api.post("ticket", EVENT, json=event_ticket(2)))
    assert body["title"] == "Validation failed"
    assert body["detail"].startswith("ticketNumber: ETK2025000000002")
    assert "ETK2025000000001 is not there" in body["detail"]
    create(api, event_ticket(1))
    create(api, event_ticket(2))
    # Per prefix, year and kind: another prefix, another year and a passenger ticket start at 1 of their own.
    assert "is not there" in refusal(api.post("ticket", EVENT, json=event_ticket(
        2, ticketNumber="KNS2025000000002", prefix="KNS")))["detail"]
    assert "is not there" in refusal(api.post("ticket", EVENT, json=event_ticket(
        3, ticketNumber="ETK2026000000003")))["detail"]
    assert "is not there" in refusal(api.post("ticket", PASSENGER, json=passenger_ticket(2)))["detail"]


def test_a_series_started_elsewhere_continues_where_the_control_says(sandbox, customer_api):
    api, customer = customer_api()
    sandbox.control("POST", "tickets/series", {"customer_unique_id": customer["customer_unique_id"],
                                               "kind": "event_ticket", "series": "ETK2025", "first": 101})
    assert "ETK2025000000101 is not there" in refusal(api.post("ticket", EVENT, json=event_ticket(102)))["detail"]
    create(api, event_ticket(101))
    create(api, event_ticket(102))
    assert "is not there" in refusal(api.post("ticket", EVENT, json=event_ticket(2)))["detail"]


@pytest.mark.parametrize("data", [b"{not json", b"[1, 2]", b"null"])
def test_a_body_that_is_no_object_is_refused(sandbox, api, data):
    body = refusal(api.post("ticket", EVENT, data=data, headers={"Content-Type": "application/json"}))
    assert body["detail"].startswith("body: ")


# --- update ------------------------------------------------------------------------------------------------

def test_update_in_draft_changes_the_ticket_and_keeps_city_and_seat(sandbox, api):
    ettn = create(api, event_ticket())
    change = event_ticket(ettn=ettn, eventName="Kış Konseri", seatNumber=..., eventCityId=...)
    response = put(api, f"{EVENT}/{ettn}", json=change)
    assert response.status_code == 200, response.text
    assert response.json() == {"ettn": ettn, "ticketNumber": "ETK2025000000001"}
    shown = ticket(api, ettn)
    assert shown["eventName"] == "Kış Konseri" and shown["seatNumber"] == "B12" and shown["eventCityId"] == 34


def test_update_needs_the_ettn_in_the_body_matching_the_path(sandbox, api):
    ettn = create(api, event_ticket())
    assert refusal(put(api, f"{EVENT}/{ettn}", json=event_ticket(eventCityId=...)))["detail"].startswith("ettn: ")
    other = "6f1c1f0e-8f5a-4f4e-9a55-2b7d0c1d2e3f"
    assert refusal(put(api, f"{EVENT}/{ettn}", json=event_update(other)))["detail"].startswith("ettn: ")
    refusal(put(api, f"{EVENT}/{other}", json=event_update(other)), 404)


def test_update_applies_the_rules_too(sandbox, api):
    ettn = create(api, passenger_ticket(), PASSENGER)
    body = refusal(put(api, f"{PASSENGER}/{ettn}", json=passenger_ticket(ettn=ettn, seatNumber=...)))
    assert body["detail"].startswith("seatNumber: ")  # required at update for passenger tickets
    body = refusal(put(api, f"{PASSENGER}/{ettn}", json=passenger_ticket(ettn=ettn, currencyCode="")))
    assert body["detail"].startswith("currencyCode: ")


def test_update_refuses_a_number_of_another_ticket(sandbox, api):
    create(api, event_ticket(1))
    ettn = create(api, event_ticket(2))
    body = refusal(put(api, f"{EVENT}/{ettn}", json=event_update(ettn, 1)))
    assert body["title"] == "Duplicate ticket number"


def test_update_only_in_draft_or_error(sandbox, api):
    sandbox.configure(ticket_processing_seconds=60)
    ettn = create(api, event_ticket(status=20))
    body = refusal(put(api, f"{EVENT}/{ettn}", json=event_update(ettn)))
    assert body["title"] == "Update refused" and "(20)" in body["detail"]
    sandbox.configure(clock_offset_seconds=61)
    assert ticket(api, ettn)["status"] == 60
    assert "(60)" in refusal(put(api, f"{EVENT}/{ettn}", json=event_update(ettn)))["detail"]

    sandbox.configure(ticket_error_rate=1, clock_offset_seconds=0)
    failed = create(api, event_ticket(2, status=20))
    sandbox.configure(clock_offset_seconds=61)
    assert ticket(api, failed)["status"] == 40
    response = put(api, f"{EVENT}/{failed}", json=event_update(failed, 2, status=0))
    assert response.status_code == 200
    shown = ticket(api, failed)
    assert shown["status"] == 0 and shown["message"] == ""


# --- the state machine -------------------------------------------------------------------------------------

def test_a_queued_ticket_becomes_approved_after_the_delay(sandbox, api):
    sandbox.configure(ticket_processing_seconds=0.6)
    ettn = create(api, event_ticket(status=20))
    assert ticket(api, ettn)["status"] == 20
    deadline = datetime.datetime.now() + datetime.timedelta(seconds=10)
    while ticket(api, ettn)["status"] == 20 and datetime.datetime.now() < deadline:
        time.sleep(0.2)
    shown = ticket(api, ettn)
    assert shown["status"] == 60 and shown["message"] == ""


def test_with_error_rate_one_a_queued_ticket_settles_to_error_with_a_message(sandbox, api):
    sandbox.configure(ticket_processing_seconds=0, ticket_error_rate=1)
    ettn = create(api, passenger_ticket(status=20), PASSENGER)
    shown = ticket(api, ettn, PASSENGER)
    assert shown["status"] == 40 and shown["message"]


def test_an_error_rate_between_splits_the_tickets_repeatably(sandbox, api):
    sandbox.configure(ticket_processing_seconds=0, ticket_error_rate=0.5)
    ettns = [create(api, event_ticket(n, status=20)) for n in range(1, 41)]
    states = [item["status"] for item in api.post("ticket", f"{EVENT}/status", json=ettns).json()]
    assert set(states) == {40, 60}
    assert [item["status"] for item in api.post("ticket", f"{EVENT}/status", json=ettns).json()] == states


def test_status_of_several_lists_the_known_ones_in_order(sandbox, api):
    sandbox.configure(ticket_processing_seconds=0, ticket_error_rate=1)
    draft = create(api, event_ticket(1))
    failed = create(api, event_ticket(2, status=20))
    unknown = "00000000-0000-0000-0000-000000000000"
    answer = api.post("ticket", f"{EVENT}/status", json=[failed, unknown, draft]).json()
    assert [(item["id"], item["status"]) for item in answer] == [(failed, 40), (draft, 0)]
    assert answer[0]["message"] and answer[1]["message"] == ""
    refusal(api.post("ticket", f"{EVENT}/status", json={"nope": 1}))


def test_status_change_error_to_draft_to_queue(sandbox, api):
    sandbox.configure(ticket_processing_seconds=0, ticket_error_rate=1)
    ettn = create(api, event_ticket(status=20))
    assert ticket(api, ettn)["status"] == 40
    response = put(api, f"{EVENT}/updatestatuslist", json={"Ids": [ettn], "Status": 0})
    assert response.status_code == 200 and response.content in (b"", b"null")
    assert ticket(api, ettn)["status"] == 0
    sandbox.configure(ticket_error_rate=0)
    assert put(api, f"{EVENT}/updatestatuslist", json={"Ids": [ettn], "Status": 20}).status_code == 200
    assert ticket(api, ettn)["status"] == 60


@pytest.mark.parametrize("body,fields", [
    ({"ids": ["E"], "status": 20}, ["ids", "status"]),  # the spelling of public clients, not of document 2
    ({"Ids": ["E"], "status": 20}, ["status"]),
    ({"IDS": ["E"], "Status": 20}, ["IDS"]),
    ({"Ids": ["E"], "Status": "20"}, ["Status"]),
    ({"Ids": ["E"], "Status": True}, ["Status"]),
    ({"Ids": "E", "Status": 20}, ["Ids"]),
    ({"Ids": [1], "Status": 20}, ["Ids[0]"]),
])
def test_status_change_takes_the_documents_spelling_and_types_only(sandbox, api, body, fields):
    """Document 2, 4.1: "body with Ids (array of Guid) and Status"; the provider's client spells it so too."""
    ettn = create(api, event_ticket())
    body = {name: [ettn] if value == ["E"] else ettn if value == "E" else value for name, value in body.items()}
    errors = unbound(put(api, f"{EVENT}/updatestatuslist", json=body))
    assert sorted(errors) == sorted(fields)
    assert ticket(api, ettn)["status"] == 0
    if "ids" in fields:
        assert "Ids" in errors["ids"][0]  # the message says how the documents spell it


@pytest.mark.parametrize("body,field", [({"Ids": ["E"]}, "Ids"), ({"ids": ["E"], "reason": "x"}, "reason"),
                                        ({"ids": ["E", 2]}, "ids[1]")])
def test_cancel_takes_the_documents_spelling_ids_only(sandbox, api, body, field):
    """Document 2, 4.1: cancel takes "body with ids (array of Guid)"."""
    ettn = create(api, event_ticket())
    body = {name: [ettn if item == "E" else item for item in value] if isinstance(value, list) else value
            for name, value in body.items()}
    assert list(unbound(api.post("ticket", f"{EVENT}/cancel", json=body))) == [field]
    assert ticket(api, ettn)["status"] == 0


@pytest.mark.parametrize("start,target", [(0, 0), (60, 0), (60, 20), (40, 20), (100, 0), (20, 20)])
def test_status_changes_other_than_40_to_0_and_0_to_20_are_refused(sandbox, api, start, target):
    sandbox.configure(ticket_processing_seconds=0 if start != 20 else 60, ticket_error_rate=1 if start == 40 else 0)
    ettn = create(api, event_ticket(status=0 if start in (0, 100) else 20))
    if start == 100:
        api.post("ticket", f"{EVENT}/cancel", json={"ids": [ettn]})
    assert ticket(api, ettn)["status"] == start
    body = refusal(put(api, f"{EVENT}/updatestatuslist", json={"Ids": [ettn], "Status": target}))
    assert body["title"] == "Status change refused" and f"({start})" in body["detail"]
    assert ticket(api, ettn)["status"] == start


def test_status_change_is_all_or_nothing(sandbox, api):
    sandbox.configure(ticket_processing_seconds=60)
    draft = create(api, event_ticket(1))
    queued = create(api, event_ticket(2, status=20))
    body = refusal(put(api, f"{EVENT}/updatestatuslist", json={"Ids": [draft, queued], "Status": 20}))
    assert queued in body["detail"]
    assert ticket(api, draft)["status"] == 0


def test_status_change_bad_requests(sandbox, api):
    ettn = create(api, event_ticket())
    assert refusal(put(api, f"{EVENT}/updatestatuslist", json={"Ids": [ettn], "Status": 60}))["detail"].startswith(
        "Status: ")
    assert refusal(put(api, f"{EVENT}/updatestatuslist", json={"Ids": [ettn]}))["detail"].startswith("Status: ")
    assert refusal(put(api, f"{EVENT}/updatestatuslist", json={"Ids": [], "Status": 0}))["detail"].startswith("Ids: ")
    refusal(put(api, f"{EVENT}/updatestatuslist",
                json={"Ids": ["00000000-0000-0000-0000-000000000000"], "Status": 20}), 404)


def test_cancel_from_draft_error_and_approved(sandbox, api):
    sandbox.configure(ticket_processing_seconds=0)
    draft = create(api, event_ticket(1))
    approved = create(api, event_ticket(2, status=20))
    assert ticket(api, approved)["status"] == 60  # settled (when read) before the error rate changes
    sandbox.configure(ticket_error_rate=1)
    failed = create(api, event_ticket(3, status=20))
    assert [ticket(api, e)["status"] for e in (draft, approved, failed)] == [0, 60, 40]
    response = api.post("ticket", f"{EVENT}/cancel", json={"ids": [draft, approved, failed]})
    assert response.status_code == 200 and response.content in (b"", b"null")
    assert [ticket(api, e)["status"] for e in (draft, approved, failed)] == [100, 100, 100]
    # The approved one was reported: its report item now says cancelled.
    items = api.get("ticket", f"/v1/eventticketreport/partsbydate/{today()}",
                    params={"pageIndex": 1, "pageSize": 10}).json()["items"]
    assert [(item["ticketNumber"], item["canceled"]) for item in items] == [("ETK2025000000002", True)]
    assert items[0]["canceledDate"]


def test_cancel_refuses_queued_and_cancelled_tickets_with_an_error(sandbox, api):
    sandbox.configure(ticket_processing_seconds=60)
    queued = create(api, event_ticket(1, status=20))
    draft = create(api, event_ticket(2))
    body = refusal(api.post("ticket", f"{EVENT}/cancel", json={"ids": [draft, queued]}))
    assert body["title"] == "Cancel refused" and "queued" in body["detail"]
    assert ticket(api, draft)["status"] == 0  # all or nothing
    api.post("ticket", f"{EVENT}/cancel", json={"ids": [draft]})
    body = refusal(api.post("ticket", f"{EVENT}/cancel", json={"ids": [draft]}))
    assert "already cancelled" in body["detail"]
    refusal(api.post("ticket", f"{EVENT}/cancel", json={"ids": ["00000000-0000-0000-0000-000000000000"]}), 404)
    assert refusal(api.post("ticket", f"{EVENT}/cancel", json={"ids": []}))["detail"].startswith("ids: ")
    assert list(unbound(api.post("ticket", f"{EVENT}/cancel", json={"ids": "x"}))) == ["ids"]


# --- listing -----------------------------------------------------------------------------------------------

def test_list_pages_filters_and_sorts(sandbox, api):
    sandbox.configure(ticket_processing_seconds=0)
    for counter in range(1, 8):
        create(api, event_ticket(counter, status=20 if counter % 2 else 0, eventName=f"Etkinlik {counter}"))
    page = api.get("ticket", EVENT, params={"pageIndex": 2, "pageSize": 3}).json()
    assert (page["totalCount"], page["totalPages"], page["hasNextPage"], page["hasPreviousPage"]) == (7, 3, True, True)
    assert [item["ticketNumber"][-1] for item in page["items"]] == ["4", "5", "6"]

    def numbers(conditions, **params):
        response = api.get("ticket", EVENT, params={"pageIndex": 1, "pageSize": 50,
                                                   "queryFilter": json.dumps(conditions), **params})
        assert response.status_code == 200, response.text
        return [item["ticketNumber"][-1] for item in response.json()["items"]]

    assert numbers([{"category": "ticketNumber", "operator": "eşittir", "value": "ETK2025000000003"}]) == ["3"]
    assert numbers([{"category": "status", "operator": "eşittir", "value": "60"}]) == ["1", "3", "5", "7"]
    assert numbers([{"category": "status", "operator": "eşit değildir", "value": 60}],
                   sortedColumn="ticketNumber", isDesc="true") == ["6", "4", "2"]
    assert numbers([{"category": "eventName", "operator": "içeren", "value": "Etkinlik 5"}]) == ["5"]
    assert numbers([{"category": "ticketNumber", "operator": "ile başlayan", "value": "ETK20250000000"},
                    {"category": "ticketNumber", "operator": "büyüktür", "value": "ETK2025000000005"}]) == ["6", "7"]
    for bad in ("not json", '[{"category": "status", "operator": "like", "value": 1}]',
                '[{"category": "a.b", "operator": "eşittir", "value": 1}]'):
        assert refusal(api.get("ticket", EVENT, params={"pageIndex": 1, "pageSize": 5, "queryFilter": bad}))[
            "detail"].startswith("queryFilter: ")
    assert refusal(api.get("ticket", EVENT, params={"pageIndex": 1, "pageSize": 501}))["detail"].startswith("pageSize")


# --- HTML --------------------------------------------------------------------------------------------------

def html_of(api, ettn, standard, base=EVENT):
    response = api.get("ticket", f"{base}/{ettn}/html/{'true' if standard else 'false'}")
    assert response.status_code == 200, response.text
    assert list(response.json()) == ["Response"]
    return base64.b64decode(response.json()["Response"]).decode("utf-8")


def test_html_in_the_standard_and_the_company_layout(sandbox, customer_api):
    api, customer = customer_api()
    ettn = create(api, event_ticket(eventName="<script>alert(1)</script> Gala", xsltCode="KURUMSAL"))
    standard = html_of(api, ettn, True)
    assert 'data-layout="standard"' in standard and "ETK2025000000001" in standard and "İstanbul" in standard
    assert "<script>alert" not in standard and "&lt;script&gt;" in standard
    company = html_of(api, ettn, False)
    assert 'data-layout="company"' in company and customer["name"] in company and "KURUMSAL" in company
    passenger = html_of(api, create(api, passenger_ticket(), PASSENGER), True, PASSENGER)
    assert "34 ABC 123" in passenger and "E-Bilet (Yolcu)" in passenger
    assert refusal(api.get("ticket", f"{EVENT}/{ettn}/html/maybe"))["detail"].startswith("isStandartXslt")
    refusal(api.get("ticket", f"{EVENT}/00000000-0000-0000-0000-000000000000/html/true"), 404)


# --- exports -----------------------------------------------------------------------------------------------

def sheet_rows(content: bytes) -> list[tuple]:
    return list(load_workbook(io.BytesIO(content), read_only=True).active.iter_rows(values_only=True))


def history_ids(api, base=EVENT):
    response = api.get("ticket", f"{base}/export/history")
    assert response.status_code == 200
    return [item["exportId"] for item in response.json()]


def test_export_becomes_ready_is_a_zip_with_the_tickets_and_summary_and_expires(sandbox, api):
    sandbox.configure(ticket_processing_seconds=0, export_ready_seconds=60)
    for counter in range(1, 4):
        create(api, event_ticket(counter, status=20))
    create(api, event_ticket(4))  # a draft: not matched by status 60
    response = api.post("ticket", f"{EVENT}/export", json={"status": 60, "generateSummaryReport": True})
    assert response.status_code == 200, response.text
    export_id = response.json()["exportId"]
    assert history_ids(api) == []
    refusal(api.get("ticket", f"{EVENT}/export/{export_id}/download"), 404)  # still being prepared

    sandbox.configure(clock_offset_seconds=61)
    history = api.get("ticket", f"{EVENT}/export/history").json()
    assert [item["exportId"] for item in history] == [export_id]
    assert history[0]["fileName"].endswith(".zip") and history[0]["createdDate"]
    download = api.get("ticket", f"{EVENT}/export/{export_id}/download")
    assert download.status_code == 200 and download.headers["Content-Type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(download.content))
    assert sorted(archive.namelist()) == ["etkinlik-biletleri.xlsx", "ozet-rapor.xlsx"]
    rows = sheet_rows(archive.read("etkinlik-biletleri.xlsx"))
    assert rows[0][:3] == ("ETTN", "Bilet No", "Durum")
    assert [row[1] for row in rows[1:]] == ["ETK2025000000001", "ETK2025000000002", "ETK2025000000003"]
    summary = sheet_rows(archive.read("ozet-rapor.xlsx"))
    assert summary[1][:3] == ("approved", 60, 3) and summary[-1][:3] == ("Toplam", None, 3)
    assert summary[-1][3:] == (300, 60, 390)

    sandbox.configure(clock_offset_seconds=24 * 3600 - 5)
    assert api.get("ticket", f"{EVENT}/export/{export_id}/download").status_code == 200
    sandbox.configure(clock_offset_seconds=24 * 3600 + 1)
    body = refusal(api.get("ticket", f"{EVENT}/export/{export_id}/download"), 410)
    assert "24 hours" in body["detail"]
    refusal(api.get("ticket", f"{EVENT}/export/00000000-0000-0000-0000-000000000000/download"), 404)


def test_export_filters(sandbox, api):
    sandbox.configure(export_ready_seconds=0)
    first = create(api, passenger_ticket(1, departureDate="2025-06-01T08:30:00"), PASSENGER)
    create(api, passenger_ticket(2, departureDate="2025-06-02T08:30:00"), PASSENGER)
    create(api, passenger_ticket(3, departureDate="2025-06-03T08:30:00"), PASSENGER)

    def exported(filters):
        response = api.post("ticket", f"{PASSENGER}/export", json=filters)
        assert response.status_code == 200, response.text
        content = api.get("ticket", f"{PASSENGER}/export/{response.json()['exportId']}/download").content
        archive = zipfile.ZipFile(io.BytesIO(content))
        assert archive.namelist() == ["yolcu-biletleri.xlsx"]  # no summary unless asked
        return [row[1][-1] for row in sheet_rows(archive.read("yolcu-biletleri.xlsx"))[1:]]

    assert exported({}) == ["1", "2", "3"]
    assert exported({"ids": [first]}) == ["1"]
    assert exported({"departureStartDate": "2025-06-02", "departureEndDate": "2025-06-02"}) == ["2"]
    assert exported({"departureStartDate": "2025-06-02T00:00:00"}) == ["2", "3"]
    assert exported({"startDate": "2000-01-01", "endDate": "2000-12-31"}) == []
    assert exported({"status": 0, "isArchived": False}) == ["1", "2", "3"]
    assert refusal(api.post("ticket", f"{PASSENGER}/export", json={"status": 30}))["detail"].startswith("status: ")
    assert list(unbound(api.post("ticket", f"{PASSENGER}/export", json={"status": "60"}))) == ["status"]
    assert list(unbound(api.post("ticket", f"{PASSENGER}/export", json={"isArchived": "false"}))) == ["isArchived"]
    # Each kind's own members (document 2, 4.1 and 4.2), spelled exactly.
    for body, field in (({"generateSummaryReport": True}, "generateSummaryReport"),
                        ({"eventStartDate": "2025-06-01"}, "eventStartDate"),
                        ({"executionStartdate": "2025-06-01"}, "executionStartdate"),
                        ({"isarchived": True}, "isarchived")):
        assert list(unbound(api.post("ticket", f"{PASSENGER}/export", json=body))) == [field]
    for body, field in (({"isArchived": True}, "isArchived"), ({"generateSummaryReport": 1}, "generateSummaryReport")):
        assert list(unbound(api.post("ticket", f"{EVENT}/export", json=body))) == [field]
    assert refusal(api.post("ticket", f"{PASSENGER}/export", json={"departureStartDate": "x"}))["detail"].startswith(
        "departureStartDate: ")


# --- by-date reports ---------------------------------------------------------------------------------------

REPORTS = {
    "event_ticket": "/v1/eventticketreport/partsbydate/{}",
    "passenger_ticket": "/v1/passengerticketreport/partsbydate/{}",
    "passenger_list": "/v1/passengerticketlistreport/partsbydate/{}",
}


def report(api, kind, day, page_index=1, page_size=500):
    return api.get("ticket", REPORTS[kind].format(day), params={"pageIndex": page_index, "pageSize": page_size})


@pytest.mark.parametrize("kind", list(REPORTS))
def test_an_empty_report_is_no_error(sandbox, api, kind):
    response = report(api, kind, "2025-01-15")
    assert response.status_code == 200
    assert response.json() == {"pageIndex": 1, "pageSize": 500, "totalCount": 0, "totalPages": 0,
                               "hasNextPage": False, "hasPreviousPage": False, "items": []}


@pytest.mark.parametrize("bad", ["2025-13-01", "20250115", "15.01.2025", "2025-1-5", "yesterday"])
def test_a_report_date_not_yyyy_mm_dd_is_refused_with_a_message(sandbox, api, bad):
    assert refusal(report(api, "event_ticket", bad))["detail"].startswith("reportDate: ")


@pytest.mark.parametrize("params,field", [({"pageIndex": 0, "pageSize": 10}, "pageIndex"),
                                          ({"pageIndex": 1, "pageSize": 501}, "pageSize"),
                                          ({"pageSize": 10}, "pageIndex")])
def test_report_paging_parameters_are_checked(sandbox, api, params, field):
    response = api.get("ticket", REPORTS["event_ticket"].format("2025-01-15"), params=params)
    assert refusal(response)["detail"].startswith(field)


@pytest.mark.parametrize("kind", list(REPORTS))
def test_report_pages_walk_every_item_once(sandbox, customer_api, kind):
    api, customer = customer_api()
    other, _ = customer_api()
    created = sandbox.add_report_items(kind, "2025-03-10", 1234, customer_unique_id=customer["customer_unique_id"])
    assert created["created"] == 1234
    pages = [report(api, kind, "2025-03-10", index).json() for index in (1, 2, 3, 4)]
    assert [(p["totalCount"], p["totalPages"], len(p["items"]), p["hasNextPage"], p["hasPreviousPage"])
            for p in pages] == [(1234, 3, 500, True, False), (1234, 3, 500, True, True), (1234, 3, 234, False, True),
                                (1234, 3, 0, False, True)]
    number = "passengerListNumber" if kind == "passenger_list" else "ticketNumber"
    numbers = [item[number] for page in pages for item in page["items"]]
    assert numbers == [f"BNC2025{n:09d}" for n in range(1, 1235)]
    # The days around it and other customers see nothing.
    assert report(api, kind, "2025-03-09").json()["totalCount"] == 0
    assert report(api, kind, "2025-03-11").json()["totalCount"] == 0
    assert report(other, kind, "2025-03-10").json()["totalCount"] == 0


def test_report_items_have_the_shapes_of_the_documents(sandbox, api):
    sandbox.configure(ticket_processing_seconds=0)
    create(api, event_ticket(1, status=20))
    create(api, passenger_ticket(1, status=20, commissionAmount=..., destination="Ankara"), PASSENGER)
    create(api, event_ticket(2))  # a draft is not reported
    event_items = report(api, "event_ticket", today()).json()["items"]
    assert len(event_items) == 1
    assert set(event_items[0]) == {"ticketNumber", "executionDate", "eventDate", "locationCityCode",
                                   "locationMunicipality", "locationDescription", "paymentType", "totalAmount",
                                   "totalVat", "canceledDate", "canceled", "partIndex", "createDate"}
    assert event_items[0]["locationCityCode"] == 34 and event_items[0]["totalAmount"] == 100
    passenger_items = report(api, "passenger_ticket", today()).json()["items"]
    assert set(passenger_items[0]) == {"ticketNumber", "executionDate", "departureDate", "departureLocation",
                                       "destination", "expeditionTime", "expeditionNumber", "vehiclePlate",
                                       "paymentType", "totalAmount", "totalVat", "payableAmount", "canceledDate",
                                       "canceled", "partIndex", "createDate"}
    assert passenger_items[0]["payableAmount"] == 550


# --- cities and faults -------------------------------------------------------------------------------------

def test_city_list_has_the_81_provinces_by_plate_code(sandbox, api):
    cities = api.get("ticket", "/v1/city/list").json()
    assert len(cities) == 81 and [city["id"] for city in cities] == list(range(1, 82))
    names = {city["id"]: city["name"] for city in cities}
    assert (names[1], names[6], names[34], names[35], names[81]) == ("Adana", "Ankara", "İstanbul", "İzmir", "Düzce")


def test_timeout_after_creates_the_ticket_then_keeps_the_caller_waiting(sandbox, api):
    sandbox.add_fault(path="/ticket/v1/event-ticket", method="POST", timeout_seconds=2, timeout_after=True,
                      remaining=1)
    with pytest.raises(requests.Timeout):
        api.post("ticket", EVENT, json=event_ticket(1), timeout=0.5)
    # The platform has it already: found by number, and sending it again is a duplicate.
    found = api.get("ticket", EVENT, params={"pageIndex": 1, "pageSize": 5, "queryFilter": json.dumps(
        [{"category": "ticketNumber", "operator": "eşittir", "value": "ETK2025000000001"}])}).json()
    assert found["totalCount"] == 1 and found["items"][0]["status"] == 0
    assert refusal(api.post("ticket", EVENT, json=event_ticket(1)))["title"] == "Duplicate ticket number"


# Document 1, section 8: list operations return at most 500 records per page; more is refused, everywhere.
LIST_OPERATIONS = [("ticket", EVENT), ("ticket", PASSENGER), ("ticket", "/v1/passenger-list"),
                   ("ticket", REPORTS["event_ticket"].format("2025-01-15")),
                   ("ticket", REPORTS["passenger_ticket"].format("2025-01-15")),
                   ("ticket", REPORTS["passenger_list"].format("2025-01-15")),
                   ("invoice", "/v1/inboxinvoice/list"), ("ledger", "/v1/period/getperiodlist")]


@pytest.mark.parametrize("service,path", LIST_OPERATIONS)
def test_every_list_and_report_refuses_a_page_size_over_500(sandbox, api, service, path):
    assert api.get(service, path, params={"pageIndex": 1, "pageSize": 500}).status_code == 200
    refused = api.get(service, path, params={"pageIndex": 1, "pageSize": 501})
    assert refused.status_code in (400, 422) and "pageSize" in refused.text


def test_timeout_after_also_delays_a_refusal(sandbox, api):
    sandbox.add_fault(path="/ticket/v1/event-ticket", method="POST", timeout_seconds=0.5, timeout_after=True)
    started = time.monotonic()
    assert api.post("ticket", EVENT, json=event_ticket(ticketNumber=...)).status_code == 400
    assert time.monotonic() - started >= 0.5
    # Other operations of the service are not delayed.
    started = time.monotonic()
    assert api.get("ticket", "/v1/city/list").status_code == 200
    assert time.monotonic() - started < 0.5
