"""The job machinery end to end: a real `manage.py rqworker --with-scheduler` process, the real Redis of the
test run, this test database (a file on SQLite, test_<name> on PostgreSQL), and the sandbox over HTTP.
"""

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from backoffice.core import sync
from backoffice.core.choices import JobStatus, SyncState
from backoffice.core.models import JobRun, RemoteCall
from tests.testapp.models import Probe
from tests.testapp.testing import manage, output, stop, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

PUSH_PATH = "/invoice/v2/outboxinvoice/status"
# Short backoff and read timeout in the worker, so that retries happen within the test's time.
WORKER_ENV = {"JOB_RETRY_BASE_SECONDS": "1", "JOB_RETRY_MAX_SECONDS": "2", "JOB_MAX_ATTEMPTS": "4",
              "PLATFORM_READ_TIMEOUT": "1.5", "SYNC_STUCK_AFTER_SECONDS": "60"}


@pytest.fixture(scope="module")
def worker_env():
    return WORKER_ENV


def queue_probes(company, count=1, **payload):
    probes = [Probe.objects.create(company=company, payload=payload) for _ in range(count)]
    for probe in probes:
        sync.record_queue(probe)  # autocommit: on the queue when this returns
    return probes


def wait_settled(worker, probes, timeout=20, runs=None):
    """Wait until every probe is SYNCED or FAILED and no JobRun (of `runs`, default all) is waiting any more."""
    pks = [p.pk for p in probes]
    runs = JobRun.objects.all() if runs is None else runs

    def settled():
        states = set(Probe.objects.filter(pk__in=pks).values_list("sync_state", flat=True))
        waiting = runs.exclude(status__in=[JobStatus.SUCCEEDED, JobStatus.FAILED]).exists()
        return states <= {SyncState.SYNCED, SyncState.FAILED} and not waiting

    try:
        wait_for(settled, timeout=timeout, message="the probes to settle")
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n--- worker output ---\n{output(worker)[-5000:]}") from None
    return {p.pk: p for p in Probe.objects.filter(pk__in=pks)}


def posts(stats, status=None):
    return sum(row["count"] for row in stats["requests"] if row["method"] == "POST" and row["path"] == PUSH_PATH
               and (status is None or row["status"] == status))


def gets(stats):
    return sum(row["count"] for row in stats["requests"]
               if row["method"] == "GET" and row["path"].startswith("/invoice/v2/outboxinvoice/"))


def test_a_real_worker_pushes_every_probe_exactly_once(worker, sandbox, sandbox_company):
    probes = queue_probes(sandbox_company, 8, via="platform")
    settled = wait_settled(worker, probes)
    assert {p.sync_state for p in settled.values()} == {SyncState.SYNCED}
    assert all(p.remote_id == str(p.uuid) and p.remote_status is not None and p.synced_at for p in settled.values())
    runs = JobRun.objects.filter(name="probe_push")
    assert runs.count() == 8 and set(runs.values_list("status", "attempts")) == {(JobStatus.SUCCEEDED, 1)}
    assert posts(sandbox.stats(), 200) == posts(sandbox.stats()) == 8
    # each probe's own push went out once (the worker's audit rows carry the body)
    calls = list(RemoteCall.objects.filter(operation="invoice.outbox_status_list").values_list("request_excerpt",
                                                                                              flat=True))
    assert sorted(sum(str(p.uuid) in c for c in calls) for p in probes) == [1] * 8


def test_a_rate_limited_push_is_deferred_and_finishes_when_the_window_frees(worker, sandbox, sandbox_company):
    sandbox.add_fault(path=PUSH_PATH, method="POST", storm_429=True, retry_after=2, remaining=1)
    started = time.monotonic()
    [probe] = queue_probes(sandbox_company, via="platform")
    run = JobRun.objects.get()
    wait_for(lambda: JobRun.objects.filter(pk=run.pk, status=JobStatus.DEFERRED).exists()
             or JobRun.objects.filter(pk=run.pk, status=JobStatus.SUCCEEDED).exists(), timeout=10,
             interval=0.05, message="the job to be deferred")
    assert JobRun.objects.get(pk=run.pk).status == JobStatus.DEFERRED  # waiting in Redis, not in a worker
    assert Probe.objects.get(pk=probe.pk).sync_state == SyncState.QUEUED
    settled = wait_settled(worker, [probe])
    assert time.monotonic() - started >= 2  # not before the platform's Retry-After
    assert settled[probe.pk].sync_state == SyncState.SYNCED
    run.refresh_from_db()
    assert (run.status, run.attempts) == (JobStatus.SUCCEEDED, 1)  # a deferral is no attempt
    stats = sandbox.stats()
    assert (posts(stats, 429), posts(stats, 200)) == (1, 1)


