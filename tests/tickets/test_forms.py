"""Every rule of document 2, sections 2.1 to 2.4 and 3, fed bad input: the message lands on its field."""

from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.utils import translation

from backoffice.core.choices import SyncState
from backoffice.core.provinces import PROVINCES, province_choices
from backoffice.tickets.choices import TicketStatus
from backoffice.tickets.families import TicketExportForm
from backoffice.tickets.forms import EventTicketForm, PassengerTicketForm, TicketLineFormSet
from backoffice.tickets.models import EventTicket, PassengerTicket

from .conftest import TCKN, TCKN_2, VKN, VKN_2, event_data, line_data, passenger_data

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def english():
    with translation.override("en"):
        yield


def event_form(company, instance=None, **overrides):
    instance = instance or EventTicket(company=company)
    return EventTicketForm(data=event_data(**overrides), instance=instance, company=company)


def passenger_form(company, instance=None, **overrides):
    instance = instance or PassengerTicket(company=company)
    return PassengerTicketForm(data=passenger_data(**overrides), instance=instance, company=company)


def errors_of(form, field):
    assert not form.is_valid()
    return " ".join(form.errors.get(field, []))


def test_valid_event_and_passenger_forms(company):
    event = event_form(company)
    assert event.is_valid(), event.errors
    passenger = passenger_form(company)
    assert passenger.is_valid(), passenger.errors
    assert passenger.cleaned_data["vehicle_plate"] == "34ABC123"  # grouped by plate: no spaces, capitals
    assert event.cleaned_data["event_city"] == "İstanbul"  # filled from the province


# --- 2.1: status, documentType, ticketNumber and prefix, currency --------------------------------------

@pytest.mark.parametrize("status", ["40", "60", "100", "abc"])
def test_create_and_update_accept_only_status_0_or_20(company, status):
    assert "saved as a draft or sent to be queued" in errors_of(event_form(company, requested_status=status), "requested_status")


@pytest.mark.parametrize("status", ["0", "20", ""])
def test_status_0_20_or_empty_is_accepted(company, status):
    form = event_form(company, requested_status=status)
    assert form.is_valid(), form.errors
    assert form.cleaned_data["requested_status"] in (TicketStatus.DRAFT, TicketStatus.QUEUED)


def test_document_type_is_sale_or_refund(company):
    assert "valid choice" in errors_of(event_form(company, document_type="2"), "document_type")


@pytest.mark.parametrize("prefix, message", [
    ("", "required"), ("AB", "at least 3"), ("ABCD", "at most 3"), ("A-1", "three capital letters or digits"),
    ("ÇÖŞ", "three capital letters or digits"),
])
def test_prefix_is_three_capital_letters_or_digits(company, prefix, message):
    assert message in errors_of(event_form(company, prefix=prefix), "prefix")


def test_prefix_is_taken_in_capitals(company):
    form = event_form(company, prefix="et1")
    assert form.is_valid(), form.errors
    assert form.cleaned_data["prefix"] == "ET1"


def test_prefix_must_equal_the_first_three_characters_of_the_ticket_number(company):
    ticket = EventTicket(company=company, ticket_number="ETK2026000000001", prefix="ABC")
    with pytest.raises(ValidationError) as info:
        ticket.clean()
    assert "first three characters of the ticket number (ETK)" in " ".join(info.value.message_dict["prefix"])


@pytest.mark.parametrize("number", ["ETK202600000001", "etk2026000000001", "ETK1999000000001", "ETK2026-00000001"])
def test_ticket_number_is_16_characters_prefix_year_counter(company, number):
    ticket = EventTicket(company=company, ticket_number=number, prefix=number[:3])
    with pytest.raises(ValidationError) as info:
        ticket.clean_fields(exclude=[f.name for f in EventTicket._meta.fields if f.name != "ticket_number"])
    assert "document number" in " ".join(info.value.message_dict["ticket_number"])


