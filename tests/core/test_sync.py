"""Push / poll / fetch of RemoteRecords, with the test app's Probe and its stand-in platform.

Each push runs through the job runner in this process (against the real Redis), attempt by attempt,
so every step of the record's life is visible.
"""

import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.db.models import Q
from django.utils import timezone, translation

from backoffice.core import jobs, sync
from backoffice.core.choices import JobStatus, SyncState
from backoffice.core.models import JobRun
from tests.testapp import services
from tests.testapp.models import LocalCall, Probe
from tests.testapp.testing import rq_queue, run_rq_job, scheduled_at  # noqa: F401 (fixture)

# The database engine matters here (the lanes' locks and ordering): CI's SQLite pass runs these too.
pytestmark = pytest.mark.database


@pytest.fixture
def make_probe(company):
    def make(*script, state=SyncState.LOCAL, **fields):
        return Probe.objects.create(company=company, payload={"script": list(script)}, sync_state=state, **fields)
    return make


@pytest.fixture
def queue_probe(django_capture_on_commit_callbacks):
    def queue(probe):
        with django_capture_on_commit_callbacks(execute=True):
            return sync.record_queue(probe)
    return queue


def sends(probe):
    return probe.calls.filter(kind="send").count()


def reconciles(probe):
    return probe.calls.filter(kind="reconcile").count()


def age(probe, seconds):
    Probe.objects.filter(pk=probe.pk).update(updated_at=timezone.now() - timedelta(seconds=seconds))


def test_claim_only_one_wins(make_probe):
    probe = make_probe(state=SyncState.QUEUED)
    assert Probe.claim(probe.pk) is True
    assert Probe.claim(probe.pk) is False
    probe.refresh_from_db()
    assert (probe.sync_state, probe.attempts) == (SyncState.SENDING, 1)


@pytest.mark.django_db(transaction=True)
def test_claim_under_concurrency_only_one_thread_wins(company):
    probe = Probe.objects.create(company=company, sync_state=SyncState.QUEUED)
    barrier, results = threading.Barrier(8), []

    def worker():
        try:
            barrier.wait()
            results.append(Probe.claim(probe.pk))
        finally:
            connection.close()

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [False] * 7 + [True]
    assert Probe.objects.get(pk=probe.pk).attempts == 1


def test_queue_moves_local_to_queued_and_enqueues_after_commit(make_probe, rq_queue, django_capture_on_commit_callbacks):
    probe = make_probe()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        run = sync.record_queue(probe)
    assert Probe.objects.get(pk=probe.pk).sync_state == SyncState.QUEUED
    assert (run.name, run.target, run.company_id) == ("probe_push", f"testapp.probe:{probe.pk}", probe.company_id)
    assert rq_queue.count == 0 and len(callbacks) == 1
    callbacks[0]()
    assert rq_queue.job_ids == [run.rq_job_id]


@pytest.mark.parametrize("state", [SyncState.QUEUED, SyncState.SENDING, SyncState.SYNCED])
def test_queue_refuses_a_record_on_its_way_or_synced(make_probe, queue_probe, state):
    probe = make_probe(state=state)
    with pytest.raises(sync.StateError):
        queue_probe(probe)
    assert JobRun.objects.count() == 0


def test_push_success(make_probe, queue_probe, rq_queue):
    probe = make_probe()
    run = queue_probe(probe)
    run_rq_job(run)
    probe.refresh_from_db()
    run.refresh_from_db()
    assert probe.sync_state == SyncState.SYNCED and probe.synced_at and probe.last_error == ""
    assert probe.remote_id == f"P-{probe.uuid.hex[:12]}" and probe.remote_status == 1
    assert (sends(probe), reconciles(probe), probe.attempts) == (1, 0, 1)
    assert run.status == JobStatus.SUCCEEDED and run.message


