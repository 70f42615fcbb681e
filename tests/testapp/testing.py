"""Helpers for the job tests: a clean RQ queue, running a scheduled job in this process, a real worker."""

import os
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from datetime import datetime
from datetime import timezone as dt_timezone
from pathlib import Path

import django_rq
import pytest
from django.db import connection
from django.utils import timezone
from rq import Worker
from rq.job import Job
from rq.job import JobStatus as RQStatus
from rq.registry import ScheduledJobRegistry

from backoffice.core import queues

ROOT = Path(__file__).resolve().parents[2]


class Queues:
    """The shared queue and every company's (core.queues.all_queues) read as one, as a worker takes them: how many jobs
    wait, which, in the queues' order; anything else (name, connection, key, the schedule) is the shared queue's."""

    def __init__(self, shared):
        self.shared = shared

    def __getattr__(self, name):
        return getattr(self.shared, name)

    def all(self):
        return queues.all_queues(self.shared.connection)

    @property
    def count(self):
        return sum(queue.count for queue in self.all())

    @property
    def job_ids(self):
        return [job_id for queue in self.all() for job_id in queue.job_ids]

    def get_jobs(self):
        return [job for queue in self.all() for job in queue.get_jobs()]

    def remove(self, job):
        for queue in self.all():
            queue.remove(job)

    def empty(self):
        for queue in self.all():
            queue.empty()


@pytest.fixture
def rq_queue():
    """Every queue (Queues), emptied (queued and scheduled jobs) before and after the test."""
    queue = django_rq.get_queue("default")
    _empty(queue)
    yield Queues(queue)
    _empty(queue)


def _empty(queue):
    """The shared queue and every company's (core.queues.all_queues): their jobs and the schedule; the company queues are
    forgotten (a test's company may have the pk of an earlier test's)."""
    for each in queues.all_queues(queue.connection):
        each.empty()
        registry = ScheduledJobRegistry(queue=each)
        for job_id in registry.get_job_ids():
            queue.connection.delete(Job.key_for(job_id))
        queue.connection.delete(registry.key)
        if each.name != queues.DEFAULT_QUEUE:
            each.delete()


def scheduled_at(queue, rq_job_id):
    """Unix time at which a scheduled job will be enqueued, or None."""
    score = queue.connection.zscore(ScheduledJobRegistry(queue.name, connection=queue.connection).key, rq_job_id)
    return None if score is None else float(score)


def run_rq_job(run):
    """Run the RQ job a JobRun points at, here, as a worker would (scheduled or not)."""
    run.refresh_from_db()
    queue = Queues(django_rq.get_queue("default"))
    job = Job.fetch(run.rq_job_id, connection=queue.connection)
    queue.remove(job)  # taken off the queue / the schedule, as a worker's dequeue does
    ScheduledJobRegistry(queue=queue.shared).remove(job)
    return job.func(*job.args, **job.kwargs)


def push_runs(record):
    """The JobRuns of a record's own push, oldest first."""
    from backoffice.core.models import JobRun
    from backoffice.core.sync import record_target

    return JobRun.objects.filter(target=record_target(type(record), record.pk)).order_by("pk")


def running(record, queue):
    """The record's push run, as a worker has it now: RUNNING here, its RQ job taken off its queue, STARTED and
    beating (alive)."""
    from backoffice.core.choices import JobStatus
    from backoffice.core.models import JobRun

    [run] = push_runs(record)
    rq_job = Job.fetch(run.rq_job_id, connection=queue.connection)
    queue.remove(rq_job)
    rq_job.set_status(RQStatus.STARTED)
    rq_job.heartbeat(datetime.now(dt_timezone.utc), 60)
    JobRun.objects.filter(pk=run.pk).update(status=JobStatus.RUNNING, started_at=timezone.now())
    return run


def lands(record, **fields):
    """The record's push has just reached the platform (another worker's): SYNCED with what it got."""
    from backoffice.core.choices import SyncState

    type(record).objects.filter(pk=record.pk).update(sync_state=SyncState.SYNCED, synced_at=timezone.now(), **fields)
    record.refresh_from_db()
    return record


def assert_woken(record, run, queue):
    """A second run of the record's push, QUEUED and on its queue, besides the one still running: a wake-up that
    joined the running run would leave the record QUEUED once that run ends with "waits"."""
    from backoffice.core.choices import JobStatus
    from backoffice.core.models import JobRun

    runs = list(push_runs(record))
    assert [r.pk for r in runs][0] == run.pk and JobRun.objects.get(pk=run.pk).status == JobStatus.RUNNING
    woken = [r for r in runs if r.pk != run.pk]
    assert len(woken) == 1, "the wake-up joined the running push instead of enqueueing one of its own"
    assert woken[0].status == JobStatus.QUEUED and woken[0].rq_job_id in queue.job_ids


def database_url() -> str:
    """A DATABASE_URL for a subprocess that must see this test database (a file on SQLite)."""
    s = connection.settings_dict
    if s["ENGINE"].endswith("sqlite3"):
        name = str(s["NAME"])
        assert name != ":memory:" and "mode=memory" not in name, "the worker needs a file database"
        return f"sqlite:///{name}"
    user = s.get("USER") or ""
    password = f":{s['PASSWORD']}" if s.get("PASSWORD") else ""
    auth = f"{user}{password}@" if user else ""
    port = f":{s['PORT']}" if s.get("PORT") else ""
    return f"postgres://{auth}{s.get('HOST') or '127.0.0.1'}{port}/{s['NAME']}"


def manage(*args, env=None) -> subprocess.Popen:
    """Start `manage.py <args>` on the test database and the test Redis; output goes to a log file
    (a pipe nobody reads would block the process once full)."""
    full_env = {**os.environ, "DATABASE_URL": database_url(), "PYTHONUNBUFFERED": "1", **(env or {})}
    log = tempfile.NamedTemporaryFile("w+", prefix="bo-manage-", suffix=".log", delete=False)
    process = subprocess.Popen([sys.executable, str(ROOT / "manage.py"), *args], cwd=ROOT, env=full_env,
                               stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, text=True)
    process.log_path = log.name
    log.close()
    return process


def output(process) -> str:
    return Path(process.log_path).read_text(errors="replace")


def stop(process: subprocess.Popen, timeout=10) -> str:
    """Stop a process we started (SIGTERM: RQ's warm shutdown) and return its output."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    text = output(process)
    Path(process.log_path).unlink(missing_ok=True)
    return text


def wait_for(predicate, *, timeout, interval=0.2, message="condition"):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {message}")
        time.sleep(interval)


def finished_run(*, timeout=30, **filters):
    """The newest JobRun of `filters` once it has finished: a job body saves its record a moment before the runner
    marks its run done, so a test that saw the record must wait for the run too."""
    from backoffice.core.jobs import ACTIVE
    from backoffice.core.models import JobRun

    def finished():
        run = JobRun.objects.filter(**filters).order_by("-pk").first()
        return run if run is not None and run.status not in ACTIVE else None

    return wait_for(finished, timeout=timeout, message=f"the job run {filters} to finish")


@contextmanager
def running_worker(env=None):
    """A real `manage.py rqworker --with-scheduler` on an empty default queue, registered before the block
    starts; stopped (and the queue emptied) after it."""
    queue = django_rq.get_queue("default")
    _empty(queue)
    process = manage("rqworker", "default", "--with-scheduler", env=env)
    try:
        wait_for(lambda: process.poll() is not None or Worker.all(queue=queue), timeout=30,
                 message="the RQ worker to register")
        assert process.poll() is None, output(process)
        yield process
    finally:
        stop(process)
        _empty(queue)
