import os
import uuid
from importlib import import_module

import pytest
from django.apps import apps
from django.contrib.auth.management import create_permissions
from django.contrib.auth.models import Group, Permission, User

from backoffice.core.models import Company, Membership
from backoffice.remote import transport
from tests import databases, properties  # noqa: F401 (properties: the Hypothesis profiles, before any test module)
from tests.testapp.testing import output, running_worker

pytest_plugins = ["tests.sandbox_server"]


def pytest_configure(config):
    from django.conf import settings

    # A test user costs 0.27 s with the production hasher (PBKDF2, a million rounds) and its strength is not
    # under test: the suite hashes with MD5. Subprocesses (make run, the seed) keep the real one.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def pytest_itemcollected(item):
    """The browser tests in one xdist group (make test runs --dist loadgroup): one Chromium and its live server at a
    time, never two contending for the same cores."""
    if item.get_closest_marker("browser"):
        item.add_marker(pytest.mark.xdist_group("browser"))


@pytest.hookimpl(trylast=True)  # after pytest-django's own order (by kind of database use)
def pytest_collection_modifyitems(config, items):
    """The slow tests first (a stable sort: the rest keep their order), so that on xdist no long test starts
    last and holds the run while the other workers wait."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture(scope="session")
def django_db_setup(request, django_test_environment, django_db_blocker, django_db_use_migrations, django_db_keepdb,
                    django_db_createdb, django_db_modify_db_settings):
    """pytest-django's, except on an xdist worker of a run whose controller migrated a template
    (tests/databases.py): there the worker's database is a copy of it."""
    if os.environ.get(databases.TEMPLATE) and hasattr(request.config, "workerinput"):
        with django_db_blocker.unblock():
            original = databases.copy_template()
        yield
        with django_db_blocker.unblock():
            try:
                databases.drop_copy(original)
            except Exception as exc:  # as pytest-django: a database still in use is a warning, not a failure
                request.node.warn(pytest.PytestWarning(f"could not drop the test database: {exc!r}"))
        return
    from django.test.utils import setup_databases, teardown_databases
    from pytest_django.fixtures import _disable_migrations, _get_databases_for_setup

    if not django_db_use_migrations:
        _disable_migrations()
    aliases, serialized_aliases = _get_databases_for_setup(request.session.items)
    with django_db_blocker.unblock():
        db_cfg = setup_databases(verbosity=request.config.option.verbose, interactive=False, aliases=aliases,
                                 serialized_aliases=serialized_aliases,
                                 keepdb=django_db_keepdb and not django_db_createdb)
    yield
    if not django_db_keepdb:
        with django_db_blocker.unblock():
            try:
                teardown_databases(db_cfg, verbosity=request.config.option.verbose)
            except Exception as exc:
                request.node.warn(pytest.PytestWarning(f"could not drop the test database: {exc!r}"))


@pytest.fixture(autouse=True)
def isolated_limits_and_tokens(settings):
    """Company pks repeat across tests (and xdist workers) while Redis and the token cache persist:
    give each test its own rate-limit key space and an empty token cache."""
    settings.RATE_LIMIT_KEY_PREFIX = f"test-ratelimit:{uuid.uuid4().hex}"
    transport.forget_tokens()
    yield
    transport.forget_tokens()


@pytest.fixture(autouse=True)
def default_language():
    """Each test starts in the default language (Turkish): a request or a test that activated another one
    leaves it active in its thread, and the next test on that xdist worker would read it."""
    from django.utils import translation

    translation.deactivate()
    yield
    translation.deactivate()


@pytest.fixture(autouse=True)
def migrated_data(request):
    """Each test that uses the database starts with the rows the migrations create (the role groups): a
    transactional test's flush empties every table, and on xdist any test may follow one on its worker."""
    if request.node.get_closest_marker("django_db") or {"db", "transactional_db"} & set(request.fixturenames):
        request.getfixturevalue("_django_db_helper")
        ensure_roles()


@pytest.fixture
def company(db):
    return Company.objects.create(name="Acme A.Ş.", api_key="key-acme-0001")


@pytest.fixture
def other_company(db):
    return Company.objects.create(name="Beta Ltd.", api_key="key-beta-0002")


def ensure_roles():
    """The role groups and the administrators' permissions, as migration core 0002 creates them: a
    transactional test's flush empties every table, and its post_migrate brings back only content types
    and permissions (see migrated_data)."""
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
