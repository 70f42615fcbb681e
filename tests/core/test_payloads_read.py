"""The platform's answers read back (core.payloads): what every domain's *_fields(item) relies on."""

from datetime import date, datetime, time
from datetime import timezone as dt_timezone
from decimal import Decimal

import pytest
from django.utils import timezone

from backoffice.core import payloads


@pytest.mark.parametrize("value, expected", [
    (5, 5), ("5", 5), (" 12 ", 12), (1.0, 1), (-3, -3),
    (True, None), (False, None), (None, None), ("", None), ("1.5", None), (1.5, None), ("x", None), ([], None)])
def test_integer(value, expected):
    assert payloads.integer(value) == expected


@pytest.mark.parametrize("value, expected", [(0, 0), ("7", 7), (-1, None), ("-2", None), (None, None)])
def test_count(value, expected):
    assert payloads.count(value) == expected


@pytest.mark.parametrize("value, places, expected", [
    ("12.345", 2, Decimal("12.35")), (12.344, 2, Decimal("12.34")), ("0.125", 2, Decimal("0.13")),
    ("1.2345678", 6, Decimal("1.234568")), ("10", None, Decimal("10")), ("", 2, None), (None, 2, None),
    ("abc", 2, None), ("NaN", 2, None), ("Infinity", None, None), (True, 2, None)])
def test_decimal(value, places, expected):
    assert payloads.decimal(value, places) == expected


def test_amount_is_to_the_cent_half_up():
    assert payloads.amount("2.675") == Decimal("2.68")
    assert payloads.amount(None) is None


@pytest.mark.parametrize("value, expected", [
    ("2026-03-01", date(2026, 3, 1)), ("2026-03-01T10:00:00Z", date(2026, 3, 1)),
    (date(2026, 3, 1), date(2026, 3, 1)), (datetime(2026, 3, 1, 23, 0), date(2026, 3, 1)),
    ("", None), (None, None), ("2026-13-01", None), ("not a date", None)])
def test_day(value, expected):
    assert payloads.day(value) == expected


def test_moment_naive_is_turkish_time_unless_utc():
    local = payloads.moment("2026-03-01 10:00:00")
    assert timezone.localtime(local).hour == 10 and local.utcoffset().total_seconds() == 3 * 3600
    utc = payloads.moment("2026-03-01T10:00:00", naive_utc=True)
    assert utc == datetime(2026, 3, 1, 10, tzinfo=dt_timezone.utc)
    assert payloads.moment("2026-03-01T10:00:00+00:00") == utc
    assert payloads.moment("2026-03-01") == timezone.make_aware(datetime(2026, 3, 1))
    assert payloads.moment("") is None and payloads.moment("2026-02-30T10:00") is None
    assert payloads.moment("yesterday") is None


def test_clock_flag_text():
    assert payloads.clock("10:30") == time(10, 30) and payloads.clock("10:30:15.123") == time(10, 30, 15)
    assert payloads.clock("25:00") is None and payloads.clock(None) is None
    assert payloads.flag(True) and payloads.flag("true") and payloads.flag("TRUE") and payloads.flag(1)
    assert not payloads.flag(False) and not payloads.flag("false") and not payloads.flag(None)
    assert not payloads.flag(0) and not payloads.flag("yes")
    assert payloads.text(None) == "" and payloads.text("  Acme ") == "Acme" and payloads.text(12) == "12"


def test_a_push_answer_reads_back_its_id_and_only_the_flags_it_carries():
    answer = {"Id": 42, "HasChild": "true"}
    assert payloads.pushed(answer, has_child="hasChild") == {"remote_id": "42", "has_child": True}
    assert payloads.pushed({"id": "7"}, is_used="isUsed") == {"remote_id": "7"}  # left out: not changed
    assert payloads.pushed({"id": 7, "isUsed": False}, is_used="isUsed") == {"remote_id": "7", "is_used": False}
