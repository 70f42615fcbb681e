"""The current accounts on the dashboard: those not on the platform yet or refused by it, counted with the chart
of accounts' in the core's one query (core.dashboard.sync_summary; index ca_account_sync on sync_state)."""

from django.utils.translation import gettext_lazy as _

from backoffice.core.dashboard import register_sync_source
from backoffice.core.generic.registry import model_url

from .models import CurrentAccount


register_sync_source("current_accounts", label=_("Current accounts"),
                     queryset=lambda company: CurrentAccount.objects.filter(company=company),
                     url=lambda: model_url(CurrentAccount, "list"), order=10)
