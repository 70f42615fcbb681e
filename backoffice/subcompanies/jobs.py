"""Thin job entry points: load by id, call one service (the runner retries and defers)."""

from django.db.models import Exists, OuterRef, Q
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from backoffice.core import jobs, schedule, sync
from backoffice.core.jobs import job
from backoffice.core.models import Company

from . import services
from .models import SubCompany, SubCompanyOperation, UsageSnapshot


@job(gettext_lazy("Create sub-company"))
def subcompany_push(pk):
    return sync.record_push(SubCompany, pk, send=services.subcompany_send, reconcile=services.subcompany_reconcile)


@job(gettext_lazy("Credit or product request"))
def operation_push(pk):
    return sync.record_push(SubCompanyOperation, pk, send=services.operation_send,
                            reconcile=services.operation_reconcile)


@job(gettext_lazy("Refresh the usage report"))
def usage_report_refresh(company_id):
    company = Company.objects.filter(pk=company_id, is_active=True).first()
    if company is None:
        return _("The company is gone or inactive; nothing to fetch.")
    snapshot = services.usage_report_refresh(company=company)
    count = snapshot.customers.count()
    return _("Usage report kept: %(count)s companies.") % {"count": count}


def usage_reports_enqueue():
    """Cron (every 15 minutes): refresh the report of every active company that uses company management
    (it has a report or a sub-company). A company's first report comes from the refresh button, so that
    connections without the company-management service are not asked four times an hour."""
    in_use = Q(Exists(UsageSnapshot.objects.filter(company=OuterRef("pk")))) | Q(
        Exists(SubCompany.objects.filter(company=OuterRef("pk"))))
    count = 0
    for company in Company.objects.filter(in_use, is_active=True):
        if not company.api_key:  # company management takes only an API key: nothing to ask with
            continue
        # Each company at its own offset in the 15 minutes, so that the companies' reads spread.
        count += jobs.enqueue(usage_report_refresh, company=company.pk, args=[company.pk],
                              delay=schedule.company_offset(company.pk, services.USAGE_REPORT_INTERVAL) or None).is_new
    return count
