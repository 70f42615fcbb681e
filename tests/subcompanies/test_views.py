"""Pages and roles: administrators create, add and cancel; managers read; accounting staff see nothing."""

import io
import re
import json
from datetime import timedelta

import pytest
from django.utils import timezone
from openpyxl import load_workbook

from backoffice.core.choices import JobStatus, SyncState
from backoffice.core.models import JobRun
from backoffice.core.platform import limiter
from backoffice.subcompanies import services
from backoffice.subcompanies.choices import OperationKind
from backoffice.subcompanies.models import SubCompany, SubCompanyOperation
from backoffice.subcompanies.selectors import latest_snapshot
from tests.conftest import confirm_post, form_post, make_user

from .conftest import new_vkn

pytestmark = pytest.mark.django_db

ROOT = "11111111-1111-4111-8111-111111111111"
ONE = "22222222-2222-4222-8222-222222222222"
TWO = "33333333-3333-4333-8333-333333333333"


def node(uid, credits=(), used=0, children=(), **extra):
    return {"customerUniqueId": uid, "applicationId": 9, "applicationSource": 1, "applicationStatus": 1,
            "applicationCreateDate": "2026-01-05T10:00:00+03:00", "distributors": [],
            "credits": [{"id": i, "quantity": q, "isActive": True} for i, q in credits],
            "usages": [{"quantity": used}] if used else [], "overUsages": [], "subCustomers": list(children), **extra}


def report_body(used_one=100, used_two=0):
    return node(ROOT, [(1, 50_000)], used=2000, children=[
        node(ONE, [(11, 1000)], used=used_one, identifier="1234567890", name="Bir A.Ş."),
        node(TWO, [(21, 500), (22, 500)], used=used_two, name="İki Ltd."),
    ])


@pytest.fixture
def reported(company):
    """Two reports a day apart: Bir A.Ş. uses 100 credits a day, İki Ltd. nothing."""
    now = timezone.now()
    services.snapshot_save(company=company, body=report_body(used_one=100), fetched_at=now - timedelta(days=1))
    services.snapshot_save(company=company, body=report_body(used_one=200), fetched_at=now)
    return {s.remote_id: s for s in SubCompany.objects.filter(company=company)}


def login(client, user):
    client.force_login(user)
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "en"
    return client


def read_urls(sub):
    snapshot = sub.report_row.snapshot
    return ["/sub-companies/", f"/sub-companies/{sub.pk}/", "/sub-companies/usage/", "/sub-companies/reports/",
            f"/sub-companies/reports/{snapshot.pk}/", "/sub-companies/requests/", "/sub-companies/?export=xlsx"]


def admin_urls(sub):
    return ["/sub-companies/add/", f"/sub-companies/{sub.pk}/credit/", f"/sub-companies/{sub.pk}/products/",
            f"/sub-companies/{sub.pk}/credits/11/cancel/"]


POSTS = ["/sub-companies/bulk/add_credit/", "/sub-companies/bulk/add_products/"]


def test_accounting_staff_see_neither_page_nor_menu_entry(client, accountant, reported):
    login(client, accountant)
    sub = reported[ONE]
    for url in read_urls(sub) + admin_urls(sub) + ["/sub-companies/usage/refresh/status/"]:
        assert client.get(url).status_code == 403, url
    for url in POSTS + ["/sub-companies/usage/refresh/", f"/sub-companies/{sub.pk}/resend/"]:
        assert client.post(url, {"pk": [sub.pk]}).status_code == 403, url
    assert 'href="/sub-companies/"' not in client.get("/").content.decode()


def test_managers_read_everything_and_change_nothing(client, manager, reported):
    login(client, manager)
    sub = reported[ONE]
    for url in read_urls(sub):
        assert client.get(url).status_code == 200, url
    for url in admin_urls(sub):
        assert client.get(url).status_code == 403, url
    for url in POSTS + [f"/sub-companies/{sub.pk}/credits/11/cancel/", f"/sub-companies/{sub.pk}/resend/"]:
        assert client.post(url, {"pk": [sub.pk], "quantity": 5, "confirm": "1"}).status_code == 403, url
    assert not SubCompanyOperation.objects.exists()
    html = client.get("/sub-companies/").content.decode()
    assert 'href="/sub-companies/"' in html  # the menu entry
    assert 'name="pk"' not in html and "/sub-companies/add/" not in html  # no bulk selection, no add button
    detail = client.get(f"/sub-companies/{sub.pk}/").content.decode()
    assert "/credit/" not in detail and "/cancel/" not in detail


