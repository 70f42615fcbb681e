"""Job entry points of the e-ledger (thin: the work is in services, checking and mirror)."""

from django.utils.translation import gettext_lazy as _

from backoffice.core.jobs import job

from . import checking, mirror, services


@job(_("Check a journal"))
def journal_check(pk):
    return checking.journal_check(pk)


@job(_("Check again the journals whose check stopped"))
def journal_checks_sweep():
    return checking.checks_sweep()


@job(_("Upload a journal to the platform"))
def journal_upload(pk):
    return services.journal_push(pk)


@job(_("Follow ledger periods on the platform"))
def periods_follow(company_id):
    return mirror.periods_follow(company_id)


@job(_("Follow ledger periods (every company)"))
def periods_follow_all():
    return mirror.periods_follow_all()


@job(_("Read ledger periods from the platform"))
def periods_read(company_id):
    return mirror.periods_read(company_id)


@job(_("Read ledger periods (every company)"))
def periods_mirror_all():
    return mirror.periods_mirror_all()


@job(_("Read the parts of a ledger period"))
def parts_read(period_pk):
    return mirror.parts_read(period_pk)
