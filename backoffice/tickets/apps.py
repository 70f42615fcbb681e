from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class TicketsConfig(AppConfig):
    name = "backoffice.tickets"
    label = "tickets"
    verbose_name = _("Tickets")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from backoffice.core.sync import register_pushable

        from .models import EventTicket, PassengerTicket

        register_pushable(EventTicket, "backoffice.tickets.jobs.event_ticket_push")
        register_pushable(PassengerTicket, "backoffice.tickets.jobs.passenger_ticket_push")
