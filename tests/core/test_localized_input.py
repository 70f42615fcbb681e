"""Numbers and phone numbers as people in Turkey type them (issue 9, point 8): 1.250,75 is 1250.75, never
125075; 0532 123 45 67 is the spec's 5321234567."""

from decimal import Decimal

import pytest
from django import forms
from django.utils import translation

from backoffice.core.fields import (
    LocalizedDecimalField,
    LocalizedIntegerField,
    NumberFormatError,
    PhoneField,
    format_decimal,
    parse_decimal,
)
from backoffice.core.validators import normalize_phone


@pytest.mark.parametrize("typed,number", [
    ("1.250,75", "1250.75"),
    ("1250,75", "1250.75"),
    ("1250.75", "1250.75"),
    ("1.250", "1250"),             # Turkish thousands
    ("12.500", "12500"),
    ("999.999", "999999"),
    ("1.250.000", "1250000"),
    ("1.250.000,5", "1250000.5"),
    ("1,250.75", "1250.75"),       # English, unambiguous: both separators
    ("1,250,000", "1250000"),
    ("1,250,000.25", "1250000.25"),
    ("1 250,75", "1250.75"),       # spaces between thousands
    ("1\u00a0250,75", "1250.75"),  # a no-break space (copied from a spreadsheet)
    ("1 250.75", "1250.75"),
    ("1250", "1250"),
    ("0", "0"),
    ("0,5", "0.5"),
    (",5", "0.5"),
    (".5", "0.5"),
    ("1.25", "1.25"),              # two decimals: not thousands
    ("1.2", "1.2"),
    ("0.250", "0.250"),            # thousands never start with 0
    ("1250.750", "1250.750"),      # four digits before the dot: a decimal
    ("12,500", "12.500"),          # a single comma is the decimal comma
    ("  18 ", "18"),
    ("-3,5", "-3.5"),
    ("\u22123,5", "-3.5"),         # a typographic minus
    ("+7", "7"),
    ("₺1.250,75", "1250.75"),
    ("1.250,75 TL", "1250.75"),
    ("1.250,75 try", "1250.75"),
    ("%18", "18"),
    ("18 %", "18"),
    ("0,000001", "0.000001"),
])
def test_parse(typed, number):
    assert parse_decimal(typed) == Decimal(number)


@pytest.mark.parametrize("typed", [
    "", " ", "abc", "12a", "1e5", "NaN", "Infinity", "-", ",", ".", "5,", "5.", "1,2,3", "1.2.3", "12.50,75",
    "1.250,75,3", "1,250.75.3", "1..250", "1,,5", "1'250", "1.2345,6", "1 250.000", "1 2", "12 3456", "--5",
    "1.250,-5", "5-", "1/2", "0x10", "½",
])
def test_refused(typed):
    with pytest.raises(NumberFormatError):
        parse_decimal(typed)


@pytest.mark.parametrize("number,places,text", [
    (Decimal("1250.75"), 2, "1.250,75"),
    (Decimal(1250), 2, "1.250,00"),
    (Decimal("0.5"), 2, "0,50"),
    (Decimal("1234567.891"), 2, "1.234.567,89"),
    (Decimal("-1250.5"), 2, "-1.250,50"),
    (Decimal("18.00"), None, "18"),
    (Decimal("12.50"), None, "12,5"),
    (Decimal(1000), None, "1.000"),
    (Decimal("32.123400"), None, "32,1234"),
    (Decimal("1.125"), None, "1,125"),
    (1250, 0, "1.250"),
])
def test_format_reads_back(number, places, text):
    assert format_decimal(number, places) == text
    expected = Decimal(number) if places is None else Decimal(number).quantize(Decimal(10) ** -places)
    assert parse_decimal(text) == expected


class MoneyForm(forms.Form):
    amount = LocalizedDecimalField(max_digits=12, decimal_places=2, min_value=Decimal(0), display_places=2,
                                   required=False)
    rate = LocalizedDecimalField(max_digits=5, decimal_places=2, max_value=Decimal(100), required=False)
    quantity = LocalizedIntegerField(min_value=1, required=False)


