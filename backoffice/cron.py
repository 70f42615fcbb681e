"""Recurring system jobs, RQ's own cron: run ONE `python manage.py rqcron backoffice.cron` per deployment.

The cron runner only enqueues; workers do the work. Each app declares its entries in its AppConfig.ready()
(core.schedule.register, or a family's cron_entries()); this file hands them all to RQ, so no app edits
it. Jobs that call the platform go through the job runner (jobs.enqueue), so that they are deduplicated
per company, recorded as JobRun rows and deferred instead of earning a 429.
"""

from rq import cron

from backoffice.core import refresh, schedule, sync

# Lost jobs (a dead worker or work-horse, a Redis restart) are found from RQ's registries and the jobs'
# heartbeats and enqueued again; records left QUEUED or SENDING without a live job too (core.sync).
schedule.register(func=sync.sweep_stuck, interval=15, name="sweep_stuck", job_timeout=300)
# The mirror is re-read: recent records' statuses, each company at its own offset (core.refresh).
schedule.register(func=refresh.refresh_all, interval=refresh.REFRESH_CHECK_EVERY, name="status_refresh",
                  job_timeout=300)

for _entry in schedule.entries():
    cron.register(_entry["func"], _entry["queue_name"], args=_entry["args"], kwargs=_entry["kwargs"],
                  interval=_entry["interval"], cron=_entry["cron"], job_timeout=_entry["job_timeout"],
                  name=_entry["name"])
