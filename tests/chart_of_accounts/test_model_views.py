"""The chart of accounts' pages, checked as every model's are (tests/viewcases.py)."""

from backoffice.core.roles import EDITORS, EVERYONE
from backoffice.chart_of_accounts.models import Account
from tests.viewcases import ModelViewCase


class TestAccountViews(ModelViewCase):
    model = Account
    rights = {"list": EVERYONE, "detail": EVERYONE, "add": EDITORS, "edit": EDITORS}

    @staticmethod
    def make(company):
        return Account.objects.create(company=company, type=0, base_code="120", code="120", name="Alıcılar",
                                      full_code="120")
