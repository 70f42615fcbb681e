"""Thin job entry points: load by id, call one service (the runner retries and defers)."""

from django.utils.translation import gettext as _

from backoffice.core import sync
from backoffice.core.models import Company

from . import services
from .models import SubCompany, SubCompanyOperation


def subcompany_push(pk):
    return sync.record_push(SubCompany, pk, send=services.subcompany_send, reconcile=services.subcompany_reconcile)


def operation_push(pk):
    return sync.record_push(SubCompanyOperation, pk, send=services.operation_send,
                            reconcile=services.operation_reconcile)


def usage_report_refresh(company_id):
    company = Company.objects.filter(pk=company_id, is_active=True).first()
    if company is None:
        return _("The company is gone or inactive; nothing to fetch.")
    snapshot = services.usage_report_refresh(company=company)
    count = snapshot.customers.count()
    return _("Usage report kept: %(count)s companies.") % {"count": count}
