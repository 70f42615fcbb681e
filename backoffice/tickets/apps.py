from django.utils.translation import gettext_lazy as _

from backoffice.core import domains


class TicketsConfig(domains.DomainConfig):
    name = "backoffice.tickets"
    verbose_name = _("Tickets")
    declares = ("services", "families")
