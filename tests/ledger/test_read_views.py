"""The periods' buttons that read from the platform now (core.generic.reading): the periods' list (said
differently when a read is queued already; editors only) and a period's parts (anyone who sees the period);
POST only, back to the page; a period the platform does not have is a 404."""

from datetime import date

import pytest
from django.contrib.messages import get_messages
from django.urls import reverse

from backoffice.core.choices import SyncState
from backoffice.core.models import JobRun
from backoffice.ledger.choices import PeriodStatus
from backoffice.ledger.models import Period
from tests.tickets.conftest import login

pytestmark = pytest.mark.django_db

MIRROR = reverse("ledger:period_mirror")


def said(response):
    return [str(message) for message in get_messages(response.wsgi_request)]


def period(company, remote_id="77"):
    return Period.objects.create(company=company, remote_id=remote_id, remote_status=PeriodStatus.READY,
                                 fiscal_year_start=date(2025, 3, 1), fiscal_year_end=date(2025, 3, 31),
                                 sync_state=SyncState.SYNCED)


def test_reading_the_periods_says_when_it_is_queued_already(client, accountant, company):
    web = login(client, accountant, company)
    assert web.get(MIRROR).status_code == 405
    first, second = web.post(MIRROR), web.post(MIRROR)
    assert first.status_code == second.status_code == 302 and first.url == reverse("ledger:period_list")
    assert said(first) == ["Reading the periods from the platform."]
    assert said(second)[-1] == "The periods are already being read from the platform."  # the first one unread
    assert JobRun.objects.filter(company=company).count() == 1


def test_only_editors_read_the_periods(client, manager, company):
    assert login(client, manager, company).post(MIRROR).status_code == 403
    assert not JobRun.objects.exists()


def test_anyone_who_sees_a_period_reads_its_parts(client, manager, company):
    web = login(client, manager, company)
    record = period(company)
    response = web.post(reverse("ledger:period_parts", args=[record.pk]))
    assert response.status_code == 302 and response.url == reverse("ledger:period_detail", args=[record.pk])
    assert said(response) == ["Reading the parts from the platform; this page shows them when done."]
    assert JobRun.objects.filter(company=company, target=f"ledger.period:{record.pk}").exists()
    assert web.post(reverse("ledger:period_parts", args=[period(company, remote_id="").pk])).status_code == 404
