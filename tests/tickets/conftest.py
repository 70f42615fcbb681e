"""Shared data of the ticket tests: valid form posts of both kinds, users, and a logged-in client."""

from decimal import Decimal

import pytest
from django.utils import timezone

from backoffice.core.middleware import SESSION_KEY
from backoffice.tickets.choices import TicketStatus
from backoffice.tickets.models import EventTicket, TicketLine

VKN = "1234567890"  # valid check digit
VKN_2 = "9876543217"
TCKN = "10000000146"
TCKN_2 = "12345678950"


def management(prefix, total, maximum=100):
    return {f"{prefix}-TOTAL_FORMS": str(total), f"{prefix}-INITIAL_FORMS": "0", f"{prefix}-MIN_NUM_FORMS": "0",
            f"{prefix}-MAX_NUM_FORMS": str(maximum)}


def line_data(prefix="lines", rows=(), total=None):
    """The formset fields of these rows (dicts of line fields; "taxes": a list of dicts of tax fields), with
    each line's tax formset as the page sends it."""
    data = management(prefix, total if total is not None else len(rows))
    for index, row in enumerate(rows):
        taxes = row.get("taxes", ())
        data.update(management(f"{prefix}-{index}-taxes", len(taxes), 10))
        for number, tax in enumerate(taxes):
            data.update({f"{prefix}-{index}-taxes-{number}-{name}": value for name, value in tax.items()})
        for name, value in row.items():
            if name != "taxes":
                data[f"{prefix}-{index}-{name}"] = value
    return data


def common_data(**overrides):
    data = {
        "prefix": "ETK", "document_type": "0", "ticket_date": "2026-03-14T19:30", "currency_code": "TRY",
        "payment_type": "KREDIKARTI", "customer_first_name": "Ayşe", "customer_last_name": "Yılmaz",
        "requested_status": "0",
    }
    data.update(overrides)
    return data


def event_data(lines=({"service_description": "Salon bileti", "amount": "250.00", "discount_rate": "10",
                       "vat_rate": "20"},), **overrides):
    data = common_data(
        seat_number="B-12", event_time="2026-03-20T20:00", event_name="Bahar Konseri", event_location="Salon A",
        event_city_id="34", event_municipality="Kadıköy", event_organizer_vkn_tckn=VKN,
    )
    data.update(line_data(rows=lines))
    data.update(overrides)
    return data


def passenger_data(lines=({"service_description": "Yolcu bileti", "amount": "400.00", "vat_rate": "10"},),
                   **overrides):
    data = common_data(
        prefix="YLC", identifier=TCKN, vehicle_plate="34 ABC 123", expedition_number="S-1001",
        expedition_time="2026-03-20T08:00", departure_date="2026-03-20T08:30", departure_location="İstanbul",
        destination="Ankara", seat_number="14",
    )
    data.update(line_data(rows=lines))
    data.update(overrides)
    return data


def login(client, user, company, language="en"):
    """Sign in acting for `company`; pages in English so that tests read the English messages."""
    from backoffice.core.models import Membership

    Membership.objects.get_or_create(user=user, company=company)
    client.force_login(user)
    client.cookies["django_language"] = language
    session = client.session
    session[SESSION_KEY] = company.pk
    session.save()
    return client


@pytest.fixture
def accountant_client(client, accountant, company):
    return login(client, accountant, company)


def make_tickets(company, count, prefix="PSH"):
    """count event tickets saved locally (not queued), one line each, created in bulk."""
    now = timezone.now()
    tickets = EventTicket.objects.bulk_create([
        EventTicket(company=company, ticket_number=f"{prefix}{now.year}{i:09d}", prefix=prefix, ticket_date=now,
                    payment_type="NAKIT", customer_first_name="Ayşe", customer_last_name="Yılmaz",
                    seat_number=f"S{i}", event_name="Bahar Konseri", event_location="Salon A", event_city_id=34,
                    event_city="İstanbul", event_municipality="Kadıköy", event_organizer_vkn_tckn=VKN,
                    requested_status=TicketStatus.DRAFT, total_amount=Decimal("100"), payable_amount=Decimal("120"))
        for i in range(1, count + 1)], batch_size=1000)
    TicketLine.objects.bulk_create([
        TicketLine(event_ticket=ticket, position=1, service_description="Bilet", amount=Decimal("100"),
                   vat_rate=Decimal("20"), vat_amount=Decimal("20")) for ticket in tickets], batch_size=1000)
    return list(EventTicket.objects.filter(company=company).order_by("pk"))
