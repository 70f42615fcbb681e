from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class PassengerListsConfig(AppConfig):
    name = "backoffice.passenger_lists"
    label = "passenger_lists"
    verbose_name = _("Passenger lists")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from backoffice.core.sync import register_pushable

        from .models import PassengerList

        register_pushable(PassengerList, "backoffice.passenger_lists.jobs.passenger_list_push")
