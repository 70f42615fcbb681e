from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ChartOfAccountsConfig(AppConfig):
    name = "backoffice.chart_of_accounts"
    label = "chart_of_accounts"
    verbose_name = _("Chart of accounts")

    def ready(self):
        from backoffice.core.sync import register_pushable

        from . import jobs
        from .models import Account

        register_pushable(Account, jobs.account_push)
