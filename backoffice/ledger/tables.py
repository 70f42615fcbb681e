import django_tables2 as tables
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from backoffice.core.choices import SyncState
from backoffice.core.generic import ChoiceBadgeColumn, DateTimeColumn, LinkedColumn
from backoffice.core.generic.tables import MoneyColumn, OrderedTable, RemoteStatusColumn

from .choices import CheckState, PeriodStatus
from .models import Journal, Period


def _progress(percent, label=""):
    return format_html('<div class="progress progress-cell" role="progressbar" aria-valuenow="{0}" aria-valuemin="0"'
                       ' aria-valuemax="100" aria-label="{1}"><div class="progress-bar" data-width="{0}">{0}%</div>'
                       '</div>', int(percent or 0), label)


class PeriodTable(OrderedTable):
    range = LinkedColumn(verbose_name=_("Period"), accessor="fiscal_year_start", order_by=("fiscal_year_start",))
    remote_status = RemoteStatusColumn(PeriodStatus, verbose_name=_("Status"))
    task_progress = tables.Column(verbose_name=_("Progress"), empty_values=())
    part_count = tables.Column(verbose_name=_("Parts"), attrs={"td": {"class": "text-end"}})
    synced_at = DateTimeColumn(verbose_name=_("Read at"))

    secondary_columns = ("split_size", "part_count")
    tertiary_columns = ("synced_at",)

    class Meta(OrderedTable.Meta):
        model = Period
        fields = ("range", "remote_status", "task_progress", "split_size", "part_count", "synced_at")
        sequence = fields
        order_by = ("-range",)
        empty_text = _("No ledger periods yet. Upload the month's journal under Journals, or read the periods the "
                       "platform already has.")

    def render_range(self, record, column):
        return column.render(str(record), record)  # the range as the period names it, linked to its page

    def render_task_progress(self, value, record):
        if record.task_status is None and value is None:
            return "—"
        label = record.get_task_status_display() if record.task_status is not None else ""
        return format_html("{}<div class=\"small text-body-secondary\">{}</div>", _progress(value, label), label)


class JournalTable(OrderedTable):
    source_name = LinkedColumn(verbose_name=_("File"))
    start_date = tables.Column(verbose_name=_("Period"))
    check_state = ChoiceBadgeColumn(CheckState)
    findings_count = tables.Column(verbose_name=_("Errors"), attrs={"td": {"class": "text-end"}})
    line_count = tables.Column(verbose_name=_("Lines"), attrs={"td": {"class": "text-end"}})
    debit_total = MoneyColumn(verbose_name=_("Total debit"))
    sync_state = ChoiceBadgeColumn(SyncState, verbose_name=_("Upload"))
    created_at = DateTimeColumn(verbose_name=_("Uploaded here"))

    secondary_columns = ("line_count", "debit_total")
    tertiary_columns = ("created_at", "sync_state")

    class Meta(OrderedTable.Meta):
        model = Journal
        fields = ("source_name", "start_date", "check_state", "findings_count", "line_count", "debit_total",
                  "sync_state", "created_at")
        sequence = fields
        order_by = ("-created_at",)
        empty_text = _("No journal uploaded here yet. Choose New journal: the file is checked line by line before "
                       "anything goes to the platform.")

    def render_start_date(self, value, record):
        return f"{record.start_date:%d.%m.%Y} – {record.end_date:%d.%m.%Y}"

    def render_check_state(self, value, record, column, bound_column):
        badge = column.render(value, record, bound_column)  # the state's badge (ChoiceBadgeColumn)
        if record.check_state == CheckState.CHECKING:
            return format_html("{}{}", badge, _progress(record.check_progress))
        return badge

    def render_findings_count(self, value, record):
        if record.check_state in (CheckState.WAITING, CheckState.CHECKING):
            return "—"
        return format_html('<span class="{}">{}</span>', "text-danger fw-semibold" if value else "text-success",
                           f"{value:,}".replace(",", "."))

    def render_line_count(self, value):
        return f"{value:,}".replace(",", ".")
