"""The shared base of every table: compact Bootstrap style, badge columns for coloured choices,
links to the detail page, a selection column for bulk actions, Excel-friendly values."""

import django_tables2 as tables
from django.core.paginator import EmptyPage, Paginator
from django.db import models as db
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.formats import date_format, number_format
from django.utils.functional import cached_property
from django.utils.html import format_html
from django.utils.text import capfirst as django_capfirst
from django.utils.translation import gettext_lazy as _

from ..choices import SyncState
from ..exports import ExportState
from .registry import model_url
from .text import capfirst


def _local(value):
    return timezone.localtime(value) if timezone.is_aware(value) else value


class LinkedColumn(tables.Column):
    """The record's name, linked to its detail page when that page is registered."""

    def __init__(self, *args, placeholder=None, **kwargs):
        kwargs.setdefault("linkify", False)
        # Rendered when empty too: a draft has no number yet, and its row must still lead to its page.
        kwargs.setdefault("empty_values", ())
        self.placeholder = placeholder  # shown for an empty value; None: the record's name
        super().__init__(*args, **kwargs)

    def render(self, value, record):
        url = model_url(record, "detail")
        if value in (None, ""):  # e.g. a list the platform has not numbered
            value = self.placeholder if self.placeholder is not None else str(record)
        return format_html('<a href="{}">{}</a>', url, value) if url else value

    def value(self, value):
        return value


class ChoiceBadgeColumn(tables.Column):
    """A ColoredChoices field (SyncState, JobStatus, ...) as a Bootstrap badge with its label."""

    def __init__(self, choices, *args, **kwargs):
        self.choices = choices
        super().__init__(*args, **kwargs)

    def _raw(self, record, bound_column):
        return bound_column.accessor.resolve(record, quiet=True)

    def render(self, value, record, bound_column):
        raw = self._raw(record, bound_column)
        return format_html('<span class="badge text-bg-{}">{}</span>', self.choices.color(raw), value)

    def value(self, value):
        return value  # the label (tables2 resolves get_FOO_display for choice fields)


class DateTimeColumn(tables.Column):
    """Local time in the short format of the active language; a real datetime in exports."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("attrs", {"td": {"class": "text-nowrap"}})
        super().__init__(*args, **kwargs)

    def render(self, value):
        return date_format(_local(value), "SHORT_DATETIME_FORMAT")

    def value(self, value):
        return _local(value).replace(tzinfo=None) if value else value


class SelectionColumn(tables.CheckBoxColumn):
    """The checkbox of each row; its name is "pk", which BulkActionView reads."""

    def __init__(self, **kwargs):
        kwargs.setdefault("accessor", "pk")
        kwargs.setdefault("exclude_from_export", True)
        kwargs.setdefault("attrs", {
            "th": {"class": "col-select"},
            "th__input": {"class": "form-check-input", "data-select-all": "pk",
                          "aria-label": _("Select all")},
            "td__input": {"class": "form-check-input", "name": "pk", "aria-label": _("Select")},
        })
        super().__init__(**kwargs)


class ProgressColumn(tables.Column):
    """A percentage (0-100) as a thin progress bar; nothing when unknown."""

    def render(self, value):
        return format_html(
            '<div class="progress progress-cell" role="progressbar" aria-valuenow="{0}" aria-valuemin="0"'
            ' aria-valuemax="100"><div class="progress-bar" data-width="{0}">{0}%</div></div>',
            int(value),
        )

    def value(self, value):
        return value


class BaseTable(tables.Table):
    """Every list page's table. Subclasses set Meta.model, fields and default_columns-like order."""

    class Meta:
        attrs = {"class": "table table-sm table-hover align-middle mb-0 object-table"}
        template_name = "generic/includes/table.html"
        empty_text = _("Nothing here yet.")
        order_by_field = "sort"
        per_page_field = "per_page"

    # Columns a phone does without (below 768 px), and those shown on wide screens only (1600 px and more):
    # the identifying column, the amount and the status stay in sight without scrolling sideways
    # (backoffice.css: .col-secondary, .col-tertiary). Exports keep every column.
    secondary_columns: tuple = ()
    tertiary_columns: tuple = ()

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._localize_headers()
        self._hide_columns()

    def _hide_columns(self):
        for names, css in ((self.secondary_columns, "col-secondary"), (self.tertiary_columns, "col-tertiary")):
            for name in names:
                if name not in self.columns:
                    continue
                column = self.columns[name].column
                attrs = dict(column.attrs or {})
                for part in ("th", "td"):
                    own = dict(attrs.get(part) or {})
                    own["class"] = " ".join(filter(None, [own.get("class", ""), css]))
                    attrs[part] = own
                column.attrs = attrs

    def _localize_headers(self):
        """Headings from lowercase verbose names, capitalised the Turkish way (see generic.text)."""
        model = getattr(self._meta, "model", None)
        for bound in self.columns.iterall():
            column = bound.column
            explicit = column.verbose_name
            field = tables.A(bound.accessor).get_field(model) if model else None
            field_name = getattr(field, "verbose_name", None)
            if explicit is None or (field_name is not None and str(explicit) == str(django_capfirst(field_name))):
                source = field_name or bound.name.replace("_", " ")
            else:
                source = explicit
            column.verbose_name = capfirst(source)

    def export_columns(self):
        return [
            column for column in self.columns.iterall()
            if column.visible and not column.column.exclude_from_export
        ]


# --- columns, paginator and tables every domain's lists share ---------------------------------------

RIGHT = {"td": {"class": "text-end text-nowrap"}, "th": {"class": "text-end"}}


