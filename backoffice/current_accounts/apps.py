from django.utils.translation import gettext_lazy as _

from backoffice.core import domains


class CurrentAccountsConfig(domains.DomainConfig):
    name = "backoffice.current_accounts"
    verbose_name = _("Current accounts")
    declares = ('services', 'imports')
    uses = ('chart_of_accounts',)
