"""A number deferred while the one before it was on its way goes as soon as that one lands (issue 32, make chaos):
jobs.wake moves its DEFERRED run from the shared queue's schedule to the queue at once, and sync.series_lane's
wake_next calls it from record_push for the next number of the series. Otherwise a lane that fell behind catches up
one number per deferral (SYNC_LANE_WAIT_SECONDS), slower than numbers arrive."""

import time

import pytest
from django.utils import translation
from rq.job import Job
from rq.job import JobStatus as RQStatus
from rq.registry import ScheduledJobRegistry

from backoffice.core import jobs
from backoffice.core.choices import JobStatus, SyncState
from backoffice.core.models import JobRun
from backoffice.core.sync import record_target
from backoffice.tickets.models import EventTicket
from tests.testapp.testing import rq_queue, run_rq_job, scheduled_at  # noqa: F401 (fixture)
from tests.tickets.test_numbering import platform_numbers
from tests.tickets.test_services import fast, new_event  # noqa: F401 (fixture)

# The database engine matters here (the runs' rows and their commits): CI's SQLite pass runs these too.
pytestmark = [pytest.mark.django_db, pytest.mark.database]

HERE = __name__
WAIT = 600  # far longer than any test: only a wake moves the run before its time


def body_waits_for(key):
    """A job whose work is ready once the mark `key` is set (the number before it landed)."""
    if not jobs.flag_is_set(key):
        raise jobs.TryLater(WAIT, "waits for the number before it")
    return "sent"


@pytest.fixture(autouse=True)
def english():
    with translation.override("en"):
        yield


def deferred(company, capture, *, target="lane:2", key=None):
    """A run of body_waits_for that ran once and waits, DEFERRED in the shared queue's schedule."""
    with capture(execute=True):
        run = jobs.enqueue(f"{HERE}.body_waits_for", name="lane_push", company=company, target=target,
                           args=[key or f"test-series-wake:{time.time_ns()}"])
    run_rq_job(run)
    run.refresh_from_db()
    assert run.status == JobStatus.DEFERRED and scheduled_at(run_queue(), run.rq_job_id) is not None
    return run


def run_queue():
    return jobs._queue(jobs.DEFAULT_QUEUE)


def queued_times(rq_queue, rq_job_id):
    """How many times a job waits on the queues (a worker would run it that many times)."""
    return sum(queue.job_ids.count(rq_job_id) for queue in rq_queue.all())


def wake(company, target="lane:2"):
    return jobs.wake(name="lane_push", company_id=company.pk, target=target)


def test_a_deferred_run_goes_to_the_queue_at_once(company, rq_queue, django_capture_on_commit_callbacks):
    key = f"test-series-wake:{time.time_ns()}"
    run = deferred(company, django_capture_on_commit_callbacks, key=key)
    jobs.flag_set(key, 60)  # what it waited for has happened
    assert wake(company) is True
    assert scheduled_at(rq_queue, run.rq_job_id) is None  # out of the schedule, not run a second time at its time
    assert queued_times(rq_queue, run.rq_job_id) == 1
    assert Job.fetch(run.rq_job_id, connection=rq_queue.connection).get_status() == RQStatus.QUEUED
    assert run_rq_job(run) == "sent"  # the same run, as the next worker takes it
    run.refresh_from_db()
    assert (run.status, run.attempts) == (JobStatus.SUCCEEDED, 1)


def test_wake_moves_nothing_without_a_deferred_run(company, rq_queue, django_capture_on_commit_callbacks):
    assert wake(company) is False  # no run at all
    with django_capture_on_commit_callbacks(execute=True):
        waiting = jobs.enqueue(f"{HERE}.body_waits_for", name="lane_push", company=company, target="lane:2",
                               args=["x"])
    assert wake(company) is False  # QUEUED, not deferred: already on its company's queue
    assert queued_times(rq_queue, waiting.rq_job_id) == 1 and waiting.rq_job_id not in rq_queue.shared.job_ids
    other = deferred(company, django_capture_on_commit_callbacks, target="lane:3")
    assert wake(company, target="lane:4") is False  # another record's run stays at its time
    assert scheduled_at(rq_queue, other.rq_job_id) is not None


