"""The chart of accounts on the dashboard: accounts not on the platform yet or refused by it, counted with the
current accounts in the core's one query (core.dashboard.sync_summary; index on sync_state)."""

from django.utils.translation import gettext_lazy as _

from backoffice.core.dashboard import register_sync_source
from backoffice.core.generic.registry import model_url

from .models import Account


register_sync_source("chart_of_accounts", label=_("Chart of accounts"),
                     queryset=lambda company: Account.objects.filter(company=company),
                     url=lambda: model_url(Account, "list"), order=20)
