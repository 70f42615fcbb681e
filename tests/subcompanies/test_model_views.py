"""The sub-company pages, checked as every model's are (tests/viewcases.py)."""

from backoffice.core.roles import ADMINISTRATORS, MANAGERS
from backoffice.subcompanies.models import SubCompany
from tests.viewcases import ModelViewCase


class TestSubCompanyViews(ModelViewCase):
    model = SubCompany
    rights = {"list": MANAGERS, "detail": MANAGERS, "add": ADMINISTRATORS}

    @staticmethod
    def make(company):
        return SubCompany.objects.create(company=company, name=f"Alt {company.pk} A.Ş.")
