from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class PassengerListsConfig(AppConfig):
    name = "backoffice.passenger_lists"
    label = "passenger_lists"
    verbose_name = _("Passenger lists")

    def ready(self):
        from backoffice.core.families import register_family
        from backoffice.core.sync import register_pushable

        from . import jobs
        from .families import LIST_EXPORTS, LIST_REPORTS
        from .models import PassengerList

        register_pushable(PassengerList, jobs.passenger_list_push)
        register_family(LIST_EXPORTS)
        register_family(LIST_REPORTS)
