"""Dispatch notes through a real `manage.py rqworker --with-scheduler`, the test Redis and the sandbox over HTTP: a
note is sent and its status followed until approved; a create answered 500 after it took effect is found by its
localReferenceId rather than created twice; a draft is sent by the status change."""

import pytest

from backoffice.core import actions
from backoffice.core.choices import JobStatus, SyncState
from backoffice.dispatch import services, taxpayers
from backoffice.dispatch.choices import DispatchStatus
from backoffice.dispatch.models import DispatchNote
from tests.testapp.testing import finished_run, output, wait_for

from .test_services import CREATE_PATH, customer, new_note, on_platform

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

WORKER_ENV = {"JOB_RETRY_BASE_SECONDS": "1", "JOB_RETRY_MAX_SECONDS": "2", "JOB_MAX_ATTEMPTS": "4",
              "PLATFORM_READ_TIMEOUT": "2", "SYNC_STUCK_AFTER_SECONDS": "60", "DISPATCH_POLL_DELAY_SECONDS": "0.5"}


@pytest.fixture(scope="module")
def worker_env():
    return WORKER_ENV


@pytest.fixture
def ready(sandbox, sandbox_company):
    sandbox.control("POST", "dispatch/settings", {**customer(sandbox_company), "processing_seconds": 1,
                                                  "approve_seconds": 1, "error_rate": 0})
    taxpayers.taxpayers_store(services.dispatch_client(sandbox_company).taxpayer_list())
    return sandbox_company


def wait(worker, predicate, message, timeout=60):
    try:
        return wait_for(predicate, timeout=timeout, interval=0.2, message=message)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n--- worker output ---\n{output(worker)[-5000:]}") from None


def test_a_note_is_sent_and_followed_until_approved(worker, ready):
    note = new_note(ready)
    wait(worker, lambda: DispatchNote.objects.filter(pk=note.pk, sync_state=SyncState.SYNCED).exists(), "the send")
    wait(worker, lambda: DispatchNote.objects.filter(pk=note.pk, remote_status=DispatchStatus.APPROVED).exists(),
         "the status polled until approved")
    note.refresh_from_db()
    assert note.envelope_status == "1000"


def test_a_create_answered_500_after_it_took_effect_is_sent_once(worker, sandbox, ready):
    sandbox.add_fault(path=CREATE_PATH, method="POST", error_rate=1, after_apply="error", remaining=1)
    note = new_note(ready)
    wait(worker, lambda: DispatchNote.objects.filter(pk=note.pk, sync_state=SyncState.SYNCED).exists(),
         "the note to be found on the platform after the 500")
    assert len(on_platform(ready)) == 1
    run = finished_run(name="dispatch_note_push")
    assert run.status == JobStatus.SUCCEEDED and run.attempts >= 2


def test_a_draft_is_sent_by_the_status_change(worker, ready):
    note = new_note(ready, status=DispatchStatus.DRAFT)
    wait(worker, lambda: DispatchNote.objects.filter(pk=note.pk, sync_state=SyncState.SYNCED).exists(), "the draft")
    note.refresh_from_db()
    actions.action_request(DispatchNote, "send", [note])
    wait(worker, lambda: DispatchNote.objects.filter(pk=note.pk, remote_status=DispatchStatus.APPROVED,
                                                     pending_action="").exists(), "the draft sent and approved")
