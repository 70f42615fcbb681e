from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class SubcompaniesConfig(AppConfig):
    name = "backoffice.subcompanies"
    label = "subcompanies"
    verbose_name = _("Sub-companies and usage")

    def ready(self):
        from backoffice.core import schedule, sync
        from backoffice.core.platform import register_connection_keeper

        from . import jobs, services
        from .models import SubCompany, SubCompanyOperation

        # The connection test reads the usage report (one call per 15 minutes): the report it got is kept.
        register_connection_keeper("crm", lambda company, body: services.snapshot_save(company=company, body=body))
        # The sweep re-enqueues records whose job was lost.
        sync.register_pushable(SubCompany, jobs.subcompany_push)
        sync.register_pushable(SubCompanyOperation, jobs.operation_push)
        # The usage report (document 1, section 8: once per 15 minutes per company) of the companies that use
        # company management; the job asks the shared limiter first (a closed window defers it). The pages
        # read the entry's name and interval back to say when the next report comes.
        schedule.register(func=jobs.usage_reports_enqueue, interval=services.USAGE_REPORT_INTERVAL,
                          name=services.USAGE_REPORT_CRON)
