import django_tables2 as tables
from django.utils.translation import gettext_lazy as _

from backoffice.core.choices import SyncState
from backoffice.core.generic import BaseTable, ChoiceBadgeColumn, DateTimeColumn, LinkedColumn
from backoffice.core.generic.tables import MoneyColumn, OrderedTable, RemoteStatusColumn, model_table

from .choices import PaymentType, TicketStatus
from .models import EventTicket, EventTicketReportItem, PassengerTicket, PassengerTicketReportItem


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
        return self.value_customer(record) or "—"

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


class ReportItemTable(OrderedTable):
    def render_payment_type(self, value):
        return PaymentType(value).label if value in PaymentType.values else value


NO_ITEMS = _("No items for this date. Fetch the report from the platform.")
EventTicketReportTable = model_table(
    EventTicketReportItem, ("ticket_number", "execution_date", "event_date", "location_city_code",
                            "location_municipality", "location_description", "payment_type", "total_amount",
                            "total_vat", "canceled", "canceled_date", "part_index", "create_date"),
    secondary=("execution_date", "event_date", "location_description", "payment_type", "total_vat"),
    tertiary=("location_city_code", "location_municipality", "canceled_date", "part_index", "create_date"),
    empty_text=NO_ITEMS, base=ReportItemTable)
PassengerTicketReportTable = model_table(
    PassengerTicketReportItem, ("ticket_number", "execution_date", "departure_date", "departure_location",
                                "destination", "expedition_time", "expedition_number", "vehicle_plate",
                                "payment_type", "total_amount", "total_vat", "payable_amount", "canceled",
                                "canceled_date", "part_index", "create_date"),
    secondary=("execution_date", "departure_location", "destination", "expedition_number", "vehicle_plate",
               "total_amount"),
    tertiary=("departure_date", "expedition_time", "payment_type", "total_vat", "canceled_date", "part_index",
              "create_date"),
    empty_text=NO_ITEMS, base=ReportItemTable)
