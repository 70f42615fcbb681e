"""Thin job entry points: load by id, call one service (the runner owns retries and deferrals). Exports and
the by-date report run as core jobs of their declarations (families.py)."""

from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from backoffice.core.jobs import job
from backoffice.core.models import Company

from . import services


@job(_("Send passenger list"))
def passenger_list_push(pk):
    return services.passenger_list_push(pk)


@job(_("Read passenger lists from the platform"))
def passenger_lists_query(company_id):
    new = services.passenger_lists_query_sync(company=Company.objects.get(pk=company_id))
    return ngettext("%(count)s new passenger list from the platform.",
                    "%(count)s new passenger lists from the platform.", new) % {"count": new}
