"""The deployment's RQ worker (core.worker.Worker): an idle worker wakes for its maintenance every interval, and a
worker of the shared queue takes every company's queue in turn (core.jobs: fair between companies)."""

import django_rq
import pytest
from rq import SimpleWorker
from rq.worker import Worker as RQWorker

from backoffice.core import jobs, worker
from backoffice.core.models import JobRun
from tests.testapp.testing import rq_queue  # noqa: F401 (fixture)

HERE = __name__


def body(name):
    return name


class InProcessWorker(worker.Worker, SimpleWorker):
    """The deployment's worker running its jobs in this process (no fork), so that they see the test's database."""


def test_an_idle_worker_waits_on_the_queue_no_longer_than_its_maintenance_interval(settings):
    """RQ's own worker blocks on an empty queue for its TTL less 15 s (405 s) before its maintenance runs: a survivor
    that was idle when the scheduler's holder died would leave every retry and deferral waiting that long
    (tests/test_two_checkouts.py found it). A worker of the shared queue waits less still: it looks for the company
    queues that appeared since (a company's first job) every LOOK_FOR_QUEUES_SECONDS."""
    settings.WORKER_MAINTENANCE_SECONDS = 10
    connection = django_rq.get_connection("default")
    assert RQWorker(["default"], connection=connection).dequeue_timeout == 405
    other = worker.Worker(["elsewhere"], connection=connection)
    assert other.maintenance_interval == 10 and other.dequeue_timeout == 10
    assert worker.Worker(["default"], connection=connection).dequeue_timeout == worker.LOOK_FOR_QUEUES_SECONDS < 10


def enqueue_all(capture, *companies):
    """One job per (company, target) given, in that order, put on the queues at once."""
    with capture(execute=True):
        return [jobs.enqueue(f"{HERE}.body", name="body", company=company, target=target, args=[target])
                for company, target in companies]


def run_order(queue):
    InProcessWorker([queue.shared], connection=queue.connection).work(burst=True, with_scheduler=False)
    return list(JobRun.objects.order_by("started_at", "pk").values_list("target", flat=True))


@pytest.mark.django_db(transaction=True)  # the worker runs its jobs on a connection of its own
def test_a_companys_backlog_never_holds_back_another_companys_single_job(rq_queue, company, other_company,
                                                                          django_capture_on_commit_callbacks):
    """Company A's five jobs were queued first, company B's one after them, a job of no company last: the worker
    takes the queues in turn, so B's job is the second to run (first in, first out made it the sixth), and each
    company's own jobs keep their order."""
    runs = enqueue_all(django_capture_on_commit_callbacks, *[(company, f"a{n}") for n in range(5)],
                       (other_company, "b"), (None, "shared"))
    assert [run.queue for run in runs[4:]] == [f"company-{company.pk}", f"company-{other_company.pk}", "default"]
    order = run_order(rq_queue)
    assert set(order[:3]) == {"a0", "b", "shared"}, order
    assert [target for target in order if target.startswith("a")] == ["a0", "a1", "a2", "a3", "a4"]


@pytest.mark.django_db(transaction=True)  # the worker runs its jobs on a connection of its own
def test_with_one_queue_for_all_the_backlog_goes_first(rq_queue, company, other_company, settings,
                                                       django_capture_on_commit_callbacks):
    """The switch off (settings.JOB_QUEUE_PER_COMPANY = False): the queue of before, first in first out, which the
    fairness benchmark measures against."""
    settings.JOB_QUEUE_PER_COMPANY = False
    enqueue_all(django_capture_on_commit_callbacks, *[(company, f"a{n}") for n in range(5)], (other_company, "b"))
    assert run_order(rq_queue) == ["a0", "a1", "a2", "a3", "a4", "b"]


@pytest.mark.django_db(transaction=True)  # the worker runs its jobs on a connection of its own
def test_a_worker_finds_a_company_queue_that_appeared_after_it_started(rq_queue, company, monkeypatch,
                                                                       django_capture_on_commit_callbacks):
    """Companies come and go: a running worker looks for new queues every few seconds (here: at once)."""
    running = InProcessWorker([rq_queue.shared], connection=rq_queue.connection)
    assert [queue.name for queue in running._ordered_queues] == ["default"]
    enqueue_all(django_capture_on_commit_callbacks, (company, "late"))
    assert [queue.name for queue in running._ordered_queues] == ["default"]  # not looked again yet
    monkeypatch.setattr(running, "_next_look", 0.0)
    assert [queue.name for queue in running._ordered_queues] == ["default", f"company-{company.pk}"]
    assert f"company-{company.pk}" in running.queue_names()  # its maintenance cleans that queue's registries too
    running.work(burst=True, with_scheduler=False)
    assert JobRun.objects.get(target="late").status == "succeeded"


@pytest.mark.django_db
def test_work_that_waits_comes_back_through_the_shared_schedule(rq_queue, company,
                                                                django_capture_on_commit_callbacks):
    """RQ's scheduler moves only the queues a worker named when it started: a delayed job is on the shared queue's
    schedule, so that no company's waiting work depends on a worker that knew its queue."""
    from rq.registry import ScheduledJobRegistry

    with django_capture_on_commit_callbacks(execute=True):
        run = jobs.enqueue(f"{HERE}.body", name="body", company=company, target="later", args=["x"], delay=60)
    assert run.rq_job_id in ScheduledJobRegistry("default", connection=rq_queue.connection).get_job_ids()
    assert rq_queue.count == 0