def test_update_form_has_no_prefix_or_number_field(company):
    ticket = EventTicket.objects.create(company=company, ticket_number="ETK2026000000001", prefix="ETK",
                                        event_name="x", event_location="y", event_city_id=6,
                                        event_municipality="z", event_organizer_vkn_tckn=VKN, payment_type="NAKIT")
    form = EventTicketForm(instance=ticket, company=company)
    assert "prefix" not in form.fields and "ticket_number" not in form.fields


@pytest.mark.parametrize("value, message", [
    ("", "never empty: use TRY"), ("   ", "never empty: use TRY"), ("TL", "three-letter currency code"),
    ("EURO", "at most 3"), ("12A", "three-letter currency code"),
])
def test_currency_code_is_never_empty(company, value, message):
    assert message in errors_of(event_form(company, currency_code=value), "currency_code")


def test_currency_code_defaults_to_try_and_is_taken_in_capitals(company):
    assert EventTicketForm(instance=EventTicket(company=company), company=company)["currency_code"].initial == "TRY"
    form = event_form(company, currency_code="eur")
    assert form.is_valid() and form.cleaned_data["currency_code"] == "EUR"


@pytest.mark.parametrize("value, message", [("0", "greater than zero"), ("-1", "greater than zero"),
                                            ("abc", "Enter a number")])
def test_exchange_rate_is_positive(company, value, message):
    assert message in errors_of(event_form(company, exchange_rate=value), "exchange_rate")


def test_customer_email_is_required_when_the_ticket_is_sent_by_email(company):
    assert "required when the ticket is sent by e-mail" in errors_of(
        event_form(company, is_email_send="on", customer_email=""), "customer_email")
    assert "valid email" in errors_of(event_form(company, is_email_send="on", customer_email="ayse@"),
                                      "customer_email")
    assert event_form(company, is_email_send="on", customer_email="ayse@example.com").is_valid()
    assert event_form(company, customer_email="").is_valid()


def test_payment_type_is_required_and_one_of_the_nine(company):
    assert "required" in errors_of(event_form(company, payment_type=""), "payment_type")
    assert "valid choice" in errors_of(event_form(company, payment_type="CEK"), "payment_type")


def test_payment_description_is_required_when_payment_type_is_diger(company):
    assert "Describe the payment" in errors_of(event_form(company, payment_type="DIGER"), "payment_description")
    assert "Describe the payment" in errors_of(event_form(company, payment_type="DIGER", payment_description="  "),
                                               "payment_description")
    assert event_form(company, payment_type="DIGER", payment_description="Hediye çeki").is_valid()


def test_record_expenses_vkn_tckn_and_title_go_together(company):
    assert "together with its VKN/TCKN" in errors_of(event_form(company, record_expenses_vkn_tckn=VKN),
                                                     "record_expenses_title")
    assert "together with its title" in errors_of(event_form(company, record_expenses_title="Acme A.Ş."),
                                                  "record_expenses_vkn_tckn")
    assert event_form(company, record_expenses_vkn_tckn=TCKN, record_expenses_title="Acme A.Ş.").is_valid()


@pytest.mark.parametrize("value, message", [
    ("123", "tax number (VKN, 10 digits) or a national id"), ("1234567891", "check digit does not match"),
    ("10000000147", "check digits do not match"),
])
def test_record_expenses_vkn_tckn_has_check_digits(company, value, message):
    assert message in errors_of(event_form(company, record_expenses_vkn_tckn=value, record_expenses_title="X"),
                                "record_expenses_vkn_tckn")


def test_customer_country_is_two_letters(company):
    assert "two-letter country code" in errors_of(event_form(company, customer_country="T1"), "customer_country")
    form = event_form(company, customer_country="tr")
    assert form.is_valid() and form.cleaned_data["customer_country"] == "TR"


@pytest.mark.parametrize("value, message", [
    ("1234567891", "check digit does not match"), ("10000000147", "check digits do not match"),
    ("A-1", "passport number"),
])
def test_event_identifier_is_a_tax_number_national_id_or_passport(company, value, message):
    assert message in errors_of(event_form(company, identifier=value), "identifier")


@pytest.mark.parametrize("value", ["", VKN, TCKN, "U12345678"])
def test_event_identifier_is_optional(company, value):
    assert event_form(company, identifier=value).is_valid()


