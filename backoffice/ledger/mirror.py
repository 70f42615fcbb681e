"""The platform's periods, parts and book entries brought here (document 3, 2.8), and periods followed while
the platform converts, checks or submits them.

A company has a dozen periods a year: the whole period list is read each time (newest first), parts are read
once a period is converted (and again on request), each part's book entries with one call.
"""

import logging
from decimal import Decimal, InvalidOperation

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from backoffice.core import jobs
from backoffice.core.choices import SyncState
from backoffice.core.conf import tunable
from backoffice.core.models import Company
from backoffice.remote.common import field, to_int

from . import services
from .choices import PeriodStatus
from .models import BookEntry, Journal, Part, Period

logger = logging.getLogger("backoffice.ledger")


def _money(value):
    try:
        return Decimal(str(value)).quantize(Decimal("0.01")) if value not in (None, "") else None
    except (InvalidOperation, ValueError):
        return None


def _count(value):
    value = to_int(value)
    return value if isinstance(value, int) and value >= 0 else None


def _bool(value) -> bool:
    return value is True or str(value).lower() in ("true", "1")


def period_fields(item) -> dict:
    task = field(item, "Task") or {}
    status = to_int(field(item, "Status"))
    return {
        "remote_status": status if isinstance(status, int) else None,
        "fiscal_year_start": services.day_of(field(item, "FiscalYearStart")),
        "fiscal_year_end": services.day_of(field(item, "FiscalYearEnd")),
        "is_active": _bool(field(item, "IsActive", default=True)),
        "split_size": _count(field(item, "SplitSize")),
        "time_stamp": _bool(field(item, "TimeStamp")),
        "without_tax_detail": _bool(field(item, "WithoutTaxDetail")),
        "is_liquidation": _bool(field(item, "IsLiquidation")),
        "task_id": str(field(task, "Id") or "")[:64],
        "task_status": _count(field(task, "Status")),
        "task_progress": min(_count(field(task, "Progress")) or 0, 100) if field(task, "Progress") is not None else None,
        "task_message": str(field(task, "Message") or ""),
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
    client = client or services.ledger_client(company)
    before = set(Period.objects.filter(company=company).values_list("remote_id", flat=True))
    stored = [period_store(company, item) for page in client.period_pages() for item in page["items"]
              if field(item, "Id") not in (None, "")]
    for period in stored:
        if period.parts_read_at is None and period.remote_status in (
                *services.ready_statuses(), *services.approved_statuses(), *services.failed_submission_statuses(),
                PeriodStatus.SENT):
            parts_mirror(period, client=client)
    return len({p.remote_id for p in stored} - before)


def parts_mirror(period, *, client=None) -> int:
    """The period's parts and their book entries (the previews need the book ids). Returns the part count."""
    client = client or services.ledger_client(period.company)
    seen = []
    for page in client.part_pages(period.remote_id):
        for item in page["items"]:
            remote_id = str(field(item, "Id") or "")
            if not remote_id:
                continue
            part, _created = Part.objects.update_or_create(period=period, remote_id=remote_id, defaults={
                "company_id": period.company_id, "index_number": _count(field(item, "IndexNumber")) or 0,
                "period_covered_start": services.day_of(field(item, "PeriodCoveredStart")),
                "period_covered_end": services.day_of(field(item, "PeriodCoveredEnd")),
                "entry_number_start": _count(field(item, "EntryNumberStart")),
                "entry_number_end": _count(field(item, "EntryNumberEnd")),
                "line_number_start": _count(field(item, "LineNumberStart")),
                "line_number_end": _count(field(item, "LineNumberEnd")),
                "debit": _money(field(item, "Debit")), "credit": _money(field(item, "Credit"))})
            books = []
            for book in client.book_entries(remote_id):
                book_id = str(field(book, "Id") or "")
                if book_id:
                    BookEntry.objects.update_or_create(part=part, remote_id=book_id, defaults={
                        "company_id": period.company_id, "generalbook_type": _count(field(book, "GeneralbookType")),
                        "status": to_int(field(book, "Status")) if field(book, "Status") is not None else None,
                        "data": book})
                    books.append(book_id)
            part.book_entries.exclude(remote_id__in=books).delete()
            seen.append(remote_id)
    period.parts.exclude(remote_id__in=seen).delete()
    Period.objects.filter(pk=period.pk).update(parts_read_at=timezone.now())
    return len(seen)


def periods_follow(company_id) -> str:
    """Read the periods again while the platform still works on one (or a journal is being uploaded), every
    LEDGER_FOLLOW_SECONDS, for at most LEDGER_FOLLOW_HOURS; the minute cron takes over after that."""
    company = Company.objects.get(pk=company_id)
    periods_mirror(company)
    if services.period_follow_needed(company):
        run = jobs.current_run()
        hours = tunable("LEDGER_FOLLOW_HOURS", 2.0)
        if run is None or (timezone.now() - run.enqueued_at).total_seconds() < hours * 3600:
            raise jobs.TryLater(tunable("LEDGER_FOLLOW_SECONDS", 5.0),
                                _("The platform is still working on a period; reading it again shortly."))
    return _("Periods read from the platform.")


def periods_follow_all() -> int:
    """Cron: follow the periods of every company where the platform still works on one."""
    companies = services.unsettled_periods().values_list("company_id", flat=True).distinct()
    return sum(services.follow_request(pk).is_new
               for pk in Company.objects.filter(pk__in=companies, is_active=True).values_list("pk", flat=True))


def periods_mirror_all() -> int:
    """Cron: every company that keeps an e-ledger here has its periods read once an hour."""
    from . import jobs as ledger_jobs

    companies = set(Period.objects.values_list("company_id", flat=True).distinct()) | set(
        Journal.objects.values_list("company_id", flat=True).distinct())
    return sum(jobs.enqueue(ledger_jobs.periods_read, company=pk, args=[pk]).is_new
               for pk in Company.objects.filter(pk__in=companies, is_active=True).values_list("pk", flat=True))


def periods_read(company_id) -> str:
    count = periods_mirror(Company.objects.get(pk=company_id))
    return _("Periods read from the platform; %(count)s new.") % {"count": count}


def mirror_request(company) -> "jobs.JobRun":
    from . import jobs as ledger_jobs

    return jobs.enqueue(ledger_jobs.periods_read, company=company.pk, args=[company.pk])


def parts_request(period) -> "jobs.JobRun":
    from . import jobs as ledger_jobs

    return jobs.enqueue(ledger_jobs.parts_read, company=period.company_id,
                        target=f"ledger.period:{period.pk}", args=[period.pk])


def parts_read(period_pk) -> str:
    period = Period.objects.select_related("company").get(pk=period_pk)
    count = parts_mirror(period)
    return _("%(count)s part(s) read from the platform.") % {"count": count}
