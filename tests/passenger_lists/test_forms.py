"""Every rule of document 2, section 4.3 (and the list rules of section 3) with bad input, on the field."""

import pytest

from backoffice.passenger_lists.choices import ListState
from backoffice.passenger_lists.forms import PassengerListExportForm, PassengerListForm
from backoffice.passenger_lists.models import PassengerList
from backoffice.tickets.choices import TicketStatus

from .conftest import EXPEDITION, OPERATOR, list_data, local_ticket

pytestmark = pytest.mark.django_db

OPERATOR_RULE = "Required: the vehicle operator's VKN/TCKN, title, tax office, commission and commission VAT"


def form(company, data, instance=None):
    return PassengerListForm(data=data, instance=instance or PassengerList(company=company), company=company)


@pytest.fixture
def expedition(company):
    return [local_ticket(company, seat=str(seat)) for seat in (1, 2)]


def test_a_valid_list(company, expedition):
    built = form(company, list_data())
    assert built.is_valid(), built.errors
    assert built.cleaned_data["vehicle_plate"] == "34ABC123"  # stored as the ticket form stores plates


@pytest.mark.parametrize("missing", ["expedition_number", "expedition_time", "vehicle_plate"])
def test_expedition_number_date_and_plate_are_required(company, expedition, missing):
    built = form(company, list_data(**{missing: ""}))
    assert not built.is_valid() and missing in built.errors


@pytest.mark.parametrize("plate", ["34/ABC", "A", "34 ABC 123 456 789 0"])
def test_a_plate_has_letters_and_digits(company, expedition, plate):
    built = form(company, list_data(vehicle_plate=plate))
    assert not built.is_valid() and "vehicle_plate" in built.errors


def test_a_bad_expedition_date_is_refused(company, expedition):
    built = form(company, list_data(expedition_time="0202-05-20T08:00"))
    assert not built.is_valid() and "expedition_time" in built.errors


# --- grouping (isManualPlate) --------------------------------------------------------------------------------

def test_grouped_by_plate_no_ticket_of_the_expedition_is_said_on_the_expedition_number(company, expedition):
    built = form(company, list_data(expedition_number="S-9999"))
    assert not built.is_valid()
    assert built.errors["expedition_number"] == ["No issued passenger ticket has expedition number S-9999 at "
                                                 "20.05.2026 08:00."]


def test_grouped_by_plate_another_date_matches_no_ticket(company, expedition):
    built = form(company, list_data(expedition_time="2026-05-20T09:00"))
    assert not built.is_valid() and "expedition_number" in built.errors


def test_grouped_by_plate_no_ticket_with_the_plate_is_said_on_the_plate(company, expedition):
    built = form(company, list_data(vehicle_plate="06 XYZ 99"))
    assert not built.is_valid()
    [message] = built.errors["vehicle_plate"]
    assert message.startswith("No ticket of this expedition has plate 06XYZ99 (its tickets have 34ABC123)")


def test_with_the_plate_given_by_hand_any_plate_groups_the_expedition(company, expedition):
    built = form(company, list_data(vehicle_plate="06 XYZ 99", is_manual_plate="on"))
    assert built.is_valid(), built.errors


@pytest.mark.parametrize("status", [TicketStatus.DRAFT, TicketStatus.ERROR, TicketStatus.CANCELLED])
def test_tickets_not_issued_do_not_count(company, status):
    local_ticket(company, remote_status=status)
    built = form(company, list_data())
    assert not built.is_valid() and "expedition_number" in built.errors


def test_another_companys_tickets_do_not_count(company, other_company):
    local_ticket(other_company)
    assert "expedition_number" in form(company, list_data()).errors


# --- the vehicle-operator rule -----------------------------------------------------------------------------------

@pytest.mark.parametrize("given", list(OPERATOR))
def test_one_operator_field_makes_all_five_required(company, expedition, given):
    built = form(company, list_data(**{given: OPERATOR[given]}))
    assert not built.is_valid()
    assert set(built.errors) == set(OPERATOR) - {given}
    assert all(errors[0].startswith(OPERATOR_RULE) for errors in built.errors.values())


def test_all_five_operator_fields_together(company, expedition):
    assert form(company, list_data(**OPERATOR)).is_valid()


@pytest.mark.parametrize("value, message", [
    ("1234567891", "This tax number (VKN) is not valid: its check digit does not match."),
    ("10000000147", "This national id (TCKN) is not valid: its check digits do not match."),
    ("12345", "Enter a tax number (VKN, 10 digits) or a national id (TCKN, 11 digits)."),
])
def test_the_operators_vkn_or_tckn_has_valid_check_digits(company, expedition, value, message):
    built = form(company, list_data(**{**OPERATOR, "vehicle_operating_vkn_tckn": value}))
    assert built.errors["vehicle_operating_vkn_tckn"] == [message]


@pytest.mark.parametrize("name", ["commission_amount", "commission_tax_amount"])
def test_commissions_are_not_negative(company, expedition, name):
    built = form(company, list_data(**{**OPERATOR, name: "-1"}))
    assert not built.is_valid() and name in built.errors


# --- update ------------------------------------------------------------------------------------------------------

def saved_list(company, **fields):
    return PassengerList.objects.create(company=company, expedition_number="S-1001",
                                        expedition_time=EXPEDITION, vehicle_plate="34ABC123",
                                        remote_id="list-1", passenger_list_number="YLS2026000000001", **fields)


def test_on_update_the_expedition_that_finds_the_list_does_not_change(company, expedition):
    plist = saved_list(company)
    built = form(company, list_data(expedition_number="S-2", vehicle_plate="06XYZ99", **OPERATOR), instance=plist)
    assert built.is_valid(), built.errors
    assert (built.cleaned_data["expedition_number"], built.cleaned_data["vehicle_plate"]) == ("S-1001", "34ABC123")


def test_on_update_a_plate_given_by_hand_may_change(company, expedition):
    plist = saved_list(company, is_manual_plate=True)
    built = form(company, list_data(vehicle_plate="06XYZ99"), instance=plist)
    assert built.is_valid(), built.errors
    assert built.cleaned_data["vehicle_plate"] == "06XYZ99" and built.cleaned_data["is_manual_plate"] is True


@pytest.mark.parametrize("state", [ListState.REPORTED, ListState.REPLACED])
def test_a_reported_or_replaced_list_cannot_be_updated(company, expedition, state):
    plist = saved_list(company, state=state)
    built = form(company, list_data(), instance=plist)
    assert not built.is_valid()
    assert built.non_field_errors() == ["A list reported to the tax authority, or replaced, cannot be updated; "
                                        "build it again to replace it."]


def test_the_export_range_is_in_order():
    built = PassengerListExportForm(data={"startDate": "2026-05-21T00:00", "endDate": "2026-05-20T00:00"})
    assert built.errors == {"endDate": ["The end is before the start."]}
    assert PassengerListExportForm(data={"startDate": "2026-05-20", "endDate": "2026-05-21"}).is_valid()