def test_administrators_see_the_actions(client, administrator, reported):
    login(client, administrator)
    sub = reported[ONE]
    for url in read_urls(sub) + admin_urls(sub):
        assert client.get(url).status_code == 200, url
    html = client.get("/sub-companies/").content.decode()
    assert 'name="pk"' in html and 'data-bulk-action="add_credit"' in html and 'data-bulk-action="add_products"' in html
    detail = client.get(f"/sub-companies/{reported[TWO].pk}/").content.decode()
    assert "/sub-companies/%d/credits/21/cancel/" % reported[TWO].pk in detail


def test_every_page_is_scoped_to_the_active_company(client, other_company, reported):
    outsider = make_user("baska", "administrator", [other_company])
    login(client, outsider)
    sub = reported[ONE]
    for url in read_urls(sub)[1:2] + read_urls(sub)[4:5] + admin_urls(sub)[1:]:
        assert client.get(url).status_code == 404, url
    assert "Bir A.Ş." not in client.get("/sub-companies/").content.decode()
    response = confirm_post(client, "/sub-companies/bulk/add_credit/", {"pk": [sub.pk], "confirm": "1", "quantity": 5})
    assert response.status_code == 302 and not SubCompanyOperation.objects.exists()


def test_the_table_sorts_filters_and_exports(client, manager, reported, company):
    SubCompany.objects.create(company=company, name="Bekleyen A.Ş.", identifier=new_vkn(), sync_state=SyncState.SYNCED)
    login(client, manager)
    html = client.get("/sub-companies/?sort=credit_used").content.decode()
    assert html.index("İki Ltd.") < html.index("Bir A.Ş.")  # 0 before 200
    html = client.get("/sub-companies/?sort=-credit_used").content.decode()
    assert html.index("Bir A.Ş.") < html.index("İki Ltd.")
    waiting = client.get("/sub-companies/?state=waiting").content.decode()
    assert "Bekleyen A.Ş." in waiting and "Bir A.Ş." not in waiting and "Waiting for the platform" in waiting
    assert "Bir A.Ş." in client.get(f"/sub-companies/?q={ONE[:8]}").content.decode()

    response = client.get("/sub-companies/?export=xlsx&sort=name")
    assert response["Content-Type"].startswith("application/vnd.openxmlformats")
    sheet = load_workbook(io.BytesIO(b"".join(response.streaming_content))).active
    rows = list(sheet.values)
    assert rows[0][:4] == ("Sub-company", "Tax number / national id", "State", "Company id on the platform")
    assert ("Bir A.Ş.", "1234567890", "On the platform", ONE, 1000, 200, 0) == rows[2][:7]


def test_the_dashboard_draws_charts_forecasts_and_says_when_data_is_missing(client, manager, reported, company):
    login(client, manager)
    response = client.get("/sub-companies/usage/")
    html = response.content.decode()
    assert 'id="chart-companies"' in html and 'id="chart-trend"' in html and "chart.umd.min.js" in html
    series = response.context["series"]
    assert series["companies"]["labels"] == [company.name, "Bir A.Ş.", "İki Ltd."]
    assert series["companies"]["offered"] == [50_000, 1000, 1000] and series["companies"]["used"] == [2000, 200, 0]
    assert series["trend"]["used"] == [2100, 2200] and len(series["trend"]["times"]) == 2
    assert json.loads(html.split('id="usage-series" type="application/json">')[1].split("</script>")[0]) == json.loads(
        json.dumps(series, default=str))
    forecasts = {f.customer_unique_id: f for f in response.context["forecasts"]}
    one = forecasts[ONE]
    assert one.enough_data and round(one.rate_per_day) == 100 and one.remaining == 800
    assert abs((one.runs_out_at - reported[ONE].last_seen_at) - timedelta(days=8)) < timedelta(minutes=1)
    assert not forecasts[TWO].enough_data and not forecasts[ROOT].enough_data  # no growth
    assert "How this is computed" in html and html.count("forecast-no-data") == 2


def test_a_dashboard_before_any_report(client, manager):
    login(client, manager)
    html = client.get("/sub-companies/usage/").content.decode()
    assert "No usage report yet" in html and 'data-state="open"' in html and "chart-companies" not in html


