import django_tables2 as tables
from django.utils.translation import gettext_lazy as _

from backoffice.core.choices import SyncState
from backoffice.core.generic import ChoiceBadgeColumn, DateTimeColumn, LinkedColumn
from backoffice.core.generic.tables import MoneyColumn, OrderedTable, RemoteStatusColumn

from .choices import DispatchStatus
from .models import DispatchNote, DispatchTaxpayer


class DispatchNoteTable(OrderedTable):
    despatch_number = LinkedColumn(attrs={"td": {"class": "font-monospace text-nowrap"}})
    receiver_identifier = tables.Column(attrs={"td": {"class": "font-monospace"}})
    payable_amount = MoneyColumn(verbose_name=_("Total (VAT included)"))
    shipment_date = DateTimeColumn()
    remote_status = RemoteStatusColumn(DispatchStatus, verbose_name=_("Status"))
    sync_state = ChoiceBadgeColumn(SyncState)

    # On a phone: the number, the receiver and the status.
    secondary_columns = ("issue_date", "shipment_date", "plate_number", "payable_amount")
    tertiary_columns = ("receiver_identifier", "local_reference_id", "sync_state")

    class Meta(OrderedTable.Meta):
        model = DispatchNote
        fields = ("despatch_number", "issue_date", "receiver_name", "receiver_identifier", "shipment_date",
                  "plate_number", "local_reference_id", "payable_amount", "remote_status", "sync_state")
        sequence = fields
        order_by = ("-created_at", "-id")
        empty_text = _("No dispatch notes yet. Write one with New dispatch note, upload a UBL file, or read the new "
                       "ones from the platform.")

    def render_despatch_number(self, value, record):
        return value or _("(number pending)")


class DispatchTaxpayerTable(OrderedTable):
    identifier = tables.Column(attrs={"td": {"class": "font-monospace"}})
    alias = tables.Column(attrs={"td": {"class": "font-monospace"}})

    class Meta(OrderedTable.Meta):
        model = DispatchTaxpayer
        fields = ("identifier", "title", "alias", "app_type")
        sequence = fields
        order_by = ("identifier",)
        empty_text = _("The dispatch-note users' list is not loaded yet. It is read once a day; an administrator can "
                       "read it now.")