@pytest.mark.parametrize("value, message", [
    ("", "required"), (VKN, "national id (TCKN, 11 digits) or passport number"),
    ("10000000147", "check digits do not match"), ("AB", "passport number"),
])
def test_passenger_identifier_is_required_national_id_or_passport(company, value, message):
    assert message in errors_of(passenger_form(company, identifier=value), "identifier")


@pytest.mark.parametrize("value", [TCKN_2, "U12345678", "p 1234 567"])
def test_passenger_identifier_accepts_national_id_or_passport(company, value):
    assert passenger_form(company, identifier=value).is_valid()


@pytest.mark.parametrize("name", ["ticket_date", "event_time"])
@pytest.mark.parametrize("value, message", [("yesterday", "valid date/time"), ("1899-01-01T10:00", "2000 and 2099")])
def test_dates_are_dates_of_this_century(company, name, value, message):
    assert message in errors_of(event_form(company, **{name: value}), name)


def test_notes_are_one_per_line_of_at_most_500_characters(company):
    form = event_form(company, notes_text="Kapı 3\n\n  Ön sıra  ")
    assert form.is_valid() and form.cleaned_data["notes_text"] == ["Kapı 3", "Ön sıra"]
    assert "at most 500" in errors_of(event_form(company, notes_text="x" * 501), "notes_text")


# --- 2.2 event tickets -------------------------------------------------------------------------------------

def test_seat_number_is_required_at_create(company):
    assert "required" in errors_of(event_form(company, seat_number=""), "seat_number")


def test_seat_number_is_optional_at_update_and_the_province_not_in_the_update_model(company):
    ticket = EventTicket.objects.create(company=company, ticket_number="ETK2026000000001", prefix="ETK",
                                        event_name="x", event_location="y", event_city_id=6, seat_number="A1",
                                        event_municipality="z", event_organizer_vkn_tckn=VKN, payment_type="NAKIT")
    form = event_form(company, instance=ticket, seat_number="", event_city_id="99")
    assert form.is_valid(), form.errors
    assert "event_city_id" not in form.fields
    form.save()
    ticket.refresh_from_db()
    assert ticket.event_city_id == 6  # not changed by an update


@pytest.mark.parametrize("name", ["event_name", "event_location", "event_municipality", "event_organizer_vkn_tckn",
                                  "event_city_id"])
def test_event_fields_required_at_create(company, name):
    assert "required" in errors_of(event_form(company, **{name: ""}), name)


@pytest.mark.parametrize("value", ["0", "82", "-1", "İstanbul"])
def test_event_city_is_a_province_plate_code_1_to_81(company, value):
    assert "province from the list (plate codes 1 to 81)" in errors_of(event_form(company, event_city_id=value),
                                                                       "event_city_id")


def test_provinces_are_chosen_by_name_with_their_plate_code():
    choices = province_choices()
    assert len(choices) == 81 == len(PROVINCES)
    assert sorted(code for code, _label in choices) == list(range(1, 82))
    labels = [label for _code, label in choices]
    assert labels[0] == "Adana (01)" and "İstanbul (34)" in labels and "Düzce (81)" in labels
    # Turkish order: Çanakkale after Bursa and before Denizli, Iğdır before İstanbul, Şanlıurfa after Sivas.
    names = [label.rsplit(" (", 1)[0] for label in labels]
    assert names.index("Bursa") < names.index("Çanakkale") < names.index("Denizli")
    assert names.index("Iğdır") < names.index("İstanbul") < names.index("İzmir")
    assert names.index("Sivas") < names.index("Şanlıurfa") < names.index("Tekirdağ")


@pytest.mark.parametrize("value, message", [
    ("12345", "10 or 11 digits"), ("123456789012", "at most 11 characters"), ("ABCDEFGHIJ", "10 or 11 digits"),
    ("1234567891", "check digit does not match"), ("10000000147", "check digits do not match"),
])
def test_organizer_vkn_tckn_has_10_or_11_digits(company, value, message):
    assert message in errors_of(event_form(company, event_organizer_vkn_tckn=value), "event_organizer_vkn_tckn")


