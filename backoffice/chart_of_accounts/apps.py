from django.utils.translation import gettext_lazy as _

from backoffice.core import domains


class ChartOfAccountsConfig(domains.DomainConfig):
    name = "backoffice.chart_of_accounts"
    verbose_name = _("Chart of accounts")
    declares = ("services",)
