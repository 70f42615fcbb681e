"""The RQ worker of the deployment (settings.RQ["WORKER_CLASS"]): RQ's own, beating and looking after
itself more often.

- While a job runs, the worker refreshes the job's heartbeat every job_monitoring_interval seconds (RQ's
  default: 30). core.jobs.reap_lost takes a job whose heartbeat has been silent for a few beats as lost
  (its worker was killed with its work-horse) and enqueues it again: a short beat makes that seconds.
- RQ's scheduler process (retries, deferrals after a 429, delayed polls) dies when Redis goes away, and
  its lock outlives a killed worker by a minute; the worker starts it again, or takes over another's, only
  at its maintenance, every 10 minutes by default. Every few seconds instead, so that scheduled work is
  not left overdue for minutes (make chaos found it).
"""

from django.conf import settings
from rq.worker import Worker as RQWorker


class Worker(RQWorker):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("job_monitoring_interval", int(getattr(settings, "WORKER_HEARTBEAT_SECONDS", 5)))
        kwargs.setdefault("maintenance_interval", int(getattr(settings, "WORKER_MAINTENANCE_SECONDS", 10)))
        super().__init__(*args, **kwargs)
