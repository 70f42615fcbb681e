"""The tax authority's registered users (its public taxpayer list, facts file): who gets an e-invoice and at which
mailbox. One list for every company, read once a day as a ZIP of one JSON array of a million users and more, item
by item (ijson), upserted in chunks."""

from django.conf import settings
from django.utils.translation import gettext as _

from backoffice.core import jobs
from backoffice.core.directory import directory_store
from backoffice.core.models import Company
from backoffice.remote.common import field

from .models import Taxpayer
from .services import _moment, service

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
    identifier = str(field(item, "Identifier") or "").strip()
    alias = str(field(item, "Alias") or "").strip()
    if not identifier or not alias:
        return None
    return Taxpayer(identifier=identifier[:11], alias=alias[:250], title=str(field(item, "Title") or "")[:500],
                    app_type=str(field(item, "AppType") or "")[:10],
                    registered_at=_moment(field(item, "AliasCreationTime", "FirstCreationTime")), seen_at=seen_at)


def taxpayers_store(archive_bytes: bytes, *, chunk=5000) -> int:
    """Read the list's ZIP item by item (it holds a million users and more) and upsert them in chunks; users
    no longer listed are dropped. Returns how many were listed."""
    return directory_store(archive_bytes, model=Taxpayer, build=_taxpayer, chunk=chunk,
                           unique_fields=("identifier", "alias", "app_type"),
                           update_fields=("title", "registered_at", "seen_at"))


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
    from . import jobs as invoice_jobs

    return jobs.enqueue(invoice_jobs.taxpayers_refresh)
