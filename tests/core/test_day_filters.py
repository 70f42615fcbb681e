"""The day filters (core.generic.filters): on a datetime column a day is a range of Istanbul moments (the column's
index is used, no cast per row), its bounds exactly the local midnights; the calendar's ends bound nothing or
everything, never an error."""

from datetime import datetime

import pytest
from django.utils import timezone

from backoffice.core.filters import JobRunFilterSet
from backoffice.core.models import JobRun

# The database engine matters here (date ranges in Istanbul time, computed by the database): CI's SQLite pass runs
# these too.
pytestmark = [pytest.mark.django_db, pytest.mark.database]


def run_at(company, name, local):
    return JobRun.objects.create(company=company, name=name, enqueued_at=timezone.make_aware(datetime(*local)))


def shown(**data):
    filterset = JobRunFilterSet(data=data, queryset=JobRun.objects.all())
    assert filterset.is_valid(), filterset.errors
    return sorted(filterset.qs.values_list("name", flat=True))


def test_a_day_is_its_local_midnights(company):
    run_at(company, "before", (2026, 3, 1, 23, 59, 59))  # 20:59:59 UTC: the day before in Istanbul
    run_at(company, "first", (2026, 3, 2, 0, 0, 0))  # 21:00 UTC on 1 March
    run_at(company, "last", (2026, 3, 2, 23, 59, 59))
    run_at(company, "after", (2026, 3, 3, 0, 0, 0))
    assert shown(date_from="2026-03-02", date_to="2026-03-02") == ["first", "last"]
    assert shown(date_from="2026-03-03") == ["after"]
    assert shown(date_to="2026-03-01") == ["before"]
    sql = str(JobRunFilterSet(data={"date_from": "2026-03-02"}, queryset=JobRun.objects.all()).qs.query).lower()
    assert "cast_date" not in sql and "at time zone" not in sql  # no cast of the column (SQLite, PostgreSQL)


def test_the_calendars_ends_bound_nothing_or_everything(company):
    run_at(company, "one", (2026, 3, 2, 12, 0, 0))
    assert shown(date_from="0001-01-01", date_to="9999-12-31") == ["one"]
    assert shown(date_to="0001-01-01") == []
