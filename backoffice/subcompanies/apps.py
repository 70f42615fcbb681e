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

        # The sweep re-enqueues records whose job was lost.
        sync.register_pushable(SubCompany, "backoffice.subcompanies.jobs.subcompany_push")
        sync.register_pushable(SubCompanyOperation, "backoffice.subcompanies.jobs.operation_push")
        register_job_labels({
            "subcompany_push": _("Create sub-company"),
            "operation_push": _("Credit or product request"),
            "usage_report_refresh": _("Refresh the usage report"),
        })
