from django.utils.translation import gettext_lazy as _

from backoffice.core import domains


class DispatchConfig(domains.DomainConfig):
    name = "backoffice.dispatch"
    verbose_name = _("Dispatch notes")
    declares = ('copies', 'families', 'invoicing', 'mirror', 'push', 'taxpayers')
    uses = ('current_accounts',)
