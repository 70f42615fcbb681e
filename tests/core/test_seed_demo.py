"""seed_demo: two companies on the sandbox, one user per role in both, the sandbox's side too; idempotent."""

import io
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth import authenticate
from django.test import RequestFactory
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import override_settings

from backoffice.core.choices import AuthMethod, Environment
from backoffice.core.management import demo
from backoffice.core.models import Company, Membership
from backoffice.core.roles import has_role

# The database engine matters here (make run's demo data on the database it uses): CI's SQLite pass runs these too.
pytestmark = pytest.mark.database

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def var_dir(tmp_path, monkeypatch):
    # The sandbox's own database (SQLite in var/) unless the run points it elsewhere.
    monkeypatch.delenv("SANDBOX_DATABASE_URL", raising=False)
    with override_settings(VAR_DIR=tmp_path):
        yield tmp_path


def sandbox_migrate(var_dir):
    env = {"BACKOFFICE_VAR_DIR": str(var_dir), "PATH": "/usr/bin:/bin"}
    subprocess.run([sys.executable, str(ROOT / "manage.py"), "migrate", "--noinput",
                    "--settings=backoffice.sandbox.settings"], cwd=ROOT, env=env, check=True, capture_output=True)


@pytest.mark.django_db
def test_seed_demo_creates_companies_users_and_sandbox_customers_idempotently(var_dir):
    sandbox_migrate(var_dir)
    call_command("seed_demo", stdout=io.StringIO())
    first = demo.read(var_dir / demo.FILENAME)
    call_command("seed_demo", stdout=io.StringIO())  # again: same rows, same secrets
    assert demo.read(var_dir / demo.FILENAME) == first
    assert oct((var_dir / demo.FILENAME).stat().st_mode & 0o777) == "0o600"

    a = Company.objects.get(name="Demo A.Ş.")
    b = Company.objects.get(name="Demo Lojistik Ltd.")
    assert Company.objects.count() == 2
    assert (a.environment, a.auth_method, a.api_key) == (Environment.SANDBOX, AuthMethod.API_KEY,
                                                         first["company_a.api_key"])
    assert (b.auth_method, b.service_username, b.service_password) == (
        AuthMethod.SERVICE_USER, first["company_b.service_username"], first["company_b.service_password"])
    a.full_clean()
    b.full_clean()

    for role, username in demo.DEMO_USERS.items():
        user = User.objects.get(username=username)
        assert has_role(user, role)
        # Through the sign-in throttle's backend, as the login page does (it needs the request).
        assert authenticate(RequestFactory().post("/login/"), username=username,
                            password=first[f"password.{username}"]) == user
        assert set(Membership.objects.filter(user=user).values_list("company__name", flat=True)) == {a.name, b.name}
    assert Membership.objects.count() == 6
    # The operator: a superuser of no company's own, the only user of the Django admin and RQ dashboard.
    operator = User.objects.get(username=demo.DEMO_OPERATOR)
    assert operator.is_superuser and operator.is_staff and not Membership.objects.filter(user=operator).exists()
    assert not User.objects.filter(is_superuser=True).exclude(pk=operator.pk).exists()

    # The sandbox knows the same customers and credentials (its own database, read directly).
    with sqlite3.connect(var_dir / "sandbox.sqlite3") as db:
        customers = {str(row[0]).replace("-", "") for row in db.execute("SELECT customer_unique_id FROM sandbox_customer")}
        keys = {row[0] for row in db.execute("SELECT key FROM sandbox_apikey")}
        users = {row[0] for row in db.execute("SELECT username FROM sandbox_serviceuser")}
    assert customers == {first["company_a.customer_id"].replace("-", ""), first["company_b.customer_id"].replace("-", "")}
    assert keys == {first["company_a.api_key"]}
    assert users == {first["company_b.service_username"]}


@pytest.mark.django_db
def test_seed_demo_without_sandbox_keeps_secrets_out_of_its_output(var_dir, capsys):
    call_command("seed_demo", "--no-sandbox")
    out = capsys.readouterr().out
    values = demo.read(var_dir / demo.FILENAME)
    assert values["password.muhasebe"] in out  # the logins are printed on purpose
    assert values["company_a.api_key"] not in out and values["company_b.service_password"] not in out
