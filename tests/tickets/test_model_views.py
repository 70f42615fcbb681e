"""The ticket pages, checked as every model's are (tests/viewcases.py)."""

from datetime import timedelta

from django.utils import timezone

from backoffice.core.roles import EDITORS, EVERYONE
from backoffice.tickets.models import EventTicket, PassengerTicket
from tests.viewcases import ModelViewCase

RIGHTS = {"list": EVERYONE, "detail": EVERYONE, "add": EDITORS, "edit": EDITORS}


class TestEventTicketViews(ModelViewCase):
    model = EventTicket
    rights = RIGHTS

    @staticmethod
    def make(company):
        return EventTicket.objects.create(
            company=company, ticket_number=f"ETK{company.pk:013d}", prefix="ETK", payment_type="NAKIT",
            event_name="Konser", event_location="Harbiye", event_city_id=34, event_municipality="Şişli",
            event_organizer_vkn_tckn="1234567890")


class TestPassengerTicketViews(ModelViewCase):
    model = PassengerTicket
    rights = RIGHTS

    @staticmethod
    def make(company):
        moment = timezone.now() + timedelta(days=1)
        return PassengerTicket.objects.create(
            company=company, ticket_number=f"YBL{company.pk:013d}", prefix="YBL", payment_type="NAKIT",
            vehicle_plate="34ABC123", expedition_time=moment, expedition_number="S-1", departure_date=moment,
            departure_location="İstanbul", seat_number="12")
