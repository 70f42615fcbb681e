from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class PassengerListsConfig(AppConfig):
    name = "backoffice.passenger_lists"
    label = "passenger_lists"
    verbose_name = _("Passenger lists")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from backoffice.core.joblabels import register_job_labels
        from backoffice.core.sync import register_pushable

        from .models import PassengerList

        register_pushable(PassengerList, "backoffice.passenger_lists.jobs.passenger_list_push")
        register_job_labels({
            "passenger_list_push": _("Send passenger list"),
            "passenger_lists_query": _("Read passenger lists from the platform"),
            "passenger_list_export": _("Passenger list Excel export"),
            "passenger_list_export_history": _("Read the passenger list export history"),
            "passenger_list_report_sync": _("Fetch the by-date passenger list report"),
        })
