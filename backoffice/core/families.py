"""Export and report families, declared once per domain; services, jobs, cron entries and labels follow.

A family of Excel exports (core/exports.py) or by-date reports (core/reports.py) is one declaration in the
domain's `families` module, registered when the app is ready:

    TICKET_EXPORTS = ExportFamily(name="ticket_export", model=TicketExport, client=ticket_client,
                                  form=TicketExportForm, kinds=TicketKind, label=_("Ticket Excel export"),
                                  poll_every=lambda: conf.get("TICKET_EXPORT_POLL_SECONDS"))
    register_family(TICKET_EXPORTS)

Its services are the declaration's methods (start, fetch_request, history_request, ...); its jobs are the
functions at the end of this module, taking the family's name; core.generic.families gives its pages.
A family with `kinds` keeps a `kind` field on its models (event or passenger tickets); `client(company,
kind)` returns the service client of that kind (kind None for a family without kinds).
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta

from django.db import transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from . import exports, jobs, reports, schedule
from .admin import register_family_admin
from .batch import relaxed_commits
from .exports import EXPORT_PENDING, ExportError, ExportState, export_expired, parse_when
from .joblabels import register_job_labels
from .models import Company
from .registry import registry
from .reports import REPORT_ACTIVE, REPORT_PAGE_SIZE, ReportState, int_or_none


def register_family(family) -> None:
    """Make a family known (registry["families"]) with its jobs' labels, cron entries and admin pages (call from
    the module that declares the family, at its end: core.domains)."""
    registry["families"][family.name] = family
    register_job_labels(family.job_labels())
    register_family_admin(family)
    for entry in family.cron_entries():
        schedule.register(**entry)


def family(name):
    return registry["families"][name]


def requester(user):
    return user if user is not None and user.is_authenticated else None


@dataclass
class ExportFamily:
    name: str  # the export job's name; "<name>_history" reads the platform's export history
    model: type  # a core.exports.PlatformExport subclass
    client: Callable  # client(company, kind) -> export(filters), export_history(), export_download(id)
    form: type  # the export form: form(data, kind=...) when kinds, its export_filters() is the body
    label: str
    kinds: type | None = None  # TextChoices of the model's `kind` field
    kind_label: str = ""  # what the kind column and filter are called
    poll_every: Callable = field(default=lambda: 30)
    expire_every: int = 900  # seconds between cron runs marking exports past their 24 hours expired

    def identity(self, kind) -> dict:
        return {"kind": kind} if self.kinds else {}

    def kind_list(self) -> list:
        return list(self.kinds) if self.kinds else [None]

    def job_labels(self) -> dict:
        return {self.name: self.label, f"{self.name}_history": _("Read the export history")}

    def cron_entries(self) -> list:
        return [{"func": exports_expire_job, "args": (self.name,), "interval": self.expire_every,
                 "name": f"{self.name}s_expire"}]

    # --- services ----------------------------------------------------------------------------------------
    def start(self, *, company, filters: dict, user=None, kind=None):
        """Record the export the user asked for and start it in the background."""
        with transaction.atomic():
            export = self.model.objects.create(company=company, filters=filters, requested_by=requester(user),
                                               **self.identity(kind))
            self.enqueue(export)
        return export

    def enqueue(self, export):
        return jobs.enqueue(export_job, name=self.name, company=export.company_id,
                            target=f"{self.model._meta.label_lower}:{export.pk}", args=[self.name, export.pk])

    def run(self, *, export):
        """Start on the platform (once), watch its history, download the ZIP within 24 hours."""
        return exports.export_run(export=export, client=self.client(export.company, getattr(export, "kind", None)),
                                  poll_every=self.poll_every())

    def failed(self, *, export_pk, message):
        self.model.objects.filter(pk=export_pk, state__in=[*EXPORT_PENDING, ExportState.AVAILABLE]).update(
            state=ExportState.FAILED, message=message[:2000])

    def fetch_request(self, *, export) -> None:
        """Fetch an export seen in the platform's history (started elsewhere) while its window is open (ExportError
        if not)."""
        if export.state != ExportState.AVAILABLE:
            raise ExportError(gettext("Only an export waiting on the platform can be fetched."))
        if export_expired(export):
            self.model.objects.filter(pk=export.pk).update(state=ExportState.EXPIRED)
            raise ExportError(gettext("This export is older than 24 hours: the platform no longer keeps it."))
        with transaction.atomic():
            self.model.objects.filter(pk=export.pk).update(state=ExportState.DOWNLOADING, message="")
            self.enqueue(export)

    def history_sync(self, *, company, kind=None) -> int:
        """Read the platform's export history (of one kind): exports started elsewhere appear (fetchable while their
        window is open), and the ones whose 24 hours passed are marked expired. Returns how many were new."""
        model, new, now = self.model, 0, timezone.now()
        for item in self.client(company, kind).export_history() or []:
            export_id = str(item.get("exportId") or "")
            if not export_id:
                continue
            created = parse_when(item.get("createdDate"))
            export, created_row = model.objects.get_or_create(
                company=company, export_id=export_id, **self.identity(kind),
                defaults={"state": ExportState.AVAILABLE, "file_name": item.get("fileName") or "",
                          "platform_created": created})
            if created_row:
                new += 1
            elif not export.platform_created and created:
                model.objects.filter(pk=export.pk).update(platform_created=created)
                export.platform_created = created
            if created_row and export_expired(export, now):
                model.objects.filter(pk=export.pk).update(state=ExportState.EXPIRED)
        exports.exports_expire(model.objects.filter(company=company, **self.identity(kind)))
        return new

    def history_request(self, *, company) -> list:
        """Read the platform's export history (of every kind) in the background."""
        return [jobs.enqueue(export_history_job, name=f"{self.name}_history", company=company,
                             target=kind.value if kind is not None else "",
                             args=[self.name, company.pk, kind.value if kind is not None else None])
                for kind in self.kind_list()]

    def expire(self, *, company=None) -> int:
        """Exports not downloaded within their 24 hours are shown as expired (no platform call)."""
        queryset = self.model.objects.all()
        return exports.exports_expire(queryset if company is None else queryset.filter(company=company))


