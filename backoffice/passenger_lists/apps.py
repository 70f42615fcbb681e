from django.utils.translation import gettext_lazy as _

from backoffice.core import domains


class PassengerListsConfig(domains.DomainConfig):
    name = "backoffice.passenger_lists"
    verbose_name = _("Passenger lists")
    declares = ("services", "families")
    uses = ('tickets',)
