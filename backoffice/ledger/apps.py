from django.utils.translation import gettext_lazy as _

from backoffice.core import domains


class LedgerConfig(domains.DomainConfig):
    name = "backoffice.ledger"
    verbose_name = _("E-ledger")
    declares = ('checking', 'mirror', 'services')
    uses = ('chart_of_accounts',)