def test_duplicate_push_jobs_send_once(make_probe, queue_probe, rq_queue, django_capture_on_commit_callbacks):
    probe = make_probe()
    run = queue_probe(probe)
    # A second job for the same record (e.g. the sweep racing the first one): claim lets one through.
    with django_capture_on_commit_callbacks(execute=True):
        extra = jobs.enqueue("tests.testapp.jobs.probe_push", name="other", args=[probe.pk])
    run_rq_job(extra)
    run_rq_job(run)
    probe.refresh_from_db()
    assert probe.sync_state == SyncState.SYNCED and sends(probe) == 1
    assert JobRun.objects.get(pk=run.pk).status == JobStatus.SUCCEEDED  # "nothing to send" is no failure


def test_transient_error_goes_back_to_queued_and_retries(make_probe, queue_probe, rq_queue, settings):
    settings.JOB_RETRY_BASE_SECONDS = 2
    probe = make_probe("transient")
    run = queue_probe(probe)
    run_rq_job(run)
    probe.refresh_from_db()
    run.refresh_from_db()
    assert (probe.sync_state, probe.last_error) == (SyncState.QUEUED, "Service Unavailable")
    assert run.status == JobStatus.RETRYING and scheduled_at(rq_queue, run.rq_job_id)
    run_rq_job(run)  # the scheduled retry
    probe.refresh_from_db()
    assert probe.sync_state == SyncState.SYNCED and probe.last_error == ""
    # the retry asked the platform first (an earlier attempt existed), found nothing, and sent
    assert (sends(probe), reconciles(probe), probe.attempts) == (2, 1, 2)
    assert JobRun.objects.get(pk=run.pk).status == JobStatus.SUCCEEDED


def test_transient_errors_until_the_last_attempt_leave_the_record_to_the_sweep(make_probe, queue_probe, rq_queue,
                                                                                settings,
                                                                                django_capture_on_commit_callbacks):
    """The job gives up, the record does not: a 5xx may have been applied, so the record never ends FAILED
    unasked; it waits QUEUED and the sweep's push asks the platform first (issue 11, make chaos)."""
    settings.JOB_MAX_ATTEMPTS = 2
    probe = make_probe("transient", "transient", "ok")
    run = queue_probe(probe)
    with translation.override("en"):
        run_rq_job(run)
        run_rq_job(run)
    probe.refresh_from_db()
    run.refresh_from_db()
    assert probe.sync_state == SyncState.QUEUED and "Service Unavailable" in probe.last_error
    assert "tried again" in probe.last_error
    assert run.status == JobStatus.FAILED and sends(probe) == 2
    age(probe, settings.SYNC_STUCK_AFTER_SECONDS + 5)
    with django_capture_on_commit_callbacks(execute=True):
        assert sync.sweep_stuck() == 1
    again = JobRun.objects.exclude(pk=run.pk).get()
    run_rq_job(again)
    probe.refresh_from_db()
    assert probe.sync_state == SyncState.SYNCED and (sends(probe), reconciles(probe)) == (3, 2)


def test_rate_limited_goes_back_to_queued_and_waits_for_the_window(make_probe, queue_probe, rq_queue):
    probe = make_probe("rate_limited:3")
    run = queue_probe(probe)
    run_rq_job(run)
    probe.refresh_from_db()
    run.refresh_from_db()
    assert probe.sync_state == SyncState.QUEUED and probe.attempts == 0  # not sent: no attempt used
    assert run.status == JobStatus.DEFERRED and scheduled_at(rq_queue, run.rq_job_id)
    run_rq_job(run)
    probe.refresh_from_db()
    assert probe.sync_state == SyncState.SYNCED
    assert (sends(probe), reconciles(probe)) == (2, 0)  # nothing to reconcile after a refused call


def test_permanent_error_fails_with_the_platform_message_and_can_be_resent(make_probe, queue_probe, rq_queue):
    probe = make_probe("permanent")
    run = queue_probe(probe)
    run_rq_job(run)
    probe.refresh_from_db()
    run.refresh_from_db()
    assert (probe.sync_state, probe.last_error) == (SyncState.FAILED, "Doğrulama hatası: payload eksik")
    assert (run.status, run.message) == (JobStatus.FAILED, "Doğrulama hatası: payload eksik")
    assert scheduled_at(rq_queue, run.rq_job_id) is None  # no retry
    probe.payload = {"script": []}  # the user fixes the record and resends
    probe.save()
    run_rq_job(queue_probe(probe))
    probe.refresh_from_db()
    assert probe.sync_state == SyncState.SYNCED and probe.last_error == ""