@pytest.mark.parametrize("value", [VKN_2, TCKN])
def test_organizer_vkn_or_tckn_accepted(company, value):
    assert event_form(company, event_organizer_vkn_tckn=value).is_valid()


# --- 2.3 passenger tickets ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["vehicle_plate", "expedition_time", "expedition_number", "departure_date",
                                  "departure_location", "seat_number"])
def test_passenger_fields_required(company, name):
    assert "required" in errors_of(passenger_form(company, **{name: ""}), name).lower() or \
        "Enter the vehicle plate" in errors_of(passenger_form(company, **{name: ""}), name)


def test_plate_has_letters_and_digits_only(company):
    assert "letters and digits only" in errors_of(passenger_form(company, vehicle_plate="34/ABC/123"),
                                                  "vehicle_plate")


OPERATOR = {"vehicle_operating_vkn_tckn": VKN, "vehicle_operating_title": "Anadolu Turizm",
            "vehicle_operating_tax_center": "Kadıköy", "commission_amount": "40.00", "commission_tax_amount": "8.00"}


@pytest.mark.parametrize("given", list(OPERATOR))
def test_one_vehicle_operator_field_makes_all_five_required(company, given):
    form = passenger_form(company, **{given: OPERATOR[given]})
    assert not form.is_valid()
    for name in OPERATOR:
        if name == given:
            assert name not in form.errors
        else:
            assert "given together" in " ".join(form.errors[name])


def test_the_five_vehicle_operator_fields_together_are_accepted(company):
    form = passenger_form(company, **OPERATOR)
    assert form.is_valid(), form.errors


def test_vehicle_operator_vkn_tckn_has_check_digits_and_commission_is_not_negative(company):
    form = passenger_form(company, **{**OPERATOR, "vehicle_operating_vkn_tckn": "1234567891",
                                      "commission_amount": "-5"})
    assert "check digit" in errors_of(form, "vehicle_operating_vkn_tckn")
    assert "greater than or equal to 0" in errors_of(form, "commission_amount")


# --- 2.4 lines ---------------------------------------------------------------------------------------------

def lines_formset(*rows):
    return TicketLineFormSet(data=line_data(rows=rows), prefix="lines")


def line_errors(formset, field):
    assert not formset.is_valid()
    return " ".join(" ".join(form.errors.get(field, [])) for form in formset.forms)


@pytest.mark.parametrize("row, field, message", [
    ({"service_description": "Bilet"}, "amount", "Enter the line's amount"),
    ({"amount": "-1"}, "amount", "greater than or equal to 0"),
    ({"amount": "1,234"}, "amount", "more than 2 decimal places"),
    ({"amount": "12345678901.00"}, "amount", "no more than 12 digits"),
    ({"amount": "abc"}, "amount", "Enter a number"),
    ({"amount": "10", "discount_rate": "101"}, "discount_rate", "less than or equal to 100"),
    ({"amount": "10", "discount_rate": "-1"}, "discount_rate", "greater than or equal to 0"),
    ({"amount": "10", "vat_rate": "120"}, "vat_rate", "less than or equal to 100"),
])
def test_line_rules(row, field, message):
    with translation.override("en"):
        assert message in line_errors(lines_formset(row), field)


# Several taxes per line (document 2, 2.4: taxes is an array); a wrong one is marked on its own field.
GOOD_TAX = {"tax_code": "9021", "tax_name": "Eğlence vergisi", "taxt_rate": "5"}


@pytest.mark.parametrize("tax, field, message", [
    ({"taxt_rate": "5"}, "tax_code", "tax code of the other tax"),
    ({"tax_code": "4071"}, "taxt_rate", "rate of the other tax"),
    ({"tax_name": "ÖİV"}, "tax_code", "tax code of the other tax"),
    ({"tax_name": "ÖİV"}, "taxt_rate", "rate of the other tax"),
    ({"tax_code": "4071", "taxt_rate": "101"}, "taxt_rate", "less than or equal to 100"),
    ({"tax_code": "4071", "taxt_rate": "-1"}, "taxt_rate", "greater than or equal to 0"),
    ({"tax_code": "4071", "taxt_rate": "x"}, "taxt_rate", "Enter a number"),
    ({"tax_code": "40711234567", "taxt_rate": "1"}, "tax_code", "at most 10 characters"),
])
def test_tax_rules_mark_the_field_of_the_tax_that_is_wrong(tax, field, message):
    formset = lines_formset({"amount": "10", "taxes": [GOOD_TAX, tax]})
    with translation.override("en"):
        assert not formset.is_valid()
        good, bad = formset.forms[0].taxes.forms
        assert not good.errors and message in " ".join(bad.errors[field])
        assert formset.total_error_count() >= 1  # the page says "correct the fields marked below"


