"""Sub-company pages refresh while background work runs and stop when it ends; a new offer shows as soon as
the platform accepted it; the pages say when the next usage report comes (issue 9, point 5)."""

import re
from datetime import timedelta

import django_rq
import pytest
from django.utils import timezone
from rq.cron import get_cron_job_history_key

from backoffice.core.choices import Role, SyncState
from backoffice.core.middleware import SESSION_KEY
from backoffice.subcompanies import services
from backoffice.subcompanies.choices import OperationKind
from backoffice.subcompanies.models import SubCompany, SubCompanyOperation
from tests.conftest import form_post, make_user

from .conftest import new_vkn, subcompany_data

pytestmark = pytest.mark.django_db

ROOT = "11111111-1111-4111-8111-111111111111"
ONE = "22222222-2222-4222-8222-222222222222"


def act_as(client, user, company):
    client.force_login(user)
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "en"
    session = client.session
    session[SESSION_KEY] = company.pk
    session.save()
    return client


def polling(html, element_id):
    """The hx-trigger interval (seconds) of the element, or None when it does not poll."""
    match = re.search(rf'<div id="{element_id}"([^>]*)>', html)
    assert match, element_id
    trigger = re.search(r'hx-trigger="every (\d+)s"', match.group(1))
    return int(trigger.group(1)) if trigger else None


@pytest.fixture
def cron_history():
    """Write when the cron last enqueued the report refresh, as RQ records it; removed afterwards."""
    connection = django_rq.get_connection("default")
    key = get_cron_job_history_key(services.USAGE_REPORT_CRON)
    saved = connection.zrange(key, 0, -1, withscores=True)

    def write(at):
        connection.delete(key)
        connection.zadd(key, {"test-job": at.timestamp()})

    connection.delete(key)
    yield write
    connection.delete(key)
    if saved:
        connection.zadd(key, dict(saved))


def about(at):
    at = timezone.localtime(at + timedelta(seconds=59)).replace(second=0, microsecond=0)
    return f"about {at:%H:%M}"


def test_the_next_report_time_comes_from_the_crons_last_run(company, cron_history):
    now = timezone.now()
    cron_history(now - timedelta(minutes=5))
    assert services.next_report_at(company, now=now) == now + timedelta(minutes=10)
    # A run missed while the page was open: the next interval after now.
    cron_history(now - timedelta(minutes=20))
    assert services.next_report_at(company, now=now) == now + timedelta(minutes=10)
    # No cron record for more than two intervals: the cron is not running, nothing is promised.
    cron_history(now - timedelta(hours=2))
    assert services.next_report_at(company, now=now) is None


def test_without_a_cron_record_the_latest_report_stands_in(company, cron_history):
    now = timezone.now()
    assert services.next_report_at(company, now=now) is None
    services.snapshot_save(company=company, fetched_at=now - timedelta(minutes=4),
                           body={"customerUniqueId": ROOT, "credits": [], "usages": []})
    assert services.next_report_at(company, now=now) == now + timedelta(minutes=11)


def test_the_platforms_window_comes_first_when_it_opens_later(company, cron_history, monkeypatch):
    now = timezone.now()
    cron_history(now - timedelta(minutes=14))
    monkeypatch.setattr(services, "report_wait_seconds", lambda company: 300.0)
    assert services.next_report_at(company, now=now) == now + timedelta(minutes=5)


def test_a_created_subcompany_says_when_it_should_show_and_the_page_polls(client, administrator, company,
                                                                           cron_history):
    cron_history(timezone.now() - timedelta(minutes=3))
    expected = about(services.next_report_at(company))
    act_as(client, administrator, company)
    response = form_post(client, "/sub-companies/add/", subcompany_data(identifier=new_vkn(), name="Uzun Yol A.Ş."),
                           follow=True)
    html = response.content.decode()
    record = SubCompany.objects.get(name="Uzun Yol A.Ş.")
    assert f"the next one {expected}" in html  # the created message
    assert record.state == "sending"
    assert polling(html, "subcompany-detail") == 3 and 'id="live-indicator"' in html
    assert f"The next usage report is fetched {expected}" in html

    # Sent: waiting for the report that shows it, polled slowly.
    SubCompany.objects.filter(pk=record.pk).update(sync_state=SyncState.SYNCED, synced_at=timezone.now())
    html = client.get(f"/sub-companies/{record.pk}/", HTTP_X_BACKGROUND_REFRESH="1").content.decode()
    assert polling(html, "subcompany-detail") == 30 and 'data-state="waiting"' in html and 'id="next-report"' in html
    # Shown by a report: the work is over, the page stops polling and no longer talks about the next report.
    SubCompany.objects.filter(pk=record.pk).update(remote_id=ONE, seen_at=timezone.now())
    html = client.get(f"/sub-companies/{record.pk}/").content.decode()
    assert polling(html, "subcompany-detail") is None and 'id="next-report"' not in html
    assert 'id="live-indicator"' not in html


def test_the_list_polls_while_a_creation_is_pending(client, manager, company):
    record = SubCompany.objects.create(company=company, name="Yeni A.Ş.", identifier=new_vkn(),
                                       sync_state=SyncState.QUEUED)
    act_as(client, manager, company)
    assert polling(client.get("/sub-companies/").content.decode(), "object-list") == 3
    SubCompany.objects.filter(pk=record.pk).update(sync_state=SyncState.SYNCED)
    assert polling(client.get("/sub-companies/").content.decode(), "object-list") == 30
    SubCompany.objects.filter(pk=record.pk).update(remote_id=ONE)
    assert polling(client.get("/sub-companies/").content.decode(), "object-list") is None


