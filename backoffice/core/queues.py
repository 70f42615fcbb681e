"""Where jobs wait in Redis: the shared queue, a queue per company, the shared schedule (core.jobs runs them).

A company's jobs wait on a queue of their own (company_queue) and the workers take the queues in turn
(core.worker), so a backlog of thousands of one company's tickets never holds back another company's single
invoice. Work that waits a while (a retry, a deferral after a 429, a delayed start) waits in the shared queue's
schedule: RQ's scheduler moves only the queues a worker named when it started.
"""

import logging
import math
import time
from datetime import datetime
from datetime import timezone as dt_timezone

import django_rq
from django.conf import settings
from redis.exceptions import RedisError
from rq.job import Job
from rq.job import JobStatus as RQStatus
from rq.queue import Queue
from rq.registry import ScheduledJobRegistry

logger = logging.getLogger(__name__)

DEFAULT_QUEUE = "default"
COMPANY_QUEUE_PREFIX = "company-"


def connection():
    return django_rq.get_connection(DEFAULT_QUEUE)


def company_queue(company_id) -> str:
    """The queue of a company's jobs (settings.JOB_QUEUE_PER_COMPANY; off: every job on the shared queue, first in
    first out, as before issue 32)."""
    if not getattr(settings, "JOB_QUEUE_PER_COMPANY", True):
        return DEFAULT_QUEUE
    return f"{COMPANY_QUEUE_PREFIX}{company_id}"


def shared() -> Queue:
    # "auto": put the job in Redis now. jobs.enqueue() already waits for the commit itself, and a retry
    # scheduled from inside a job must not wait for a transaction it is not part of.
    return django_rq.get_queue(DEFAULT_QUEUE, commit_mode="auto")


def get(name=DEFAULT_QUEUE) -> Queue:
    common = shared()
    if name == DEFAULT_QUEUE:
        return common
    # A company's queue: the shared queue's connection and time limit under its own name; RQ's own class, as
    # django-rq's reads its settings by the queue's name.
    return Queue(name, connection=common.connection, default_timeout=common._default_timeout,
                 job_class=common.job_class, serializer=common.serializer)


def all_queues(redis=None) -> list[Queue]:
    """The shared queue and every company's queue Redis knows (RQ lists each queue once a job was put on it): what
    a worker listens to (core.worker), what the queue pages show and what a test's in-process worker runs."""
    redis = redis or connection()
    prefix = Queue.redis_queue_namespace_prefix + COMPANY_QUEUE_PREFIX
    names = sorted(key.decode()[len(Queue.redis_queue_namespace_prefix):]
                   for key in redis.smembers(Queue.redis_queues_keys) if key.decode().startswith(prefix))
    return [get(DEFAULT_QUEUE), *(get(name) for name in names)]


def run_at(seconds: float) -> datetime:
    # RQ's scheduled registry keeps whole seconds and truncates: round up, so that a job never runs
    # before the rate-limit window it waits for has freed.
    return datetime.fromtimestamp(math.ceil(time.time() + max(0.0, seconds)), tz=dt_timezone.utc)


def waiting(rq_job: Job, status, queued: dict | None = None) -> bool:
    """Whether a queued job is on its queue's list, or a scheduled one in its queue's schedule (`queued`: the
    queues' job ids read once for a whole sweep). A job moved this very moment (popped by a worker, moved from
    the schedule to the queue) is caught by reading its status and places once more."""
    redis = rq_job.connection

    def present():
        if status == RQStatus.SCHEDULED and redis.zscore(
                ScheduledJobRegistry(rq_job.origin, connection=redis).key, rq_job.id) is not None:
            return True
        key = Queue(rq_job.origin, connection=redis).key
        if queued is not None:
            if key not in queued:
                queued[key] = {job_id.decode() if isinstance(job_id, bytes) else job_id
                               for job_id in redis.lrange(key, 0, -1)}
            return rq_job.id in queued[key]
        return redis.lpos(key, rq_job.id) is not None

    try:
        if present():
            return True
        if queued is not None:
            queued.pop(Queue(rq_job.origin, connection=redis).key, None)  # read afresh for the second look
        return rq_job.get_status(refresh=True) != status or present()
    except RedisError:
        return True  # cannot tell: do not risk a duplicate


def move_now(rq_job_id: str) -> bool:
    """A scheduled job from the shared queue's schedule to the queue, taken out with one ZREM so that only one of us
    and the scheduler moves it (should both, jobs.run_job starts its run once). False when it was not there."""
    try:
        common = shared()  # deferred work waits in the shared queue's schedule
        if not common.connection.zrem(ScheduledJobRegistry(queue=common).key, rq_job_id):
            return False
        common.enqueue_job(Job.fetch(rq_job_id, connection=common.connection))
        return True
    except Exception:  # Redis away or the job gone: it runs at its time, or the sweep finds it lost
        logger.warning("could not move job %s out of the schedule", rq_job_id, exc_info=True)
        return False
