"""The credit forecast only from reports at least a day apart (issue 9, point 4), with hand-computed examples."""

import re
from datetime import datetime, timedelta, timezone

import pytest
from django.utils import translation

from backoffice.subcompanies import report, services

pytestmark = pytest.mark.django_db

UID = "44444444-4444-4444-8444-444444444444"
# 20.11.2026 14:00 in Istanbul (UTC+3).
T0 = datetime(2026, 11, 20, 11, 0, tzinfo=timezone.utc)


def test_used_1000_then_1600_three_days_later_runs_out_in_17_days():
    # 600 used in 3 days = 200 a day; 5000 offered - 1600 used = 3400 left; 3400 / 200 = 17 days.
    result = report.forecast(UID, "Acme", [(T0, 5000, 1000), (T0 + timedelta(days=3), 5000, 1600)])
    assert result.enough_data
    assert (result.rate_per_day, result.remaining) == (200, 3400)
    assert result.runs_out_at == T0 + timedelta(days=3 + 17)
    assert (result.span_start, result.span_end) == (T0, T0 + timedelta(days=3))
    with translation.override("en"):
        assert result.span_label == "3 days"


def test_two_reports_15_minutes_apart_give_no_forecast_and_say_why():
    history = [(T0, 5000, 1000), (T0 + timedelta(minutes=15), 5000, 1010)]
    with translation.override("en"):
        result = report.forecast(UID, "Acme", history)
    assert not result.enough_data and result.runs_out_at is None and result.rate_per_day is None
    assert "Not enough history yet: reports at least a day apart are needed" in result.reason
    assert "15 minutes apart" in result.reason


def test_many_close_reports_are_still_not_enough():
    history = [(T0 + timedelta(minutes=15 * i), 5000, 1000 + 10 * i) for i in range(40)]  # 9 h 45 min in all
    with translation.override("en"):
        result = report.forecast(UID, "Acme", history)
    assert not result.enough_data and "at least a day apart" in result.reason


def test_the_widest_span_is_used_not_the_last_pair():
    # day 0: 1000, day 4: 1800, then a report 15 minutes later with 1900: the rate is (1900 - 1000) / 4.0104 days.
    last = T0 + timedelta(days=4, minutes=15)
    result = report.forecast(UID, "Acme", [(T0, 5000, 1000), (T0 + timedelta(days=4), 5000, 1800), (last, 5000, 1900)])
    assert result.span_start == T0 and result.span_end == last
    assert result.rate_per_day == pytest.approx(900 / (4 + 15 / 1440))
    with translation.override("en"):
        assert result.span_label == "4 days"


def test_the_minimum_span_is_a_setting(settings):
    history = [(T0, 5050, 1000), (T0 + timedelta(hours=6), 5050, 1050)]
    with translation.override("en"):
        assert "a day apart" in report.forecast(UID, "Acme", history).reason
        settings.SUBCOMPANY_FORECAST_MIN_SPAN_HOURS = 6
        result = report.forecast(UID, "Acme", history)
        # 50 in 6 h = 200 a day; 5050 - 1050 = 4000 left: 20 days after the newest report.
        assert result.enough_data and result.rate_per_day == pytest.approx(200)
        assert result.runs_out_at == T0 + timedelta(hours=6) + timedelta(days=20)
        assert result.span_label == "6 hours"
        settings.SUBCOMPANY_FORECAST_MIN_SPAN_HOURS = 48
        assert "at least 2 days apart" in report.forecast(UID, "Acme", [(T0, 5000, 1000), (T0 + timedelta(days=1), 5000,
                                                                                        1200)]).reason


ROOT = "11111111-1111-4111-8111-111111111111"


def body(used_sub, offered_sub=5000):
    return {"customerUniqueId": ROOT, "applicationId": 9, "credits": [{"id": 1, "quantity": 50_000}],
            "usages": [{"quantity": 10}], "subCustomers": [
                {"customerUniqueId": UID, "name": "Acme", "credits": [{"id": 11, "quantity": offered_sub}],
                 "usages": [{"quantity": used_sub}]}]}


def forecast_row(html):
    match = re.search(rf'<tr data-customer="{UID}">(.*?)</tr>', html, re.DOTALL)
    assert match
    return match.group(1)


def test_the_dashboard_shows_the_date_and_the_span_it_used(client, manager, company):
    services.snapshot_save(company=company, body=body(1000), fetched_at=T0)
    services.snapshot_save(company=company, body=body(1600), fetched_at=T0 + timedelta(days=3, minutes=15))
    client.force_login(manager)
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "en"
    row = forecast_row(client.get("/sub-companies/usage/").content.decode())
    # 600 in 3 days 15 min; 3400 left -> 17.06 days after 23.11.2026 14:15 Istanbul: 10.12.2026.
    assert 'data-runs-out="2026-12-10"' in row and "10.12.2026" in row
    assert "based on usage between 20.11.2026 14:00 and 23.11.2026 14:15 (3 days)" in row


def test_the_dashboard_refuses_a_forecast_from_two_close_reports(client, manager, company):
    services.snapshot_save(company=company, body=body(1000), fetched_at=T0)
    services.snapshot_save(company=company, body=body(1010), fetched_at=T0 + timedelta(minutes=15))
    client.force_login(manager)
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "en"
    html = client.get("/sub-companies/usage/").content.decode()
    row = forecast_row(html)
    assert "forecast-no-data" in row and "reports at least a day apart are needed" in row
    assert "based on usage" not in row and "data-runs-out" not in row
    assert "closer together than a day give no forecast" in html
