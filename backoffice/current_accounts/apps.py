from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class CurrentAccountsConfig(AppConfig):
    name = "backoffice.current_accounts"
    label = "current_accounts"
    verbose_name = _("Current accounts")

    def ready(self):
        from backoffice.core import schedule
        from backoffice.core.sync import register_pushable

        from . import jobs
        from .models import Address, Bank, Contact, CurrentAccount, Mapping

        register_pushable(CurrentAccount, jobs.current_account_push)
        for model, push in ((Address, jobs.address_push), (Bank, jobs.bank_push), (Contact, jobs.contact_push),
                            (Mapping, jobs.mapping_push)):
            register_pushable(model, push)
        # New accounts made on the platform (another program, its portal) reach the mirror within the hour.
        schedule.register(func=jobs.current_accounts_mirror_all, interval=3600, name="current_accounts_mirror",
                          job_timeout=600)
