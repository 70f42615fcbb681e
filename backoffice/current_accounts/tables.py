import django_tables2 as tables
from django.utils.translation import gettext_lazy as _

from backoffice.core.choices import SyncState
from backoffice.core.generic import ChoiceBadgeColumn, LinkedColumn
from backoffice.core.generic.tables import MoneyColumn, OrderedTable

from .models import CurrentAccount


class CurrentAccountTable(OrderedTable):
    name = LinkedColumn()
    identifier = tables.Column(attrs={"td": {"class": "font-monospace"}})
    code = tables.Column(attrs={"td": {"class": "font-monospace"}})
    total_balance = MoneyColumn()
    sync_state = ChoiceBadgeColumn(SyncState)

    secondary_columns = ("identifier", "sync_state")
    tertiary_columns = ("surname", "code", "tax_office", "total_balance")

    class Meta(OrderedTable.Meta):
        model = CurrentAccount
        fields = ("name", "surname", "identifier", "code", "tax_office", "total_balance", "sync_state")
        sequence = fields
        order_by = ("name",)
        empty_text = _("No current accounts yet. Add one, import them from an Excel file, or read the ones the "
                       "platform has.")
