from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class TicketsConfig(AppConfig):
    name = "backoffice.tickets"
    label = "tickets"
    verbose_name = _("Tickets")

    def ready(self):
        from backoffice.core import actions, families, schedule, sync

        from . import jobs, services
        from .families import TICKET_EXPORTS, TICKET_REPORTS
        from .models import EventTicket, PassengerTicket

        for model, push in ((EventTicket, jobs.event_ticket_push), (PassengerTicket, jobs.passenger_ticket_push)):
            sync.register_pushable(model, push)
            actions.register_actions(model, services.TICKET_ACTIONS)
        families.register_family(TICKET_EXPORTS)
        families.register_family(TICKET_REPORTS)
        # Poll the statuses of queued tickets: a job per company that has some.
        schedule.register(func=jobs.tickets_poll_all, interval=60, name="tickets_poll", job_timeout=120)
