"""Thin job entry points: load by id, call one service (the runner owns retries and deferrals).
Cancel, status changes, exports and reports run as core jobs of their declarations (services.TICKET_ACTIONS,
families.py)."""

from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from backoffice.core.jobs import TryLater, current_run, job
from backoffice.core.models import Company

from . import conf, services
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
def tickets_poll(company_id, follow=True):
    """Poll one batch of queued tickets of each kind. A poll asked for by a push or an action (follow) asks
    again every TICKET_POLL_DELAY_SECONDS while tickets still wait, for TICKET_POLL_FOLLOW_SECONDS after the
    latest push or action asked (services.poll_follow; also when it joined a poll queued long before): a
    ticket pushed just before the poll ran would otherwise wait for the cron's minute."""
    company = Company.objects.get(pk=company_id)
    changed = sum(services.tickets_poll(company=company, model=model) for model in TICKET_MODELS.values())
    run = current_run()
    if follow and run is not None and services.poll_following(company.pk) and services.tickets_waiting(company=company):
        raise TryLater(conf.get("TICKET_POLL_DELAY_SECONDS"),
                       gettext("Tickets still queued on the platform; asking again shortly."))
    return ngettext("%(count)s ticket changed.", "%(count)s tickets changed.", changed) % {"count": changed}


def tickets_poll_all():
    """Cron: one poll job per company that has tickets the platform still works on."""
    count = 0
    for company in Company.objects.filter(is_active=True):
        if services.tickets_waiting(company=company):
            count += services.poll_soon(company_id=company.pk, delay=0, follow=False).is_new
    return count
