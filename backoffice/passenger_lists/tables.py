import django_tables2 as tables
from django.utils.translation import gettext_lazy as _

from backoffice.core import domains
from backoffice.core.choices import SyncState
from backoffice.core.generic import BaseTable, ChoiceBadgeColumn, DateTimeColumn, LinkedColumn
from backoffice.core.generic.tables import RIGHT, MoneyColumn, OrderedTable, model_table

from .choices import ListState
from .models import PassengerList, PassengerListReportItem

tickets_api = domains.api("tickets")


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


class ListTicketTable(tickets_api.PassengerTicketTable):
    """The tickets of one list, on its page."""

    customer = tables.Column(verbose_name=_("passenger"), accessor="customer_last_name", orderable=False,
                             empty_values=())
    commission_amount = MoneyColumn()
    commission_tax_amount = MoneyColumn()

    secondary_columns = ("seat_number", "customer", "vehicle_plate", "commission_amount")
    tertiary_columns = ("commission_tax_amount",)

    class Meta(tickets_api.PassengerTicketTable.Meta):
        fields = ("ticket_number", "seat_number", "customer", "vehicle_plate", "payable_amount", "commission_amount",
                  "commission_tax_amount", "remote_status")
        sequence = fields
        orderable = False
        empty_text = _("No tickets: the platform found none for this expedition.")


PassengerListReportTable = model_table(
    PassengerListReportItem, ("passenger_list_number", "expedition_number", "expedition_time", "vehicle_plate",
                              "total_payable_amount", "total_commission_amount", "total_commission_tax_amount",
                              "part_index", "created_date"),
    secondary=("expedition_number", "expedition_time", "vehicle_plate"),
    tertiary=("total_commission_amount", "total_commission_tax_amount", "part_index", "created_date"),
    empty_text=_("No items for this date. Fetch the report from the platform."))
