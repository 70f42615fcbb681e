from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class SubcompaniesConfig(AppConfig):
    name = "backoffice.subcompanies"
    label = "subcompanies"
    verbose_name = _("Sub-companies and usage")

    def ready(self):
        from backoffice.core import sync
        from backoffice.core.joblabels import register_job_labels

        from .models import SubCompany, SubCompanyOperation

        # The connection test reads the usage report (one call per 15 minutes): the report it got is kept.
        from backoffice.core.platform import register_connection_keeper

        from . import services

        register_connection_keeper("crm", lambda company, body: services.snapshot_save(company=company, body=body))
        # The sweep re-enqueues records whose job was lost.
        sync.register_pushable(SubCompany, "backoffice.subcompanies.jobs.subcompany_push")
        sync.register_pushable(SubCompanyOperation, "backoffice.subcompanies.jobs.operation_push")
        register_job_labels({
            "subcompany_push": _("Create sub-company"),
            "operation_push": _("Credit or product request"),
            "usage_report_refresh": _("Refresh the usage report"),
        })
