"""Thin job entry points: load by id, call one service (the runner owns retries and deferrals)."""

from datetime import timedelta

from django.utils import timezone

from backoffice.core import jobs
from backoffice.core.models import Company
from backoffice.remote.errors import RemoteError

from . import services
from .models import PassengerListExport, PassengerListReportRun


def passenger_list_push(pk):
    return services.passenger_list_push(pk)


def passenger_lists_query_sync(company_id):
    company = Company.objects.get(pk=company_id)
    new = services.passenger_lists_query_sync(company=company)
    return f"{new} new passenger list(s) from the platform."


def passenger_list_export_run(export_pk):
    export = PassengerListExport.objects.select_related("company").filter(pk=export_pk).first()
    if export is None:
        return "The export no longer exists."
    try:
        return services.export_run(export=export)
    except jobs.TryLater:
        raise
    except RemoteError as exc:
        if not jobs.will_run_again(exc):
            services.export_failed(export_pk=export_pk, message=exc.user_message())
        raise
    except Exception as exc:
        services.export_failed(export_pk=export_pk, message=exc.__class__.__name__)
        raise


def export_history_sync(company_id):
    company = Company.objects.get(pk=company_id)
    return f"{services.export_history_sync(company=company)} new export(s) in the history."


def exports_expire():
    return services.exports_expire()


def report_sync(run_pk):
    run = PassengerListReportRun.objects.select_related("company").filter(pk=run_pk).first()
    if run is None:
        return "The report fetch no longer exists."
    try:
        return services.report_sync(run=run)
    except RemoteError as exc:
        if not jobs.will_run_again(exc):
            services.report_failed(run_pk=run_pk, message=exc.user_message())
        raise
    except Exception as exc:
        services.report_failed(run_pk=run_pk, message=exc.__class__.__name__)
        raise


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
