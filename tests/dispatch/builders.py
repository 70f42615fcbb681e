"""What the dispatch tests build: a receiver (a current account with its default address), the directory of
dispatch-note users, and the note form's POST data with its lines and drivers."""

import io
import json
import zipfile

from django.utils import timezone

from backoffice.core.choices import SyncState
from backoffice.current_accounts.models import Address, CurrentAccount
from backoffice.dispatch.models import DispatchTaxpayer

RECEIVER_VKN = "1234567890"  # a dispatch-note user with two mailboxes in the sandbox's list
RECEIVER_ALIASES = ["urn:mail:irsaliyepk@ornek.com.tr", "urn:mail:irsaliye2pk@ornek.com.tr"]
SINGLE_VKN = "4840000006"  # one mailbox
SINGLE_ALIAS = "urn:mail:irsaliyepk@tekkutu.com.tr"
OUTSIDER_VKN = "9000000009"  # not a dispatch-note user
GENERIC_ALIAS = "urn:mail:irsaliyepk@gib.gov.tr"
CARRIER_VKN = "3920000003"
DRIVER_TCKN = "10000000146"


def receiver(company, identifier=SINGLE_VKN, *, name="Tek Kutu Lojistik A.Ş.", address=True):
    account, _created = CurrentAccount.objects.get_or_create(
        company=company, identifier=identifier,
        defaults={"name": name, "sync_state": SyncState.SYNCED, "remote_id": f"ca-{identifier}"})
    if address and not account.address_set.exists():
        Address.objects.create(company=company, current_account=account, address_name="Merkez",
                               sub_division_name="Kadıköy",
                               city="İstanbul", country="Türkiye", postal_zone="34710", is_default=True,
                               sync_state=SyncState.SYNCED)
    return account


def directory(entries=None):
    """The dispatch-note users' table as the daily refresh leaves it."""
    now = timezone.now()
    entries = entries or [(RECEIVER_VKN, alias) for alias in RECEIVER_ALIASES] + [(SINGLE_VKN, SINGLE_ALIAS)]
    DispatchTaxpayer.objects.bulk_create([DispatchTaxpayer(identifier=identifier, alias=alias, title="Örnek",
                                                           app_type="3", seen_at=now) for identifier, alias in entries],
                                         ignore_conflicts=True)


def directory_zip(items, *, bom=True) -> bytes:
    body = json.dumps(items, ensure_ascii=False).encode("utf-8")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("recipients.json", (b"\xef\xbb\xbf" if bom else b"") + body)
    return buffer.getvalue()


def formset(prefix, rows, initial=0):
    data = {f"{prefix}-TOTAL_FORMS": str(len(rows)), f"{prefix}-INITIAL_FORMS": str(initial),
            f"{prefix}-MIN_NUM_FORMS": "0", f"{prefix}-MAX_NUM_FORMS": "1000"}
    for index, row in enumerate(rows):
        data.update({f"{prefix}-{index}-{name}": value for name, value in row.items()})
    return data


LINE = {"product_name": "Çimento 50 kg", "product_code": "CIM-50", "quantity": "40", "unit_code": "C62",
        "unit_price": "125,50", "vat_rate": "20"}
DRIVER = {"name": "Ayşe", "surname": "Yılmaz", "tckn": DRIVER_TCKN}


def note_data(identifier=SINGLE_VKN, *, lines=None, drivers=None, **fields):
    """The form's POST data of a note sent now, numbered from prefix IRS, carried by one driver."""
    now = timezone.localtime()
    values = {"account": identifier, "target_alias": "", "profile": "TEMELIRSALIYE", "numbering": "series",
              "prefix": "IRS", "despatch_number": "", "issue_date": now.date().isoformat(),
              "issue_time": now.strftime("%H:%M"), "shipment_date": now.strftime("%Y-%m-%dT%H:%M"),
              "local_reference_id": "", "xslt_code": "", "delivery_city": "", "delivery_district": "",
              "delivery_zip_code": "", "delivery_country": "Türkiye", "carrier": "drivers", "carrier_title": "",
              "carrier_vkn_tckn": "", "plate_number": "34 ABC 123", "notes": "", "requested_status": "20"}
    values.update(fields)
    values.update(formset("lines", lines if lines is not None else [LINE]))
    values.update(formset("drivers", drivers if drivers is not None else [DRIVER]))
    return values
