import django_tables2 as tables
from django.utils.translation import gettext_lazy as _

from backoffice.core.choices import SyncState
from backoffice.core.generic import BaseTable, ChoiceBadgeColumn, DateTimeColumn, LinkedColumn
from backoffice.core.generic.tables import ExportTable, MoneyColumn, OrderedTable, RemoteStatusColumn

from .choices import PaymentType, TicketStatus
from .models import EventTicket, EventTicketReportItem, PassengerTicket, PassengerTicketReportItem, TicketExport


class TicketTable(OrderedTable):
    ticket_number = LinkedColumn(attrs={"td": {"class": "font-monospace text-nowrap"}})
    ticket_date = DateTimeColumn()
    customer = tables.Column(verbose_name=_("customer"), accessor="customer_last_name", orderable=False,
                             empty_values=())
    payable_amount = MoneyColumn()
    remote_status = RemoteStatusColumn(TicketStatus)
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


class TicketExportTable(ExportTable):
    kind = tables.Column()

    secondary_columns = ("kind", "file_name", "created_at", "size")

    class Meta(ExportTable.Meta):
        model = TicketExport
        fields = ("id", "kind", "state", "file_name", "created_at", "platform_created", "fetched_at", "size")
        sequence = fields
        empty_text = _("No exports yet. Start one from a ticket list.")


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