@dataclass
class ReportFamily:
    name: str  # the report job's name
    run_model: type  # a core.reports.ReportRunBase subclass
    item_models: dict  # kind (None without kinds) -> item model
    client: Callable  # client(company, kind) -> report(day, page_index, page_size=)
    fields: Callable  # fields(kind) -> ((model field, platform name, converter), ...)
    label: str
    text_limits: dict = field(default_factory=dict)
    kinds: type | None = None
    # Yesterday's report of every active company, once a day, each company at its own time of day
    # (reports_daily_job: spread over the day, document 1, section 8).
    daily: bool = False
    # Today's report every `today_every` seconds for the companies today_companies() gives (0: never).
    today_every: int = 0
    today_companies: Callable | None = None
    after_store: Callable | None = None  # after_store(run, rows): what the items tell the domain
    builders: dict = field(default_factory=dict, init=False)

    def identity(self, kind) -> dict:
        return {"kind": kind} if self.kinds else {}

    def job_labels(self) -> dict:
        return {self.name: self.label}

    def cron_entries(self) -> list:
        entries = [{"func": reports_daily_job, "args": (self.name,), "interval": DAILY_CHECK_EVERY,
                    "name": f"{self.name}_daily"}] if self.daily else []
        if self.today_every:
            entries.append({"func": reports_today_job, "args": (self.name,), "interval": self.today_every,
                            "name": f"{self.name}_today"})
        return entries

    def request(self, *, company, report_date, kind=None):
        """Fetch the report of one day in the background (a new run; the current one stays until done). A run of
        the same report still queued or running is returned instead of a second one."""
        model, key = self.run_model, self.identity(kind)
        with transaction.atomic():
            active = model.objects.filter(company=company, report_date=report_date, state__in=REPORT_ACTIVE,
                                          **key).first()
            if active is not None:
                return active
            run = model.objects.create(company=company, report_date=report_date, page_size=REPORT_PAGE_SIZE, **key)
            jobs.enqueue(report_job, name=self.name, company=company, target=f"{model._meta.label_lower}:{run.pk}",
                         args=[self.name, run.pk])
        return run

    def request_all(self, *, report_date, companies=None) -> int:
        """One fetch per active company (and kind); `companies` narrows the companies."""
        count = 0
        for company in companies if companies is not None else Company.objects.filter(is_active=True):
            for kind in list(self.kinds) if self.kinds else [None]:
                self.request(company=company, report_date=report_date, kind=kind)
                count += 1
        return count

    def store_page(self, *, run, page_index, envelope) -> int:
        """One page's items with the run's progress, in one transaction (a stopped walk resumes after it)."""
        kind = getattr(run, "kind", None)
        build = self.builders.get(kind) or self.builders.setdefault(kind, self.row_builder(kind))
        rows = [build(run, raw) for raw in envelope.get("items") or []]
        total_pages, total_count = int_or_none(envelope.get("totalPages")), int_or_none(envelope.get("totalCount"))
        with transaction.atomic():
            self.item_models[kind].objects.bulk_create(rows, batch_size=1000)
            type(run).objects.filter(pk=run.pk).update(pages_done=page_index, total_pages=total_pages,
                                                       total_count=total_count, item_count=F("item_count") + len(rows))
        run.pages_done, run.total_pages, run.total_count = page_index, total_pages, total_count
        run.item_count += len(rows)
        if self.after_store:
            self.after_store(run, rows)
        return len(rows)

    def row_builder(self, kind):
        return reports.row_builder(self.item_models[kind], self.fields(kind), self.text_limits)

    def sync(self, *, run):
        """Walk every page of the run's report (pageIndex from 1) and store the items. Commits are relaxed on
        PostgreSQL: a crash loses at most the last pages, never one in the middle, and the walk resumes
        after the last page it finds stored."""
        client = self.client(run.company, getattr(run, "kind", None))
        with relaxed_commits():
            return reports.report_walk(
                run=run, fetch_page=lambda index: client.report(run.report_date, index, page_size=run.page_size),
                store_page=lambda index, envelope: self.store_page(run=run, page_index=index, envelope=envelope))

    def failed(self, *, run_pk, message):
        self.run_model.objects.filter(pk=run_pk).exclude(state=ReportState.DONE).update(
            state=ReportState.FAILED, message=message[:2000], finished_at=timezone.now())

    def current_run(self, *, company, report_date, kind=None):
        return self.run_model.objects.filter(company=company, report_date=report_date, is_current=True,
                                             **self.identity(kind)).first()


