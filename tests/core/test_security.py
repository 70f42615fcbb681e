"""Who may open what: anonymous users, other companies' users, staff without the administrator role,
the company switcher, and Django's deployment checks with production settings."""

import os
import re
import secrets
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from cryptography.fernet import Fernet
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from backoffice.core.middleware import SESSION_KEY
from backoffice.core.models import Company, JobRun, Membership, RemoteCall
from tests.conftest import make_user

try:  # Python 3.11+
    import re._parser as sre_parse
    from re._constants import ANY, AT, BRANCH, IN, LITERAL, MAX_REPEAT, MIN_REPEAT, NEGATE, RANGE, SUBPATTERN, CATEGORY
except ImportError:  # pragma: no cover
    import sre_parse
    from sre_constants import ANY, AT, BRANCH, IN, LITERAL, MAX_REPEAT, MIN_REPEAT, NEGATE, RANGE, SUBPATTERN, CATEGORY

ROOT = Path(__file__).resolve().parents[2]
CONVERTER_SAMPLES = {"int": "1", "id": "1", "str": "x", "slug": "x", "path": "x/y",
                     "uuid": "6f1c1f4e-4a39-4b55-9a57-2d0c8b2e6a11"}


def _sample_regex(parsed):
    """The shortest string the parsed regex matches (enough for the URL patterns of Django apps)."""
    out = []
    for op, arg in parsed:
        if op == LITERAL:
            out.append(chr(arg))
        elif op == ANY:
            out.append("x")
        elif op == AT:
            continue
        elif op == SUBPATTERN:
            out.append(_sample_regex(arg[-1]))
        elif op == BRANCH:
            out.append(_sample_regex(arg[1][0]))
        elif op in (MAX_REPEAT, MIN_REPEAT):
            low, _high, item = arg
            out.append(_sample_regex(item) * low)
        elif op == IN:
            if arg and arg[0][0] == NEGATE:
                out.append("x")
            elif arg[0][0] == LITERAL:
                out.append(chr(arg[0][1]))
            elif arg[0][0] == RANGE:
                out.append(chr(arg[0][1][0]))
            elif arg[0][0] == CATEGORY:
                out.append("1" if "DIGIT" in str(arg[0][1]) else "x")
            else:
                out.append("x")
        else:
            raise ValueError(f"cannot sample regex op {op}")
    return "".join(out)


def _sample(pattern):
    """A concrete path for one pattern: converters and groups get dummy values."""
    route = str(pattern.pattern)
    if hasattr(pattern.pattern, "converters") and not route.startswith("^"):
        return re.sub(r"<(?:(\w+):)?\w+>", lambda m: CONVERTER_SAMPLES[m.group(1) or "str"], route)
    sample = _sample_regex(sre_parse.parse(pattern.pattern.regex.pattern))
    assert pattern.pattern.regex.search(sample), (route, sample)
    return sample


def all_paths(patterns=None, prefix=""):
    """Every URL pattern of backoffice.urls, recursively, as (path, pattern)."""
    if patterns is None:
        patterns = get_resolver("backoffice.urls").url_patterns
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from all_paths(pattern.url_patterns, prefix + _sample(pattern))
        elif isinstance(pattern, URLPattern):
            yield "/" + prefix + _sample(pattern), pattern


PUBLIC = {"login", "health", "set_language"}


def test_url_walk_finds_the_whole_application():
    names = {pattern.name for _path, pattern in all_paths()}
    # Our pages, the admin and the RQ dashboard are all walked.
    assert {"dashboard", "switch_company", "company_detail", "remotecall_list", "jobrun_list", "login",
            "logout", "health", "index", "home"} <= names
    assert len(names) > 40


@pytest.mark.django_db
def test_every_page_sends_an_anonymous_visitor_to_sign_in(client):
    login = reverse("login")
    checked = 0
    for path, pattern in all_paths():
        if pattern.name in PUBLIC or getattr(pattern.callback, "__name__", "") == "serve":
            continue
        response = client.get(path)
        assert response.status_code == 302, (path, response.status_code)
        target = urlsplit(response["Location"])
        assert target.path == login, (path, response["Location"])
        checked += 1
    assert checked > 40


