from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class InvoicesConfig(AppConfig):
    name = "backoffice.invoices"
    label = "invoices"
    verbose_name = _("Invoices")

    def ready(self):
        from backoffice.core import actions, schedule
        from backoffice.core.sync import register_pushable

        from . import copies, jobs, services  # noqa: F401 (copies registers the copy and return views)
        from .models import Invoice

        register_pushable(Invoice, jobs.invoice_push)
        actions.register_actions(Invoice, services.POSTING_ACTIONS)
        # Both lists, from where the last run stopped; once a day the whole lists, to learn of deletions.
        schedule.register(func=jobs.invoices_mirror_all, interval=900, name="invoices_mirror", job_timeout=1800)
        # Statuses the platform still works on, within the company's status-query budget.
        schedule.register(func=jobs.invoices_poll_all, interval=300, name="invoices_poll", job_timeout=600)
        # The tax authority's taxpayer list (who gets an e-invoice, at which mailbox).
        schedule.register(func=jobs.taxpayers_refresh, interval=86400, name="invoices_taxpayers", job_timeout=3600)
