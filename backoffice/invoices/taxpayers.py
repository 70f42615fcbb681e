"""The tax authority's registered users (its public taxpayer list, facts file): who gets an e-invoice and at which
mailbox. One list for every company, read once a day as a ZIP of one JSON array of a million users and more, item
by item (ijson), upserted in chunks."""

from django.conf import settings
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from backoffice.core import jobs, schedule
from backoffice.core.directory import directory_store
from backoffice.core.models import Company
from backoffice.core.payloads import moment, text
from backoffice.remote.common import field

from .models import Taxpayer
from .services import service

# AppType of the taxpayer list's entries that are e-invoice mailboxes (facts file: {Identifier, Title, Alias,
# AppType}; the values are not documented: 1 is what public clients use for e-invoice).
DEFAULT_TAXPAYER_APP_TYPES = ("1",)


def taxpayer_app_types() -> tuple:
    return tuple(str(value) for value in getattr(settings, "INVOICE_TAXPAYER_APP_TYPES", DEFAULT_TAXPAYER_APP_TYPES))


def mailboxes(identifier) -> list[Taxpayer]:
    """The e-invoice mailboxes of a VKN / TCKN; none: not a registered user (an e-archive customer)."""
    return list(Taxpayer.objects.filter(identifier=identifier, app_type__in=taxpayer_app_types()).order_by("alias"))


def directory_loaded() -> bool:
    return Taxpayer.objects.exists()


def _taxpayer(item, seen_at):
    identifier, alias = text(field(item, "Identifier")), text(field(item, "Alias"))
    if not identifier or not alias:
        return None
    # The list's times name no zone; they are read as UTC, as they always were here.
    return Taxpayer(identifier=identifier[:11], alias=alias[:250], title=str(field(item, "Title") or "")[:500],
                    app_type=str(field(item, "AppType") or "")[:10], seen_at=seen_at,
                    registered_at=moment(field(item, "AliasCreationTime", "FirstCreationTime"), naive_utc=True))


def taxpayers_store(archive_bytes: bytes, *, chunk=5000) -> int:
    """Read the list's ZIP item by item (it holds a million users and more) and upsert them in chunks; users
    no longer listed are dropped. Returns how many were listed."""
    return directory_store(archive_bytes, model=Taxpayer, build=_taxpayer, chunk=chunk,
                           unique_fields=("identifier", "alias", "app_type"),
                           update_fields=("title", "registered_at", "seen_at"))


@jobs.job(gettext_lazy("Refresh the list of registered e-invoice users"))
def taxpayers_refresh() -> str:
    """The daily refresh, with the credentials of the company settings.INVOICE_TAXPAYER_COMPANY names (else the
    first active company): the list is the tax authority's, the same for everyone."""
    company_id = getattr(settings, "INVOICE_TAXPAYER_COMPANY", None)
    companies = Company.objects.filter(is_active=True).order_by("pk")
    company = companies.filter(pk=company_id).first() if company_id else companies.first()
    if company is None:
        return _("No company to read the list with.")
    count = taxpayers_store(service(company).taxpayer_list())
    return _("%(count)s registered mailbox(es) read.") % {"count": count}


def taxpayers_request():
    return jobs.enqueue(taxpayers_refresh)


# The tax authority's taxpayer list (who gets an e-invoice, at which mailbox), once a day.
schedule.register(func=taxpayers_refresh, interval=86400, name="invoices_taxpayers", job_timeout=3600)
