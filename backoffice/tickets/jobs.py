"""Thin job entry points: load by id, call one service (the runner owns retries and deferrals).
Cancel, status changes, exports and reports run as core jobs of their declarations (services.TICKET_ACTIONS,
families.py)."""

from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from backoffice.core.jobs import job
from backoffice.core.models import Company

from . import services
from .choices import TicketKind
from .models import TICKET_MODELS, EventTicket, PassengerTicket


@job(_("Send event ticket"))
def event_ticket_push(pk):
    return services.ticket_push(EventTicket, pk)


@job(_("Send passenger ticket"))
def passenger_ticket_push(pk):
    return services.ticket_push(PassengerTicket, pk)


@job(_("Send tickets"))
def tickets_push_batch(kind, pks):
    return services.tickets_push_batch(model=TICKET_MODELS[TicketKind(kind)], pks=pks)


@job(_("Ask ticket statuses"))
def tickets_poll(company_id):
    """Poll one batch of queued tickets of each kind; enqueue the next poll while some still wait."""
    company = Company.objects.get(pk=company_id)
    changed = sum(services.tickets_poll(company=company, model=model) for model in TICKET_MODELS.values())
    return ngettext("%(count)s ticket changed.", "%(count)s tickets changed.", changed) % {"count": changed}


def tickets_poll_all():
    """Cron: one poll job per company that has tickets the platform still works on."""
    count = 0
    for company in Company.objects.filter(is_active=True):
        if services.tickets_waiting(company=company):
            count += services.poll_soon(company_id=company.pk, delay=0).is_new
    return count
