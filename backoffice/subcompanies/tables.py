import django_tables2 as tables
from django.contrib.humanize.templatetags.humanize import intcomma
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext_lazy as _

from backoffice.core.choices import SyncState
from backoffice.core.generic import BaseTable, ChoiceBadgeColumn, DateTimeColumn, LinkedColumn
from backoffice.core.generic.registry import model_url
from backoffice.core.generic.tables import RIGHT

from .choices import SubCompanyState
from .models import SubCompany, SubCompanyOperation, UsageSnapshot


class NumberColumn(tables.Column):
    """A figure of the report; "—" when the report did not give it."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("attrs", RIGHT)
        super().__init__(*args, **kwargs)

    def render(self, value):
        return intcomma(value)

    def value(self, value):
        return value


class SubCompanyTable(BaseTable):
    name = LinkedColumn(verbose_name=_("sub-company"), empty_values=())
    state = tables.Column(verbose_name=_("state"), accessor="state_value", order_by=("state_value",))
    remote_id = tables.Column(verbose_name=_("company id on the platform"),
                              attrs={"td": {"class": "font-monospace small text-nowrap"}})
    credit_offered = NumberColumn()
    credit_used = NumberColumn()
    credit_over_used = NumberColumn()
    last_seen_at = DateTimeColumn()

    secondary_columns = ("identifier", "credit_offered", "credit_over_used")
    tertiary_columns = ("remote_id", "last_seen_at", "origin")

    class Meta(BaseTable.Meta):
        model = SubCompany
        fields = ("name", "identifier", "state", "remote_id", "credit_offered", "credit_used", "credit_over_used",
                  "last_seen_at", "origin")
        empty_text = _("No sub-company yet. Create one, or refresh the usage report to list those the platform "
                       "already knows.")

    def value_name(self, record):
        return str(record)

    def render_state(self, value):
        return format_html('<span class="badge text-bg-{}">{}</span>', SubCompanyState.color(value),
                           SubCompanyState(value).label)

    def value_state(self, value):
        return str(SubCompanyState(value).label)


class SubCompanyOperationTable(BaseTable):
    request = tables.Column(verbose_name=_("request"), accessor="pk", linkify=False)
    kind = tables.Column()
    targets = tables.Column(verbose_name=_("sub-companies"), accessor="pk", orderable=False)
    details = tables.Column(verbose_name=_("details"), accessor="pk", orderable=False)
    sync_state = ChoiceBadgeColumn(SyncState)
    last_error = tables.Column(attrs={"td": {"class": "small text-truncate mw-28rem"}})
    created_at = DateTimeColumn()

    secondary_columns = ("kind", "targets", "details", "created_at")
    tertiary_columns = ("last_error",)

    class Meta(BaseTable.Meta):
        model = SubCompanyOperation
        fields = ("request", "kind", "targets", "details", "sync_state", "last_error", "created_at")
        empty_text = _("No credit or product request yet.")

    def render_request(self, record):
        url = model_url(record, "detail")
        return format_html('<a href="{}">#{}</a>', url, record.pk) if url else f"#{record.pk}"

    def value_request(self, record):
        return record.pk

    def render_targets(self, record):
        return format_html_join(", ", "{}", ((str(s),) for s in record.subcompanies.all()))

    def value_targets(self, record):
        return ", ".join(str(s) for s in record.subcompanies.all())

    def value_details(self, record):
        if record.quantity:
            return str(record.quantity) + (f" ({_('over-usage deducted')})" if record.show_over_usage else "")
        if record.product_types:
            return ", ".join(record.product_labels())
        if record.application_credit_id:
            return str(_("offer no. %(id)s") % {"id": record.application_credit_id})
        return ""

    def render_details(self, record):
        return self.value_details(record) or "—"


class UsageSnapshotTable(BaseTable):
    fetched_at = DateTimeColumn(linkify=lambda record: model_url(record, "detail"))
    customer_count = tables.Column(verbose_name=_("companies"), attrs=RIGHT)
    credit_offered = NumberColumn(verbose_name=_("credit offered"))
    credit_used = NumberColumn(verbose_name=_("credit used"))
    credit_over_used = NumberColumn(verbose_name=_("credit over-used"))

    secondary_columns = ("customer_count", "credit_offered", "credit_over_used")

    class Meta(BaseTable.Meta):
        model = UsageSnapshot
        fields = ("fetched_at", "customer_count", "credit_offered", "credit_used", "credit_over_used")
        empty_text = _("No usage report fetched yet.")
