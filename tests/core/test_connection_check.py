"""A company's connection (issue 9, point 3): credentials checked for printable ASCII on save, the "Test the
connection" action of the company page against the sandbox over HTTP, and push failures worded by where they
come from (the platform's refusal, the company's credentials, no answer, or our own side)."""

import copy
import socket

import pytest
from django.urls import reverse
from django.utils import translation

from backoffice.core.choices import SyncState
from backoffice.core.models import Company, ErrorSource
from backoffice.remote.errors import AuthenticationFailed, CredentialsUnsendable, RemoteError
from backoffice.tickets.choices import TicketStatus
from tests.conftest import make_user
from tests.tickets.test_services import new_event, push

pytestmark = pytest.mark.django_db

TR_CREDENTIALS = ("Platform şirketin kimlik bilgilerini kabul etmedi (API anahtarı veya servis kullanıcısı). Bir "
                  "yönetici şirket sayfasında bilgileri düzeltip bağlantıyı test etmelidir.")
EN_CREDENTIALS = ("The platform did not accept the company's credentials (API key or service user). An administrator "
                  "must correct them on the company page and test the connection.")


def html(response):
    return response.content.decode()


def push_as_worker(job, *args):
    """Run a push job's body here as the worker runs it: in the default language (a request of an earlier
    test may have left another one active in this thread)."""
    from django.conf import settings

    with translation.override(settings.LANGUAGE_CODE):
        return job(*args)


def company_form(**overrides):
    data = {"name": "Yeni Şirket", "environment": "sandbox", "credit_quantity": 1000, "is_active": "on",
            "auth_method": "api_key", "api_key": "", "service_username": "", "service_password": ""}
    data.update(overrides)
    return data


@pytest.fixture
def admin_of(db):
    def make(company, username="yonetim"):
        return make_user(username, "administrator", [company])

    return make


def connection_url(company):
    return reverse("core:company_connection_test", args=[company.pk])


def detail_url(company):
    return reverse("core:company_detail", args=[company.pk])


# --- credentials on save ---------------------------------------------------------------------------------

@pytest.mark.parametrize("field,value,extra", [
    ("api_key", "anahtar-ş1", {}),
    ("api_key", "“kopya”", {}),
    ("service_username", "servis-kullanıcı", {"auth_method": "service_user", "service_password": "pw-1"}),
    ("service_password", "parola\u0131", {"auth_method": "service_user", "service_username": "svc"}),
])
def test_non_ascii_credentials_are_refused_on_save(client, administrator, field, value, extra):
    client.force_login(administrator)
    page = html(client.post(reverse("core:company_add"), company_form(**{field: value, **extra})))
    assert f'id="id_{field}_errors"' in page
    assert "Yalnızca yazdırılabilir ASCII karakterler" in page and "portalından yeniden kopyalayın" in page
    assert not Company.objects.filter(name="Yeni Şirket").exists()
    english = html(client.post(reverse("core:company_add"), company_form(**{field: value, **extra}),
                               HTTP_ACCEPT_LANGUAGE="en"))
    assert "Only printable ASCII characters" in english and "Copy the value again from the platform" in english


def test_a_stored_credential_that_cannot_be_sent_must_be_typed_again(client, administrator, company):
    Company.objects.filter(pk=company.pk).update(api_key="eski-anahtar-ğ")  # saved before the rule
    client.force_login(administrator)
    response = client.post(reverse("core:company_edit", args=[company.pk]), company_form(name="Acme"))
    assert response.status_code == 200
    assert 'id="id_api_key_errors"' in html(response) and "Değeri yeniden yazın" in html(response)
    response = client.post(reverse("core:company_edit", args=[company.pk]), company_form(name="Acme", api_key="k-1"))
    assert response.status_code == 302
    company.refresh_from_db()
    assert company.api_key == "k-1"


def test_ascii_credentials_with_signs_are_accepted(client, administrator):
    client.force_login(administrator)
    response = client.post(reverse("core:company_add"), company_form(api_key="Ab-9_x.y~z+/="))
    assert response.status_code == 302
    assert Company.objects.get(name="Yeni Şirket").api_key == "Ab-9_x.y~z+/="