def test_maybe_sent_that_arrived_is_reconciled_not_sent_again(make_probe, queue_probe, rq_queue):
    probe = make_probe("maybe_sent")
    run = queue_probe(probe)
    run_rq_job(run)
    probe.refresh_from_db()
    assert probe.sync_state == SyncState.QUEUED and probe.last_error
    run_rq_job(run)
    probe.refresh_from_db()
    assert probe.sync_state == SyncState.SYNCED and probe.remote_id
    assert (sends(probe), reconciles(probe)) == (1, 1)
    assert probe.calls.filter(delivered=True).count() == 1


def test_maybe_sent_that_never_arrived_is_sent_once_more(make_probe, queue_probe, rq_queue):
    probe = make_probe("lost")
    run = queue_probe(probe)
    run_rq_job(run)
    run_rq_job(run)
    probe.refresh_from_db()
    assert probe.sync_state == SyncState.SYNCED
    assert (sends(probe), reconciles(probe)) == (2, 1)
    assert probe.calls.filter(delivered=True).count() == 1


def test_a_record_left_sending_by_a_dead_worker_is_reconciled(make_probe, rq_queue, settings,
                                                              django_capture_on_commit_callbacks):
    probe = make_probe(state=SyncState.QUEUED)
    assert Probe.claim(probe.pk)
    # the worker delivered the record, then died before writing the answer down
    LocalCall.objects.create(probe=probe, kind="send", outcome="ok", delivered=True)
    # while fresh, SENDING belongs to a live worker: a push leaves it alone
    sync.record_push(Probe, probe.pk, send=services.probe_send, reconcile=services.probe_reconcile)
    assert Probe.objects.get(pk=probe.pk).sync_state == SyncState.SENDING and sends(probe) == 1
    age(probe, settings.SYNC_STUCK_AFTER_SECONDS + 5)
    with django_capture_on_commit_callbacks(execute=True):
        assert sync.sweep_stuck() == 1
    run_rq_job(JobRun.objects.get())
    probe.refresh_from_db()
    assert probe.sync_state == SyncState.SYNCED and probe.attempts == 2
    assert (sends(probe), reconciles(probe)) == (1, 1)  # asked, found, not sent again


def test_unexpected_error_in_send_fails_the_record(make_probe, rq_queue, django_capture_on_commit_callbacks):
    probe = make_probe(state=SyncState.QUEUED)

    def broken(record):
        raise KeyError("remoteId")

    with pytest.raises(KeyError):
        sync.record_push(Probe, probe.pk, send=broken, reconcile=lambda r: None)
    probe.refresh_from_db()
    assert probe.sync_state == SyncState.FAILED and "KeyError" in probe.last_error


def test_sweep_reenqueues_stuck_records_only(make_probe, rq_queue, settings, django_capture_on_commit_callbacks):
    stuck = settings.SYNC_STUCK_AFTER_SECONDS + 5
    queued_old = make_probe(state=SyncState.QUEUED)
    sending_old = make_probe(state=SyncState.SENDING, attempts=1)
    queued_new = make_probe(state=SyncState.QUEUED)
    sending_new = make_probe(state=SyncState.SENDING, attempts=1)
    others = [make_probe(state=s) for s in (SyncState.LOCAL, SyncState.SYNCED, SyncState.FAILED)]
    for probe in [queued_old, sending_old, *others]:
        age(probe, stuck)
    with django_capture_on_commit_callbacks(execute=True):
        assert sync.sweep_stuck() == 2
    targets = set(JobRun.objects.values_list("target", flat=True))
    assert targets == {f"testapp.probe:{queued_old.pk}", f"testapp.probe:{sending_old.pk}"}
    assert rq_queue.count == 2
    # a second sweep finds their jobs still waiting: no duplicates
    with django_capture_on_commit_callbacks(execute=True):
        assert sync.sweep_stuck() == 0
    assert JobRun.objects.count() == 2
    for run in JobRun.objects.all():
        run_rq_job(run)
    assert {p.sync_state for p in Probe.objects.filter(pk__in=[queued_old.pk, sending_old.pk])} == {SyncState.SYNCED}
    assert Probe.objects.get(pk=queued_new.pk).sync_state == SyncState.QUEUED
    assert Probe.objects.get(pk=sending_new.pk).sync_state == SyncState.SENDING


