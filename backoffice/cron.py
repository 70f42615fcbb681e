"""Recurring system jobs, RQ's own cron: run ONE `python manage.py rqcron backoffice.cron` per deployment.

The cron runner only enqueues; workers do the work. Each app declares its entries where their jobs are (core.domains)
(core.schedule.register, or a family's cron_entries()); core's own (the sweep of lost jobs and stuck records,
the status refresh) are in core's. This file hands them all to RQ, so no app edits it. Jobs that call the
platform go through the job runner (jobs.enqueue), so that they are deduplicated per company, recorded as
JobRun rows and deferred instead of earning a 429.
"""

from rq import cron

from backoffice.core import schedule

for _entry in schedule.entries():
    cron.register(_entry["func"], _entry["queue_name"], args=_entry["args"], kwargs=_entry["kwargs"],
                  interval=_entry["interval"], cron=_entry["cron"], job_timeout=_entry["job_timeout"],
                  name=_entry["name"])
