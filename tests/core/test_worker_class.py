"""The deployment's RQ worker (core.worker.Worker): an idle worker wakes for its maintenance every interval."""

import django_rq
from rq.worker import Worker as RQWorker

from backoffice.core.worker import Worker


def test_an_idle_worker_waits_on_the_queue_no_longer_than_its_maintenance_interval(settings):
    """RQ's own worker blocks on an empty queue for its TTL less 15 s (405 s) before its maintenance runs: a survivor
    that was idle when the scheduler's holder died would leave every retry and deferral waiting that long
    (tests/test_two_checkouts.py found it)."""
    settings.WORKER_MAINTENANCE_SECONDS = 10
    connection = django_rq.get_connection("default")
    assert RQWorker(["default"], connection=connection).dequeue_timeout == 405
    worker = Worker(["default"], connection=connection)
    assert worker.maintenance_interval == 10 and worker.dequeue_timeout == 10
