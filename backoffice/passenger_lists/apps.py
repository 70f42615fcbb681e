from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class PassengerListsConfig(AppConfig):
    name = "backoffice.passenger_lists"
    label = "passenger_lists"
    verbose_name = _("Passenger lists")

    def ready(self):
        from backoffice.core import families, schedule
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
