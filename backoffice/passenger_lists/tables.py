import django_tables2 as tables
from django.utils.formats import number_format
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from backoffice.core.choices import SyncState
from backoffice.core.generic import BaseTable, ChoiceBadgeColumn, DateTimeColumn, LinkedColumn, model_url
from backoffice.core.generic.tables import RIGHT, ExportTable, MoneyColumn, OrderedTable, RemoteStatusColumn
from backoffice.tickets.choices import TicketStatus
from backoffice.tickets.models import PassengerTicket

from .choices import ListState
from .models import PassengerList, PassengerListExport, PassengerListReportItem


class PassengerListTable(OrderedTable):
    passenger_list_number = LinkedColumn(attrs={"td": {"class": "font-monospace text-nowrap"}}, empty_values=())
    expedition_time = DateTimeColumn()
    is_manual_plate = tables.BooleanColumn()
    ticket_count = tables.Column(attrs=RIGHT)
    total_payable_amount = MoneyColumn()
    total_commission_amount = MoneyColumn()
    total_commission_tax_amount = MoneyColumn()
    state = ChoiceBadgeColumn(ListState)
    sync_state = ChoiceBadgeColumn(SyncState)
    created_at = DateTimeColumn()

    secondary_columns = ("expedition_number", "expedition_time", "vehicle_plate", "ticket_count", "sync_state")
    tertiary_columns = ("is_manual_plate", "total_commission_amount", "total_commission_tax_amount", "created_at")

    class Meta(BaseTable.Meta):
        model = PassengerList
        fields = ("passenger_list_number", "expedition_number", "expedition_time", "vehicle_plate", "is_manual_plate",
                  "ticket_count", "total_payable_amount", "total_commission_amount", "total_commission_tax_amount",
                  "state", "sync_state", "created_at")
        sequence = fields
        empty_text = _("No passenger lists yet. Select an expedition's tickets in the passenger-ticket list and "
                       "build its list.")

    def render_passenger_list_number(self, record):
        return format_html('<a href="{}">{}</a>', model_url(record, "detail"), record)

    def value_passenger_list_number(self, record):
        return record.passenger_list_number


class ListTicketTable(OrderedTable):
    """The tickets of one list, on its page."""

    ticket_number = LinkedColumn(attrs={"td": {"class": "font-monospace text-nowrap"}})
    customer = tables.Column(verbose_name=_("passenger"), accessor="customer_last_name", orderable=False,
                             empty_values=())
    payable_amount = MoneyColumn()
    commission_amount = MoneyColumn()
    commission_tax_amount = MoneyColumn()
    remote_status = RemoteStatusColumn(TicketStatus)

    secondary_columns = ("seat_number", "customer", "vehicle_plate", "commission_amount")
    tertiary_columns = ("commission_tax_amount",)

    class Meta(BaseTable.Meta):
        model = PassengerTicket
        fields = ("ticket_number", "seat_number", "customer", "vehicle_plate", "payable_amount", "commission_amount",
                  "commission_tax_amount", "remote_status")
        sequence = fields
        orderable = False
        empty_text = _("No tickets: the platform found none for this expedition.")

    def render_customer(self, record):
        return f"{record.customer_first_name} {record.customer_last_name}".strip() or record.identifier or "—"

    def render_commission_amount(self, value):
        return number_format(value, 2, force_grouping=True)

    render_commission_tax_amount = render_commission_amount


class PassengerListExportTable(ExportTable):
    class Meta(ExportTable.Meta):
        model = PassengerListExport


class PassengerListReportTable(OrderedTable):
    expedition_time = DateTimeColumn()
    total_payable_amount = MoneyColumn()
    total_commission_amount = MoneyColumn()
    total_commission_tax_amount = MoneyColumn()
    created_date = DateTimeColumn()

    secondary_columns = ("expedition_number", "expedition_time", "vehicle_plate")
    tertiary_columns = ("total_commission_amount", "total_commission_tax_amount", "part_index", "created_date")

    class Meta(BaseTable.Meta):
        model = PassengerListReportItem
        fields = ("passenger_list_number", "expedition_number", "expedition_time", "vehicle_plate",
                  "total_payable_amount", "total_commission_amount", "total_commission_tax_amount", "part_index",
                  "created_date")
        sequence = fields
        empty_text = _("No items for this date. Fetch the report from the platform.")

