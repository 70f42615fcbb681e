"""The passenger list pages, checked as every model's are (tests/viewcases.py)."""

from datetime import timedelta

from django.utils import timezone

from backoffice.core.roles import EDITORS, EVERYONE
from backoffice.passenger_lists.models import PassengerList
from tests.viewcases import ModelViewCase


class TestPassengerListViews(ModelViewCase):
    model = PassengerList
    rights = {"list": EVERYONE, "detail": EVERYONE, "add": EDITORS, "edit": EDITORS}

    @staticmethod
    def make(company):
        return PassengerList.objects.create(company=company, expedition_number=f"S-{company.pk}",
                                            expedition_time=timezone.now() + timedelta(days=1),
                                            vehicle_plate="34ABC123")
