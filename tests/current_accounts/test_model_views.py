"""The current account pages, checked as every model's are (tests/viewcases.py)."""

from backoffice.core.roles import EDITORS, EVERYONE
from backoffice.current_accounts.models import CurrentAccount
from tests.viewcases import ModelViewCase


class TestCurrentAccountViews(ModelViewCase):
    model = CurrentAccount
    rights = {"list": EVERYONE, "detail": EVERYONE, "add": EDITORS, "edit": EDITORS}

    @staticmethod
    def make(company):
        return CurrentAccount.objects.create(company=company, name=f"Müşteri {company.pk}",
                                             identifier=f"{1000000000 + company.pk}")