@pytest.mark.django_db
def test_public_pages_are_only_sign_in_health_and_language(client):
    assert client.get(reverse("login")).status_code == 200
    assert client.post(reverse("set_language"), {"language": "en", "next": "/login/"}).status_code == 302
    assert client.get(reverse("health")).status_code in (200, 503)


@pytest.fixture
def records_of_two_companies(company, other_company):
    mine = (RemoteCall.objects.create(company=company, service="ticket", method="GET", path="/v1/a", status=200),
            JobRun.objects.create(company=company, name="push"))
    theirs = (RemoteCall.objects.create(company=other_company, service="ticket", method="GET", path="/v1/b",
                                        status=200),
              JobRun.objects.create(company=other_company, name="push"))
    return mine, theirs


def test_another_companys_record_is_not_found(client, administrator, records_of_two_companies):
    (my_call, my_job), (their_call, their_job) = records_of_two_companies
    client.force_login(administrator)
    assert client.get(reverse("core:remotecall_detail", args=[my_call.pk])).status_code == 200
    assert client.get(reverse("core:jobrun_detail", args=[my_job.pk])).status_code == 200
    assert client.get(reverse("core:remotecall_detail", args=[their_call.pk])).status_code == 404
    assert client.get(reverse("core:jobrun_detail", args=[their_job.pk])).status_code == 404
    # Nor listed, nor exported.
    listing = client.get(reverse("core:remotecall_list")).content.decode()
    assert "/v1/a" in listing and "/v1/b" not in listing
    assert "push" in client.get(reverse("core:jobrun_list")).content.decode()


def test_an_administrator_manages_only_the_companies_they_belong_to(client, administrator, company, other_company):
    client.force_login(administrator)
    assert client.get(reverse("core:company_detail", args=[company.pk])).status_code == 200
    assert client.get(reverse("core:company_detail", args=[other_company.pk])).status_code == 404
    assert client.get(reverse("core:company_edit", args=[other_company.pk])).status_code == 404
    response = client.post(reverse("core:company_edit", args=[other_company.pk]), {"name": "taken over"})
    assert response.status_code == 404
    other_company.refresh_from_db()
    assert other_company.name == "Beta Ltd."
    assert other_company.name not in client.get(reverse("core:company_list")).content.decode()


def test_a_members_page_shows_only_the_active_companys_members(client, administrator, company, other_company):
    outsider = make_user("disarida", "accounting", [other_company])
    membership = Membership.objects.get(user=outsider)
    client.force_login(administrator)
    assert "disarida" not in client.get(reverse("core:membership_list")).content.decode()
    assert client.post(reverse("core:membership_delete", args=[membership.pk])).status_code == 404
    assert Membership.objects.filter(pk=membership.pk).exists()


ADMIN_PAGES = ["core:company_list", "core:company_add", "core:remotecall_list", "core:membership_list",
               "core:membership_add", "admin:index", "admin:core_company_changelist", "django_rq:home"]


@pytest.mark.parametrize("role", ["accounting", "manager"])
@pytest.mark.parametrize("url_name", ADMIN_PAGES)
def test_staff_without_the_administrator_role_are_refused(client, company, role, url_name):
    client.force_login(make_user(f"staff-{role}", role, [company]))
    assert client.get(reverse(url_name)).status_code == 403


def test_staff_are_refused_administrator_records_and_bulk_actions(client, accountant, company):
    call = RemoteCall.objects.create(company=company, service="ticket", method="GET", path="/v1/a", status=200)
    membership = Membership.objects.get(user=accountant)
    client.force_login(accountant)
    assert client.get(reverse("core:company_detail", args=[company.pk])).status_code == 403
    assert client.get(reverse("core:company_edit", args=[company.pk])).status_code == 403
    assert client.get(reverse("core:remotecall_detail", args=[call.pk])).status_code == 403
    response = client.post(reverse("core:membership_bulk", args=["remove"]), {"pk": [membership.pk], "confirm": "1"})
    assert response.status_code == 403
    assert Membership.objects.filter(pk=membership.pk).exists()


def test_the_refusal_page_says_what_to_do(client, accountant):
    client.force_login(accountant)
    response = client.get(reverse("core:company_list"), HTTP_ACCEPT_LANGUAGE="tr")
    assert response.status_code == 403
    assert "sistem yöneticisi" in response.content.decode()


