from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class PassengerListsConfig(AppConfig):
    name = "backoffice.passenger_lists"
    label = "passenger_lists"
    verbose_name = _("Passenger lists")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from backoffice.core import families, schedule
        from backoffice.core.generic.sections import Tab, register_tabs
        from backoffice.core.sync import register_pushable

        from . import jobs
        from .families import LIST_EXPORTS, LIST_REPORTS, reports_sync_today
        from .models import PassengerList

        register_pushable(PassengerList, jobs.passenger_list_push)
        families.register_family(LIST_EXPORTS)
        families.register_family(LIST_REPORTS)
        # Today's report of lists every 15 minutes for companies with lists not known as reported (a reported
        # list cannot be updated); yesterday's comes with the family's nightly fetch.
        schedule.register(func=reports_sync_today, interval=900, name="passenger_list_reports_today")
        register_tabs("passenger_lists", [
            Tab("lists", _("Passenger lists"), "people", "passenger_lists:passengerlist_list"),
            Tab("tickets", _("Passenger tickets"), "bus-front", "tickets:passengerticket_list"),
            Tab("exports", _("Exports"), "file-earmark-zip", "passenger_lists:passengerlistexport_list"),
            Tab("report", _("Report"), "calendar3", "passenger_lists:passengerlistreportitem_list"),
        ], css="passenger-lists-tabs")
