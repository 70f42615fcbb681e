"""Recurring system jobs, RQ's own cron: run ONE `python manage.py rqcron backoffice.cron` per deployment.

The cron runner only enqueues; workers do the work. Jobs that call the platform go through the job
runner (jobs.enqueue / jobs.enqueue_per_company), so that they are deduplicated per company, recorded
as JobRun rows and deferred instead of earning a 429.
"""

from rq import cron

from backoffice.core import sync
from backoffice.subcompanies import jobs as subcompany_jobs

# Records left QUEUED or SENDING too long (a lost job, a dead worker) are enqueued again.
cron.register(sync.sweep_stuck, "default", interval=60, name="sweep_stuck", job_timeout=300)

# The usage report (document 1, section 8: once per 15 minutes per company), for the companies that use
# company management. The job asks the shared limiter first, so a window still closed defers it instead
# of earning a 429.
# (The sub-company pages read the same name and interval back to say when the next report comes.)
cron.register(subcompany_jobs.usage_reports_enqueue, "default", interval=subcompany_jobs.USAGE_REPORT_INTERVAL,
              name=subcompany_jobs.USAGE_REPORT_CRON)

# Later apps register here, each in bounded batches and asking ratelimit.py before each call, e.g.:
# - poll the statuses of records the platform still works on (per company, sync.records_poll):
#   cron.register(jobs.enqueue_per_company, "default", args=("backoffice.invoices.jobs.invoice_poll",),
#                 kwargs={"name": "invoice_poll"}, interval=300)
# - fetch Excel exports while their 24 h window is open (sync.fetch_ready)
# - sync the by-date reports (per company, nightly: cron="30 2 * * *")

# Tickets: poll the statuses of queued tickets (a job per company that has some), show exports past their
# 24 hours as expired, and fetch yesterday's by-date reports at night.
from backoffice.tickets import jobs as ticket_jobs  # noqa: E402

cron.register(ticket_jobs.tickets_poll_all, "default", interval=60, name="tickets_poll", job_timeout=120)
cron.register(ticket_jobs.exports_expire, "default", interval=900, name="ticket_exports_expire")
cron.register(ticket_jobs.reports_sync_yesterday, "default", cron="30 2 * * *", name="ticket_reports_nightly")

# Passenger lists: exports past their 24 hours shown as expired; today's report of lists every 15 minutes for
# companies with lists not known as reported (a reported list cannot be updated), yesterday's at night.
from backoffice.passenger_lists import jobs as passenger_list_jobs  # noqa: E402

cron.register(passenger_list_jobs.exports_expire, "default", interval=900, name="passenger_list_exports_expire")
cron.register(passenger_list_jobs.reports_sync_today, "default", interval=900, name="passenger_list_reports_today")
cron.register(passenger_list_jobs.reports_sync_yesterday, "default", cron="45 2 * * *",
              name="passenger_list_reports_nightly")
