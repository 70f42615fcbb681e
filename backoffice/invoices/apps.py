from django.utils.translation import gettext_lazy as _

from backoffice.core import domains


class InvoicesConfig(domains.DomainConfig):
    name = "backoffice.invoices"
    verbose_name = _("Invoices")
    declares = ('services', 'mirror', 'taxpayers', 'documents', 'copies', 'from_dispatch', 'answers', 'matching')
    uses = ('current_accounts', 'chart_of_accounts', 'dispatch', 'dispatch_inbox')