# --- the connection test: who may run it ------------------------------------------------------------------

def test_only_a_post_by_an_administrator_of_the_company(client, company, other_company, accountant, manager, admin_of):
    administrator = admin_of(company)
    client.force_login(administrator)
    assert client.get(connection_url(company)).status_code == 405
    assert client.post(connection_url(other_company)).status_code == 404  # not one of theirs
    for user in (accountant, manager):
        client.force_login(user)
        assert client.post(connection_url(company)).status_code == 403
    assert Company.objects.filter(connection_checked_at__isnull=False).count() == 0


def test_the_test_needs_the_csrf_token(company, admin_of):
    from django.test import Client

    browser = Client(enforce_csrf_checks=True)
    browser.force_login(admin_of(company))
    assert browser.post(connection_url(company)).status_code == 403
    page = html(browser.get(detail_url(company)))
    assert f'action="{connection_url(company)}"' in page and 'name="csrfmiddlewaretoken"' in page


# --- the connection test against the sandbox ---------------------------------------------------------------

def test_a_working_connection(client, sandbox, sandbox_company, admin_of):
    client.force_login(admin_of(sandbox_company))
    page = html(client.get(detail_url(sandbox_company)))
    assert "Henüz test edilmedi" in page and "Bağlantıyı test et" in page
    response = client.post(connection_url(sandbox_company))
    assert response.status_code == 302 and response["Location"] == detail_url(sandbox_company) + "#connection"
    sandbox_company.refresh_from_db()
    assert [c["outcome"] for c in sandbox_company.connection_check["checks"]] == ["ok", "ok", "ok"]
    # The usage report the test read (one call per 15 minutes) is kept, not thrown away.
    from backoffice.subcompanies.models import UsageSnapshot

    assert UsageSnapshot.objects.filter(company=sandbox_company).count() == 1
    page = html(client.get(response["Location"]))
    assert "bağlantısı çalışıyor" in page and 'data-ok="true"' in page
    assert page.count('data-outcome="ok"') == 3 and "Bilet servisi" in page and "Şirket yönetimi servisi" in page
    when = translation.override("tr")
    with when:
        from django.utils import timezone

        stamp = timezone.localtime(sandbox_company.connection_checked_at).strftime("%d.%m.%Y %H:%M")
    assert f"Son test: {stamp}." in page


def test_a_wrong_api_key_is_said_in_the_users_language(client, sandbox, sandbox_company, admin_of):
    Company.objects.filter(pk=sandbox_company.pk).update(api_key="sbx-wrong-key")
    client.force_login(admin_of(sandbox_company))
    page = html(client.post(connection_url(sandbox_company), follow=True))
    assert 'data-ok="false"' in page and "bağlantı testi sorunlar buldu" in page
    assert 'data-service="auth" data-outcome="credentials"' in page
    assert "Platform API anahtarını reddetti" in page and "API yönetimi modülünden" in page
    assert 'data-service="crm" data-outcome="skipped"' in page and "Denenmedi" in page
    assert "The API key is not valid" not in page and "Unauthorized" not in page  # not the platform's English
    english = html(client.get(detail_url(sandbox_company), HTTP_ACCEPT_LANGUAGE="en"))
    assert "The platform refused the API key. Copy the key again" in english and "credentials refused" in english


def test_a_wrong_service_password(client, sandbox, sandbox_service_user_company, admin_of):
    company = sandbox_service_user_company
    Company.objects.filter(pk=company.pk).update(service_password="not-the-password")
    client.force_login(admin_of(company))
    page = html(client.post(connection_url(company), follow=True))
    assert "Servis kullanıcısı (token)" in page and "servis kullanıcısının adını veya parolasını reddetti" in page


