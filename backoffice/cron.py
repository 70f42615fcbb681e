"""Recurring system jobs, RQ's own cron: run ONE `python manage.py rqcron backoffice.cron` per deployment.

The cron runner only enqueues; workers do the work. Each app declares its entries in its AppConfig.ready()
(core.schedule.register, or a family's cron_entries()); this file hands them all to RQ, so no app edits
it. Jobs that call the platform go through the job runner (jobs.enqueue), so that they are deduplicated
per company, recorded as JobRun rows and deferred instead of earning a 429.
"""

from rq import cron

from backoffice.core import schedule, sync

# Records left QUEUED or SENDING too long (a lost job, a dead worker) are enqueued again.
schedule.register(func=sync.sweep_stuck, interval=60, name="sweep_stuck", job_timeout=300)

for _entry in schedule.entries():
    cron.register(_entry["func"], _entry["queue_name"], args=_entry["args"], kwargs=_entry["kwargs"],
                  interval=_entry["interval"], cron=_entry["cron"], job_timeout=_entry["job_timeout"],
                  name=_entry["name"])
