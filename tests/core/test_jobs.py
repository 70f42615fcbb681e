"""The job runner: JobRun rows, enqueue on commit, outcomes, backoff, deferral, duplicate protection.

Jobs run here, in this process, against the real Redis of the test run; test_jobs_worker.py runs them
in a real RQ worker.
"""

import logging
import math
import sys
import time

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.utils import translation
from rq.job import Job

from backoffice.core import jobs, queues
from backoffice.core.choices import JobStatus, SyncState
from backoffice.core.models import JobRun
from backoffice.core.registry import registry
from backoffice.invoices.models import Invoice
from backoffice.remote.errors import RateLimited, RemoteError
from tests.invoices.test_services import new_invoice
from tests.testapp.testing import rq_queue, run_rq_job, scheduled_at  # noqa: F401 (fixture)

# The database engine matters here (job claims and their transactions): CI's SQLite pass runs these too.
pytestmark = pytest.mark.database

HERE = __name__


# Job bodies (the runner imports them by path, as a worker would).
def body_ok(name):
    return f"merhaba {name}"


def body_transient():
    raise RemoteError(status=503, title="Service Unavailable")


def body_rate_limited(wait):
    raise RateLimited(wait)


def body_permanent():
    raise RemoteError(status=422, permanent=True, title="Doğrulama hatası", detail="VKN geçersiz")


def body_bug():
    raise ValueError("boom with api_key=key-acme-0001 inside")


def body_progress():
    jobs.set_progress(40, "half way")
    assert JobRun.objects.get(pk=jobs.current_run().pk).progress == 40
    return "done"


def body_not_ready():
    raise jobs.TryLater(5, "export not ready")


@pytest.fixture
def fast_retries(settings):
    settings.JOB_MAX_ATTEMPTS = 3
    settings.JOB_RETRY_BASE_SECONDS = 4
    settings.JOB_RETRY_MAX_SECONDS = 6


def start(body, *, args=(), company=None, target="t", execute=True, capture=None):
    with capture(execute=execute):
        return jobs.enqueue(f"{HERE}.{body}", name=body, company=company, target=target, args=args)


