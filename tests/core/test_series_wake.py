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

from backoffice.core import jobs, queues
from backoffice.core.choices import JobStatus, SyncState
from backoffice.core.models import JobRun
from backoffice.core.sync import record_target
from backoffice.remote.errors import RateLimited
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


def body_woken_while_running(company_id, target, rate_limited):
    """A run that finds its number waiting, while another worker lands the number before it (which wakes this run,
    still RUNNING) before this run has deferred."""
    assert jobs.wake(name="lane_push", company_id=company_id, target=target) is True
    if rate_limited:
        raise RateLimited(WAIT)
    raise jobs.TryLater(WAIT, "waits for the number before it")


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
    return queues.shared()


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

    monkeypatch.setattr(queues, "ScheduledJobRegistry", away)
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


def test_a_batch_that_sends_a_number_wakes_the_deferred_batch_holding_the_next(
        fast, sandbox_company, rq_queue, settings, django_capture_on_commit_callbacks):
    """Two batches of one series on two workers: the later numbers' batch ran first and waits (DEFERRED) for the
    earlier one's last number; when the earlier batch writes that number SYNCED, the waiting batch goes to the queue
    at once rather than after SYNC_LANE_WAIT_SECONDS. A batch whose next number is its own wakes nothing."""
    from backoffice.core.sync import selection_target
    from backoffice.tickets import services
    from tests.tickets.conftest import make_tickets

    settings.SYNC_LANE_WAIT_SECONDS = WAIT
    tickets = make_tickets(sandbox_company, 6, prefix="BWK")
    EventTicket.objects.filter(pk__in=[t.pk for t in tickets]).update(sync_state=SyncState.QUEUED)
    earlier, later = [t.pk for t in tickets[:3]], [t.pk for t in tickets[3:]]

    def batch_run(pks):
        with django_capture_on_commit_callbacks(execute=True):
            return jobs.enqueue(services.tickets_push_batch, name="tickets_push_batch", company=sandbox_company,
                                target=selection_target(EventTicket, pks), args=["event", pks])

    first, second = batch_run(earlier), batch_run(later)
    assert run_rq_job(second) is None  # its first number waits for the earlier batch's last: deferred
    second.refresh_from_db()
    assert second.status == JobStatus.DEFERRED and scheduled_at(rq_queue, second.rq_job_id) is not None

    assert run_rq_job(first) == "3 tickets sent, 0 refused."
    second.refresh_from_db()
    assert scheduled_at(rq_queue, second.rq_job_id) is None, "the waiting batch still waits for its time"
    assert queued_times(rq_queue, second.rq_job_id) == 1
    assert run_rq_job(second) == "3 tickets sent, 0 refused."
    assert platform_numbers(sandbox_company) == [t.ticket_number for t in tickets]


def test_a_wake_finds_only_a_deferred_batch_that_holds_the_number(company, rq_queue,
                                                                 django_capture_on_commit_callbacks):
    """jobs.wake_holding: a batch of other records, or of the record but not deferred, stays where it is."""
    others = deferred(company, django_capture_on_commit_callbacks, target="tickets.eventticket:7+2:abc")
    JobRun.objects.filter(pk=others.pk).update(job_args={"args": ["event", [7, 8, 9]]})
    assert jobs.wake_holding(company_id=company.pk, label="tickets.eventticket", pk=10) is False
    assert jobs.wake_holding(company_id=company.pk, label="invoices.invoice", pk=8) is False  # another model
    assert scheduled_at(rq_queue, others.rq_job_id) is not None
    assert jobs.wake_holding(company_id=company.pk, label="tickets.eventticket", pk=8) is True
    assert scheduled_at(rq_queue, others.rq_job_id) is None and queued_times(rq_queue, others.rq_job_id) == 1
    assert jobs.wake_holding(company_id=company.pk, label="tickets.eventticket", pk=8) is False  # moved already


@pytest.mark.parametrize("rate_limited", [False, True], ids=["waits-for-a-number", "rate-limited"])
def test_a_run_woken_while_running_goes_to_the_queue_as_soon_as_it_defers(
        company, rq_queue, rate_limited, django_capture_on_commit_callbacks):
    """The wake came while the run still ran (a batch's other lanes still busy): it defers and goes to its queue at
    once, not at its time. A deferral for the platform's rate limit keeps its time: the window must pass."""
    with django_capture_on_commit_callbacks(execute=True):
        run = jobs.enqueue(f"{HERE}.body_woken_while_running", name="lane_push", company=company, target="lane:5",
                           args=[company.pk, "lane:5", rate_limited])
    assert run_rq_job(run) is None
    run.refresh_from_db()
    assert run.status == JobStatus.DEFERRED
    if rate_limited:
        assert scheduled_at(rq_queue, run.rq_job_id) is not None and queued_times(rq_queue, run.rq_job_id) == 0
    else:
        assert scheduled_at(rq_queue, run.rq_job_id) is None, "the woken run waits for its time"
        assert queued_times(rq_queue, run.rq_job_id) == 1
