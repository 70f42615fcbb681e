"""The tax authority's registered users (its public taxpayer list, facts file): who gets an e-invoice and at which
mailbox. One list for every company, read once a day as a ZIP of one JSON array of a million users and more, item
by item (ijson), upserted in chunks."""

import io
import zipfile

import ijson
from django.conf import settings
from django.utils import timezone
from django.utils.translation import gettext as _

from backoffice.core import jobs
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


class _SkipBom(io.RawIOBase):
    """A byte stream without a leading UTF-8 byte-order mark (the list's JSON may start with one)."""

    def __init__(self, stream):
        self.stream, self.first = stream, True

    def readable(self):
        return True

    def readinto(self, buffer):
        data = self.stream.read(len(buffer))
        if self.first:
            self.first = False
            if data.startswith(b"\xef\xbb\xbf"):
                data = data[3:] + self.stream.read(3)
        buffer[:len(data)] = data
        return len(data)


def taxpayers_store(archive_bytes: bytes, *, chunk=5000) -> int:
    """Read the list's ZIP item by item (it holds a million users and more) and upsert them in chunks; users
    no longer listed are dropped. Returns how many were listed."""
    started = timezone.now()
    count = 0
    with zipfile.ZipFile(io.BytesIO(archive_bytes)) as archive:
        member = next((name for name in archive.namelist() if name.lower().endswith(".json")), None)
        if member is None:
            raise ValueError("the taxpayer list ZIP holds no JSON file")
        with archive.open(member) as raw:
            rows = []
            for item in ijson.items(io.BufferedReader(_SkipBom(raw)), "item"):
                identifier = str(field(item, "Identifier") or "").strip()
                alias = str(field(item, "Alias") or "").strip()
                if not identifier or not alias:
                    continue
                rows.append(Taxpayer(identifier=identifier[:11], alias=alias[:250],
                                     title=str(field(item, "Title") or "")[:500],
                                     app_type=str(field(item, "AppType") or "")[:10],
                                     registered_at=_moment(field(item, "AliasCreationTime", "FirstCreationTime")),
                                     seen_at=started))
                if len(rows) >= chunk:
                    count += _upsert(rows)
                    rows = []
            count += _upsert(rows)
    if count:
        Taxpayer.objects.filter(seen_at__lt=started).delete()
    return count


def _upsert(rows) -> int:
    if rows:
        Taxpayer.objects.bulk_create(rows, update_conflicts=True, unique_fields=["identifier", "alias", "app_type"],
                                     update_fields=["title", "registered_at", "seen_at"])
    return len(rows)


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