def test_enqueue_creates_the_row_and_queues_only_after_commit(rq_queue, company, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        run = jobs.enqueue(body_ok, name="greet", company=company, target="x:1", args=["dünya"])
    assert run.is_new and run.status == JobStatus.QUEUED and run.rq_job_id
    assert len(callbacks) == 1 and rq_queue.count == 0  # nothing in Redis before commit
    callbacks[0]()
    assert rq_queue.job_ids == [run.rq_job_id]
    job = Job.fetch(run.rq_job_id, connection=rq_queue.connection)
    assert job.func_name == "backoffice.core.jobs.run_job"
    assert job.args == (run.pk, f"{HERE}.body_ok", ["dünya"], {})


def test_success_is_recorded(rq_queue, company, django_capture_on_commit_callbacks):
    run = start("body_ok", args=["dünya"], company=company, capture=django_capture_on_commit_callbacks)
    assert run_rq_job(run) == "merhaba dünya"
    run.refresh_from_db()
    assert (run.status, run.message, run.attempts) == (JobStatus.SUCCEEDED, "merhaba dünya", 1)
    assert run.started_at and run.finished_at and run.finished_at >= run.started_at


def test_duplicate_enqueue_returns_the_active_run(rq_queue, company, django_capture_on_commit_callbacks):
    first = start("body_ok", args=["a"], company=company, capture=django_capture_on_commit_callbacks)
    second = start("body_ok", args=["a"], company=company, capture=django_capture_on_commit_callbacks)
    assert second.pk == first.pk and not second.is_new
    assert rq_queue.count == 1
    other_target = start("body_ok", args=["a"], company=company, target="u", capture=django_capture_on_commit_callbacks)
    assert other_target.pk != first.pk
    run_rq_job(first)
    again = start("body_ok", args=["a"], company=company, capture=django_capture_on_commit_callbacks)
    assert again.is_new and again.pk != first.pk  # the first one finished: new work is new


def test_a_run_lost_from_redis_is_enqueued_again_instead_of_blocking(rq_queue, company,
                                                                     django_capture_on_commit_callbacks):
    lost = start("body_ok", args=["a"], company=company, capture=django_capture_on_commit_callbacks)
    rq_queue.empty()  # Redis lost the queue
    # Within the grace period the row may simply not be committed yet: still treated as alive.
    assert start("body_ok", args=["a"], company=company, capture=django_capture_on_commit_callbacks).pk == lost.pk
    JobRun.objects.filter(pk=lost.pk).update(enqueued_at=lost.enqueued_at - jobs._SUBMIT_GRACE * 2)
    again = start("body_ok", args=["a"], company=company, capture=django_capture_on_commit_callbacks)
    assert again.pk == lost.pk and not again.is_new  # the same work, enqueued again once: not a second run
    lost.refresh_from_db()
    assert (lost.status, lost.lost_count) == (JobStatus.QUEUED, 1) and lost.message
    assert [job.id for job in rq_queue.get_jobs()] == [lost.rq_job_id]


def test_transient_error_retries_with_backoff_then_fails(rq_queue, company, fast_retries,
                                                          django_capture_on_commit_callbacks):
    run = start("body_transient", company=company, capture=django_capture_on_commit_callbacks)
    for attempt in (1, 2):
        before = time.time()
        first_id = run.rq_job_id
        run_rq_job(run)
        run.refresh_from_db()
        assert run.status == JobStatus.RETRYING and run.attempts == attempt
        assert run.rq_job_id != first_id and "Service Unavailable" in run.message
        delay = min(6, 4 * 2 ** (attempt - 1))
        at = scheduled_at(rq_queue, run.rq_job_id)
        # equal jitter: between half the delay and the delay, rounded up to RQ's whole seconds
        assert math.floor(before + delay / 2) <= at <= math.ceil(time.time() + delay)
    run_rq_job(run)
    run.refresh_from_db()
    assert run.status == JobStatus.FAILED and run.attempts == 3
    assert "3" in run.message and "Service Unavailable" in run.message
    assert scheduled_at(rq_queue, run.rq_job_id) is None  # nothing more scheduled


def test_rate_limited_job_is_deferred_to_when_the_window_frees(rq_queue, company, django_capture_on_commit_callbacks):
    run = start("body_rate_limited", args=[7.2], company=company, capture=django_capture_on_commit_callbacks)
    before = time.time()
    run_rq_job(run)
    run.refresh_from_db()
    assert run.status == JobStatus.DEFERRED and run.attempts == 0  # a deferral is not an attempt
    at = scheduled_at(rq_queue, run.rq_job_id)
    assert before + 7.2 <= at <= math.ceil(time.time() + 7.2)  # never before the window frees
    assert "8" in run.message
    assert rq_queue.count == 0  # scheduled, not queued: no worker spins on it


def test_permanent_error_fails_with_the_platform_message(rq_queue, company, django_capture_on_commit_callbacks):
    run = start("body_permanent", company=company, capture=django_capture_on_commit_callbacks)
    run_rq_job(run)
    run.refresh_from_db()
    assert (run.status, run.message, run.attempts) == (JobStatus.FAILED, "Doğrulama hatası: VKN geçersiz", 1)
    assert scheduled_at(rq_queue, run.rq_job_id) is None


def test_unexpected_error_fails_short_and_logs_a_redacted_traceback(rq_queue, company, caplog,
                                                                    django_capture_on_commit_callbacks):
    run = start("body_bug", company=company, capture=django_capture_on_commit_callbacks)
    with caplog.at_level(logging.ERROR, logger="backoffice.jobs"):
        run_rq_job(run)
    run.refresh_from_db()
    assert run.status == JobStatus.FAILED and "ValueError" in run.message
    assert "boom" not in run.message and "key-acme-0001" not in run.message
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "Traceback" in logged and "body_bug" in logged
    assert "key-acme-0001" not in logged


def test_progress_is_kept_on_the_row(rq_queue, company, django_capture_on_commit_callbacks):
    run = start("body_progress", company=company, capture=django_capture_on_commit_callbacks)
    run_rq_job(run)
    run.refresh_from_db()
    assert (run.status, run.progress) == (JobStatus.SUCCEEDED, 100)
    jobs.set_progress(10)  # outside a job: no-op, no error
    assert jobs.current_run() is None


def test_try_later_defers_without_counting_an_attempt(rq_queue, company, django_capture_on_commit_callbacks):
    run = start("body_not_ready", company=company, capture=django_capture_on_commit_callbacks)
    run_rq_job(run)
    run.refresh_from_db()
    assert (run.status, run.attempts, run.message) == (JobStatus.DEFERRED, 0, "export not ready")
    assert scheduled_at(rq_queue, run.rq_job_id) is not None


def test_delayed_enqueue_is_scheduled(rq_queue, company, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        run = jobs.enqueue(body_ok, name="later", company=company, args=["x"], delay=30)
    assert rq_queue.count == 0
    assert scheduled_at(rq_queue, run.rq_job_id) >= time.time() + 29


def test_a_finished_run_is_not_run_twice(rq_queue, company, django_capture_on_commit_callbacks):
    run = start("body_ok", args=["a"], company=company, capture=django_capture_on_commit_callbacks)
    run_rq_job(run)
    assert jobs.run_job(run.pk, f"{HERE}.body_ok", ["a"]) is None  # a duplicate delivery does nothing
    run.refresh_from_db()
    assert run.attempts == 1


def test_retry_delay_grows_and_is_capped(settings):
    settings.JOB_RETRY_BASE_SECONDS, settings.JOB_RETRY_MAX_SECONDS = 10, 100
    for attempt, full in [(1, 10), (2, 20), (3, 40), (4, 80), (5, 100), (9, 100)]:
        delays = [jobs.retry_delay(attempt) for _ in range(50)]
        assert all(full / 2 <= d <= full for d in delays)
        assert len(set(delays)) > 1  # jittered


def test_reap_lost_enqueues_again_runs_whose_queue_job_vanished(rq_queue, company,
                                                                  django_capture_on_commit_callbacks):
    alive = start("body_ok", args=["a"], company=company, target="alive", capture=django_capture_on_commit_callbacks)
    lost = start("body_ok", args=["b"], company=company, target="lost", capture=django_capture_on_commit_callbacks)
    Job.fetch(lost.rq_job_id, connection=rq_queue.connection).delete()
    assert jobs.reap_lost() == 0  # younger than the grace period (its submission may not be committed yet)
    JobRun.objects.update(enqueued_at=alive.enqueued_at - jobs._SUBMIT_GRACE * 2)
    old_id = lost.rq_job_id
    with django_capture_on_commit_callbacks(execute=True):
        assert jobs.reap_lost() == 1
    lost.refresh_from_db()
    assert (lost.status, lost.lost_count) == (JobStatus.QUEUED, 1) and lost.rq_job_id != old_id
    again = Job.fetch(lost.rq_job_id, connection=rq_queue.connection)  # on the queue again, same body and args
    assert again.args[1:] == (lost.func_path, ["b"], {})
    assert JobRun.objects.get(pk=alive.pk).status == JobStatus.QUEUED
    # Lost again and again: after LOST_RETRIES it waits for a click instead of looping.
    for _ in range(jobs.LOST_RETRIES):
        lost.refresh_from_db()
        Job.fetch(lost.rq_job_id, connection=rq_queue.connection).delete()
        JobRun.objects.filter(pk=lost.pk).update(enqueued_at=alive.enqueued_at - jobs._SUBMIT_GRACE * 2)
        with django_capture_on_commit_callbacks(execute=True):
            jobs.reap_lost()
    lost.refresh_from_db()
    assert lost.status == JobStatus.FAILED and lost.message and lost.lost_count == jobs.LOST_RETRIES


def test_a_started_job_whose_heartbeat_stopped_is_lost(rq_queue, company, django_capture_on_commit_callbacks, settings):
    """A worker killed with its work-horse leaves the job STARTED for ever; its silent heartbeat tells."""
    from datetime import datetime, timedelta
    from datetime import timezone as dt_timezone

    from rq.job import JobStatus as RQStatus

    settings.WORKER_HEARTBEAT_SECONDS = 1
    run = start("body_ok", args=["c"], company=company, target="beat", capture=django_capture_on_commit_callbacks)
    rq_job = Job.fetch(run.rq_job_id, connection=rq_queue.connection)
    rq_job.set_status(RQStatus.STARTED)
    rq_job.heartbeat(datetime.now(dt_timezone.utc), 60)
    JobRun.objects.filter(pk=run.pk).update(status=JobStatus.RUNNING)
    assert jobs.reap_lost() == 0  # beating
    rq_job.heartbeat(datetime.now(dt_timezone.utc) - timedelta(seconds=jobs.heartbeat_lost_after() + 1), 60)
    with django_capture_on_commit_callbacks(execute=True):
        assert jobs.reap_lost() == 1
    run.refresh_from_db()
    assert run.status == JobStatus.QUEUED and run.lost_count == 1


def test_a_queued_job_that_lost_its_place_in_the_queue_is_lost(rq_queue, company,
                                                                django_capture_on_commit_callbacks):
    """Redis restarted from its append-only file may keep a job's hash but not its place in the queue (or in the
    schedule): the job would never run. A job still in its place is left alone."""
    from rq.registry import ScheduledJobRegistry

    waiting = start("body_ok", args=["w"], company=company, target="w", capture=django_capture_on_commit_callbacks)
    stranded = start("body_ok", args=["s"], company=company, target="s", capture=django_capture_on_commit_callbacks)
    with django_capture_on_commit_callbacks(execute=True):
        later = jobs.enqueue(f"{HERE}.body_ok", name="body_ok", company=company.pk, target="later", args=["l"],
                             delay=3600)
    later.refresh_from_db()
    connection = rq_queue.connection
    connection.lrem(queues.get(stranded.queue).key, 0, stranded.rq_job_id)  # its company's queue
    assert jobs.reap_lost() == 0  # young: its submission may still be on its way
    JobRun.objects.update(enqueued_at=waiting.enqueued_at - jobs._SUBMIT_GRACE * 2)
    with django_capture_on_commit_callbacks(execute=True):
        assert jobs.reap_lost() == 1
    stranded.refresh_from_db()
    assert stranded.lost_count == 1 and stranded.rq_job_id in [job_id for job_id in rq_queue.job_ids]
    assert JobRun.objects.get(pk=waiting.pk).lost_count == 0 and JobRun.objects.get(pk=later.pk).lost_count == 0
    connection.zrem(ScheduledJobRegistry(rq_queue.name, connection=connection).key, later.rq_job_id)
    JobRun.objects.update(enqueued_at=waiting.enqueued_at - jobs._SUBMIT_GRACE * 2)
    with django_capture_on_commit_callbacks(execute=True):
        assert jobs.reap_lost() == 1
    assert JobRun.objects.get(pk=later.pk).lost_count == 1


def test_a_run_whose_enqueue_failed_is_put_back_by_the_next_sweep(rq_queue, company, monkeypatch,
                                                                   django_capture_on_commit_callbacks):
    """Redis down at the moment of enqueueing: the run knows it has no place in the queue, so the next sweep puts
    it there at once instead of waiting out the grace of a job still being submitted (make chaos hit it)."""
    from redis.exceptions import ConnectionError as RedisConnectionError
    from rq.queue import Queue

    def down(*args, **kwargs):
        raise RedisConnectionError("Connection refused")

    monkeypatch.setattr(Queue, "enqueue", down)
    run = start("body_ok", args=["a"], company=company, capture=django_capture_on_commit_callbacks)
    run.refresh_from_db()
    assert run.status == JobStatus.QUEUED and run.rq_job_id == "" and not rq_queue.get_jobs()
    monkeypatch.undo()  # Redis is back
    with django_capture_on_commit_callbacks(execute=True):
        assert jobs.reap_lost() == 1  # at once: no grace for a run that was never queued
    run.refresh_from_db()
    assert run.status == JobStatus.QUEUED and run.lost_count == 1
    assert [job.id for job in rq_queue.get_jobs()] == [run.rq_job_id]


# --- jobs by name: a body whose import path moved ----------------------------------------------------------

RELAY = "backoffice.invoices.jobs.invoice_push"  # the path of a relay module the apps no longer have


def test_a_run_enqueued_with_an_old_relay_path_still_runs_its_body(rq_queue, sandbox_company, monkeypatch,
                                                                   django_capture_on_commit_callbacks):
    """RQ or a JobRun may still hold `backoffice.<app>.jobs.<name>` of a relay module since deleted: the runner
    finds the body registered under the job's name (core.jobs.job) and runs it."""
    monkeypatch.setitem(sys.modules, "backoffice.invoices.jobs", None)  # the relay module: not importable
    assert registry["jobs"]["invoice_push"].job_name == "invoice_push"
    invoice = new_invoice(sandbox_company, send=False)
    Invoice.objects.filter(pk=invoice.pk).update(sync_state=SyncState.QUEUED)  # as its send left it
    with django_capture_on_commit_callbacks(execute=True):
        run = jobs.enqueue(RELAY, company=sandbox_company, target=f"invoices.invoice:{invoice.pk}", args=[invoice.pk])
    assert run.name == "invoice_push" and run.func_path == RELAY
    with translation.override("en"):
        assert run_rq_job(run) == "Sent to the platform."
    run.refresh_from_db()
    invoice.refresh_from_db()
    assert run.status == JobStatus.SUCCEEDED and run.func_path == RELAY
    assert invoice.sync_state == SyncState.SYNCED and invoice.remote_id


def test_a_lost_run_of_a_moved_body_is_enqueued_again_by_its_present_path(rq_queue, company, monkeypatch,
                                                                          django_capture_on_commit_callbacks):
    monkeypatch.setitem(registry["jobs"], "body_ok", body_ok)  # as @job registers it
    with django_capture_on_commit_callbacks(execute=True):
        lost = jobs.enqueue("tests.core.jobs.body_ok", company=company, target="t", args=["a"])
    rq_queue.empty()  # Redis lost the queue
    JobRun.objects.filter(pk=lost.pk).update(enqueued_at=lost.enqueued_at - jobs._SUBMIT_GRACE * 2)
    with django_capture_on_commit_callbacks(execute=True):
        assert jobs.reap_lost() == 1
    lost.refresh_from_db()
    assert lost.lost_count == 1 and lost.func_path == "tests.core.jobs.body_ok"  # the row keeps what it had
    assert Job.fetch(lost.rq_job_id, connection=rq_queue.connection).args[1] == f"{HERE}.body_ok"
    assert run_rq_job(lost) == "merhaba a"


def test_a_path_that_names_no_body_fails_the_run(rq_queue, company, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        run = jobs.enqueue("backoffice.gone.jobs.no_such_job", company=company, target="t")
    run_rq_job(run)
    run.refresh_from_db()
    assert run.status == JobStatus.FAILED and "(ModuleNotFoundError)" in run.message


def test_two_job_bodies_of_one_name_are_refused(monkeypatch):
    monkeypatch.setitem(registry["jobs"], "body_ok", body_ok)
    with pytest.raises(ImproperlyConfigured, match="two job bodies are called body_ok"):
        jobs.job("Greet", name="body_ok")(body_bug)
    assert registry["jobs"]["body_ok"] is body_ok


def test_an_old_relay_path_finds_the_body_of_its_name_in_its_app_or_the_app_split_from_it():
    """dispatch's relay `note_push` ran the job `dispatch_note_push`; `inbox_mirror` moved to dispatch_inbox. A name
    that two apps' bodies share is not guessed (invoices and dispatch both have `taxpayers_refresh`)."""
    from backoffice.dispatch import push
    from backoffice.dispatch_inbox import mirror

    assert jobs.job_body("backoffice.dispatch.jobs.note_push") == (push.note_push, "backoffice.dispatch.push.note_push")
    assert jobs.job_body("backoffice.dispatch.jobs.inbox_mirror")[0] is mirror.inbox_mirror
    assert jobs.job_body("backoffice.invoices.jobs.taxpayers_refresh")[1] == \
        "backoffice.invoices.taxpayers.taxpayers_refresh"
    assert jobs.job_body("backoffice.dispatch.jobs.taxpayers_refresh")[1] == \
        "backoffice.dispatch.taxpayers.taxpayers_refresh"
    with pytest.raises(ImportError):
        jobs.job_body("backoffice.tickets.jobs.no_such_relay")


CALLS = []


def body_counted(name):
    CALLS.append(name)
    return f"ran {name}"


def test_a_job_delivered_again_while_its_run_is_running_does_nothing(rq_queue, company,
                                                                    django_capture_on_commit_callbacks):
    """jobs.wake and RQ's scheduler may both move one deferred job in the same instant: its second delivery finds the
    run RUNNING (another worker has it) and neither runs the body nor counts an attempt."""
    CALLS.clear()
    run = start("body_counted", args=["twice"], company=company, target="twice",
                capture=django_capture_on_commit_callbacks)
    JobRun.objects.filter(pk=run.pk).update(status=JobStatus.RUNNING, attempts=1)  # the first delivery runs it
    assert jobs.run_job(run.pk, f"{HERE}.body_counted", ["twice"]) is None
    run.refresh_from_db()
    assert CALLS == [] and (run.status, run.attempts) == (JobStatus.RUNNING, 1)

    JobRun.objects.filter(pk=run.pk).update(status=JobStatus.DEFERRED)  # as the first delivery left it: runs again
    assert jobs.run_job(run.pk, f"{HERE}.body_counted", ["twice"]) == "ran twice"
    run.refresh_from_db()
    assert CALLS == ["twice"] and (run.status, run.attempts) == (JobStatus.SUCCEEDED, 2)
