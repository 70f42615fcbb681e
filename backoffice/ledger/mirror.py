"""The platform's periods, parts and book entries brought here (document 3, 2.8), and periods followed while
the platform converts, checks or submits them.

A company has a dozen periods a year: the whole period list is read each time (newest first), parts are read
once a period is converted (and again on request), each part's book entries with one call.
"""

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from backoffice.core import jobs, schedule
from backoffice.core.choices import SyncState
from backoffice.core.conf import tunable
from backoffice.core.models import Company
from backoffice.core.payloads import amount, count, day, flag, integer, text
from backoffice.remote.common import field

from .choices import PeriodStatus
from .models import BookEntry, Journal, Part, Period
from .periods import (approved_statuses, failed_submission_statuses, ledger_client, period_follow_needed,
                      ready_statuses, unsettled_periods)


def period_fields(item) -> dict:
    task = field(item, "Task") or {}
    progress = field(task, "Progress")
    return {
        "remote_status": integer(field(item, "Status")),
        "fiscal_year_start": day(field(item, "FiscalYearStart")),
        "fiscal_year_end": day(field(item, "FiscalYearEnd")),
        "is_active": flag(field(item, "IsActive", default=True)),
        "split_size": count(field(item, "SplitSize")),
        "time_stamp": flag(field(item, "TimeStamp")),
        "without_tax_detail": flag(field(item, "WithoutTaxDetail")),
        "is_liquidation": flag(field(item, "IsLiquidation")),
        "task_id": text(field(task, "Id"))[:64],
        "task_status": count(field(task, "Status")),
        "task_progress": min(count(progress) or 0, 100) if progress is not None else None,
        "task_message": text(field(task, "Message")),
    }


def part_fields(item) -> dict:
    return {
        "index_number": count(field(item, "IndexNumber")) or 0,
        "period_covered_start": day(field(item, "PeriodCoveredStart")),
        "period_covered_end": day(field(item, "PeriodCoveredEnd")),
        "entry_number_start": count(field(item, "EntryNumberStart")),
        "entry_number_end": count(field(item, "EntryNumberEnd")),
        "line_number_start": count(field(item, "LineNumberStart")),
        "line_number_end": count(field(item, "LineNumberEnd")),
        "debit": amount(field(item, "Debit")), "credit": amount(field(item, "Credit")),
    }


def period_store(company, item) -> Period:
    """One period of the platform's, created or brought up to date here."""
    remote_id = str(field(item, "Id"))
    values = {**period_fields(item), "sync_state": SyncState.SYNCED}
    now = timezone.now()
    with transaction.atomic():
        period, created = Period.objects.select_for_update().get_or_create(
            company=company, remote_id=remote_id, defaults={**values, "synced_at": now, "seen_at": now})
        if not created:
            # synced_at is when the platform last changed it (a period left working is followed for a week only);
            # seen_at when it was last listed, written without touching either.
            changed = {name: value for name, value in values.items() if getattr(period, name) != value}
            if changed:
                for name, value in {**changed, "synced_at": now}.items():
                    setattr(period, name, value)
                period.save(update_fields=[*changed, "synced_at", "updated_at"])
            Period.objects.filter(pk=period.pk).update(seen_at=now)
    Journal.objects.filter(company=company, remote_id=remote_id, period__isnull=True).update(period=period)
    return period


def periods_mirror(company, *, client=None) -> int:
    """Every period of the platform's list; parts read for those converted since. Returns how many are new."""
    client = client or ledger_client(company)
    before = set(Period.objects.filter(company=company).values_list("remote_id", flat=True))
    stored = [period_store(company, item) for page in client.period_pages() for item in page["items"]
              if field(item, "Id") not in (None, "")]
    for period in stored:
        if period.parts_read_at is None and period.remote_status in (
                *ready_statuses(), *approved_statuses(), *failed_submission_statuses(), PeriodStatus.SENT):
            parts_mirror(period, client=client)
    return len({p.remote_id for p in stored} - before)