def test_a_service_user_company_without_api_key_skips_company_management(client, sandbox,
                                                                        sandbox_service_user_company, admin_of):
    """Company management takes only an API key (document 1, section 5, rule 2): no bearer token goes there."""
    company = sandbox_service_user_company
    client.force_login(admin_of(company))
    page = html(client.post(connection_url(company), follow=True))
    assert 'data-service="crm" data-outcome="no_api_key"' in page and "API anahtarı yok" in page
    assert 'data-service="ticket" data-outcome="ok"' in page and 'data-ok="true"' in page
    assert not [row for row in sandbox.stats()["requests"] if row["path"].startswith("/crm/")]


def test_a_credential_that_cannot_be_sent_is_a_result_not_a_500(client, sandbox, sandbox_company, admin_of):
    Company.objects.filter(pk=sandbox_company.pk).update(api_key="sbx-ışık")
    client.force_login(admin_of(sandbox_company))
    page = html(client.post(connection_url(sandbox_company), follow=True))
    assert 'data-outcome="unsendable"' in page and "gönderilemeyen karakterler" in page
    assert "platforma hiçbir şey gönderilmedi" in page
    assert not sandbox.stats()["requests"]


def test_an_unreachable_service_and_a_refused_typed_url_are_results(client, sandbox, sandbox_company, admin_of,
                                                                     settings):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}/ticket"
    environments = copy.deepcopy(settings.PLATFORM_ENVIRONMENTS)
    environments["sandbox"]["ticket"] = dead
    settings.PLATFORM_ENVIRONMENTS = environments
    # A service URL typed on the company, of a host the settings do not allow: our guard refuses to call it.
    Company.objects.filter(pk=sandbox_company.pk).update(crm_base_url="https://crm.not-allowed.invalid/crm")
    client.force_login(admin_of(sandbox_company))
    response = client.post(connection_url(sandbox_company), follow=True)
    assert response.status_code == 200
    page = html(response)
    assert 'data-service="ticket" data-outcome="unreachable"' in page and "Servise bağlantı kurulamadı" in page
    assert 'data-service="crm" data-outcome="blocked"' in page and "Arka ofis bu okumayı göndermedi" in page


def test_a_broken_configuration_is_a_result_not_a_500(client, company, admin_of):
    Company.objects.filter(pk=company.pk).update(environment="nowhere")
    client.force_login(admin_of(company))
    response = client.post(connection_url(company))
    assert response.status_code == 302
    company.refresh_from_db()
    assert company.connection_check["checks"][0]["outcome"] == "error"


# --- push failures by source -----------------------------------------------------------------------------------

def test_a_ticket_pushed_with_a_wrong_key_says_so_in_turkish(client, sandbox, sandbox_company, accountant):
    sandbox.configure(ticket_processing_seconds=0)
    Company.objects.filter(pk=sandbox_company.pk).update(api_key="sbx-wrong-key")
    sandbox_company.refresh_from_db()
    ticket = new_event(sandbox_company, status=TicketStatus.QUEUED)
    with pytest.raises(AuthenticationFailed):
        push_as_worker(push, ticket)
    assert ticket.sync_state == SyncState.FAILED and ticket.last_error_source == ErrorSource.CREDENTIALS
    assert ticket.last_error == TR_CREDENTIALS  # written by the worker in the default language
    user = make_user("muhasebe2", "accounting", [sandbox_company])
    client.force_login(user)
    page = html(client.get(ticket.get_absolute_url()))
    assert "Şirketin kimlik bilgileri reddedildi" in page and TR_CREDENTIALS in page
    assert "Platform reddetti" not in page and "Unauthorized" not in page
    english = html(client.get(ticket.get_absolute_url(), HTTP_ACCEPT_LANGUAGE="en"))
    assert "The company&#x27;s credentials were refused" in english
    assert EN_CREDENTIALS.replace("'", "&#x27;") in english  # the reader's language, not the worker's