# --- jobs: every family's, named by the family ------------------------------------------------------------

def work_job(model, pk, *, gone: str, run, failed) -> str:
    """A family's job on one requested work (an export, a report run): run(work), failed(message) when the runner
    will not run it again; `gone` when the row no longer exists."""
    work = model.objects.select_related("company").filter(pk=pk).first()
    return gone if work is None else jobs.run_or_fail(lambda: run(work), failed=failed)


def export_job(name, export_pk):
    fam = family(name)
    return work_job(fam.model, export_pk, gone="The export no longer exists.",
                    run=lambda export: fam.run(export=export),
                    failed=lambda message: fam.failed(export_pk=export_pk, message=message))


def export_history_job(name, company_id, kind=None):
    fam = family(name)
    kind = fam.kinds(kind) if fam.kinds and kind is not None else None
    new = fam.history_sync(company=Company.objects.get(pk=company_id), kind=kind)
    return ngettext("%(count)s new export in the history.", "%(count)s new exports in the history.", new) % {
        "count": new}


def exports_expire_job(name):
    return family(name).expire()


def report_job(name, run_pk):
    fam = family(name)
    return work_job(fam.run_model, run_pk, gone="The report fetch no longer exists.", run=lambda run: fam.sync(run=run),
                    failed=lambda message: fam.failed(run_pk=run_pk, message=message))


def reports_today_job(name):
    """Cron: today's report of the companies the family names (e.g. with documents not known as reported)."""
    fam = family(name)
    companies = Company.objects.filter(is_active=True, pk__in=fam.today_companies())
    return fam.request_all(report_date=timezone.localdate(), companies=companies)


DAILY_CHECK_EVERY = 900  # seconds between two looks for companies whose time of day has come
DAILY_FIRST, DAILY_LAST = 1800, 23 * 3600  # the times of day (seconds after local midnight) companies get


def daily_slot(company_id) -> int:
    """A company's time of day for its daily work, in seconds after local midnight: stable, spread evenly."""
    return DAILY_FIRST + int(schedule.company_offset(company_id, DAILY_LAST - DAILY_FIRST))


def reports_daily_job(name):
    """Cron (every DAILY_CHECK_EVERY s): yesterday's report of each active company whose time of day has come
    and that has no run for yesterday yet. A missed time (the cron was down) is caught up at the next look."""
    fam = family(name)
    now = timezone.localtime()
    yesterday = now.date() - timedelta(days=1)
    elapsed = now.hour * 3600 + now.minute * 60 + now.second
    done = set(fam.run_model.objects.filter(report_date=yesterday).values_list(
        "company_id", *(["kind"] if fam.kinds else [])))
    count = 0
    for company in Company.objects.filter(is_active=True):
        if daily_slot(company.pk) > elapsed:
            continue
        for kind in list(fam.kinds) if fam.kinds else [None]:
            if ((company.pk, kind) if fam.kinds else (company.pk,)) not in done:
                fam.request(company=company, report_date=yesterday, kind=kind)
                count += 1
    return count


def reports_nightly_job(name):
    """Yesterday's report of every active company at once (the operator's manual catch-up)."""
    return family(name).request_all(report_date=timezone.localdate() - timedelta(days=1))