@pytest.mark.parametrize("typed,amount", [("1.250,75", "1250.75"), ("1250,75", "1250.75"),
                                          ("1250.75", "1250.75"), ("1.250", "1250"), ("", None)])
def test_decimal_field_cleans(typed, amount):
    form = MoneyForm({"amount": typed})
    assert form.is_valid(), form.errors
    assert form.cleaned_data["amount"] == (Decimal(amount) if amount else None)


def test_decimal_field_message_on_the_field():
    with translation.override("en"):
        form = MoneyForm({"amount": "12,50,75", "rate": "1.250,5"})
        assert not form.is_valid()
        assert form.errors["amount"] == [str(LocalizedDecimalField.default_error_messages["invalid"])]
        assert "1.250,75" in form.errors["amount"][0]
        # Read correctly, then refused by the field's own rules (at most 100).
        assert "100" in form.errors["rate"][0]


def test_decimal_field_keeps_its_places_rule():
    with translation.override("en"):
        form = MoneyForm({"amount": "1,255"})  # 1.255: three decimals for a money field
        assert not form.is_valid()
        assert "2 decimal places" in form.errors["amount"][0]


def test_decimal_field_renders_turkish_in_a_text_input():
    html = str(MoneyForm(initial={"amount": Decimal("1250.75"), "rate": Decimal("18.00"), "quantity": 1000})
               ["amount"])
    assert 'type="text"' in html and 'inputmode="decimal"' in html and 'value="1.250,75"' in html
    assert "step" not in html
    form = MoneyForm(initial={"rate": Decimal("18.00"), "quantity": 1000})
    assert 'value="18"' in str(form["rate"]) and 'value="1.000"' in str(form["quantity"])
    # Sent back with an error, a value is shown as it was typed.
    bound = MoneyForm({"amount": "12,50,75"})
    bound.is_valid()
    assert 'value="12,50,75"' in str(bound["amount"])


def test_unchanged_rendered_value_is_not_a_change():
    form = MoneyForm({"amount": "1.250,75", "rate": "18", "quantity": "1.000"},
                     initial={"amount": Decimal("1250.75"), "rate": Decimal("18.00"), "quantity": 1000})
    assert not form.has_changed()


@pytest.mark.parametrize("typed,quantity", [("1.000", 1000), ("1000", 1000), ("1.000.000", 1000000),
                                            ("2 500", 2500), ("1.000,00", 1000)])
def test_integer_field(typed, quantity):
    form = MoneyForm({"quantity": typed})
    assert form.is_valid(), form.errors
    assert form.cleaned_data["quantity"] == quantity


@pytest.mark.parametrize("typed", ["1.000,5", "1,5", "abc", "1e3"])
def test_integer_field_refuses(typed):
    with translation.override("en"):
        form = MoneyForm({"quantity": typed})
        assert not form.is_valid()
        assert "whole number" in form.errors["quantity"][0]


# --- phone numbers ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("typed", ["5321234567", "05321234567", "0532 123 45 67", "0532-123-45-67",
                                   "(0532) 123 45 67", "0 (532) 123 45 67", "+90 532 123 45 67", "+905321234567",
                                   "0090 532 123 4567", "90 532 123 45 67", "532.123.45.67", " 0532 123 45 67 ",
                                   "0532\u00a0123\u00a045\u00a067", "532/123 45 67"])
def test_phone_normalised(typed):
    assert normalize_phone(typed) == "5321234567"


class PhoneForm(forms.Form):
    phone = PhoneField()


@pytest.mark.parametrize("typed", ["0532 123 45 67", "+90 (532) 123-45-67", "5321234567", "0090 532 123 45 67"])
def test_phone_field_stores_the_spec_form(typed):
    form = PhoneForm({"phone": typed})
    assert form.is_valid(), form.errors
    assert form.cleaned_data["phone"] == "5321234567"


@pytest.mark.parametrize("typed,message", [
    ("0212 123 45 67", "ten digits starting with 5"),      # a landline
    ("0532 123 45 6", "ten digits starting with 5"),       # a digit missing
    ("0532 123 45 678", "ten digits starting with 5"),     # a digit too many
    ("+49 532 123 45 67", "ten digits starting with 5"),   # another country
    ("00 532 123 45 67", "ten digits starting with 5"),
    ("0532 ABC 45 67", "digits only"),
    ("phone", "digits only"),
    ("+90 532 123 45 67 ext 2", "digits only"),
])
def test_phone_field_refuses(typed, message):
    with translation.override("en"):
        form = PhoneForm({"phone": typed})
        assert not form.is_valid()
        assert message in form.errors["phone"][0]


