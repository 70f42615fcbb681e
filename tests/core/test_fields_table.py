"""One parsing rule for numbers on both sides (issue 29, section 2): every row of tests/data/number_inputs.json
through parse_decimal, is_ambiguous_rate and the form fields here; tests/browser/test_number_parsing.py runs the
same rows through static/js/numbers.js. "5.000" is five thousand in an amount, a quantity or a price; only a
rate (an exchange rate, a percentage) asks what it means."""

import importlib
import json
from decimal import Decimal
from pathlib import Path

import pytest
from django import forms
from django.core.exceptions import ValidationError
from django.utils import translation

import backoffice
from backoffice.core.fields import (LocalizedDecimalField, NumberFormatError, is_ambiguous_rate, money_field,
                                    parse_decimal, rate_field)

TABLE = Path(__file__).resolve().parents[1] / "data" / "number_inputs.json"
ROWS = json.loads(TABLE.read_text(encoding="utf-8"))["rows"]
IDS = [repr(row["typed"]) for row in ROWS]


def read(typed):
    try:
        return format(parse_decimal(typed), "f")  # as the table writes it: never 1E+3
    except NumberFormatError:
        return None


def test_the_table_has_what_the_issue_names():
    typed = {row["typed"] for row in ROWS}
    assert {"5.000", "5,000", "1.250,75", "1250.75", "1.000,5", "0,5", " 12 ", "-3", "1e3", "", "1 250,75",
            "12.50,75", "5,", "1.25", "0.250", "32.125"} <= typed
    assert len(typed) == len(ROWS)  # no row twice
    assert all(set(row) <= {"typed", "number", "ambiguous_rate", "note"} for row in ROWS)
    by_typed = {row["typed"]: row for row in ROWS}
    assert by_typed["5.000"]["number"] == "5000" and by_typed["5,000"]["number"] == "5.000"
    assert by_typed["32.125"]["ambiguous_rate"] is True


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_parse_decimal(row):
    assert read(row["typed"]) == row["number"]
    assert is_ambiguous_rate(row["typed"]) is row["ambiguous_rate"]


class Fields(forms.Form):
    # Wide limits, so that only the reading decides.
    amount = LocalizedDecimalField(max_digits=30, decimal_places=10, required=False)
    rate = LocalizedDecimalField(max_digits=30, decimal_places=10, required=False, rate=True)


def blank(typed):
    return not typed.strip(" \t\n\r\f\v\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
                           "\u200a\u2028\u2029\u202f\u205f\u3000\ufeff")


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_form_fields(row):
    typed = row["typed"]
    form = Fields({"amount": typed, "rate": typed})
    form.is_valid()
    if blank(typed):
        assert form.cleaned_data == {"amount": None, "rate": None}  # empty, not an error
        return
    if row["number"] is None:
        assert [error.code for error in form.errors.as_data()["amount"]] == ["invalid"]
        assert [error.code for error in form.errors.as_data()["rate"]] == ["invalid"]
        return
    assert format(form.cleaned_data["amount"], "f") == row["number"]
    if row["ambiguous_rate"]:
        assert [error.code for error in form.errors.as_data()["rate"]] == ["ambiguous"]
    else:
        assert format(form.cleaned_data["rate"], "f") == row["number"]


def test_the_field_says_whether_it_asks():
    # The question is the field's, not its decimal places': six decimals read 5.000 as 5000.
    quantity = LocalizedDecimalField(max_digits=18, decimal_places=6)
    assert quantity.clean("5.000") == Decimal(5000) and not quantity.rate
    assert money_field("Tutar").clean("5.000") == Decimal(5000)
    percent = rate_field("KDV %")
    assert percent.rate and 'data-number="rate"' in percent.widget.render("p", None)
    assert 'data-number=""' in quantity.widget.render("q", None)
    # A field bounded by 100 is a percentage unless said otherwise.
    assert LocalizedDecimalField(max_digits=5, decimal_places=2, max_value=Decimal(100)).rate
    assert not LocalizedDecimalField(max_digits=5, decimal_places=2, max_value=Decimal(100), rate=False).rate
    with translation.override("en"), pytest.raises(ValidationError, match="after a comma, e.g. 32,125") as asked:
        percent.clean("18.500")
    assert asked.value.code == "ambiguous"
    assert percent.clean("18,5") == Decimal("18.5") and percent.clean("%18") == Decimal(18)


