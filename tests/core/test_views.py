"""The pages of core: dashboard, companies, members, remote-call audit, background work, the shell
(menu, switcher, language, messages) and the error pages."""

from io import BytesIO

import pytest
from django.contrib.auth.models import User
from django.test import RequestFactory
from django.urls import reverse
from openpyxl import load_workbook

from backoffice.core.choices import JobStatus
from backoffice.core.models import Company, JobRun, Membership, RemoteCall
from tests.conftest import form_post, make_user


def html(response):
    return response.content.decode()


# --- shell ----------------------------------------------------------------------------------------

def test_login_page_is_turkish_with_a_language_switch(client):
    page = html(client.get(reverse("login")))
    assert "Giriş yap" in page and "Kullanıcı adı" in page and "Parola" in page
    assert f'action="{reverse("set_language")}"' in page and 'value="en"' in page
    assert "Türkçe" in page and "English" in page


def test_sign_in_and_out(client, accountant):
    response = client.post(reverse("login"), {"username": "muhasebe", "password": "pass-muhasebe"})
    assert response["Location"] == reverse("core:dashboard")
    page = html(client.get(reverse("core:dashboard")))
    assert 'action="/logout/"' in page and 'method="post"' in page
    response = client.post(reverse("logout"))
    assert response["Location"] == reverse("login")
    assert client.get(reverse("core:dashboard")).status_code == 302


def test_wrong_password_is_said_on_the_login_page(client, accountant):
    page = html(client.post(reverse("login"), {"username": "muhasebe", "password": "wrong"}))
    assert "alert-danger" in page


def test_english_on_request(client, accountant):
    client.force_login(accountant)
    client.post(reverse("set_language"), {"language": "en", "next": "/"})
    page = html(client.get(reverse("core:dashboard")))
    assert "Dashboard" in page and 'lang="en"' in page
    client.post(reverse("set_language"), {"language": "tr", "next": "/"})
    assert "Gösterge paneli" in html(client.get(reverse("core:dashboard")))


def test_menu_by_role(client, accountant, administrator):
    client.force_login(accountant)
    page = html(client.get(reverse("core:dashboard")))
    assert reverse("core:jobrun_list") in page
    # Every domain has landed: each entry is a link, none greyed as coming soon.
    assert reverse("dispatch:dispatchnote_list") in page and "yakında" not in page
    assert reverse("core:company_list") not in page and "/admin/rq/" not in page
    client.force_login(administrator)
    page = html(client.get(reverse("core:dashboard")))
    for url in (reverse("core:company_list"), reverse("core:remotecall_list"), reverse("core:membership_list")):
        assert f'href="{url}"' in page
    # The Django admin and the RQ dashboard see every company: operators (superusers) only.
    assert 'href="/admin/rq/"' not in page and 'href="/admin/"' not in page
    administrator.is_superuser = True
    administrator.save()
    page = html(client.get(reverse("core:dashboard")))
    assert 'href="/admin/rq/"' in page and 'href="/admin/"' in page


def test_htmx_sends_the_csrf_token(client, accountant):
    client.force_login(accountant)
    page = html(client.get(reverse("core:dashboard")))
    assert "hx-headers='{\"X-CSRFToken\": \"" in page
    assert "/static/vendor/htmx/htmx.min.js" in page and "/static/vendor/bootstrap/js/bootstrap.bundle.min.js" in page


def test_company_switcher_lists_my_companies_and_switches(client, company, other_company):
    third = Company.objects.create(name="Gizli A.Ş.", api_key="k3")
    user = make_user("iki", "accounting", [company, other_company])
    client.force_login(user)
    page = html(client.get(reverse("core:jobrun_list")))
    assert f'name="company" value="{company.pk}"' in page
    assert f'name="company" value="{other_company.pk}"' in page
    assert f'value="{third.pk}"' not in page
    assert 'name="next" value="/jobs/"' in page  # back to the same page after switching
    response = client.post(reverse("core:switch_company"), {"company": other_company.pk, "next": "/jobs/"},
                           follow=True)
    assert response.redirect_chain[-1][0] == "/jobs/"
    assert "Beta Ltd." in html(response) and "adına çalışıyorsunuz" in html(response)
    assert response.context["active_company"] == other_company


