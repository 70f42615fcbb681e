"""Re-reading the mirror: the platform's statuses of recent records, read again (issue 11).

A record the platform holds can change there without us: a ticket cancelled in the provider's portal, a
status the platform sets later. Every model with record actions whose client answers statuses(ids) gets:

- a periodic job per company (once per STATUS_REFRESH_INTERVAL seconds, each company's interval starting at
  its own stable offset, core.schedule.company_offset) that re-reads the records of the last STATUS_REFRESH_DAYS days,
  oldest read first, within a budget: at most STATUS_REFRESH_SHARE of the status call's documented rate limit
  for the company's tier, or STATUS_REFRESH_CALLS calls a run where the documents give no limit;
- "Re-read now" on the list (the same for the company at once) and on the detail page (that one record).

What is re-read is kept: remote_status, the platform's message, and when it was read (status_read_at).
"""

import logging
from datetime import timedelta

from django.apps import apps
from django.db.models import Max, Q
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from . import jobs
from .choices import SyncState
from .conf import tunable
from .models import Company, JobRun
from .platform import rate_rule
from .registry import registry
from .schedule import company_offset
from .sync import own_fields, selection_target

logger = logging.getLogger("backoffice.refresh")

DEFAULTS = {
    "STATUS_REFRESH_INTERVAL": 3600,  # seconds between two runs of one company
    "STATUS_REFRESH_DAYS": 30,  # records created this many days back are re-read
    "STATUS_REFRESH_SHARE": 0.2,  # of the status call's rate limit, where the documents give one
    "STATUS_REFRESH_CALLS": 10,  # status calls a run where they do not
    "STATUS_REFRESH_IDS": 100,  # ids per status call
}
JOB = "status_refresh"


def setting(name):
    return tunable(name, DEFAULTS)


def refreshable_models() -> list:
    """Models whose action set has a status call (core.actions)."""
    return [model for model, action_set in registry["action_sets"].items() if action_set.status_operation]


def calls_per_run(company, model) -> int:
    """The run's budget in status calls: a share of the documented limit over one interval, or the default."""
    rule = rate_rule(registry["action_sets"][model].status_operation(model))
    if rule is None:
        return max(1, int(setting("STATUS_REFRESH_CALLS")))
    limit, minutes = rule.limit(company.tier)
    per_interval = limit * setting("STATUS_REFRESH_INTERVAL") / (minutes * 60)
    return max(1, int(per_interval * setting("STATUS_REFRESH_SHARE")))


def due(model, company, limit: int) -> list:
    """The records to re-read, never read first, then the oldest read: synced, on the platform, recent, idle.
    Two index range scans (company, status_read_at) rather than one sort of every recent record."""
    since = timezone.now() - timedelta(days=setting("STATUS_REFRESH_DAYS"))
    recent = (model.objects.filter(company=company, sync_state=SyncState.SYNCED, created_at__gte=since,
                                   pending_action="").exclude(remote_id=""))
    records = list(recent.filter(status_read_at__isnull=True).order_by("pk")[:limit])
    if len(records) < limit:
        records += list(recent.filter(status_read_at__isnull=False).order_by("status_read_at", "pk")
                        [:limit - len(records)])
    return records


def status_refresh(model, company, *, pks=None) -> int:
    """Re-read the statuses of the due records (or of `pks`) within the budget; returns how many changed."""
    action_set = registry["action_sets"][model]
    size = int(setting("STATUS_REFRESH_IDS"))
    limit = size * calls_per_run(company, model)
    if pks:
        records = list(model.objects.filter(company=company, pk__in=pks).exclude(remote_id="").order_by("pk")[:limit])
    else:
        records = due(model, company, limit)
    client = action_set.client(company, model)
    changed = 0
    for start in range(0, len(records), size):
        chunk = records[start:start + size]
        answers = {str(a.get("id")): a for a in client.statuses([r.remote_id for r in chunk]) or []}
        now = timezone.now()
        for record in chunk:
            answer = answers.get(record.remote_id) or {}
            status = answer.get("status")
            fields = {"status_read_at": now}
            if status is not None and (int(status) != record.remote_status
                                       or (answer.get("message") or "") != getattr(record, "status_message", "")):
                fields.update(remote_status=int(status), **own_fields(model, status_message=answer.get("message") or ""))
                changed += 1
            # Not while an action runs on it: that action's own answer is the newer word.
            model.objects.filter(Q(pk=record.pk), Q(pending_action="")).update(**fields)
        jobs.set_progress(100 * (start + len(chunk)) / len(records))
    return changed


@jobs.job(gettext_lazy("Re-read statuses from the platform"), name=JOB)
def status_refresh_job(model_label, company_id, pks=None):
    """Job: one company's refresh of one model (or of some of its records)."""
    model = apps.get_model(model_label)
    changed = status_refresh(model, Company.objects.get(pk=company_id), pks=pks)
    return ngettext("%(count)s status changed on the platform.", "%(count)s statuses changed on the platform.",
                    changed) % {"count": changed}


def refresh_request(model, company, pks=None):
    """Enqueue a refresh now (the "Re-read now" buttons): deduplicated per company, model and selection."""
    target = selection_target(model, pks) if pks else model._meta.label_lower
    return jobs.enqueue(status_refresh_job, company=company.pk, target=target,
                        args=[model._meta.label_lower, company.pk, list(pks) if pks else None])


def phase(company_id, moment, interval: int) -> int:
    """Which interval of the company's own clock a moment falls in (its offset shifts the boundaries)."""
    return int((moment.timestamp() - company_offset(company_id, interval)) // interval)


def refresh_all() -> int:
    """Cron (every REFRESH_CHECK_EVERY s): the refresh of each active company whose own time has come, once
    per STATUS_REFRESH_INTERVAL. Each company's interval starts at its own stable offset, so that the
    companies' reads spread over the time instead of all at once (document 1, section 8)."""
    interval = int(setting("STATUS_REFRESH_INTERVAL"))
    now = timezone.now()
    labels = {model._meta.label_lower: model for model in refreshable_models()}
    last = {(row["company_id"], row["target"]): row["last"] for row in
            JobRun.objects.filter(name=JOB, target__in=labels).values("company_id", "target").annotate(
                last=Max("enqueued_at"))}
    count = 0
    for company_id in Company.objects.filter(is_active=True).values_list("pk", flat=True):
        for label, model in labels.items():
            previous = last.get((company_id, label))
            if previous is not None and phase(company_id, previous, interval) >= phase(company_id, now, interval):
                continue  # read already in this interval of the company's clock
            if not model.objects.filter(company_id=company_id, sync_state=SyncState.SYNCED).exclude(
                    remote_id="").exists():
                continue
            count += jobs.enqueue(status_refresh_job, company=company_id, target=label,
                                  args=[label, company_id, None]).is_new
    return count


REFRESH_CHECK_EVERY = 60


def refresh_message() -> str:
    return _("Re-reading the statuses from the platform; this page shows them when the job has finished.")
