"""A child left QUEUED when its parent lands while the child's own push job still runs (issue 32, make chaos): that
run may have looked before the landing and end with "waits for its current account", so the wake-up enqueues a run
of its own instead of joining the running one (sync.enqueue_push(..., join_running=False))."""

from dataclasses import replace

import pytest
from django.utils import translation

from backoffice.chart_of_accounts import services as chart
from backoffice.core.choices import JobStatus, SyncState
from backoffice.current_accounts import services
from backoffice.current_accounts.models import Address, Bank, Contact, CurrentAccount, Mapping
from tests.testapp.testing import assert_woken, lands, push_runs, rq_queue, run_rq_job, running  # noqa: F401 (fixture)

from .test_services import chart_tree, first_address, new_account, push

# The database engine matters here (the runs' rows and their commits): CI's SQLite pass runs these too.
pytestmark = [pytest.mark.django_db, pytest.mark.database]

CHILDREN = {
    Address: lambda account: first_address(current_account=account),
    Bank: lambda account: Bank(current_account=account, name="Ana", iban_number="TR330006100519786457841326"),
    Contact: lambda account: Contact(current_account=account, full_name="Ayşe"),
}


@pytest.fixture(autouse=True)
def english():
    with translation.override("en"):
        yield


@pytest.mark.parametrize("model", list(CHILDREN), ids=lambda model: model.__name__)
def test_a_child_whose_push_runs_when_its_account_lands_gets_a_run_of_its_own(
        model, company, rq_queue, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        account = services.current_account_save(new_account(company))
        child = services.child_save(CHILDREN[model](account))
    run = running(child, rq_queue)
    with django_capture_on_commit_callbacks(execute=True):
        services._account_landed(lands(account, remote_id="ca-1"))  # ACCOUNTS.after
    assert_woken(child, run, rq_queue)


def test_a_child_not_running_is_not_enqueued_twice(company, rq_queue, django_capture_on_commit_callbacks):
    """The wake-up still joins a run that waits on the queue: it has not looked yet, it will see the landing."""
    with django_capture_on_commit_callbacks(execute=True):
        account = services.current_account_save(new_account(company))
        child = services.child_save(CHILDREN[Contact](account))
    with django_capture_on_commit_callbacks(execute=True):
        services._account_landed(lands(account, remote_id="ca-1"))
    assert push_runs(child).count() == 1


def test_a_mapping_whose_push_runs_when_its_sub_account_lands_gets_a_run_of_its_own(
        company, rq_queue, django_capture_on_commit_callbacks):
    """The chart's account_landed (chart_of_accounts.services._landed) reaches mappings_waiting_for."""
    with django_capture_on_commit_callbacks(execute=True):
        *_parents, sub = chart_tree(company)
        account = services.current_account_save(new_account(company))
    lands(account, remote_id="ca-1")
    with django_capture_on_commit_callbacks(execute=True):
        mapping = services.child_save(Mapping(current_account=account, account=sub))
    run = running(mapping, rq_queue)
    with django_capture_on_commit_callbacks(execute=True):
        chart._landed(lands(sub, remote_id="acc-3"))
    assert_woken(mapping, run, rq_queue)


def test_an_address_whose_push_looked_just_before_its_account_landed_reaches_the_platform(
        sandbox_company, rq_queue, monkeypatch, django_capture_on_commit_callbacks):
    """The race as make chaos met it, in order: the address's job reads "waits for its current account", the
    account's push lands (another worker) before that job ends, and the address must not stay QUEUED."""
    with django_capture_on_commit_callbacks(execute=True):
        account = services.current_account_save(new_account(sandbox_company))
        address = services.child_save(first_address(current_account=account))
    resource = services.CHILDREN[Address]

    def waits_then_account_lands(child):
        reason = resource.waits_for(child)
        if reason and not CurrentAccount.objects.get(pk=account.pk).remote_id:
            assert push(account) == "Sent to the platform."  # ACCOUNTS.after wakes the address
        return reason

    monkeypatch.setitem(services.CHILDREN, Address, replace(resource, waits_for=waits_then_account_lands))
    [first] = push_runs(address)
    with django_capture_on_commit_callbacks(execute=True):
        assert "Waits for its current account" in run_rq_job(first)
    monkeypatch.setitem(services.CHILDREN, Address, resource)
    assert CurrentAccount.objects.get(pk=account.pk).sync_state == SyncState.SYNCED
    runs = list(push_runs(address))
    assert runs[0].status == JobStatus.SUCCEEDED  # ended with "waits": it had looked before the landing
    assert len(runs) == 2 and runs[1].status == JobStatus.QUEUED, "the address was left QUEUED with no run"
    assert run_rq_job(runs[1]) == "Sent to the platform."
    address.refresh_from_db()
    assert address.sync_state == SyncState.SYNCED and address.remote_id
    remote_id = CurrentAccount.objects.get(pk=account.pk).remote_id
    assert address.remote_id in [item["id"] for item in services.accounting_client(sandbox_company).children(
        "address", remote_id)]
