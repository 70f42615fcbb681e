"""Every model's pages checked the same way (NetBox's ViewTestCases): a domain's test module subclasses
ModelViewCase with its model, a way to make one record of a company, and who may do what:

    class TestInvoiceViews(ModelViewCase):
        model = Invoice
        rights = {"list": EVERYONE, "detail": EVERYONE, "add": EDITORS, "edit": EDITORS, "delete": EDITORS}

        @staticmethod
        def make(company):
            return Invoice.objects.create(company=company, ...)

For each action in `rights` the case checks that the page is registered, that a signed-out visitor is sent to
the login page, that each role gets the page (200) or is refused (403) exactly as `rights` says, that a member
without a role is refused, and, for the pages of one record, that another company's record is a 404 for every
role. The list shows the company's record and not the other company's. Rights are written in the test, not
read from the views: a view whose roles drift from what the product promises fails here.
"""

import pytest
from django.conf import settings
from django.shortcuts import resolve_url
from django.urls import get_resolver

from backoffice.core.choices import Role
from backoffice.core.generic.registry import get_model_view, model_url
from tests.conftest import make_user

RECORD_ACTIONS = ("detail", "edit", "delete")
ROLES = tuple(role.value for role in Role)


def _roles(rights) -> set:
    return {str(role) for role in rights}


class ModelViewCase:
    model = None
    rights: dict = {}  # action -> the roles that may open it (core.roles' role sets)
    # The record's own URL is on the list page (False for a list that links records another way).
    list_links_detail = True

    @staticmethod
    def make(company):  # pragma: no cover - every subclass gives its own
        raise NotImplementedError

    @pytest.fixture(autouse=True)
    def views_registered(self):
        """The views register when the URLconf is first read (their modules are imported by urls.py)."""
        get_resolver().url_patterns

    def url(self, action, record=None):
        url = model_url(record if record is not None and action in RECORD_ACTIONS else self.model, action)
        assert url, f"{self.model.__name__} has no {action} page"
        return url

    @pytest.fixture
    def records(self, company, other_company):
        return self.make(company), self.make(other_company)

    @pytest.fixture
    def members(self, company):
        """A user of each role, and one without a role, all members of `company` only."""
        users = {role: make_user(f"u-{role}", role, [company]) for role in ROLES}
        users[None] = make_user("u-none", None, [company])
        return users

    def test_every_action_is_registered(self, views_registered):
        missing = [action for action in self.rights if get_model_view(self.model, action) is None]
        assert not missing, f"{self.model.__name__}: no view for {missing}"

    def test_signed_out_visitors_go_to_the_login_page(self, client, records):
        own, _other = records
        for action in self.rights:
            response = client.get(self.url(action, own))
            assert response.status_code == 302, action
            assert response["Location"].startswith(resolve_url(settings.LOGIN_URL) + "?next="), action

    def test_each_role_gets_what_its_rights_say(self, client, records, members):
        own, _other = records
        for role, user in members.items():
            client.force_login(user)
            for action, rights in self.rights.items():
                expected = 200 if role in _roles(rights) else 403
                response = client.get(self.url(action, own))
                assert response.status_code == expected, f"{role} {action}: {response.status_code}"

    def test_another_companys_record_is_a_404(self, client, records, members):
        _own, other = records
        for role, user in members.items():
            client.force_login(user)
            for action, rights in self.rights.items():
                if action in RECORD_ACTIONS and role in _roles(rights):
                    response = client.get(self.url(action, other))
                    assert response.status_code == 404, f"{role} {action}: {response.status_code}"

    def test_the_list_shows_the_companys_records_only(self, client, records, members):
        if "list" not in self.rights or not self.list_links_detail:
            pytest.skip("no list page that links its records")
        own, other = records
        role = next(role for role in ROLES if role in _roles(self.rights["list"]))
        client.force_login(members[role])
        page = client.get(self.url("list")).content.decode()
        assert model_url(own, "detail") in page
        assert model_url(other, "detail") not in page