def test_the_refresh_button_follows_the_platforms_window(client, manager, company, rq_queue):
    login(client, manager)
    response = client.post("/sub-companies/usage/refresh/", {"next": "/sub-companies/usage/"})
    assert response.status_code == 302 and response.url == "/sub-companies/usage/"
    run = JobRun.objects.get(name="usage_report_refresh", company=company)
    assert 'data-state="queued"' in client.get("/sub-companies/usage/").content.decode()

    # The job took the window's only slot (as the transport does before calling).
    JobRun.objects.filter(pk=run.pk).update(status=JobStatus.SUCCEEDED)
    assert limiter().acquire(str(company.pk), company.tier, "GET", "/v1/sharedpoolusage/report") == 0
    html = client.get("/sub-companies/usage/").content.decode()
    assert 'data-state="closed"' in html and "disabled" in html
    assert re.search(r"Refresh possible in 1[56] minutes \(\d\d:\d\d\)", html)
    response = client.post("/sub-companies/usage/refresh/", follow=True)
    assert re.search("the next one is possible in 1[56] minutes", response.content.decode())
    assert JobRun.objects.filter(name="usage_report_refresh").count() == 1  # nothing queued


def test_the_refresh_card_reloads_the_page_when_a_new_report_arrived(client, manager, reported, company):
    login(client, manager)
    latest = latest_snapshot(company)
    same = client.get(f"/sub-companies/usage/refresh/status/?since={latest.pk}")
    assert same.status_code == 200 and "HX-Refresh" not in same
    assert client.get(f"/sub-companies/usage/refresh/status/?since={latest.pk - 1}")["HX-Refresh"] == "true"


def test_bulk_credit_to_two_subcompanies_is_one_batch_request(client, administrator, reported, rq_queue):
    login(client, administrator)
    pks = [reported[ONE].pk, reported[TWO].pk]
    confirm = client.post("/sub-companies/bulk/add_credit/", {"pk": pks, "return_url": "/sub-companies/"})
    html = confirm.content.decode()
    assert confirm.status_code == 200 and "Bir A.Ş." in html and "İki Ltd." in html and 'name="quantity"' in html
    response = confirm_post(client, "/sub-companies/bulk/add_credit/", {"pk": pks, "confirm": "1", "quantity": "250",
                                                               "show_over_usage": "on"})
    operation = SubCompanyOperation.objects.get()
    assert response.status_code == 302 and response.url == f"/sub-companies/requests/{operation.pk}/"
    assert (operation.kind, operation.quantity, operation.show_over_usage) == (OperationKind.ADD_CREDIT_BATCH, 250, True)
    assert set(operation.subcompanies.values_list("pk", flat=True)) == set(pks)
    assert operation.sync_state == SyncState.QUEUED and JobRun.objects.get().name == "operation_push"


def test_bulk_refuses_a_selection_with_a_waiting_company(client, administrator, reported, company):
    waiting = SubCompany.objects.create(company=company, name="Bekleyen A.Ş.", identifier=new_vkn(),
                                        sync_state=SyncState.SYNCED)
    login(client, administrator)
    response = confirm_post(client, "/sub-companies/bulk/add_credit/",
                            {"pk": [reported[ONE].pk, waiting.pk], "confirm": "1",
                                                               "quantity": "5"})
    assert response.status_code == 200
    assert "Bekleyen A.Ş. is not on the platform yet" in response.content.decode()
    assert not SubCompanyOperation.objects.exists() and not JobRun.objects.exists()


def test_cancel_asks_first_and_refuses_the_last_offer_locally(client, administrator, reported, rq_queue):
    login(client, administrator)
    one, two = reported[ONE], reported[TWO]
    page = client.get(f"/sub-companies/{one.pk}/credits/11/cancel/").content.decode()
    assert "last active offer" in page and "Add another offer first" in page and "Yes, cancel the offer" not in page
    response = client.post(f"/sub-companies/{one.pk}/credits/11/cancel/", follow=True)
    assert "last active offer" in response.content.decode() and not SubCompanyOperation.objects.exists()

    page = client.get(f"/sub-companies/{two.pk}/credits/21/cancel/").content.decode()
    assert "Yes, cancel the offer" in page and "isActive" in page  # the offer's fields, as key/value
    assert not SubCompanyOperation.objects.exists()  # nothing on GET
    client.post(f"/sub-companies/{two.pk}/credits/21/cancel/")
    operation = SubCompanyOperation.objects.get()
    assert (operation.kind, operation.application_credit_id) == (OperationKind.CANCEL_CREDIT, 21)
    assert "last active offer" in client.get(f"/sub-companies/{two.pk}/credits/22/cancel/").content.decode()


