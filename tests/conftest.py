import uuid
from importlib import import_module

import pytest
from django.apps import apps
from django.contrib.auth.management import create_permissions
from django.contrib.auth.models import Group, Permission, User

from backoffice.core.models import Company, Membership
from backoffice.remote import transport
from tests.testapp.testing import output, running_worker

pytest_plugins = ["tests.sandbox_server"]


@pytest.fixture(autouse=True)
def isolated_limits_and_tokens(settings):
    """Company pks repeat across tests (and xdist workers) while Redis and the token cache persist:
    give each test its own rate-limit key space and an empty token cache."""
    settings.RATE_LIMIT_KEY_PREFIX = f"test-ratelimit:{uuid.uuid4().hex}"
    transport.forget_tokens()
    yield
    transport.forget_tokens()


@pytest.fixture
def company(db):
    return Company.objects.create(name="Acme A.Ş.", api_key="key-acme-0001")


@pytest.fixture
def other_company(db):
    return Company.objects.create(name="Beta Ltd.", api_key="key-beta-0002")


def ensure_roles():
    """The role groups and the administrators' permissions, as migration core 0002 creates them: a
    transactional test's flush empties every table, and its post_migrate brings back only content types
    and permissions. Tests that make users then do not depend on the order they run in."""
    roles = import_module("backoffice.core.migrations.0002_roles")
    if Group.objects.filter(name__in=roles.ROLES).count() == len(roles.ROLES):
        return
    for app_config in apps.get_app_configs():
        create_permissions(app_config, verbosity=0)
    for name in roles.ROLES:
        Group.objects.get_or_create(name=name)
    admin = Group.objects.get(name="administrator")
    for app_label, model, actions in roles.ADMIN_PERMISSIONS:
        admin.permissions.add(*Permission.objects.filter(content_type__app_label=app_label,
                                                         codename__in=[f"{action}_{model}" for action in actions]))


def make_user(username, role=None, companies=()):
    user = User.objects.create_user(username=username, password="pass-" + username)
    if role:
        ensure_roles()
        user.groups.add(Group.objects.get(name=role))
    for company in companies:
        Membership.objects.create(user=user, company=company)
    return user


@pytest.fixture
def accountant(company):
    return make_user("muhasebe", "accounting", [company])


@pytest.fixture
def manager(company):
    return make_user("yonetici", "manager", [company])


@pytest.fixture
def administrator(company):
    return make_user("yonetim", "administrator", [company])


@pytest.fixture(scope="module")
def worker_env():
    """The environment of a module's real rqworker: a module overrides this fixture."""
    return {}


@pytest.fixture(scope="module")
def rq_worker(django_db_setup, django_db_blocker, worker_env):
    """One real `manage.py rqworker --with-scheduler` for a module's tests."""
    with running_worker(worker_env) as process:
        yield process


@pytest.fixture
def worker(rq_worker):
    """The module's worker, checked to be still alive after each test."""
    yield rq_worker
    assert rq_worker.poll() is None, "the worker died:\n" + output(rq_worker)


def guard_fields(page: str) -> dict:
    """The one-time key and opened-for company a page's form carries (core.submissions)."""
    import re

    return dict(re.findall(r'name="(submission_key|opened_for)" value="([^"]*)"', page))


def form_post(client, url, data, **extra):
    """POST a creating form as a browser does: GET it first and send back its one-time key and the company
    it was opened for (core.submissions), then the data."""
    return client.post(url, {**guard_fields(client.get(url, **extra).content.decode()), **data}, **extra)


def confirm_post(client, url, data, **extra):
    """POST a bulk confirmation form as a browser does: the selection first (the confirmation page with its
    one-time key), then the confirmation with that key."""
    first = {name: value for name, value in data.items() if name != "confirm"}
    return client.post(url, {**guard_fields(client.post(url, first, **extra).content.decode()), **data}, **extra)
