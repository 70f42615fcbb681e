from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class LedgerConfig(AppConfig):
    name = "backoffice.ledger"
    label = "ledger"
    verbose_name = _("E-ledger")

    def ready(self):
        from backoffice.core import actions, schedule
        from backoffice.core.sync import register_pushable

        from . import jobs, services
        from .models import Journal, Period

        register_pushable(Journal, jobs.journal_upload)
        actions.register_actions(Period, services.PERIOD_ACTIONS)
        # Periods the platform still converts, checks or submits: followed every minute to their end.
        schedule.register(func=jobs.periods_follow_all, interval=60, name="ledger_follow", job_timeout=600)
        # A check whose worker died (killed, out of memory) is asked for again.
        schedule.register(func=jobs.journal_checks_sweep, interval=300, name="ledger_checks_sweep", job_timeout=120)
        # Every company's periods once an hour (a period uploaded elsewhere, a status changed by the authority).
        schedule.register(func=jobs.periods_mirror_all, interval=3600, name="ledger_mirror", job_timeout=1800)
