"""Core's own pages (companies, memberships), checked as every model's are (tests/viewcases.py)."""

from backoffice.core.models import Company, Membership
from backoffice.core.roles import ADMINISTRATORS
from tests.conftest import make_user
from tests.viewcases import ModelViewCase


class TestMembershipViews(ModelViewCase):
    model = Membership
    rights = {"list": ADMINISTRATORS, "detail": ADMINISTRATORS, "add": ADMINISTRATORS, "edit": ADMINISTRATORS,
              "delete": ADMINISTRATORS}
    list_links_detail = False

    @staticmethod
    def make(company):
        return Membership.objects.create(company=company, user=make_user(f"member-{company.pk}"))
