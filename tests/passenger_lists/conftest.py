"""Shared data of the passenger-list tests: passenger tickets of one expedition (on the platform through
the sandbox, or only here), list form posts and logged-in clients."""

from datetime import datetime
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest
from django.utils import translation

from backoffice.core.choices import SyncState
from backoffice.tickets import services as ticket_services
from backoffice.tickets.choices import TicketStatus
from backoffice.tickets.models import PassengerTicket
from tests.tickets.conftest import TCKN, login  # noqa: F401 (login is used by the test modules)

ISTANBUL = ZoneInfo("Europe/Istanbul")
EXPEDITION = datetime(2026, 5, 20, 8, 0, tzinfo=ISTANBUL)
VKN = "1234567890"  # valid check digit
OPERATOR = {"vehicle_operating_vkn_tckn": VKN, "vehicle_operating_title": "Anadolu Turizm A.Ş.",
            "vehicle_operating_tax_center": "Kadıköy", "commission_amount": "120.50",
            "commission_tax_amount": "24.10"}


@pytest.fixture(autouse=True)
def english():
    with translation.override("en"):
        yield


def ticket(company, *, seat="1", plate="34ABC123", number="S-1001", when=EXPEDITION, amount="400",
           status=TicketStatus.QUEUED, **fields):
    """A passenger ticket saved and queued to be sent (not sent: push() sends it)."""
    row = PassengerTicket(company=company, prefix="YLC", ticket_date=when, payment_type="NAKIT", identifier=TCKN,
                          customer_first_name="Yolcu", customer_last_name=f"No {seat}", vehicle_plate=plate,
                          expedition_number=number, expedition_time=when, departure_date=when,
                          departure_location="İstanbul", destination="Ankara", seat_number=seat, **fields)
    lines = [{"service_description": "Yolcu", "amount": Decimal(amount), "vat_rate": Decimal("10"), "taxes": []}]
    return ticket_services.ticket_create(ticket=row, lines=lines, requested_status=status)


def push(row):
    """Send a ticket to the sandbox (the push job's body, in this process)."""
    ticket_services.passenger_ticket_push(row.pk)
    row.refresh_from_db()
    assert row.sync_state == SyncState.SYNCED, row.last_error
    return row


def local_ticket(company, *, remote_status=TicketStatus.APPROVED, **fields):
    """A ticket as if the platform had it (no HTTP): for form and view tests."""
    row = ticket(company, **fields)
    PassengerTicket.objects.filter(pk=row.pk).update(sync_state=SyncState.SYNCED, remote_status=remote_status,
                                                     remote_id=f"00000000-0000-0000-0000-{row.pk:012d}")
    row.refresh_from_db()
    return row


def list_data(**overrides):
    data = {"expedition_number": "S-1001", "expedition_time": "2026-05-20T08:00", "vehicle_plate": "34 ABC 123"}
    data.update(overrides)
    return {name: value for name, value in data.items() if value is not None}