def test_products_page_warns_about_rule_4(client, administrator, company, reported):
    services.snapshot_save(company=company, body=node(ROOT, [(1, 5)], children=[
        node(ONE, [(11, 1000)], name="Bir A.Ş."), {**node("44444444-4444-4444-8444-444444444444", name="Dört"),
                                                   "applicationId": None}]))
    no_pool = SubCompany.objects.get(name="Dört")
    login(client, administrator)
    page = client.get(f"/sub-companies/{no_pool.pk}/products/").content.decode()
    assert "does not have the shared pool product" in page
    response = form_post(client, f"/sub-companies/{no_pool.pk}/products/", {"product_types": ["2"]})
    assert "shared pool product and a credit offer." in response.content.decode() and not SubCompanyOperation.objects.exists()


def test_a_refused_creation_shows_the_platforms_words_and_can_be_sent_again(client, administrator, company,
                                                                          rq_queue):
    record = SubCompany.objects.create(
        company=company, name="Red A.Ş.", identifier=new_vkn(), sync_state=SyncState.FAILED,
        last_error="Company already has an active offer: The company already has an active credit offer of another "
                   "distributor (rule 2).")
    login(client, administrator)
    html = client.get(f"/sub-companies/{record.pk}/").content.decode()
    assert "Refused by the platform" in html and "another distributor (rule 2)" in html
    assert "cannot be created here." in html
    client.post(f"/sub-companies/{record.pk}/resend/")
    record.refresh_from_db()
    assert record.sync_state == SyncState.QUEUED and record.last_error == ""


def test_report_pages_show_unknown_fields_as_key_value_pairs(client, manager, reported, company):
    login(client, manager)
    snapshot = reported[ONE].report_row.snapshot
    html = client.get(f"/sub-companies/reports/{snapshot.pk}/").content.decode()
    assert html.count('class="card border-0 shadow-sm mb-3 report-customer"') == 3
    assert ">tax number / national id</dt>" in html and ">active</dt>" in html and "1234567890" in html
    listing = client.get("/sub-companies/reports/").content.decode()
    assert "52,000" in listing  # credit offered, all companies together


def test_a_failed_refresh_is_shown_with_the_platforms_message(client, manager, company):
    JobRun.objects.create(name="usage_report_refresh", company=company, status=JobStatus.FAILED,
                          message="HTTP 503: Service Unavailable")
    login(client, manager)
    html = client.get("/sub-companies/usage/").content.decode()
    assert 'id="refresh-failed"' in html and "HTTP 503: Service Unavailable" in html
    assert 'data-state="open"' in html  # and it can be tried again


def test_a_company_without_api_key_is_told_on_every_page_and_its_forms_send_nothing(client, administrator, company,
                                                                                    rq_queue):
    """Company management takes only an API key (document 1, section 5, rule 2); a company whose documents go
    with a service user may have none: every page of the section says so, and nothing is saved or queued."""
    company.auth_method, company.api_key = "service_user", ""
    company.service_username, company.service_password = "svc", "pw-1"
    company.save()
    login(client, administrator)
    for url in ("/sub-companies/", "/sub-companies/usage/", "/sub-companies/requests/", "/sub-companies/add/"):
        page = client.get(url).content.decode()
        assert "data-section-notice" in page and "takes only an API key" in page, url
    response = form_post(client, "/sub-companies/add/", {
        "identifier": new_vkn(), "name": "Yeni Alt A.Ş.", "quantity": "100", "contact_full_name": "Ayşe Kaya",
        "contact_email": "ayse@example.com", "contact_phone": "5321234567"})
    assert response.status_code == 200 and "takes only an API key" in response.content.decode()
    response = client.post("/sub-companies/usage/refresh/", {"next": "/sub-companies/usage/"}, follow=True)
    assert "takes only an API key" in response.content.decode()
    assert not SubCompany.objects.exists() and not JobRun.objects.exists()
