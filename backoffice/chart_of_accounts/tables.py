import django_tables2 as tables
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from backoffice.core.choices import SyncState
from backoffice.core.generic import ChoiceBadgeColumn, LinkedColumn
from backoffice.core.generic.tables import OrderedTable

from .choices import AccountType
from .models import Account


class CodeColumn(LinkedColumn):
    """The account's code, indented by its depth in the tree."""

    def render(self, value, record):
        link = super().render(value, record)
        # A class per depth, not a style attribute: the Content-Security-Policy allows no inline style.
        return format_html('<span class="coa-level-{}">{}</span>', min(record.level, 4), link)


class AccountTable(OrderedTable):
    full_code = CodeColumn(attrs={"td": {"class": "font-monospace text-nowrap"}})
    type = ChoiceBadgeColumn(AccountType)
    currency = tables.Column(verbose_name=_("currency"), orderable=False, empty_values=())
    is_bundle_account = tables.BooleanColumn()
    sync_state = ChoiceBadgeColumn(SyncState)

    secondary_columns = ("type", "sync_state")
    tertiary_columns = ("currency", "is_bundle_account")

    class Meta(OrderedTable.Meta):
        model = Account
        fields = ("full_code", "name", "type", "currency", "is_bundle_account", "sync_state")
        sequence = fields
        order_by = ("full_code",)
        empty_text = _("The chart of accounts is empty. Start from the uniform chart of accounts, add an account, or "
                       "read the chart the platform has.")