def test_the_switcher_refuses_a_company_the_user_does_not_belong_to(client, accountant, other_company):
    client.force_login(accountant)
    response = client.post(reverse("core:switch_company"), {"company": other_company.pk, "next": "/"})
    assert response.status_code == 404
    assert client.session.get(SESSION_KEY) != other_company.pk


@pytest.mark.parametrize("next_url", ["https://evil.example.com/", "//evil.example.com/x", "http:/\\evil.example.com"])
def test_the_switcher_refuses_an_off_site_next_url(client, company, next_url):
    second = Company.objects.create(name="İkinci A.Ş.", api_key="k2")
    user = make_user("iki", "accounting", [company, second])
    client.force_login(user)
    response = client.post(reverse("core:switch_company"), {"company": second.pk, "next": next_url})
    assert response.status_code == 302
    assert response["Location"] == "/"
    assert client.session[SESSION_KEY] == second.pk


def test_the_switcher_needs_a_post_with_a_csrf_token(company, accountant):
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    strict.force_login(accountant)
    assert strict.get(reverse("core:switch_company")).status_code == 405
    assert strict.post(reverse("core:switch_company"), {"company": company.pk}).status_code == 403


def test_check_deploy_with_production_settings_reports_no_issue(tmp_path):
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("DJANGO_", "DATABASE_URL")) and key != "FIELD_ENCRYPTION_KEYS"}
    env.update({
        "DJANGO_SETTINGS_MODULE": "backoffice.settings",
        "DJANGO_PRODUCTION": "1",
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(64),
        "FIELD_ENCRYPTION_KEYS": Fernet.generate_key().decode(),
        "DJANGO_ALLOWED_HOSTS": "example.com",
        "BACKOFFICE_VAR_DIR": str(tmp_path),
    })
    result = subprocess.run([sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "no issues" in output, output


def _settings_env(tmp_path, **extra):
    """A start with nothing but what is given: no DJANGO_* variable, no encryption key."""
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("DJANGO_", "DATABASE_URL")) and key != "FIELD_ENCRYPTION_KEYS"}
    env.update({"DJANGO_SETTINGS_MODULE": "backoffice.settings", "BACKOFFICE_VAR_DIR": str(tmp_path), **extra})
    return env


SHOW_SETTINGS = ("import django; django.setup(); from django.conf import settings as s; "
                 "print(s.DEBUG, s.DEVELOPMENT, s.SESSION_COOKIE_SECURE, s.SECURE_SSL_REDIRECT)")


def _start(env):
    return subprocess.run([sys.executable, "-c", SHOW_SETTINGS], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)


def test_a_start_without_any_flag_is_a_production_start_with_debug_off(tmp_path):
    result = _start(_settings_env(tmp_path, DJANGO_SECRET_KEY=secrets.token_urlsafe(64),
                                  FIELD_ENCRYPTION_KEYS=Fernet.generate_key().decode(), DJANGO_DEBUG="1"))
    assert result.returncode == 0, result.stderr
    # DJANGO_DEBUG=1 cannot switch DEBUG on outside development.
    assert result.stdout.split() == ["False", "False", "True", "True"]


@pytest.mark.parametrize("secret_key, keys, refusal", [
    (None, "fernet", "DJANGO_SECRET_KEY must be set"),
    ("dev-only-insecure-secret-key-change-me-in-production-0123456789abcdef", "fernet",
     "DJANGO_SECRET_KEY must be set"),
    ("random", None, "FIELD_ENCRYPTION_KEYS must be set"),
])
def test_outside_development_the_settings_refuse_made_up_secrets(tmp_path, secret_key, keys, refusal):
    extra = {}
    if secret_key is not None:
        extra["DJANGO_SECRET_KEY"] = secrets.token_urlsafe(64) if secret_key == "random" else secret_key
    if keys is not None:
        extra["FIELD_ENCRYPTION_KEYS"] = Fernet.generate_key().decode()
    result = _start(_settings_env(tmp_path, **extra))
    assert result.returncode != 0 and refusal in result.stderr


def test_development_is_asked_for_explicitly(tmp_path):
    result = _start(_settings_env(tmp_path, DJANGO_DEVELOPMENT="1"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[:2] == ["True", "True"]