def test_a_line_keeps_all_its_taxes_in_order_and_drops_removed_and_empty_ones():
    formset = lines_formset({"amount": "100", "taxes": [
        GOOD_TAX, {"tax_code": "0071", "taxt_rate": "1,5"}, {"tax_code": "4080", "taxt_rate": "x", "DELETE": "on"},
        {"tax_code": "", "tax_name": "", "taxt_rate": ""}]})
    assert formset.is_valid(), formset.errors
    assert formset.lines()[0]["taxes"] == [
        {"tax_code": "9021", "tax_name": "Eğlence vergisi", "taxt_rate": Decimal("5")},
        {"tax_code": "0071", "tax_name": "", "taxt_rate": Decimal("1.5")}]


def test_a_tax_without_the_lines_amount_asks_for_the_amount():
    formset = lines_formset({"taxes": [GOOD_TAX]})
    with translation.override("en"):
        assert "Enter the line's amount" in line_errors(formset, "amount")


def test_at_most_10_taxes_on_a_line():
    formset = lines_formset({"amount": "10", "taxes": [GOOD_TAX] * 11})
    with translation.override("en"):
        assert not formset.is_valid()
        assert "at most 10 other taxes" in " ".join(formset.forms[0].taxes.non_form_errors())


def test_a_line_without_tax_fields_has_no_taxes_but_tax_fields_without_their_count_are_refused():
    data = {key: value for key, value in line_data(rows=[{"amount": "10"}]).items()
            if not key.startswith("lines-0-taxes-")}
    formset = TicketLineFormSet(data=data, prefix="lines")
    assert formset.is_valid(), formset.errors
    assert formset.lines()[0]["taxes"] == []
    data["lines-0-taxes-0-tax_code"] = "9021"
    formset = TicketLineFormSet(data=data, prefix="lines")
    assert not formset.is_valid() and formset.forms[0].taxes.non_form_errors()


def test_empty_extra_lines_and_deleted_lines_are_ignored():
    formset = TicketLineFormSet(data={**line_data(rows=[{"amount": "10"}, {"amount": "x", "DELETE": "on"}], total=3)},
                                prefix="lines")
    assert formset.is_valid(), formset.errors
    assert [line["amount"] for line in formset.lines()] == [Decimal("10.00")]


def test_at_most_100_lines():
    formset = TicketLineFormSet(data=line_data(rows=[{"amount": "1"}] * 101), prefix="lines")
    assert not formset.is_valid()
    assert "101" not in str(formset.non_form_errors()) or formset.non_form_errors()


def test_missing_management_form_is_an_error_not_a_crash():
    formset = TicketLineFormSet(data={"lines-0-amount": "1"}, prefix="lines")
    assert not formset.is_valid() and formset.non_form_errors()


# --- exports ----------------------------------------------------------------------------------------------

def test_export_form_date_ranges_and_kind_fields():
    form = TicketExportForm(data={"startDate": "2026-03-10T00:00", "endDate": "2026-03-01T00:00"}, kind="event")
    assert "end is before the start" in errors_of(form, "endDate")
    assert "generateSummaryReport" in form.fields and "isArchived" not in form.fields
    form = TicketExportForm(data={"status": "40"}, kind="passenger")
    assert form.is_valid() and "isArchived" in form.fields and "departureStartDate" in form.fields
    assert "not one of the available choices" in errors_of(TicketExportForm(data={"status": "10"}), "status")


def test_sync_state_default_of_a_new_ticket(company):
    assert EventTicket(company=company).sync_state == SyncState.LOCAL
