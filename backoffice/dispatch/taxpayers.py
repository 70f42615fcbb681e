"""The dispatch-note users (the platform's taxpayer list of the dispatch service, the same for every company): who
gets an e-dispatch note at which mailbox, read once a day into DispatchTaxpayer; and the generic mailbox of everyone
else."""

from django.conf import settings
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from backoffice.core import schedule
from backoffice.core.directory import directory_store
from backoffice.core.jobs import enqueue, job
from backoffice.core.models import Company
from backoffice.core.platform import client_for
from backoffice.remote.common import field
from backoffice.remote.dispatch import DispatchClient

from .models import DispatchTaxpayer

# For receivers that are not dispatch-note users (document 3, 2.9: "a fixed generic alias ... its value omitted
# here"): a setting, to be confirmed with the provider.
DEFAULT_GENERIC_ALIAS = "urn:mail:irsaliyepk@gib.gov.tr"


def generic_alias() -> str:
    return getattr(settings, "DISPATCH_GENERIC_RECIPIENT_ALIAS", DEFAULT_GENERIC_ALIAS)


def mailboxes(identifier) -> list[str]:
    """The dispatch mailboxes of a VKN / TCKN (none: not a dispatch-note user)."""
    return list(DispatchTaxpayer.objects.filter(identifier=identifier).order_by("alias")
                .values_list("alias", flat=True).distinct())


def directory_loaded() -> bool:
    return DispatchTaxpayer.objects.exists()


def _taxpayer(item, seen_at):
    identifier = str(field(item, "Identifier") or "").strip()
    alias = str(field(item, "Alias") or "").strip()
    if not identifier or not alias:
        return None
    return DispatchTaxpayer(identifier=identifier[:11], alias=alias[:250], title=str(field(item, "Title") or "")[:500],
                            app_type=str(field(item, "AppType") or "")[:10], seen_at=seen_at)


def taxpayers_store(archive, *, chunk=5000) -> int:
    """The directory's ZIP (bytes or a file) into DispatchTaxpayer; entries no longer listed are dropped."""
    return directory_store(archive, model=DispatchTaxpayer, build=_taxpayer, chunk=chunk,
                           unique_fields=("identifier", "alias", "app_type"), update_fields=("title", "seen_at"))


@job(gettext_lazy("Read the dispatch-note users' list"), name="dispatch_taxpayers_refresh")
def taxpayers_refresh() -> str:
    """The daily refresh, with the credentials of settings.DISPATCH_TAXPAYER_COMPANY (else the first active
    company): the list is the same for everyone."""
    company_id = getattr(settings, "DISPATCH_TAXPAYER_COMPANY", None)
    companies = Company.objects.filter(is_active=True).order_by("pk")
    company = companies.filter(pk=company_id).first() if company_id else companies.first()
    if company is None:
        return _("No company to read the list with.")
    count = taxpayers_store(client_for(company, DispatchClient).taxpayer_list())
    return ngettext("%(count)s dispatch mailbox read.", "%(count)s dispatch mailboxes read.", count) % {
        "count": count}


def taxpayers_request():
    """The refresh asked for by an administrator (at most one at a time)."""
    return enqueue(taxpayers_refresh)


# The dispatch-note users' list, once a day.
schedule.register(func=taxpayers_refresh, interval=86400, name="dispatch_taxpayers", job_timeout=3600)