def parts_mirror(period, *, client=None) -> int:
    """The period's parts and their book entries (the previews need the book ids). Returns the part count."""
    client = client or ledger_client(period.company)
    seen = []
    for page in client.part_pages(period.remote_id):
        for item in page["items"]:
            remote_id = str(field(item, "Id") or "")
            if remote_id:
                part, _created = Part.objects.update_or_create(period=period, remote_id=remote_id, defaults={
                    "company_id": period.company_id, **part_fields(item)})
                books_mirror(part, client.book_entries(remote_id))
                seen.append(remote_id)
    period.parts.exclude(remote_id__in=seen).delete()
    Period.objects.filter(pk=period.pk).update(parts_read_at=timezone.now())
    return len(seen)


def books_mirror(part, items) -> None:
    """A part's book entries as the platform lists them (the previews take their ids)."""
    books = []
    for item in items:
        book_id = str(field(item, "Id") or "")
        if book_id:
            BookEntry.objects.update_or_create(part=part, remote_id=book_id, defaults={
                "company_id": part.company_id, "generalbook_type": count(field(item, "GeneralbookType")),
                "status": integer(field(item, "Status")), "data": item})
            books.append(book_id)
    part.book_entries.exclude(remote_id__in=books).delete()


# --- jobs --------------------------------------------------------------------------------------------------

@jobs.job(gettext_lazy("Follow ledger periods on the platform"))
def periods_follow(company_id) -> str:
    """Read the periods again while the platform still works on one (or a journal is being uploaded), every
    LEDGER_FOLLOW_SECONDS, for at most LEDGER_FOLLOW_HOURS; the minute cron takes over after that."""
    company = Company.objects.get(pk=company_id)
    periods_mirror(company)
    if period_follow_needed(company):
        run = jobs.current_run()
        hours = tunable("LEDGER_FOLLOW_HOURS", 2.0)
        if run is None or (timezone.now() - run.enqueued_at).total_seconds() < hours * 3600:
            raise jobs.TryLater(tunable("LEDGER_FOLLOW_SECONDS", 5.0),
                                _("The platform is still working on a period; reading it again shortly."))
    return _("Periods read from the platform.")


@jobs.job(gettext_lazy("Follow ledger periods (every company)"))
def periods_follow_all() -> int:
    """Cron: follow the periods of every company where the platform still works on one."""
    companies = unsettled_periods().values_list("company_id", flat=True).distinct()
    return sum(follow_request(pk).is_new
               for pk in Company.objects.filter(pk__in=companies, is_active=True).values_list("pk", flat=True))


@jobs.job(gettext_lazy("Read ledger periods from the platform"))
def periods_read(company_id) -> str:
    new = periods_mirror(Company.objects.get(pk=company_id))
    return _("Periods read from the platform; %(count)s new.") % {"count": new}


@jobs.job(gettext_lazy("Read ledger periods (every company)"))
def periods_mirror_all() -> int:
    """Cron: every company that keeps an e-ledger here has its periods read once an hour."""
    companies = set(Period.objects.values_list("company_id", flat=True).distinct()) | set(
        Journal.objects.values_list("company_id", flat=True).distinct())
    return sum(mirror_request(pk).is_new
               for pk in Company.objects.filter(pk__in=companies, is_active=True).values_list("pk", flat=True))


@jobs.job(gettext_lazy("Read the parts of a ledger period"))
def parts_read(period_pk) -> str:
    parts = parts_mirror(Period.objects.select_related("company").get(pk=period_pk))
    return _("%(count)s part(s) read from the platform.") % {"count": parts}


def follow_request(company_id) -> "jobs.JobRun":
    """Follow the company's periods the platform still works on, every few seconds, to their end."""
    return jobs.enqueue(periods_follow, company=company_id, args=[company_id],
                        delay=tunable("LEDGER_FOLLOW_SECONDS", 5.0), join_running=False)


def mirror_request(company_id) -> "jobs.JobRun":
    return jobs.enqueue(periods_read, company=company_id, args=[company_id])


def parts_request(period) -> "jobs.JobRun":
    return jobs.enqueue(parts_read, company=period.company_id, target=f"ledger.period:{period.pk}",
                        args=[period.pk])


# --- what core runs for this domain (read when the app is ready: core.domains) --------------------------------------
# Periods the platform still converts, checks or submits: followed every minute to their end.
schedule.register(func=periods_follow_all, interval=60, name="ledger_follow", job_timeout=600)
# Every company's periods once an hour (a period uploaded elsewhere, a status changed by the authority).
schedule.register(func=periods_mirror_all, interval=3600, name="ledger_mirror", job_timeout=1800)
