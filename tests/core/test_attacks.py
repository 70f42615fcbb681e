"""Issue 8 replayed: each attack of a company-A administrator (a member of company A only) on company B, on
the installation, and on the sign-in, refused without a 500 and without anything changed."""

import http.server
import socket
import threading
from urllib.parse import urlsplit

import pytest
from django.contrib.auth.models import User
from django.core.files.base import ContentFile
from django.test import Client
from django.urls import NoReverseMatch, get_resolver, reverse

from backoffice.core.middleware import LAST_SEEN_KEY, SESSION_KEY
from backoffice.core.models import Company, JobRun, Membership, RemoteCall
from backoffice.core.platform import client_for
from backoffice.core.registry import registry
from backoffice.remote.companies import CompaniesClient
from backoffice.remote.tickets import EventTicketClient
from backoffice.remote.errors import RemoteError
from backoffice.tickets.models import TicketExport
from tests.conftest import make_user

ALLOWED = "api.platform.example"  # a host of the test allow-list; resolved by the fake resolver below


def page(response):
    return response.content.decode()


@pytest.fixture
def admin_a(client, administrator):
    client.force_login(administrator)
    return administrator


@pytest.fixture
def platform_dns(monkeypatch, settings):
    """ALLOWED resolves to a public address (nothing connects to it); "rebind" names resolve to a public
    address once, then to 127.0.0.1 (DNS rebinding); every other name is resolved for real (localhost
    by /etc/hosts). The resolver is the one point the transport is faked at."""
    real = socket.getaddrinfo
    answers = {}

    def fake(host, port, *args, **kwargs):
        if host == ALLOWED:
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", port))]
        if ".rebind." in f".{host}":
            first = answers.setdefault(host, 0) == 0
            answers[host] += 1
            address = "93.184.216.34" if first else "127.0.0.1"
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", fake)
    settings.PLATFORM_ALLOWED_HOSTS = [ALLOWED, ".rebind.example"]
    return answers


# --- 1. the Django admin and the RQ dashboard --------------------------------------------------------

def test_the_admin_pages_of_another_company_are_refused(client, admin_a, other_company):
    for url in (reverse("admin:core_company_change", args=[other_company.pk]), reverse("admin:index"),
                reverse("admin:core_company_changelist"), reverse("admin:core_membership_changelist")):
        assert client.get(url).status_code == 403, url
    response = client.post(reverse("admin:core_company_change", args=[other_company.pk]),
                           {"name": "Beta", "environment": "test", "auth_url": "https://evil.example/",
                            "credit_quantity": 1000, "auth_method": "api_key", "is_active": ""})
    assert response.status_code == 403
    other_company.refresh_from_db()
    assert (other_company.name, other_company.auth_url, other_company.is_active) == ("Beta Ltd.", "", True)


def test_an_administrator_cannot_make_themself_superuser(client, admin_a):
    url = reverse("admin:auth_user_change", args=[admin_a.pk])
    assert client.get(url).status_code == 403
    response = client.post(url, {"username": admin_a.username, "is_superuser": "on", "is_staff": "on",
                                 "is_active": "on"})
    assert response.status_code == 403
    # Nor through the product's member pages (no such field; one's own roles are not theirs to change).
    own = Membership.objects.get(user=admin_a)
    assert client.post(reverse("core:membership_edit", args=[own.pk]),
                       {"roles": ["administrator"], "is_superuser": "on"}).status_code == 404
    admin_a.refresh_from_db()
    assert not admin_a.is_superuser and not admin_a.is_staff