def test_switching_from_a_record_page_goes_to_the_dashboard(client, administrator, company):
    call = RemoteCall.objects.create(company=company, service="ticket", method="GET", path="/v1/a", status=200)
    client.force_login(administrator)
    page = html(client.get(reverse("core:remotecall_detail", args=[call.pk])))
    assert 'name="next" value="/"' in page  # the record would be a 404 in the other company


# --- dashboard ------------------------------------------------------------------------------------

def test_dashboard_of_a_user_without_company(client, db):
    user = make_user("yalniz", "accounting")
    client.force_login(user)
    page = html(client.get(reverse("core:dashboard")))
    assert "Henüz hiçbir şirket adına çalışmıyorsunuz" in page
    assert "sistem yöneticisine başvurun" in page


def test_dashboard_shows_the_company_and_recent_work(client, accountant, company, other_company):
    company.credit_quantity = 250_000
    company.save()
    JobRun.objects.create(company=company, name="Bilet gönderimi", status=JobStatus.FAILED)
    JobRun.objects.create(company=company, name="Bilet gönderimi", status=JobStatus.SUCCEEDED)
    JobRun.objects.create(company=other_company, name="Başkasının işi", status=JobStatus.FAILED)
    RemoteCall.objects.create(company=company, service="ticket", method="GET", path="/v1/secret-path", status=200)
    client.force_login(accountant)
    page = html(client.get(reverse("core:dashboard")))
    assert "Acme A.Ş." in page and "T3" in page and "250.000" in page  # Turkish thousands separator
    assert "Bilet gönderimi" in page and "Başkasının işi" not in page
    assert f"{reverse('core:jobrun_list')}?status=failed" in page
    assert "/v1/secret-path" not in page  # the platform calls are for administrators


def test_dashboard_shows_the_last_calls_to_administrators(client, administrator, company):
    RemoteCall.objects.create(company=company, service="ticket", method="GET", path="/v1/tickets", status=503)
    client.force_login(administrator)
    page = html(client.get(reverse("core:dashboard")))
    assert "/v1/tickets" in page and "503" in page and "1 başarısız" in page


# --- companies ------------------------------------------------------------------------------------

def company_form(**overrides):
    data = {"name": "Yeni Şirket", "environment": "sandbox", "credit_quantity": 1000, "is_active": "on",
            "auth_method": "api_key", "api_key": "", "service_username": "", "service_password": ""}
    data.update(overrides)
    return data


def test_company_list_and_detail_never_show_secrets(client, administrator, company):
    company.service_password = "very-secret-password"
    company.save()
    client.force_login(administrator)
    for url in (reverse("core:company_list"), reverse("core:company_detail", args=[company.pk]),
                reverse("core:company_edit", args=[company.pk])):
        page = html(client.get(url))
        assert "key-acme-0001" not in page and "very-secret-password" not in page
    detail = html(client.get(reverse("core:company_detail", args=[company.pk])))
    assert "tanımlı" in detail  # "set"
    assert company.base_url("ticket") in detail


def test_create_company_requires_the_credential_of_its_auth_method(client, administrator):
    client.force_login(administrator)
    response = client.post(reverse("core:company_add"), company_form())
    assert response.status_code == 200
    page = html(response)
    assert 'id="id_api_key_errors"' in page and "API anahtarı gerekli" in page
    response = client.post(reverse("core:company_add"), company_form(auth_method="service_user"))
    page = html(response)
    assert 'id="id_service_username_errors"' in page and 'id="id_service_password_errors"' in page
    assert not Company.objects.filter(name="Yeni Şirket").exists()


def test_choosing_the_service_user_keeps_the_api_key_for_company_management(client, administrator, company):
    """Issue 11: both may be stored; choosing "service user" no longer wipes the API key."""
    client.force_login(administrator)
    response = client.post(reverse("core:company_edit", args=[company.pk]), company_form(
        name=company.name, auth_method="service_user", service_username="svc-acme", service_password="pw-acme-1"))
    assert response.status_code == 302, html(response)
    company.refresh_from_db()
    assert (company.auth_method, company.api_key, company.service_username, company.service_password) == (
        "service_user", "key-acme-0001", "svc-acme", "pw-acme-1")
    page = html(client.get(reverse("core:company_edit", args=[company.pk])))
    assert "yalnız API anahtarı" in page  # the API key's help says company management needs it