def test_sweep_leaves_a_record_whose_retry_is_scheduled(make_probe, queue_probe, rq_queue, settings,
                                                        django_capture_on_commit_callbacks):
    probe = make_probe("transient")
    run = queue_probe(probe)
    run_rq_job(run)
    age(probe, settings.SYNC_STUCK_AFTER_SECONDS + 5)  # a long backoff
    with django_capture_on_commit_callbacks(execute=True):
        assert sync.sweep_stuck() == 0
    assert JobRun.objects.count() == 1
    # ... but when Redis lost that retry, the sweep finds the job lost and enqueues it again (the same run)
    rq_queue.connection.delete(f"rq:job:{JobRun.objects.get().rq_job_id}")
    JobRun.objects.update(enqueued_at=timezone.now() - timedelta(hours=1))
    with django_capture_on_commit_callbacks(execute=True):
        assert sync.sweep_stuck() == 0  # no second job for the record: its own is back on the queue
    run.refresh_from_db()
    assert (run.status, run.lost_count) == (JobStatus.QUEUED, 1)
    assert rq_queue.connection.exists(f"rq:job:{run.rq_job_id}")


def test_records_poll_settles_a_bounded_batch(make_probe, company, other_company):
    pending = [make_probe(state=SyncState.SYNCED, remote_id=f"R{i}", remote_status=10) for i in range(5)]
    done = make_probe(state=SyncState.SYNCED, remote_id="D", remote_status=60)
    Probe.objects.create(company=other_company, sync_state=SyncState.SYNCED, remote_id="X", remote_status=10)
    asked = []

    def fetch_statuses(records):
        asked.append([r.remote_id for r in records])
        return {r.remote_id: {"status": 60 if r.remote_id in ("R0", "R1") else 10} for r in records}

    def settle(record, answer):
        return {"remote_status": answer["status"]} if answer["status"] != record.remote_status else None

    kwargs = dict(company=company, select=Q(remote_status__lt=60), fetch_statuses=fetch_statuses, settle=settle)
    for i, probe in enumerate(pending):  # oldest polled first
        Probe.objects.filter(pk=probe.pk).update(updated_at=timezone.now() - timedelta(minutes=10 - i))
    assert sync.records_poll(Probe, batch_size=3, **kwargs) == 2
    assert asked[0] == ["R0", "R1", "R2"]
    assert set(Probe.objects.filter(remote_status=60).values_list("remote_id", flat=True)) == {"R0", "R1", "D"}
    sync.records_poll(Probe, batch_size=3, **kwargs)
    assert asked[1] == ["R3", "R4", "R2"]  # the batch rotates: those just polled go last
    assert done.remote_status == 60


def test_fetch_ready():
    deadline = timezone.now() + timedelta(hours=24)
    assert sync.fetch_ready(fetch=lambda: b"xlsx", deadline=deadline) == b"xlsx"
    with pytest.raises(jobs.TryLater) as waiting:
        sync.fetch_ready(fetch=lambda: None, deadline=deadline, every=30)
    assert waiting.value.wait == 30
    with pytest.raises(sync.RemoteError) as expired:
        sync.fetch_ready(fetch=lambda: None, deadline=timezone.now() - timedelta(seconds=1))
    assert expired.value.permanent


def test_cron_registers_the_sweep():
    from django_rq.cron import DjangoCronScheduler

    scheduler = DjangoCronScheduler()
    scheduler.load_config_from_file("backoffice.cron")
    [job] = [job for job in scheduler.get_jobs() if job.func_name == "backoffice.core.sync.sweep_stuck"]
    assert (job.func_name, job.interval, job.queue_name) == ("backoffice.core.sync.sweep_stuck", 15, "default")