def test_a_5xx_is_retried_and_then_synced(worker, sandbox, sandbox_company):
    sandbox.add_fault(path=PUSH_PATH, method="POST", error_rate=1, error_status=503, remaining=1)
    [probe] = queue_probes(sandbox_company, via="platform")
    settled = wait_settled(worker, [probe])
    assert settled[probe.pk].sync_state == SyncState.SYNCED and settled[probe.pk].last_error == ""
    run = JobRun.objects.get()
    assert (run.status, run.attempts) == (JobStatus.SUCCEEDED, 2)
    stats = sandbox.stats()
    # The 503 answer may have come after the platform acted: the retry asked first (GET status), and the
    # platform knew the id, so it was not sent a second time.
    assert (posts(stats, 503), posts(stats, 200), gets(stats)) == (1, 0, 1)


def test_a_push_that_timed_out_after_sending_is_reconciled_not_repeated(worker, sandbox, sandbox_company):
    sandbox.add_fault(path=PUSH_PATH, method="POST", timeout_seconds=2.5, remaining=1)
    [probe] = queue_probes(sandbox_company, via="platform")
    settled = wait_settled(worker, [probe])
    assert settled[probe.pk].sync_state == SyncState.SYNCED and settled[probe.pk].attempts == 2
    wait_for(lambda: posts(sandbox.stats()) == 1, timeout=5, message="the slow POST to be logged")
    assert gets(sandbox.stats()) == 1 and posts(sandbox.stats()) == 1


def test_every_outcome_through_a_real_worker(worker, company):
    cases = {
        "ok": [],
        "transient twice": ["transient", "transient"],
        "arrived before the timeout": ["maybe_sent"],
        "lost in the timeout": ["lost"],
        "rate limited": ["rate_limited:1"],
        "refused": ["permanent"],
    }
    probes = {name: queue_probes(company, script=script)[0] for name, script in cases.items()}
    settled = wait_settled(worker, list(probes.values()))

    def outcome(name):
        probe = settled[probes[name].pk]
        calls = probe.calls
        return (probe.sync_state, calls.filter(kind="send").count(), calls.filter(kind="reconcile").count(),
                calls.filter(delivered=True).count())

    assert outcome("ok") == (SyncState.SYNCED, 1, 0, 1)
    assert outcome("transient twice") == (SyncState.SYNCED, 3, 2, 1)
    assert outcome("arrived before the timeout") == (SyncState.SYNCED, 1, 1, 1)
    assert outcome("lost in the timeout") == (SyncState.SYNCED, 2, 1, 1)
    assert outcome("rate limited") == (SyncState.SYNCED, 2, 0, 1)
    assert outcome("refused") == (SyncState.FAILED, 1, 0, 0)
    assert settled[probes["refused"].pk].last_error == "Doğrulama hatası: payload eksik"
    statuses = dict(JobRun.objects.values_list("target", "status"))
    assert statuses.pop(f"testapp.probe:{probes['refused'].pk}") == JobStatus.FAILED
    assert set(statuses.values()) == {JobStatus.SUCCEEDED}


def test_rq_cron_runs_the_sweep_which_pushes_a_stuck_record(worker, company):
    probe = Probe.objects.create(company=company, sync_state=SyncState.QUEUED)  # its job was lost
    Probe.objects.filter(pk=probe.pk).update(updated_at=timezone.now() - timedelta(seconds=120))
    cron = manage("rqcron", "backoffice.cron", env=WORKER_ENV)
    try:
        # Only the probe's own runs: the cron's other entries (the daily reports, due at startup after midnight in
        # Istanbul) try a platform this test does not run and retry for longer than the wait.
        settled = wait_settled(worker, [probe], timeout=20, runs=JobRun.objects.filter(name="probe_push"))
    finally:
        cron_output = stop(cron)
    assert settled[probe.pk].sync_state == SyncState.SYNCED, cron_output
    assert "sweep_stuck" in cron_output
    # (the cron's other entries, e.g. yesterday's reports at each company's time of day, run their own jobs)
    assert JobRun.objects.get(name="probe_push").target == f"testapp.probe:{probe.pk}"