def test_a_key_that_cannot_be_sent_is_not_the_platforms_refusal(client, sandbox, sandbox_company):
    Company.objects.filter(pk=sandbox_company.pk).update(api_key="sbx-anahtarş")
    sandbox_company.refresh_from_db()
    ticket = new_event(sandbox_company, status=TicketStatus.QUEUED)
    with pytest.raises(CredentialsUnsendable):
        push_as_worker(push, ticket)
    assert ticket.sync_state == SyncState.FAILED and ticket.last_error_source == ErrorSource.LOCAL
    assert "UnicodeEncodeError" not in ticket.last_error and "gönderilemeyen karakterler" in ticket.last_error
    client.force_login(make_user("muhasebe2", "accounting", [sandbox_company]))
    page = html(client.get(ticket.get_absolute_url()))
    assert "Gönderim platforma ulaşılmadan, burada başarısız oldu" in page
    assert "Platform reddetti" not in page
    assert not sandbox.stats()["requests"]


def test_the_platforms_own_refusal_keeps_its_heading(client, sandbox, sandbox_company):
    sandbox.add_fault(path="/ticket/v1/event-ticket", method="POST", error_status=422, error_rate=1, remaining=1)
    ticket = new_event(sandbox_company, status=TicketStatus.QUEUED)
    with pytest.raises(RemoteError):
        push_as_worker(push, ticket)
    assert ticket.sync_state == SyncState.FAILED and ticket.last_error_source == ErrorSource.PLATFORM
    client.force_login(make_user("muhasebe2", "accounting", [sandbox_company]))
    page = html(client.get(ticket.get_absolute_url(), HTTP_ACCEPT_LANGUAGE="en"))
    assert "The platform refused" in page and "Injected fault" in page


def test_no_answer_is_not_a_refusal(client, sandbox, sandbox_company, settings):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}/ticket"
    environments = copy.deepcopy(settings.PLATFORM_ENVIRONMENTS)
    environments["sandbox"]["ticket"] = dead
    settings.PLATFORM_ENVIRONMENTS = environments
    ticket = new_event(sandbox_company, status=TicketStatus.QUEUED)
    with pytest.raises(RemoteError):
        push_as_worker(push, ticket)
    # Outside a job the record waits in the queue for the sweep, with what happened.
    assert ticket.sync_state == SyncState.QUEUED and ticket.last_error_source == ErrorSource.NETWORK
    client.force_login(make_user("muhasebe2", "accounting", [sandbox_company]))
    page = html(client.get(ticket.get_absolute_url(), HTTP_ACCEPT_LANGUAGE="en"))
    assert "No answer from the platform" in page and "The platform refused" not in page


def test_a_sub_company_refused_for_the_credentials_is_not_the_platforms_refusal(client, sandbox, admin_of):
    from backoffice.subcompanies import push as subcompany_push
    from backoffice.subcompanies import services as subcompany_services
    from tests.subcompanies.conftest import subcompany_data

    company = Company.objects.create(name="Dağıtıcı A.Ş.", environment="sandbox", api_key="sbx-wrong-key")
    record = subcompany_services.create_subcompany(company=company, **subcompany_data())
    with pytest.raises(AuthenticationFailed):
        push_as_worker(subcompany_push.subcompany_push, record.pk)
    record.refresh_from_db()
    assert record.sync_state == SyncState.FAILED and record.last_error_source == ErrorSource.CREDENTIALS
    client.force_login(admin_of(company))
    page = html(client.get(reverse("subcompanies:subcompany_detail", args=[record.pk])))
    assert "Şirketin kimlik bilgileri reddedildi" in page and TR_CREDENTIALS in page
    assert "Platform bu şirketi oluşturmayı reddetti" not in page


def test_the_sources_of_remote_and_of_the_model_agree():
    from backoffice.remote import errors

    assert set(ErrorSource.values) == set(errors.SOURCES)


def test_no_answer_is_said_in_the_users_language_not_as_a_class_name():
    from backoffice.core.failures import failure
    from backoffice.remote.errors import NETWORK, RemoteError

    exc = RemoteError("ticket.create: cannot reach the platform (ConnectionError)", source=NETWORK)
    assert exc.user_message() == "ticket.create: cannot reach the platform (ConnectionError)"  # not "RemoteError"
    with translation.override("tr"):
        text, source = failure(exc)
    assert source == NETWORK and text.startswith("Platforma ulaşılamadı") and "(ticket.create: cannot" in text