def test_another_users_password_cannot_be_reset(client, admin_a, company, other_company):
    theirs = make_user("beta-muhasebe", "accounting", [other_company])
    shared = make_user("ortak", "accounting", [company, other_company])
    assert client.get(reverse("admin:auth_user_password_change", args=[theirs.pk])).status_code == 403
    assert client.post(reverse("admin:auth_user_password_change", args=[theirs.pk]),
                       {"password1": "Ele-Gecirildi-2026", "password2": "Ele-Gecirildi-2026"}).status_code == 403
    # A member of both companies: resetting them would open B to A's administrator.
    shared_membership = Membership.objects.get(user=shared, company=company)
    url = reverse("core:membership_password", args=[shared_membership.pk])
    assert client.post(url, {"new_password1": "Ele-Gecirildi-2026",
                             "new_password2": "Ele-Gecirildi-2026"}).status_code == 404
    # B's own member is not even a record of A's.
    their_membership = Membership.objects.get(user=theirs)
    assert client.get(reverse("core:membership_detail", args=[their_membership.pk])).status_code == 404
    assert client.post(reverse("core:membership_password", args=[their_membership.pk]),
                       {"new_password1": "Ele-Gecirildi-2026",
                        "new_password2": "Ele-Gecirildi-2026"}).status_code == 404
    for user in (theirs, shared):
        user.refresh_from_db()
        assert user.check_password("pass-" + user.username)
    detail = page(client.get(reverse("core:membership_detail", args=[shared_membership.pk]),
                             HTTP_ACCEPT_LANGUAGE="en"))
    assert "also works for other companies" in detail and "Beta Ltd." not in detail
    assert 'id="member-password"' not in detail


def test_another_company_cannot_be_switched_off(client, admin_a, other_company):
    assert client.post(reverse("core:company_edit", args=[other_company.pk]),
                       {"name": "Beta Ltd.", "environment": "sandbox", "credit_quantity": 1000,
                        "auth_method": "api_key"}).status_code == 404
    assert client.post(reverse("admin:core_company_change", args=[other_company.pk]), {}).status_code == 403
    other_company.refresh_from_db()
    assert other_company.is_active


def test_the_rq_dashboard_is_for_superusers_only(client, admin_a):
    for path in ("/admin/rq/", "/admin/rq/queues/0/", "/admin/rq/queues/0/empty/", "/admin/rq/stats.json"):
        assert client.get(path).status_code in (403, 404), path
    assert client.post("/admin/rq/queues/0/empty/").status_code in (403, 404)
    admin_a.is_superuser = admin_a.is_staff = True  # an operator, as createsuperuser makes one
    admin_a.save()
    assert client.get("/admin/rq/").status_code == 200


# --- 2. server-side request forgery and secrets sent where the administrator points ------------------

def company_form(company, **overrides):
    data = {"name": company.name, "environment": company.environment, "credit_quantity": company.credit_quantity,
            "is_active": "on", "auth_method": company.auth_method, "api_key": "", "service_username": "",
            "service_password": ""}
    data.update(overrides)
    return data


@pytest.mark.parametrize("url, allow, message", [
    ("https://127.0.0.1/ticket", False, "is not one of the platform"),
    ("https://10.0.0.1/ticket", False, "is not one of the platform"),
    ("https://[::1]/ticket", False, "is not one of the platform"),
    # Allow-listed by a careless operator: the address rule still refuses them.
    ("https://127.0.0.1/ticket", True, "private or local network"),
    ("https://10.0.0.1/ticket", True, "private or local network"),
    ("https://[::1]/ticket", True, "private or local network"),
    ("https://169.254.169.254/latest", True, "private or local network"),
    ("https://localhost/ticket", True, "private or local network"),  # a name that resolves to 127.0.0.1
    (f"https://{ALLOWED}/ticket#", False, "Remove the part from ? or #"),
    (f"https://{ALLOWED}/ticket?x=1", False, "Remove the part from ? or #"),
    (f"https://user:pw@{ALLOWED}/ticket", False, "user name or password"),
    (f"http://{ALLOWED}/ticket", False, "Only https addresses"),
    ("https://evil.example.com/ticket", False, "is not one of the platform"),
])
def test_a_typed_service_url_must_be_an_allowed_public_https_host(client, admin_a, company, platform_dns, settings,
                                                                   url, allow, message):
    if allow:
        host = urlsplit(url).hostname
        settings.PLATFORM_ALLOWED_HOSTS = [*settings.PLATFORM_ALLOWED_HOSTS, host]
    response = client.post(reverse("core:company_edit", args=[company.pk]),
                           company_form(company, ticket_base_url=url, api_key="key-acme-0001"),
                           HTTP_ACCEPT_LANGUAGE="en")
    assert response.status_code == 200
    assert message in page(response) and 'id="id_ticket_base_url_errors"' in page(response)
    company.refresh_from_db()
    assert company.ticket_base_url == ""


