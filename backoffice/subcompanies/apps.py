from django.utils.translation import gettext_lazy as _

from backoffice.core import domains


class SubcompaniesConfig(domains.DomainConfig):
    name = "backoffice.subcompanies"
    verbose_name = _("Sub-companies and usage")
    declares = ('services', 'push')