def test_wake_after_the_scheduler_moved_the_run_returns_false_and_queues_it_once(
        company, rq_queue, django_capture_on_commit_callbacks):
    run = deferred(company, django_capture_on_commit_callbacks)
    job = Job.fetch(run.rq_job_id, connection=rq_queue.connection)
    # RQ's scheduler at the run's time: onto the queue, out of the schedule (RQScheduler.enqueue_scheduled_jobs)
    rq_queue.shared.enqueue_job(job)
    ScheduledJobRegistry(queue=rq_queue.shared).remove(job)
    assert wake(company) is False
    assert queued_times(rq_queue, run.rq_job_id) == 1


def test_two_wakes_move_the_run_once(company, rq_queue, django_capture_on_commit_callbacks):
    run = deferred(company, django_capture_on_commit_callbacks)
    assert [wake(company), wake(company)] == [True, False]
    assert queued_times(rq_queue, run.rq_job_id) == 1 and scheduled_at(rq_queue, run.rq_job_id) is None


def test_wake_without_redis_leaves_the_run_to_its_time(company, rq_queue, monkeypatch,
                                                       django_capture_on_commit_callbacks):
    from redis.exceptions import ConnectionError as RedisConnectionError

    run = deferred(company, django_capture_on_commit_callbacks)

    def away(*args, **kwargs):
        raise RedisConnectionError("Redis is away")

    monkeypatch.setattr(jobs, "ScheduledJobRegistry", away)
    assert wake(company) is False
    monkeypatch.undo()
    assert scheduled_at(rq_queue, run.rq_job_id) is not None


# --- the series' lane (tickets) --------------------------------------------------------------------------------


def push_run(ticket):
    return JobRun.objects.filter(target=record_target(EventTicket, ticket.pk)).order_by("-pk").first()


def test_a_ticket_that_lands_wakes_the_deferred_push_of_the_next_number(
        fast, sandbox_company, rq_queue, settings, django_capture_on_commit_callbacks):
    """N+1 and N+2 waited for N (their push jobs DEFERRED): N lands, N+1 goes at once; N+2 still waits for N+1,
    which wakes it in turn. The platform gets the numbers in order, none refused."""
    settings.SYNC_LANE_WAIT_SECONDS = WAIT
    with django_capture_on_commit_callbacks(execute=True):
        tickets = [new_event(sandbox_company) for _ in range(3)]
    first, second, third = tickets
    for ticket in (second, third):
        assert run_rq_job(push_run(ticket)) is None  # TryLater: the runner defers it
        assert push_run(ticket).status == JobStatus.DEFERRED
    assert run_rq_job(push_run(first)) == "Sent to the platform."
    second_run, third_run = push_run(second), push_run(third)
    assert scheduled_at(rq_queue, second_run.rq_job_id) is None, "N+1 still waits for its time though N landed"
    assert second_run.rq_job_id in rq_queue.shared.job_ids
    assert scheduled_at(rq_queue, third_run.rq_job_id) is not None  # N+2 waits for N+1, not for N
    assert run_rq_job(second_run) == "Sent to the platform."
    third_run.refresh_from_db()
    assert scheduled_at(rq_queue, third_run.rq_job_id) is None and third_run.rq_job_id in rq_queue.shared.job_ids
    assert run_rq_job(third_run) == "Sent to the platform."
    assert set(EventTicket.objects.filter(pk__in=[t.pk for t in tickets]).values_list("sync_state", flat=True)) == {
        SyncState.SYNCED}
    assert platform_numbers(sandbox_company) == [t.ticket_number for t in tickets]
