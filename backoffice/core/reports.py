"""By-date reports walked page by page (pageIndex from 1, pageSize 500) and stored as items, shared by
every family that has them (event and passenger tickets, passenger lists, ...).

A family's run model subclasses ReportRunBase and says which runs are "the same report"
(report_key()); its items are its own model. Each page is stored with the run's progress in one
transaction, so a walk that stopped resumes at the next page. When the walk is complete, the run
becomes the current one for its report and the items of older runs go with them.
"""

from decimal import Decimal, InvalidOperation

from django.db import models, transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from . import jobs
from .choices import ColoredChoices
from .exports import parse_when
from .models import Company, RequestedWork
from .payloads import camel_names
from .text import capfirst

REPORT_PAGE_SIZE = 500  # document 1, section 8: at most 500 records per page


class ReportState(ColoredChoices):
    QUEUED = "queued", gettext_lazy("Queued")
    RUNNING = "running", gettext_lazy("Fetching")
    DONE = "done", gettext_lazy("Complete")
    FAILED = "failed", gettext_lazy("Failed")


ReportState.COLORS = {ReportState.QUEUED: "info", ReportState.RUNNING: "primary", ReportState.DONE: "success",
                      ReportState.FAILED: "danger"}


REPORT_ACTIVE = (ReportState.QUEUED, ReportState.RUNNING)


class ReportRunBase(RequestedWork):
    """One walk through the pages of a by-date report."""

    report_date = models.DateField(gettext_lazy("report date"))
    state = models.CharField(gettext_lazy("state"), max_length=10, choices=ReportState.choices,
                             default=ReportState.QUEUED)
    page_size = models.PositiveIntegerField(gettext_lazy("page size"), default=REPORT_PAGE_SIZE)
    pages_done = models.PositiveIntegerField(gettext_lazy("pages fetched"), default=0)
    total_pages = models.PositiveIntegerField(gettext_lazy("pages"), null=True, blank=True)
    total_count = models.PositiveIntegerField(gettext_lazy("items on the platform"), null=True, blank=True)
    item_count = models.PositiveIntegerField(gettext_lazy("items stored"), default=0)
    is_current = models.BooleanField(gettext_lazy("current"), default=False)
    finished_at = models.DateTimeField(gettext_lazy("finished"), null=True, blank=True)

    class Meta(RequestedWork.Meta):
        abstract = True

    def __str__(self):
        kind = self.get_kind_display() if hasattr(self, "get_kind_display") else capfirst(self._meta.verbose_name)
        return f"{kind} {self.report_date:%Y-%m-%d}"

    def report_key(self) -> dict:
        """The fields that make two runs fetches of the same report."""
        return {"company_id": self.company_id, "report_date": self.report_date}

    @property
    def state_color(self):
        return ReportState.color(self.state)

    @property
    def progress(self):
        if not self.total_pages:
            return 100 if self.state == ReportState.DONE else 0
        return min(100, round(100 * self.pages_done / self.total_pages))


class ReportItemBase(models.Model):
    """Fields every report item has; a family's item model adds `run = run_link(ItsRun)` and its own fields.
    No single-column indexes: every query goes by run (a (run, id) index); fewer indexes, faster stores."""

    company = models.ForeignKey(Company, on_delete=models.CASCADE, related_name="+",
                                verbose_name=gettext_lazy("company"), db_index=False)
    report_date = models.DateField(gettext_lazy("report date"))

    class Meta:
        abstract = True
        ordering = ["id"]


def run_link(run_model):
    return models.ForeignKey(run_model, on_delete=models.CASCADE, related_name="+", db_index=False)


# --- the platform's values as model values ------------------------------------------------------------

def decimal_or_none(value):
    if value is None or value == "":
        return None
    try:
        return Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None


def int_or_none(value):
    try:
        return None if value is None or value == "" else int(value)
    except (TypeError, ValueError):
        return None


def fields_spec(*, text=(), moments=(), amounts=(), numbers=(), flags=()) -> tuple:
    """(model field, platform name, converter) of report fields whose platform name is the field's in camel
    case (part_index is partIndex), by the kind of their values."""
    kinds = ((text, str), (moments, parse_when), (amounts, decimal_or_none), (numbers, int_or_none), (flags, bool))
    return tuple((name, key, convert) for names, convert in kinds for key, name in camel_names(*names).items())


def field_value(name, key, convert, raw: dict, text_limits: dict):
    """One field of a report item: str values cut to text_limits[field] (300 when not given), bools default to
    False, the rest to None."""
    value = raw.get(key)
    if convert is str:
        return ("" if value is None else str(value))[:text_limits.get(name, 300)]
    return convert(value) if value is not None else (False if convert is bool else None)


def item_fields(spec, raw: dict, text_limits: dict) -> dict:
    """Model fields of one report item: spec is ((field, platform name, converter), ...)."""
    return {name: field_value(name, key, convert, raw, text_limits) for name, key, convert in spec}


def row_builder(model, spec, text_limits: dict):
    """A function making an unsaved report item from (run, raw item), with positional arguments in the
    model's field order: Model(*values) skips the keyword handling that costs more than the insert.
    Besides id, company, run and report_date, spec names every field of the model."""
    by_name = {name: (key, convert) for name, key, convert in spec}
    names = [f.name for f in model._meta.concrete_fields]
    fixed = ("id", "company", "run", "report_date")
    if set(names) != set(fixed) | set(by_name):
        raise ValueError(f"{model.__name__}: fields {names} do not match the report spec")

    def build(run, raw):
        known = {"id": None, "company": run.company_id, "run": run.pk, "report_date": run.report_date}
        return model(*[known[name] if name in known else field_value(name, *by_name[name], raw, text_limits)
                       for name in names])

    return build


# --- the walk --------------------------------------------------------------------------------------------

def report_walk(*, run, fetch_page, store_page) -> str:
    """Walk every page from the one after the last stored (pageIndex from 1), then finish the run.

    fetch_page(page_index) -> the paged envelope; store_page(page_index, envelope) stores it (a family's
    store_page, core.families). No records is not an error: items is empty and totalCount 0 (document 2, section 4).
    """
    if run.state == ReportState.DONE:
        return _("Already complete.")
    type(run).objects.filter(pk=run.pk).update(state=ReportState.RUNNING, message="")
    page_index = run.pages_done + 1
    while True:
        envelope = fetch_page(page_index) or {}
        store_page(page_index, envelope)
        if run.total_pages:
            jobs.set_progress(100 * page_index / run.total_pages,
                              _("Page %(page)s of %(pages)s") % {"page": page_index, "pages": run.total_pages})
        if not envelope.get("hasNextPage") or not envelope.get("items"):
            break
        page_index += 1
    report_finish(run=run)
    return ngettext("%(count)s item stored.", "%(count)s items stored.", run.item_count) % {"count": run.item_count}


def report_finish(*, run):
    """The completed run becomes the current one of its report; older runs (and their items) go."""
    model = type(run)
    with transaction.atomic():
        model.objects.filter(**run.report_key()).exclude(pk=run.pk).exclude(state__in=REPORT_ACTIVE).delete()
        model.objects.filter(pk=run.pk).update(state=ReportState.DONE, is_current=True, finished_at=timezone.now(),
                                               message="")
    run.state, run.is_current = ReportState.DONE, True
