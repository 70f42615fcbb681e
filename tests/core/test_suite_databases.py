"""The suite's own machinery (tests/databases.py): on an xdist worker the test database is this worker's copy of
the run's migrated template, every worker has its own, and every test starts with the data its migrations create
(tests/conftest.py migrated_data, even after a transactional test's flush on the same worker)."""

import os

import pytest
from django.contrib.auth.models import Group
from django.db import connection
from django.db.migrations.loader import MigrationLoader

from tests import databases

pytestmark = pytest.mark.django_db


def test_the_database_is_this_workers_own_and_fully_migrated():
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    name = str(connection.settings_dict["NAME"])
    if worker:
        assert worker in name and name != os.environ.get(databases.TEMPLATE)
    roles = __import__("backoffice.core.migrations.0002_roles", fromlist=["ROLES"]).ROLES
    assert Group.objects.filter(name__in=roles).count() == len(roles)  # a data migration's rows (migrated_data)
    loader = MigrationLoader(connection)
    assert set(loader.graph.nodes) <= set(loader.applied_migrations)  # every migration on disk, none missing