def test_phone_field_renders_a_tel_input():
    html = str(PhoneForm()["phone"])
    assert 'type="tel"' in html and 'inputmode="tel"' in html and "maxlength" not in html


# --- the project's forms use them --------------------------------------------------------------------------

@pytest.mark.parametrize("typed,amount", [("1.250,75", "1250.75"), ("1250,75", "1250.75"), ("1250.75", "1250.75"),
                                          ("1.250", "1250")])
def test_ticket_line_amount(typed, amount):
    from backoffice.tickets.forms import TicketLineForm

    form = TicketLineForm({"amount": typed, "vat_rate": "20", "discount_rate": "%12,5"})
    assert form.is_valid(), form.errors
    assert form.line()["amount"] == Decimal(amount) and form.line()["discount_rate"] == Decimal("12.5")


def test_ticket_line_amount_refused_on_its_field():
    from backoffice.tickets.forms import TicketLineForm

    with translation.override("en"):
        form = TicketLineForm({"amount": "1.2.3,4", "vat_rate": "200"})
        assert not form.is_valid()
        assert "1.250,75" in form.errors["amount"][0]
        assert "100" in form.errors["vat_rate"][0]


def test_passenger_list_commission_and_exchange_rate_fields_are_localized():
    from backoffice.passenger_lists.forms import PassengerListForm
    from backoffice.tickets.forms import EventTicketForm

    assert isinstance(PassengerListForm.base_fields["commission_amount"], LocalizedDecimalField)
    assert isinstance(EventTicketForm.base_fields["exchange_rate"], LocalizedDecimalField)
    assert EventTicketForm.base_fields["exchange_rate"].clean("32,1234") == Decimal("32.1234")


def test_company_credit_quantity_reads_turkish_thousands():
    from backoffice.core.forms import CompanyForm

    field = CompanyForm.base_fields["credit_quantity"]
    assert isinstance(field, LocalizedIntegerField)
    assert field.clean("1.000.000") == 1_000_000 and field.clean("10000") == 10_000


@pytest.mark.django_db
@pytest.mark.parametrize("typed", ["0532 123 45 67", "+90 532 123 45 67", "(0532) 123-45-67"])
def test_subcompany_contact_phone_is_stored_normalised(typed):
    from backoffice.subcompanies.forms import CreditForm, SubCompanyForm
    from tests.subcompanies.conftest import subcompany_data

    form = SubCompanyForm(subcompany_data(contact_phone=typed, quantity="12.000"))
    assert form.is_valid(), form.errors
    assert form.cleaned_data["contact_phone"] == "5321234567" and form.cleaned_data["quantity"] == 12000
    assert CreditForm({"quantity": "2.500"}).is_valid()


@pytest.mark.django_db
def test_subcompany_contact_phone_message_on_the_field():
    from backoffice.subcompanies.forms import SubCompanyForm
    from tests.subcompanies.conftest import subcompany_data

    with translation.override("en"):
        form = SubCompanyForm(subcompany_data(contact_phone="0212 123 45 67"))
        assert not form.is_valid()
        assert form.errors["contact_phone"] == [
            "Enter a mobile number: ten digits starting with 5 after the 0 or +90, e.g. 0532 123 45 67."]


@pytest.mark.parametrize("typed", ["32.125", "1.250", "-3.500"])
def test_a_rate_with_a_dot_and_three_digits_is_asked_not_guessed(typed):
    """In an exchange rate (six decimals) "32.125" is as likely 32,125 as 32125: the field asks."""
    from django.core.exceptions import ValidationError

    from backoffice.tickets.forms import EventTicketForm

    field = EventTicketForm.base_fields["exchange_rate"]
    with translation.override("en"), pytest.raises(ValidationError, match="after a comma, e.g. 32,125"):
        field.clean(typed)
    assert field.clean("32,125") == Decimal("32.125") and field.clean("32.1250") == Decimal("32.125")