def test_contract_tier_is_checked_and_shown(client, administrator, company):
    client.force_login(administrator)
    response = client.post(reverse("core:company_edit", args=[company.pk]), company_form(
        name=company.name, contract_tier="12"))
    assert response.status_code == 200 and 'id="id_contract_tier_errors"' in html(response)
    response = client.post(reverse("core:company_edit", args=[company.pk]), company_form(
        name=company.name, contract_tier="4"))
    assert response.status_code == 302
    company.refresh_from_db()
    assert company.tier == 4
    page = html(client.get(reverse("core:company_detail", args=[company.pk])))
    assert "T4" in page and 'data-tier-source="contract"' in page


def test_create_company_makes_the_administrator_a_member(client, administrator):
    client.force_login(administrator)
    response = client.post(reverse("core:company_add"), company_form(api_key="new-key-123"))
    created = Company.objects.get(name="Yeni Şirket")
    assert response["Location"] == reverse("core:company_detail", args=[created.pk])
    assert created.api_key == "new-key-123"
    assert Membership.objects.filter(user=administrator, company=created).exists()


def test_edit_company_keeps_secrets_left_empty_and_replaces_typed_ones(client, administrator, company):
    client.force_login(administrator)
    form = company_form(name="Acme Yeni")
    response = client.post(reverse("core:company_edit", args=[company.pk]), form)
    assert response.status_code == 302, html(response)
    company.refresh_from_db()
    assert (company.name, company.api_key) == ("Acme Yeni", "key-acme-0001")
    client.post(reverse("core:company_edit", args=[company.pk]), company_form(api_key="rotated-key"))
    company.refresh_from_db()
    assert company.api_key == "rotated-key"


def test_company_form_hides_base_urls_in_a_collapsed_section(client, administrator, company):
    client.force_login(administrator)
    page = html(client.get(reverse("core:company_edit", args=[company.pk])))
    assert 'class="collapse"' in page and 'name="ticket_base_url"' in page
    assert 'type="password"' in page and 'value="key-acme-0001"' not in page


# --- members --------------------------------------------------------------------------------------

def test_members_list_add_and_remove(client, administrator, accountant, company):
    newcomer = make_user("yeni", "manager")
    client.force_login(administrator)
    page = html(client.get(reverse("core:membership_list")))
    assert "muhasebe" in page and "Muhasebe personeli" in page  # the role badge
    form = html(client.get(reverse("core:membership_add")))
    assert "yeni" not in form and 'name="username"' in form  # typed, never picked from a list of users
    form_post(client, reverse("core:membership_add"), {"username": "yeni"})
    membership = Membership.objects.get(user=newcomer)
    assert membership.company == company
    again = form_post(client, reverse("core:membership_add"), {"username": "yeni"})
    assert again.status_code == 200 and "zaten bu şirket için çalışıyor" in html(again)  # duplicate
    assert Membership.objects.filter(user=newcomer).count() == 1
    confirm = html(client.get(reverse("core:membership_delete", args=[membership.pk])))
    assert "yeni" in confirm
    client.post(reverse("core:membership_delete", args=[membership.pk]))
    assert not Membership.objects.filter(user=newcomer).exists()
    assert User.objects.filter(pk=newcomer.pk).exists()  # the user stays, only the membership goes


def test_bulk_remove_members(client, administrator, company):
    # Names with a dash: the page's random CSRF token (letters and digits) can never hold one by chance ("u2" did).
    users = [make_user(f"uye-{i}", "accounting", [company]) for i in range(3)]
    client.force_login(administrator)
    pks = list(Membership.objects.filter(user__in=users[:2]).values_list("pk", flat=True))
    page = html(client.post(reverse("core:membership_bulk", args=["remove"]), {"pk": pks}))
    assert "Şirketten çıkar" in page and "uye-0" in page and "uye-2" not in page
    client.post(reverse("core:membership_bulk", args=["remove"]), {"pk": pks, "confirm": "1"})
    assert set(Membership.objects.filter(company=company).values_list("user__username", flat=True)) == {
        "yonetim", "uye-2"}


# --- remote-call audit ----------------------------------------------------------------------------