def test_http_is_refused_in_production_settings_too(client, admin_a, company, platform_dns, settings):
    settings.DEBUG = False
    settings.PRODUCTION = True
    response = client.post(reverse("core:company_edit", args=[company.pk]),
                           company_form(company, auth_url=f"http://{ALLOWED}/", api_key="key-acme-0001"),
                           HTTP_ACCEPT_LANGUAGE="en")
    assert "Only https addresses" in page(response)
    company.refresh_from_db()
    assert company.auth_url == ""


def test_an_allowed_public_https_url_is_kept(client, admin_a, company, platform_dns):
    response = client.post(reverse("core:company_edit", args=[company.pk]),
                           company_form(company, ticket_base_url=f"https://{ALLOWED}/ticket", api_key="new-key"))
    assert response.status_code == 302
    company.refresh_from_db()
    assert company.base_url("ticket") == f"https://{ALLOWED}/ticket" and company.api_key == "new-key"


@pytest.mark.parametrize("change", [{"ticket_base_url": f"https://{ALLOWED}/ticket"}, {"environment": "test"},
                                    {"crm_base_url": f"https://{ALLOWED}/crm"}])
def test_the_stored_key_never_follows_a_changed_url_or_environment(client, admin_a, company, platform_dns, change):
    response = client.post(reverse("core:company_edit", args=[company.pk]), company_form(company, **change),
                           HTTP_ACCEPT_LANGUAGE="en")
    assert response.status_code == 200
    assert "type “API key” again" in page(response) and 'id="id_api_key_errors"' in page(response)
    company.refresh_from_db()
    assert (company.environment, company.ticket_base_url, company.crm_base_url) == ("sandbox", "", "")
    assert company.api_key == "key-acme-0001"


def test_a_service_user_password_is_typed_again_too(client, admin_a, company, platform_dns):
    company.auth_method, company.api_key = "service_user", ""
    company.service_username, company.service_password = "svc", "stored-password"
    company.save()
    form = company_form(company, service_username="svc", auth_url=f"https://{ALLOWED}/")
    response = client.post(reverse("core:company_edit", args=[company.pk]), form, HTTP_ACCEPT_LANGUAGE="en")
    assert 'id="id_service_password_errors"' in page(response)
    company.refresh_from_db()
    assert company.auth_url == ""


def test_a_name_that_resolves_elsewhere_at_connect_time_is_refused_then(db, company, platform_dns, settings):
    """DNS rebinding: public when the form was saved, 127.0.0.1 when the worker connects."""
    settings.PLATFORM_ALLOWED_HOSTS = [".rebind.example"]
    company.environment, company.ticket_base_url = "test", "https://api.rebind.example/ticket"
    company.full_clean()  # the model accepts it; the form's rules ran on the first (public) answer
    from backoffice.core.forms import CompanyForm

    CompanyForm.validate_typed_url(company.ticket_base_url)  # first answer: public, accepted
    company.save()
    with pytest.raises(RemoteError) as caught:
        client_for(company, EventTicketClient).get("00000000-0000-0000-0000-000000000001")
    assert caught.value.permanent and "127.0.0.1, which is not a public address" in str(caught.value)
    assert platform_dns["api.rebind.example"] == 2  # looked up again at connect time


def test_a_typed_url_whose_host_left_the_allow_list_is_not_called(db, company, settings, platform_dns):
    company.environment, company.ticket_base_url = "test", f"https://{ALLOWED}/ticket"
    company.save()
    settings.PLATFORM_ALLOWED_HOSTS = ["other.platform.example"]
    with pytest.raises(RemoteError, match="not an allowed https host"):
        client_for(company, EventTicketClient).get("00000000-0000-0000-0000-000000000001")


