from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class TicketsConfig(AppConfig):
    name = "backoffice.tickets"
    label = "tickets"
    verbose_name = _("Tickets")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from backoffice.core.joblabels import register_job_labels
        from backoffice.core.sync import register_pushable

        from .models import EventTicket, PassengerTicket

        register_pushable(EventTicket, "backoffice.tickets.jobs.event_ticket_push")
        register_pushable(PassengerTicket, "backoffice.tickets.jobs.passenger_ticket_push")
        register_job_labels({
            "event_ticket_push": _("Send event ticket"),
            "passenger_ticket_push": _("Send passenger ticket"),
            "tickets_push_batch": _("Send tickets"),
            "tickets_poll": _("Ask ticket statuses"),
            "tickets_cancel": _("Cancel tickets"),
            "tickets_update_status": _("Change ticket status"),
            "ticket_export": _("Ticket Excel export"),
            "export_history_sync": _("Read the export history"),
            "report_sync": _("Fetch the by-date ticket report"),
        })
