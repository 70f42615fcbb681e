"""Thin job entry points: load by id, call one service (the runner owns retries and deferrals)."""

from django.utils.translation import ngettext

from backoffice.core import exports, reports
from backoffice.core.models import Company

from . import services
from .choices import TicketKind
from .models import TICKET_MODELS, EventTicket, PassengerTicket, ReportRun, TicketExport


def event_ticket_push(pk):
    return services.ticket_push(EventTicket, pk)


def passenger_ticket_push(pk):
    return services.ticket_push(PassengerTicket, pk)


def tickets_push_batch(kind, pks):
    return services.tickets_push_batch(model=TICKET_MODELS[TicketKind(kind)], pks=pks)


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


def tickets_cancel(kind, pks):
    return services.tickets_cancel(model=TICKET_MODELS[TicketKind(kind)], pks=pks)


def tickets_update_status(kind, pks, status):
    return services.tickets_update_status(model=TICKET_MODELS[TicketKind(kind)], pks=pks, status=int(status))


def ticket_export_run(export_pk):
    return exports.export_job(model=TicketExport, pk=export_pk, run=services.export_run,
                              failed=services.export_failed)


def export_history_sync(company_id, kind):
    company = Company.objects.get(pk=company_id)
    new = services.export_history_sync(company=company, kind=TicketKind(kind))
    return ngettext("%(count)s new export in the history.", "%(count)s new exports in the history.", new) % {"count": new}


def exports_expire():
    return services.exports_expire()


def report_sync(run_pk):
    return reports.report_job(model=ReportRun, pk=run_pk, run=services.report_sync,
                              failed=services.report_failed)


def reports_sync_yesterday():
    """Cron (nightly): fetch yesterday's by-date reports of both kinds for every active company."""
    from datetime import timedelta

    from django.utils import timezone

    day = timezone.localdate() - timedelta(days=1)
    count = 0
    for company in Company.objects.filter(is_active=True):
        for kind in TicketKind:
            services.report_request(company=company, kind=kind, report_date=day)
            count += 1
    return count
