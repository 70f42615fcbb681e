"""Job entry points of the chart of accounts (thin: the work is in services)."""

from django.utils.translation import gettext_lazy as _

from backoffice.core.jobs import job
from backoffice.core.models import Company

from . import services


@job(_("Send chart account"))
def account_push(pk):
    return services.account_push(pk)


@job(_("Read the chart of accounts from the platform"))
def chart_mirror(company_id):
    new = services.chart_mirror(Company.objects.get(pk=company_id))
    return _("%(count)s new account(s) read.") % {"count": new}
