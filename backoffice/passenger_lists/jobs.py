"""Thin job entry points: load by id, call one service (the runner owns retries and deferrals)."""

from datetime import timedelta

from django.utils import timezone
from django.utils.translation import ngettext

from backoffice.core import exports, reports
from backoffice.core.models import Company

from . import services
from .models import PassengerListExport, PassengerListReportRun


def passenger_list_push(pk):
    return services.passenger_list_push(pk)


def passenger_lists_query_sync(company_id):
    company = Company.objects.get(pk=company_id)
    new = services.passenger_lists_query_sync(company=company)
    return ngettext("%(count)s new passenger list from the platform.", "%(count)s new passenger lists from the platform.", new) % {"count": new}


def passenger_list_export_run(export_pk):
    return exports.export_job(model=PassengerListExport, pk=export_pk, run=services.export_run,
                              failed=services.export_failed)


def export_history_sync(company_id):
    company = Company.objects.get(pk=company_id)
    new = services.export_history_sync(company=company)
    return ngettext("%(count)s new export in the history.", "%(count)s new exports in the history.", new) % {"count": new}


def exports_expire():
    return services.exports_expire()


def report_sync(run_pk):
    return reports.report_job(model=PassengerListReportRun, pk=run_pk, run=services.report_sync,
                              failed=services.report_failed)


def reports_sync_yesterday():
    """Cron (nightly): fetch yesterday's report of lists for every active company; the lists it names become
    reported (and can no longer be updated)."""
    day = timezone.localdate() - timedelta(days=1)
    count = 0
    for company in Company.objects.filter(is_active=True):
        services.report_request(company=company, report_date=day)
        count += 1
    return count


def reports_sync_today():
    """Cron: fetch today's report of lists for the companies that have lists not known as reported yet, so
    that a list reported meanwhile is refused an update here rather than by the platform."""
    from .choices import ListState
    from .models import PassengerList

    day = timezone.localdate()
    companies = PassengerList.objects.filter(state=ListState.SAVED).exclude(remote_id="").values_list(
        "company_id", flat=True).distinct()
    count = 0
    for company in Company.objects.filter(is_active=True, pk__in=companies):
        services.report_request(company=company, report_date=day)
        count += 1
    return count
