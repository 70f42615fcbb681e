"""A chart account left QUEUED when its parent lands while the account's own push job still runs (issue 32, make
chaos): that run may have looked before the landing and end with "waits for its parent", so the parent's landing
enqueues a run of its own instead of joining the running one (sync.enqueue_push(..., join_running=False))."""

from dataclasses import replace

import pytest
from django.utils import translation

from backoffice.chart_of_accounts import services as chart
from backoffice.chart_of_accounts.models import Account
from backoffice.core.choices import JobStatus, SyncState
from tests.current_accounts.test_services import client
from tests.testapp.testing import assert_woken, lands, push_runs, rq_queue, run_rq_job, running  # noqa: F401 (fixture)

# The database engine matters here (the runs' rows and their commits): CI's SQLite pass runs these too.
pytestmark = [pytest.mark.django_db, pytest.mark.database]


@pytest.fixture(autouse=True)
def english():
    with translation.override("en"):
        yield


def main_and_group(company):
    main = chart.account_save(Account(company=company, type=0, base_code="120", name="Alıcılar"))
    group = chart.account_save(Account(company=company, type=1, parent=main, unit_code="01", name="Yurtiçi"))
    return main, group


def test_an_account_whose_push_runs_when_its_parent_lands_gets_a_run_of_its_own(
        company, rq_queue, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        main, group = main_and_group(company)
    run = running(group, rq_queue)
    with django_capture_on_commit_callbacks(execute=True):
        chart._landed(lands(main, remote_id="acc-1"))  # ACCOUNTS.after
    assert_woken(group, run, rq_queue)


def test_an_account_whose_push_looked_just_before_its_parent_landed_reaches_the_platform(
        sandbox_company, rq_queue, monkeypatch, django_capture_on_commit_callbacks):
    """The race as make chaos met it, in order: the group account's job reads "waits for its parent", the main
    account's push lands (another worker) before that job ends, and the group account must not stay QUEUED."""
    with django_capture_on_commit_callbacks(execute=True):
        main, group = main_and_group(sandbox_company)
    resource = chart.ACCOUNTS

    def waits_then_parent_lands(account):
        reason = resource.waits_for(account)
        if reason and not Account.objects.get(pk=main.pk).remote_id:
            assert chart.account_push(main.pk) == "Sent to the platform."  # ACCOUNTS.after wakes the group
        return reason

    monkeypatch.setattr(chart, "ACCOUNTS", replace(resource, waits_for=waits_then_parent_lands))
    [first] = push_runs(group)
    with django_capture_on_commit_callbacks(execute=True):
        assert "Waits for its parent" in run_rq_job(first)
    monkeypatch.setattr(chart, "ACCOUNTS", resource)
    runs = list(push_runs(group))
    assert runs[0].status == JobStatus.SUCCEEDED  # ended with "waits": it had looked before the landing
    assert len(runs) == 2 and runs[1].status == JobStatus.QUEUED, "the account was left QUEUED with no run"
    assert run_rq_job(runs[1]) == "Sent to the platform."
    group.refresh_from_db()
    assert group.sync_state == SyncState.SYNCED and group.remote_id
    assert group.remote_id in {str(item["id"]) for item in client(sandbox_company).accounts()["items"]}