class _Recorder(http.server.BaseHTTPRequestHandler):
    """A stand-in for whatever host an administrator could point a company at: a redirect, an HTML page."""

    seen = []

    def do_GET(self):  # noqa: N802
        self.seen.append((self.path, dict(self.headers)))
        if self.path.startswith("/redirect"):
            self.send_response(302)
            self.send_header("Location", f"http://127.0.0.1:{self.server.server_port}/landing")
            self.end_headers()
            return
        body = b"<!doctype html><html><body><form>Username <input name=username> Password</form></body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def recorder(settings):
    _Recorder.seen = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _point_crm_at(settings, url, path):
    # Operator settings (trusted as set): the environment's URL and the endpoint table.
    environments = {env: dict(urls) for env, urls in settings.PLATFORM_ENVIRONMENTS.items()}
    environments["sandbox"]["crm"] = url
    settings.PLATFORM_ENVIRONMENTS = environments
    settings.PLATFORM_ENDPOINTS = {"crm.usage_report": ("GET", path)}


def test_credentials_never_follow_a_redirect(db, company, recorder, settings):
    _point_crm_at(settings, f"http://127.0.0.1:{recorder.server_port}", "/redirect")
    with pytest.raises(RemoteError, match="redirect") as caught:
        client_for(company, CompaniesClient).usage_report()
    assert caught.value.permanent and caught.value.status == 302
    assert [path for path, _headers in _Recorder.seen] == ["/redirect"]  # /landing never asked for


def test_the_audit_keeps_no_html_page(client, admin_a, company, recorder, settings):
    _point_crm_at(settings, f"http://127.0.0.1:{recorder.server_port}", "/login")
    client_for(company, CompaniesClient).usage_report()
    call = RemoteCall.objects.get(company=company)
    assert call.response_excerpt.startswith("<") and "bytes text/html" in call.response_excerpt
    shown = page(client.get(reverse("core:remotecall_detail", args=[call.pk])))
    assert "Password" not in shown and "&lt;input" not in shown


# --- 3. sign-in throttling ---------------------------------------------------------------------------

def _sign_in(client, username, password, address="203.0.113.7", language="tr"):
    return client.post(reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=address,
                       HTTP_ACCEPT_LANGUAGE=language)


def test_thirty_wrong_passwords_lock_the_name_even_for_the_right_one(db, company, settings):
    user = make_user("hedef", "accounting", [company])
    client = Client()
    statuses = [_sign_in(client, "hedef", f"yanlis-{i}").status_code for i in range(30)]
    limit = settings.AXES_FAILURE_LIMIT
    assert statuses[:limit - 1] == [200] * (limit - 1)  # the form again, with its error
    assert set(statuses[limit:]) == {429}
    locked = _sign_in(client, "hedef", "pass-hedef")
    assert locked.status_code == 429 and "_auth_user_id" not in client.session
    assert "Çok fazla hatalı giriş denemesi" in page(locked)
    assert "Too many failed sign-in attempts" in page(_sign_in(client, "hedef", "pass-hedef", language="en"))
    # From another address the name stays locked (per user name) ...
    assert _sign_in(Client(), "hedef", "pass-hedef", address="198.51.100.9").status_code == 429
    # ... and an administrator of the company sees it and may lift it.
    admin = make_user("yonetim2", "administrator", [company])
    admin_client = Client()
    admin_client.force_login(admin)
    membership = Membership.objects.get(user=user)
    detail = page(admin_client.get(reverse("core:membership_detail", args=[membership.pk])))
    assert 'id="member-locked"' in detail
    admin_client.post(reverse("core:membership_unlock", args=[membership.pk]))
    assert _sign_in(Client(), "hedef", "pass-hedef", address="198.51.100.9").status_code == 302


def test_one_address_trying_many_names_is_locked_too(db, company, settings):
    make_user("gercek", "accounting", [company])
    client = Client()
    for i in range(settings.AXES_FAILURE_LIMIT):
        _sign_in(client, f"tahmin-{i}", "yanlis", address="203.0.113.99")
    assert _sign_in(client, "gercek", "pass-gercek", address="203.0.113.99").status_code == 429
    assert _sign_in(Client(), "gercek", "pass-gercek", address="203.0.113.100").status_code == 302


# --- 5. exports only through their views ---------------------------------------------------------------