@pytest.fixture
def calls(company):
    return [
        RemoteCall.objects.create(company=company, service="ticket", method="POST", path="/v1/tickets", status=201,
                                  request_excerpt='{"x-api-key": "[redacted]"}', correlation_id="corr-1"),
        RemoteCall.objects.create(company=company, service="invoice", method="GET", path="/v2/invoices", status=429),
        RemoteCall.objects.create(company=company, service="ledger", method="GET", path="/api/periods", status=None,
                                  error="timeout"),
    ]


def test_audit_filters_by_service_and_outcome(client, administrator, calls):
    client.force_login(administrator)
    url = reverse("core:remotecall_list")
    page = html(client.get(url, {"service": "invoice"}))
    assert "/v2/invoices" in page and "/v1/tickets" not in page
    page = html(client.get(url, {"status": "none"}))
    assert "/api/periods" in page and "yanıt yok" in page and "/v2/invoices" not in page
    page = html(client.get(url, {"status": "2xx"}))
    assert "/v1/tickets" in page and "/api/periods" not in page
    page = html(client.get(url, {"date_from": "2000-01-01", "date_to": "2000-01-02"}))
    assert "/v1/tickets" not in page


def test_audit_detail_and_export(client, administrator, calls):
    client.force_login(administrator)
    page = html(client.get(reverse("core:remotecall_detail", args=[calls[0].pk])))
    assert "corr-1" in page and "[redacted]" in page
    response = client.get(reverse("core:remotecall_list"), {"export": "xlsx", "service": "ticket"})
    rows = list(load_workbook(BytesIO(b"".join(response.streaming_content))).active.iter_rows(values_only=True))
    assert len(rows) == 2 and "/v1/tickets" in rows[1] and 201 in rows[1]


# --- background work ------------------------------------------------------------------------------

def test_background_work_refreshes_while_something_runs(client, accountant, company):
    job = JobRun.objects.create(company=company, name="Bilet gönderimi", status=JobStatus.RUNNING, progress=40,
                                message="40 / 100")
    client.force_login(accountant)
    page = html(client.get(reverse("core:jobrun_list")))
    assert 'hx-trigger="every 5s"' in page and 'aria-valuenow="40"' in page and "40 / 100" in page
    job.status = JobStatus.SUCCEEDED
    job.save()
    page = html(client.get(reverse("core:jobrun_list"), HTTP_HX_REQUEST="true", HTTP_HX_TARGET="object-list"))
    assert "every 5s" not in page  # done: the polling stops
    assert "<html" not in page and "Başarılı" in page


@pytest.mark.parametrize("role", ["accounting", "manager", "administrator"])
def test_every_role_sees_the_companys_background_work(client, company, role):
    JobRun.objects.create(company=company, name="Cari hesap eşitleme")
    client.force_login(make_user(f"r-{role}", role, [company]))
    assert "Cari hesap eşitleme" in html(client.get(reverse("core:jobrun_list")))


def test_background_work_empty_state(client, accountant):
    client.force_login(accountant)
    assert "Henüz arka plan işi yok" in html(client.get(reverse("core:jobrun_list")))


# --- errors ---------------------------------------------------------------------------------------

def test_not_found_page_says_what_to_do(client, accountant):
    client.force_login(accountant)
    response = client.get("/no-such-page/")
    assert response.status_code == 404
    assert "başka bir şirkete ait" in html(response) and reverse("core:dashboard") in html(response)


def test_server_error_page_needs_no_database_or_context():
    from backoffice.core.views import server_error

    response = server_error(RequestFactory().get("/"))
    assert response.status_code == 500
    page = response.content.decode()
    assert "500" in page and "/static/vendor/bootstrap/css/bootstrap.min.css" in page
    assert "app-sidebar" not in page


def test_admin_registrations(client, administrator, company):
    administrator.is_superuser = True  # the Django admin is for superusers only
    administrator.save()
    client.force_login(administrator)
    for name in ("core_company_changelist", "core_membership_changelist", "core_remotecall_changelist",
                 "core_jobrun_changelist", "core_documentseries_changelist"):
        assert client.get(reverse(f"admin:{name}")).status_code == 200, name
    change = html(client.get(reverse("admin:core_company_change", args=[company.pk])))
    assert "key-acme-0001" not in change  # write-only in the admin too
    assert client.get(reverse("admin:core_remotecall_add")).status_code == 403  # read-only
