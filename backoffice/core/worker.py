"""The RQ worker of the deployment (settings.RQ["WORKER_CLASS"]): RQ's own, beating and looking after
itself more often.

- While a job runs, the worker refreshes the job's heartbeat every job_monitoring_interval seconds (RQ's
  default: 30). core.jobs.reap_lost takes a job whose heartbeat has been silent for a few beats as lost
  (its worker was killed with its work-horse) and enqueues it again: a short beat makes that seconds.
- RQ's scheduler process (retries, deferrals after a 429, delayed polls) dies when Redis goes away, and
  its lock outlives a killed worker by a minute; the worker starts it again, or takes over another's, only
  at its maintenance, every 10 minutes by default. Every few seconds instead, so that scheduled work is
  not left overdue for minutes (make chaos found it).
- An idle worker waits on the queue for at most that interval, so that its maintenance is not put off for the
  worker's TTL (RQ's default, 405 s, left an idle survivor's scheduler off for minutes).
- Fair between companies (core.queues): a worker of the shared queue listens to every company's queue too, found
  in Redis every few seconds, and takes the queues in turn (round robin, whatever --dequeue-strategy says):
  after a job of one queue it looks first at the next. An idle worker looks for new queues as often.
- A lock whose holder is a dead process of this machine is released at that maintenance, so a worker that
  outlives a killed one takes the scheduler over at once instead of after the lock's minute (make chaos,
  whose killed worker held the lock, left deferred pushes overdue past its settling time).
"""

import logging
import socket
import time

from django.conf import settings
from redis.exceptions import RedisError
from rq.scheduler import SCHEDULER_KEY_TEMPLATE, RQScheduler
from rq.scripts import release_lock
from rq.worker import Worker as RQWorker

from . import queues as job_queues
from .supervisor import alive

logger = logging.getLogger(__name__)


def release_dead_scheduler_locks(connection, *, private=False) -> list[str]:
    """Release RQ's scheduler locks whose holder is a dead process of this machine; returns what was released
    ("<lock key> of <holder>"). The lock outlives a scheduler that died with its Redis or its worker (for 61 s,
    and an append-only file keeps it across a Redis restart), and while it is taken no other scheduler starts.

    private: only one worker uses this Redis (make run's embedded one) and it is not running: a holder with no
    record is dead too (the worker takes the lock before its scheduler process writes the record, so a
    scheduler that died with Redis at once left none)."""
    host, released = socket.gethostname(), []
    for key in connection.scan_iter(RQScheduler.get_locking_key("*")):
        holder = connection.get(key)
        if not holder:
            continue
        holder = holder.decode()
        info = {k.decode(): v.decode() for k, v in connection.hgetall(SCHEDULER_KEY_TEMPLATE % holder).items()}
        if info:
            dead = info.get("hostname") == host and info.get("pid", "").isdigit() and not alive(int(info["pid"]))
            who = f"scheduler pid {info.get('pid')}"
        else:
            dead, who = private, "a scheduler that never registered"
        if dead and release_lock(connection, key.decode(), holder):  # only if that holder still has it
            released.append(f"{key.decode()} of {who}")
    return released


# Seconds between two looks for company queues that appeared (a company's first job): also the longest an idle
# worker waits on the queues it knows before it looks again.
LOOK_FOR_QUEUES_SECONDS = 2


class Worker(RQWorker):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("job_monitoring_interval", int(getattr(settings, "WORKER_HEARTBEAT_SECONDS", 5)))
        kwargs.setdefault("maintenance_interval", int(getattr(settings, "WORKER_MAINTENANCE_SECONDS", 10)))
        self._next_look = 0.0
        super().__init__(*args, **kwargs)

    @property
    def dequeue_timeout(self) -> int:
        # An idle worker waits on the queue for at most a maintenance interval, not RQ's worker TTL less 15 s
        # (405 s): its maintenance, which takes over the scheduler of a worker that died, is not put off that long
        # (two hosts, one killed with kill -9 while the other was idle: deferred pushes waited for minutes). With
        # the company queues, for at most LOOK_FOR_QUEUES_SECONDS: a new company's first job waits no longer.
        longest = int(self.maintenance_interval)
        if self._listens_to_companies():
            longest = min(longest, LOOK_FOR_QUEUES_SECONDS)
        return max(1, min(super().dequeue_timeout, longest))

    # RQ's dequeue loop reads the order of the queues from this attribute before each wait (its __init__ sets it):
    # a property, so that the company queues that appeared since are in it.
    @property
    def _ordered_queues(self):
        if time.monotonic() >= self._next_look and self._listens_to_companies():
            self._next_look = time.monotonic() + LOOK_FOR_QUEUES_SECONDS
            try:
                known = {queue.name for queue in self.queues}
                new = [queue for queue in job_queues.all_queues(self.connection) if queue.name not in known]
            except RedisError:  # Redis away: RQ's own wait meets it and waits for it
                new = []
            self.queues = [*self.queues, *new]  # maintenance cleans the registries of every queue listened to
            self._queue_order = [*self._queue_order, *new]
        return self._queue_order

    def _listens_to_companies(self) -> bool:
        # A worker of the shared queue (RQ asks for the wait before the queues are set: the connection's timeout)
        return job_queues.DEFAULT_QUEUE in [queue.name for queue in getattr(self, "queues", ())]

    @_ordered_queues.setter
    def _ordered_queues(self, value):
        self._queue_order = list(value)

    def reorder_queues(self, reference_queue):
        # Round robin: after a job of one queue, the next queue first.
        names = [queue.name for queue in self._queue_order]
        if reference_queue.name in names:
            at = names.index(reference_queue.name) + 1
            self._queue_order = self._queue_order[at:] + self._queue_order[:at]

    def run_maintenance_tasks(self):
        process = getattr(self.scheduler, "_process", None) if self.scheduler else None
        if self.scheduler and self.last_cleaned_at and (process is None or not process.is_alive()):
            # RQ's maintenance is about to try for the scheduler: a dead holder's lock must not stop it
            try:
                for what in release_dead_scheduler_locks(self.connection):
                    logger.info("released %s, which is gone", what)
            except RedisError as exc:  # Redis away: RQ's own maintenance meets it too
                logger.info("scheduler locks not checked: %s", exc)
        super().run_maintenance_tasks()