def test_a_rate_of_a_thousand_or_more_is_shown_so_that_it_reads_back():
    rate = LocalizedDecimalField(max_digits=18, decimal_places=6, rate=True)
    assert rate.prepare_value(Decimal("1250.5")) == "1250,5" and rate.clean("1250,5") == Decimal("1250.5")
    amount = LocalizedDecimalField(max_digits=18, decimal_places=2, display_places=2)
    assert amount.prepare_value(Decimal("1250.5")) == "1.250,50" and amount.clean("1.250,50") == Decimal("1250.5")


def project_forms():
    """Every form class of the project's apps, with its declared and model-made fields."""
    found = {}
    root = Path(backoffice.__file__).parent
    for path in sorted([*root.rglob("*forms.py"), *root.rglob("*filters.py")]):
        if "sandbox" in path.parts:  # the platform's simulator: not our forms
            continue
        loaded = importlib.import_module(".".join(("backoffice", *path.relative_to(root).with_suffix("").parts)))
        for value in vars(loaded).values():
            if isinstance(value, type) and value.__module__ == loaded.__name__:
                fields = getattr(value, "base_fields", None) or getattr(value, "base_filters", None)
                if fields:
                    found[f"{loaded.__name__}.{value.__name__}"] = value
    return found


def decimal_fields():
    for name, form in project_forms().items():
        fields = getattr(form, "base_fields", None)
        if fields is None:  # a filterset: its filters' fields
            fields = {key: flt.field for key, flt in form.base_filters.items()
                      if isinstance(flt.field, LocalizedDecimalField)}
        for field_name, field in fields.items():
            if isinstance(field, forms.DecimalField):
                yield f"{name}.{field_name}", field_name, field


def test_every_number_field_of_the_project_reads_the_turkish_way_and_only_rates_ask():
    """Quantities, prices and amounts of every form (invoice, dispatch and ticket lines, passenger lists, filters,
    ...) read "5.000" as 5000; exchange rates and percentages (named ..._rate) ask."""
    seen = list(decimal_fields())
    names = {path for path, _name, _field in seen}
    for expected in ("backoffice.invoices.forms.LineForm.quantity", "backoffice.invoices.forms.LineForm.unit_price",
                     "backoffice.invoices.forms.LineForm.vat_rate", "backoffice.dispatch.forms.LineForm.quantity",
                     "backoffice.dispatch.forms.LineForm.unit_price", "backoffice.tickets.forms.TicketLineForm.amount"):
        assert expected in names, sorted(names)
    assert any(path.endswith(".exchange_rate") for path in names)
    for path, name, field in seen:
        assert isinstance(field, LocalizedDecimalField), path  # not Django's, which reads "1.000" as 1
        assert field.rate is name.endswith("rate"), path
        if field.rate:
            with pytest.raises(ValidationError) as asked:
                field.clean("32.125")
            assert asked.value.code == "ambiguous", path
        else:
            assert field.to_python("5.000") == Decimal(5000), path
            assert field.to_python("5,000") == Decimal(5), path


def test_partial_acceptance_quantities_read_5_000_as_five_thousand():
    """The incoming dispatch note's accepted and rejected quantities are made per line, not declared."""
    from types import SimpleNamespace

    from backoffice.dispatch_inbox.forms import PartialAcceptanceForm

    form = PartialAcceptanceForm(note=None, lines=[SimpleNamespace(pk=7, quantity=Decimal(6000))])
    assert not form.fields["accepted_7"].rate and not form.fields["rejected_7"].rate
    assert form.fields["accepted_7"].clean("5.000") == Decimal(5000)
    assert form.fields["rejected_7"].clean("1.000") == Decimal(1000)


@pytest.mark.parametrize("typed", ["", "   ", "\u00a0", "\t"])
def test_only_spaces_is_empty_not_an_error(typed):
    from backoffice.core.fields import LocalizedIntegerField

    assert LocalizedDecimalField(required=False).clean(typed) is None
    assert LocalizedIntegerField(required=False).clean(typed) is None
    with translation.override("en"), pytest.raises(ValidationError, match="required"):
        money_field("Tutar").clean(typed)