class MoneyColumn(tables.Column):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("attrs", RIGHT)
        super().__init__(*args, **kwargs)

    def render(self, value):
        return number_format(value, 2, force_grouping=True)

    def value(self, value):
        return value


class RemoteStatusColumn(ChoiceBadgeColumn):
    """The platform status; a record the platform does not have yet says so."""

    def __init__(self, choices, *args, **kwargs):
        kwargs.setdefault("empty_values", ())
        super().__init__(choices, *args, **kwargs)

    def render(self, value, record, bound_column):
        if record.remote_status is None:
            if getattr(record, "sync_state", None) == SyncState.LOCAL:  # saved here, not sent (yet)
                return format_html('<span class="badge text-bg-warning">{}</span>', _("Draft (not sent)"))
            return format_html('<span class="badge text-bg-light border">{}</span>', _("not on the platform"))
        return super().render(value, record, bound_column)


class CappedCountPaginator(Paginator):
    """Counts at most `cap` + 1 rows (one cheap query, whatever the table's size), so that a list of a
    million tickets costs what a list of a thousand does. Past the cap the page says "≥ cap" and the
    pages after the last numbered one are still reachable (an empty page is the end)."""

    cap = 10_000

    @cached_property
    def count(self):
        # django-tables2 hands over its BoundRows, whose .data (TableQuerysetData) holds the queryset in .data.
        queryset = self.object_list
        for _level in range(2):
            if not isinstance(queryset, QuerySet):
                queryset = getattr(queryset, "data", None)
        if not isinstance(queryset, QuerySet):
            return len(self.object_list)
        if queryset.query.is_sliced:
            return queryset.count()
        # COUNT(*) over a LIMIT subquery: the index stops after cap + 1 entries.
        counted = queryset.order_by()[: self.cap + 1].count()
        self.count_is_capped = counted > self.cap
        return min(counted, self.cap)

    count_is_capped = False

    def validate_number(self, number):
        try:
            return super().validate_number(number)
        except EmptyPage:
            if self.count_is_capped and int(number) > 0:
                return int(number)
            raise

    def page(self, number):
        number = self.validate_number(number)
        if not self.count_is_capped or number <= self.num_pages:
            return super().page(number)
        bottom = (number - 1) * self.per_page
        objects = list(self.object_list[bottom:bottom + self.per_page])
        if not objects:
            raise EmptyPage("That page contains no results")
        return self._get_page(objects, number, self)


class OrderedTable(BaseTable):
    """Columns in Meta.sequence, also when the list view puts its selection column first ("pk", "...")."""

    def __init__(self, *args, **kwargs):
        sequence, wanted = kwargs.get("sequence"), getattr(type(self)._meta, "sequence", None)
        if sequence and sequence[-1] == "..." and wanted:
            kwargs["sequence"] = (*sequence[:-1], *[name for name in wanted if name not in sequence])
        super().__init__(*args, **kwargs)

    def paginate(self, paginator_class=CappedCountPaginator, *args, **kwargs):
        return super().paginate(paginator_class, *args, **kwargs)


class ExportTable(OrderedTable):
    """A family's platform exports (core.exports.PlatformExport)."""

    id = LinkedColumn(verbose_name=_("export"))
    state = ChoiceBadgeColumn(ExportState)
    created_at = DateTimeColumn()
    platform_created = DateTimeColumn()
    fetched_at = DateTimeColumn()
    size = tables.Column(attrs=RIGHT)

    secondary_columns = ("file_name", "created_at", "size")
    tertiary_columns = ("platform_created", "fetched_at")

    class Meta(BaseTable.Meta):
        fields = ("id", "state", "file_name", "created_at", "platform_created", "fetched_at", "size")
        sequence = fields
        empty_text = _("No exports yet.")

    def render_id(self, record):
        return format_html('<a href="{}">{}</a>', model_url(record, "detail"), record)

    def render_size(self, value):
        return number_format(value, 0, force_grouping=True)


def export_table(family, empty_text=None):
    """The table of a family's exports, with the kind when the family has kinds."""
    kinds = ("kind",) if family.kinds else ()
    fields = ("id", *kinds, "state", "file_name", "created_at", "platform_created", "fetched_at", "size")
    meta = type("Meta", (ExportTable.Meta,), {"model": family.model, "fields": fields, "sequence": fields,
                                               **({"empty_text": empty_text} if empty_text else {})})
    attrs = {"Meta": meta, "secondary_columns": (*kinds, "file_name", "created_at", "size")}
    if family.kinds:
        attrs["kind"] = tables.Column()
    return type(f"{family.model.__name__}Table", (ExportTable,), attrs)


def model_table(model, fields, *, secondary=(), tertiary=(), empty_text=None, base=None, **columns):
    """A table of these fields of the model, each column as its field's kind reads: dates in local time,
    amounts with two decimals, yes/no as ticks. `columns` adds or replaces columns."""
    base = base or OrderedTable
    kinds = ((db.DateTimeField, DateTimeColumn), (db.DecimalField, MoneyColumn), (db.BooleanField, tables.BooleanColumn))
    attrs = {}
    for name in fields:
        field = model._meta.get_field(name)
        column = next((column for kind, column in kinds if isinstance(field, kind)), None)
        if column is not None:
            attrs[name] = column()
    meta = type("Meta", (base.Meta,), {"model": model, "fields": fields, "sequence": fields,
                                       **({"empty_text": empty_text} if empty_text else {})})
    return type(f"{model.__name__}Table", (base,), {**attrs, **columns, "Meta": meta, "secondary_columns": secondary,
                                                     "tertiary_columns": tertiary})