def test_the_operation_page_polls_until_the_platform_answered(client, manager, company):
    sub = SubCompany.objects.create(company=company, name="Bir A.Ş.", remote_id=ONE, sync_state=SyncState.SYNCED)
    operation = SubCompanyOperation.objects.create(company=company, kind=OperationKind.CANCEL_CREDIT,
                                                   application_credit_id=9001234, sync_state=SyncState.QUEUED)
    operation.subcompanies.set([sub])
    act_as(client, manager, company)
    html = client.get(f"/sub-companies/requests/{operation.pk}/").content.decode()
    assert polling(html, "operation-detail") == 3
    assert "9001234" in html and "9,001,234" not in html and "applicationCreditId" not in html
    # The sub-company's page polls too while the request is under way, and shows the offer being cancelled.
    assert polling(client.get(f"/sub-companies/{sub.pk}/").content.decode(), "subcompany-detail") == 3
    SubCompanyOperation.objects.filter(pk=operation.pk).update(sync_state=SyncState.SYNCED, synced_at=timezone.now())
    html = client.get(f"/sub-companies/requests/{operation.pk}/").content.decode()
    assert polling(html, "operation-detail") is None and 'data-state="synced"' in html
    assert polling(client.get(f"/sub-companies/{sub.pk}/").content.decode(), "subcompany-detail") is None


def test_an_accepted_credit_offer_shows_before_the_next_report(crm_company, active_subcompany, on_commit, run_jobs,
                                                               client):
    """Through the sandbox: the offer the platform accepted is on the sub-company's page at once, with the id
    the platform gave it, although no report has listed it yet."""
    sub = active_subcompany()
    admin = make_user("yonetim-crm", Role.ADMINISTRATOR, [crm_company])
    act_as(client, admin, crm_company)
    operation = on_commit(services.credit_add, company=crm_company, subcompany=sub, quantity=1234)
    html = client.get(f"/sub-companies/{sub.pk}/").content.decode()
    assert f'data-new-offer="{operation.pk}" data-offer-state="sending"' in html
    assert polling(html, "subcompany-detail") == 3

    run_jobs()
    operation.refresh_from_db()
    assert operation.sync_state == SyncState.SYNCED, operation.last_error
    credit_id = operation.response["id"]
    html = client.get(f"/sub-companies/{sub.pk}/", HTTP_X_BACKGROUND_REFRESH="1").content.decode()
    row = re.search(rf'<tr class="table-info" data-new-offer="{operation.pk}" data-offer-state="accepted">(.*?)</tr>',
                    html, re.DOTALL).group(1)
    assert f">{credit_id}<" in row and "1,234 credits" in row and "accepted by the platform" in row
    assert polling(html, "subcompany-detail") is None  # nothing left under way


def test_the_dashboard_says_when_waiting_companies_may_show(client, manager, company, cron_history):
    now = timezone.now()
    services.snapshot_save(company=company, fetched_at=now - timedelta(minutes=1),
                           body={"customerUniqueId": ROOT, "credits": [], "usages": []})
    act_as(client, manager, company)
    assert 'id="next-report"' not in client.get("/sub-companies/usage/").content.decode()  # nobody waits
    SubCompany.objects.create(company=company, name="Bekleyen A.Ş.", identifier=new_vkn(), sync_state=SyncState.SYNCED)
    cron_history(now - timedelta(minutes=7))
    html = client.get("/sub-companies/usage/").content.decode()
    assert f"next report {about(now + timedelta(minutes=8))}" in html


RAW_NAMES = ("applicationCreditId", "customerUniqueId", "applicationSource", "applicationStatus", "applicationId",
             "applicationCreateDate", "isActive", "overUsages", "(document 1")


def test_the_pages_show_labels_not_api_field_names_ids_without_separators_and_istanbul_dates(client, manager,
                                                                                              company):
    from .test_views import report_body

    body = report_body()
    body["subCustomers"][0]["credits"][0].update(id=9001234, createDate="2026-11-20T11:00:00Z")
    snapshot = services.snapshot_save(company=company, body=body, fetched_at=timezone.now())
    sub = SubCompany.objects.get(company=company, remote_id=ONE)
    operation = SubCompanyOperation.objects.create(company=company, kind=OperationKind.CANCEL_CREDIT,
                                                   application_credit_id=9001234, sync_state=SyncState.SYNCED,
                                                   synced_at=timezone.now())
    operation.subcompanies.set([sub])
    act_as(client, manager, company)
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "tr"
    for url in (f"/sub-companies/{sub.pk}/", f"/sub-companies/reports/{snapshot.pk}/",
                f"/sub-companies/requests/{operation.pk}/", "/sub-companies/requests/"):
        html = client.get(url).content.decode()
        visible = re.sub(r"<pre.*?</pre>|<script.*?</script>|<[^>]+>", " ", html, flags=re.DOTALL)  # text, not markup
        assert not [name for name in RAW_NAMES if name in visible], url
        assert "9001234" in visible and "9.001.234" not in visible, url
    html = client.get(f"/sub-companies/{sub.pk}/").content.decode()
    assert "20.11.2026 14:00" in html  # the offer's createDate, 11:00 UTC, in Istanbul time
    assert 'data-cancel-state="accepted"' in html  # the accepted cancellation, before the next report