def test_no_file_is_served_under_media(client, admin_a, other_company, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    export = TicketExport.objects.create(company=other_company, kind="event", export_id="E-1", state="ready")
    export.file.save("x.zip", ContentFile(b"PK\x05\x06" + b"\0" * 18), save=True)
    name = export.file.name
    for path in (f"/media/{name}", "/media/", "/media/ticket-exports/"):
        assert client.get(path).status_code == 404, path
    assert client.get(reverse("tickets:ticketexport_download", args=[export.pk])).status_code == 404


def test_a_kept_export_has_a_random_name_and_downloads_under_its_own(client, company, accountant, settings,
                                                                      tmp_path):
    from backoffice.core.exports import export_keep

    settings.MEDIA_ROOT = tmp_path
    export = TicketExport.objects.create(company=company, kind="event", export_id="E-2", state="available",
                                         file_name="biletler.zip")
    export_keep(export=export, content=b"PK\x05\x06" + b"\0" * 18)
    stored = export.file.name.rsplit("/", 1)[-1]
    assert stored != "biletler.zip" and len(stored) == 36  # 32 hex characters + ".zip": nothing to guess
    client.force_login(accountant)
    response = client.get(reverse("tickets:ticketexport_download", args=[export.pk]))
    assert response.status_code == 200 and 'filename="biletler.zip"' in response["Content-Disposition"]


# --- 7. malformed ids -----------------------------------------------------------------------------------

BAD_IDS = ["abc", "²", "1" * 30, "-1", "0", " 1", "1.0", ""]


@pytest.mark.parametrize("value", BAD_IDS)
def test_the_switcher_refuses_a_malformed_company(client, admin_a, company, value):
    response = client.post(reverse("core:switch_company"), {"company": value, "next": "/"})
    assert response.status_code == 404
    assert client.session.get(SESSION_KEY) in (None, company.pk)


def registered_views():
    """The generic-view registry, filled: the apps register their views when the URLconf is imported."""
    get_resolver().url_patterns
    return registry["model_views"]


@pytest.fixture
def operator_of_company(client, company):
    """A signed-in superuser working for the company: every view and every bulk action is theirs."""
    operator = make_user("operator")
    operator.is_superuser = True
    operator.save()
    Membership.objects.create(user=operator, company=company)
    client.force_login(operator)
    return operator


def _url(name, **kwargs):
    """The URL of a registered view, None when its app's URLs are not mounted (tests' own test app)."""
    try:
        return reverse(name, **kwargs)
    except NoReverseMatch:
        return None


def _bulk_urls():
    """Every bulk view of the registry and every bulk action another app registered (passenger lists)."""
    for (app_label, model_name), views in registered_views().items():
        view = views.get("bulk")
        for action in getattr(view, "actions", {}):
            url = _url(f"{app_label}:{model_name}_bulk", kwargs={"action": action})
            if url:
                yield url
    for actions in registry["bulk_actions"].values():
        for bulk_action in actions.values():
            yield reverse(bulk_action.url_name)


@pytest.mark.parametrize("value", ["²", "1" * 30, "9" * 19, "-5", "abc"])
def test_every_bulk_view_ignores_malformed_ids(client, operator_of_company, value):
    urls = sorted(set(_bulk_urls()))
    assert len(urls) >= 8
    members = Membership.objects.count()
    for url in urls:
        for data in ({"pk": [value]}, {"pk": [value], "confirm": "1"}, {"pk": [value, value]}):
            response = client.post(url, data)
            assert response.status_code in (200, 302, 400, 404), (url, data, response.status_code)
    assert Membership.objects.count() == members


def test_detail_urls_with_an_overlong_id_are_not_found(client, admin_a):
    checked = 0
    for (app_label, model_name), views in registered_views().items():
        for action in ("detail", "edit", "delete"):
            url = _url(f"{app_label}:{model_name}_{action}", args=[1]) if action in views else None
            if url:
                assert client.get(url.replace("/1/", "/" + "1" * 30 + "/")).status_code == 404
                checked += 1
    assert checked >= 10


# --- 8. members by exact name, and no role no page --------------------------------------------------------

def test_the_add_member_form_lists_nobody(client, admin_a, other_company):
    make_user("beta-gizli", "accounting", [other_company])
    form = page(client.get(reverse("core:membership_add")))
    assert "beta-gizli" not in form and "<select" not in form
    response = client.post(reverse("core:membership_add"), {"username": "Beta-Gizli"}, HTTP_ACCEPT_LANGUAGE="en")
    assert "No active user has this user name" in page(response)  # exact, capitals count
    assert not Membership.objects.filter(user__username="beta-gizli", company__name="Acme A.Ş.").exists()


def test_a_new_user_is_created_for_the_active_company_only(client, admin_a, company):
    response = client.post(reverse("core:member_create"), {
        "username": "yeni.kullanici", "first_name": "Yeni", "last_name": "Kullanıcı", "email": "yeni@acme.example",
        "roles": ["accounting"], "password1": "Uzun-Bir-Parola-2026", "password2": "Uzun-Bir-Parola-2026",
        "opened_for": company.pk})
    assert response.status_code == 302
    user = User.objects.get(username="yeni.kullanici")
    assert list(Membership.objects.filter(user=user).values_list("company", flat=True)) == [company.pk]
    assert set(user.groups.values_list("name", flat=True)) == {"accounting"} and not user.is_staff
    # Their roles and password are this company's to manage now.
    membership = Membership.objects.get(user=user)
    client.post(reverse("core:membership_edit", args=[membership.pk]), {"roles": ["manager"]})
    assert set(user.groups.values_list("name", flat=True)) == {"manager"}
    client.post(reverse("core:membership_password", args=[membership.pk]),
                {"new_password1": "Baska-Bir-Parola-77", "new_password2": "Baska-Bir-Parola-77"})
    user.refresh_from_db()
    assert user.check_password("Baska-Bir-Parola-77")


def test_a_weak_first_password_is_refused_on_the_field(client, admin_a):
    response = client.post(reverse("core:member_create"), {
        "username": "zayif", "email": "z@acme.example", "roles": ["accounting"], "password1": "123",
        "password2": "123"}, HTTP_ACCEPT_LANGUAGE="en")
    assert response.status_code == 200 and "too short" in page(response)
    assert not User.objects.filter(username="zayif").exists()


def test_a_member_without_a_role_sees_nothing(client, company):
    JobRun.objects.create(company=company, name="Gizli iş adı")
    nobody = make_user("rolsuz", None, [company])
    client.force_login(nobody)
    for url in (reverse("core:dashboard"), reverse("core:jobrun_list"), reverse("tickets:ticket_list")):
        response = client.get(url, HTTP_ACCEPT_LANGUAGE="en")
        assert response.status_code == 403, url
        text = page(response)
        assert "has no role yet" in text and "Acme" not in text and "Gizli" not in text
    assert client.post(reverse("logout")).status_code == 302


# --- 4. safe by default: idle sessions, shared computers, the policy header --------------------------------

def test_an_idle_session_ends_and_background_refreshes_do_not_keep_it(client, accountant, settings):
    settings.SESSION_IDLE_SECONDS = 3600
    client.force_login(accountant)
    assert client.get(reverse("core:dashboard")).status_code == 200
    session = client.session
    session[LAST_SEEN_KEY] -= 1800
    session.save()
    seen = client.session[LAST_SEEN_KEY]
    client.get(reverse("core:jobrun_list"), HTTP_X_BACKGROUND_REFRESH="1", HTTP_HX_REQUEST="true")
    assert client.session[LAST_SEEN_KEY] == seen  # a page refreshing itself is not the user
    session = client.session
    session[LAST_SEEN_KEY] -= 1801
    session.save()
    response = client.get(reverse("core:dashboard"))
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
    assert "_auth_user_id" not in client.session


def test_a_shared_computer_ends_the_session_with_the_browser(db, company):
    make_user("paylasimli", "accounting", [company])
    client = Client()
    response = client.post(reverse("login"), {"username": "paylasimli", "password": "pass-paylasimli",
                                              "shared_computer": "on"}, REMOTE_ADDR="203.0.113.50")
    assert response.status_code == 302 and client.session.get_expire_at_browser_close()
    other = Client()
    other.post(reverse("login"), {"username": "paylasimli", "password": "pass-paylasimli"},
               REMOTE_ADDR="203.0.113.51")
    assert not other.session.get_expire_at_browser_close()


def test_every_page_carries_the_content_security_policy(client, accountant):
    client.force_login(accountant)
    for url in (reverse("core:dashboard"), reverse("core:jobrun_list"), reverse("tickets:ticket_list")):
        policy = client.get(url)["Content-Security-Policy"]
        assert "script-src 'self'" in policy and "style-src 'self'" in policy
        assert "unsafe-inline" not in policy and "frame-ancestors 'none'" in policy
    assert "script-src 'self'" in Client().get(reverse("login"))["Content-Security-Policy"]


@pytest.mark.parametrize("value", ["²", "1" * 30, "-1", "abc"])
def test_every_list_filter_takes_malformed_values_without_an_error(client, operator_of_company, value):
    checked = 0
    for (app_label, model_name), views in registered_views().items():
        view = views.get("list")
        url = _url(f"{app_label}:{model_name}_list") if view is not None and view.filterset is not None else None
        if url is None:
            continue
        params = {name: value for name in view.filterset.base_filters}
        params.update(page=value, per_page=value, sort=value)
        for query in (params, {**params, "export": "xlsx"}):
            response = client.get(url, query)
            assert response.status_code == 200, (url, query, response.status_code)
        checked += 1
    assert checked >= 8


def test_a_production_start_offers_no_sandbox_environment(client, admin_a, company, settings):
    settings.SANDBOX_ENABLED = False  # production without SANDBOX_URL: nothing listens there for us
    form = page(client.get(reverse("core:company_add")))
    assert 'value="sandbox"' not in form and 'value="test" selected' in form
    response = client.post(reverse("core:company_add"), company_form(company, name="Yeni", environment="sandbox",
                                                                     api_key="k"), HTTP_ACCEPT_LANGUAGE="en")
    assert response.status_code == 200 and 'id="id_environment_errors"' in page(response)
    # A company already on the sandbox keeps its choice on the form.
    assert 'value="sandbox"' in page(client.get(reverse("core:company_edit", args=[company.pk])))


def test_everyone_changes_their_own_password_with_the_old_one(client, accountant):
    client.force_login(accountant)
    url = reverse("password_change")
    wrong = client.post(url, {"old_password": "not-it", "new_password1": "Yeni-Parola-2026!",
                              "new_password2": "Yeni-Parola-2026!"}, HTTP_ACCEPT_LANGUAGE="en")
    assert wrong.status_code == 200 and 'id="id_old_password_errors"' in page(wrong)
    accountant.refresh_from_db()
    assert accountant.check_password("pass-muhasebe")
    done = client.post(url, {"old_password": "pass-muhasebe", "new_password1": "Yeni-Parola-2026!",
                             "new_password2": "Yeni-Parola-2026!"})
    assert done.status_code == 302
    accountant.refresh_from_db()
    assert accountant.check_password("Yeni-Parola-2026!")
    assert client.get(reverse("core:dashboard")).status_code == 200  # this session goes on


def test_a_new_user_form_opened_for_one_company_saves_nothing_after_a_switch(client, admin_a, company):
    second = Company.objects.create(name="İkinci A.Ş.", api_key="k2")
    Membership.objects.create(user=admin_a, company=second)
    form = page(client.get(reverse("core:member_create")))
    assert f'name="opened_for" value="{company.pk}"' in form
    client.post(reverse("core:switch_company"), {"company": second.pk, "next": "/"})  # the other tab
    data = {"username": "yanlis.sirket", "email": "y@acme.example", "roles": ["accounting"],
            "password1": "Uzun-Bir-Parola-2026", "password2": "Uzun-Bir-Parola-2026", "opened_for": company.pk}
    response = client.post(reverse("core:member_create"), data, HTTP_ACCEPT_LANGUAGE="en")
    assert response.status_code == 200 and "in another tab" in page(response) and "İkinci A.Ş." in page(response)
    assert not User.objects.filter(username="yanlis.sirket").exists()
    assert f'name="opened_for" value="{second.pk}"' in page(response)
    # Sent again as the page now stands (for the company shown): created there, once.
    client.post(reverse("core:member_create"), {**data, "opened_for": second.pk})
    client.post(reverse("core:member_create"), {**data, "opened_for": second.pk})  # Back and send again
    assert list(Membership.objects.filter(user__username="yanlis.sirket").values_list("company", flat=True)) == [
        second.pk]


def test_the_new_user_page_without_a_company_is_refused_not_an_error(client, db):
    lonely = make_user("yalniz", "administrator")
    client.force_login(lonely)
    assert client.get(reverse("core:member_create")).status_code == 403
