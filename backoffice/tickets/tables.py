import django_tables2 as tables
from django.core.paginator import EmptyPage, Paginator
from django.db.models import QuerySet
from django.utils.functional import cached_property
from django.utils.formats import number_format
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from backoffice.core.choices import SyncState
from backoffice.core.generic import BaseTable, ChoiceBadgeColumn, DateTimeColumn, LinkedColumn

from .choices import ExportState, PaymentType, TicketStatus
from .models import EventTicket, EventTicketReportItem, PassengerTicket, PassengerTicketReportItem, TicketExport

RIGHT = {"td": {"class": "text-end text-nowrap"}, "th": {"class": "text-end"}}


class MoneyColumn(tables.Column):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("attrs", RIGHT)
        super().__init__(*args, **kwargs)

    def render(self, value):
        return number_format(value, 2, force_grouping=True)

    def value(self, value):
        return value


class StatusColumn(ChoiceBadgeColumn):
    """The platform status; a ticket the platform does not have yet shows "not sent"."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("empty_values", ())
        super().__init__(TicketStatus, *args, **kwargs)

    def render(self, value, record, bound_column):
        if record.remote_status is None:
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


class TicketTable(OrderedTable):
    ticket_number = LinkedColumn(attrs={"td": {"class": "font-monospace text-nowrap"}})
    ticket_date = DateTimeColumn()
    customer = tables.Column(verbose_name=_("customer"), accessor="customer_last_name", orderable=False,
                             empty_values=())
    payable_amount = MoneyColumn()
    remote_status = StatusColumn()
    sync_state = ChoiceBadgeColumn(SyncState)
    created_at = DateTimeColumn()

    def render_customer(self, record):
        name = f"{record.customer_first_name} {record.customer_last_name}".strip()
        return name or record.identifier or "—"

    def value_customer(self, record):
        return f"{record.customer_first_name} {record.customer_last_name}".strip() or record.identifier


class EventTicketTable(TicketTable):
    secondary_columns = ("ticket_date", "event_name", "customer", "payment_type", "sync_state")
    tertiary_columns = ("created_at",)

    class Meta(BaseTable.Meta):
        model = EventTicket
        fields = ("ticket_number", "ticket_date", "event_name", "customer", "payment_type", "payable_amount",
                  "remote_status", "sync_state", "created_at")
        sequence = fields
        empty_text = _("No event tickets yet.")


class PassengerTicketTable(TicketTable):
    departure_date = DateTimeColumn()

    secondary_columns = ("expedition_number", "departure_date", "vehicle_plate", "seat_number", "customer",
                         "sync_state")
    tertiary_columns = ("ticket_date", "payment_type", "created_at")

    class Meta(BaseTable.Meta):
        model = PassengerTicket
        fields = ("ticket_number", "ticket_date", "expedition_number", "departure_date", "vehicle_plate",
                  "seat_number", "customer", "payment_type", "payable_amount", "remote_status", "sync_state",
                  "created_at")
        sequence = fields
        empty_text = _("No passenger tickets yet.")


class TicketExportTable(OrderedTable):
    id = LinkedColumn(verbose_name=_("export"))
    kind = tables.Column()
    state = ChoiceBadgeColumn(ExportState)
    created_at = DateTimeColumn()
    platform_created = DateTimeColumn()
    fetched_at = DateTimeColumn()
    size = tables.Column(attrs=RIGHT)

    secondary_columns = ("kind", "file_name", "created_at", "size")
    tertiary_columns = ("platform_created", "fetched_at")

    class Meta(BaseTable.Meta):
        model = TicketExport
        fields = ("id", "kind", "state", "file_name", "created_at", "platform_created", "fetched_at", "size")
        sequence = fields
        empty_text = _("No exports yet. Start one from a ticket list.")

    def render_id(self, record):
        from backoffice.core.generic import model_url

        return format_html('<a href="{}">{}</a>', model_url(record, "detail"), record)

    def render_size(self, value):
        return number_format(value, 0, force_grouping=True)


class ReportItemTable(OrderedTable):
    execution_date = DateTimeColumn()
    total_amount = MoneyColumn()
    total_vat = MoneyColumn()
    canceled = tables.BooleanColumn()
    canceled_date = DateTimeColumn()
    create_date = DateTimeColumn()

    def render_payment_type(self, value):
        return PaymentType(value).label if value in PaymentType.values else value


class EventTicketReportTable(ReportItemTable):
    event_date = DateTimeColumn()

    secondary_columns = ("execution_date", "event_date", "location_description", "payment_type", "total_vat")
    tertiary_columns = ("location_city_code", "location_municipality", "canceled_date", "part_index", "create_date")

    class Meta(BaseTable.Meta):
        model = EventTicketReportItem
        fields = ("ticket_number", "execution_date", "event_date", "location_city_code", "location_municipality",
                  "location_description", "payment_type", "total_amount", "total_vat", "canceled", "canceled_date",
                  "part_index", "create_date")
        sequence = fields
        empty_text = _("No items for this date. Fetch the report from the platform.")


class PassengerTicketReportTable(ReportItemTable):
    departure_date = DateTimeColumn()
    expedition_time = DateTimeColumn()
    payable_amount = MoneyColumn()

    secondary_columns = ("execution_date", "departure_location", "destination", "expedition_number", "vehicle_plate",
                         "total_amount")
    tertiary_columns = ("departure_date", "expedition_time", "payment_type", "total_vat", "canceled_date",
                        "part_index", "create_date")

    class Meta(BaseTable.Meta):
        model = PassengerTicketReportItem
        fields = ("ticket_number", "execution_date", "departure_date", "departure_location", "destination",
                  "expedition_time", "expedition_number", "vehicle_plate", "payment_type", "total_amount",
                  "total_vat", "payable_amount", "canceled", "canceled_date", "part_index", "create_date")
        sequence = fields
        empty_text = _("No items for this date. Fetch the report from the platform.")
