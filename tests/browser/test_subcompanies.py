"""Company management in a real browser, against the sandbox over HTTP and a real RQ worker (in burst
mode, in this process): an administrator creates a sub-company and sees it waiting; the worker and a
report refresh run; the sub-company appears with its credit; the administrator adds credit to two
sub-companies in one bulk action; a manager opens the dashboard and the charts render."""

import os
import time
from datetime import timedelta

import django_rq
import pytest
from django.contrib.auth.models import Group
from rq import SimpleWorker

from backoffice.core import queues
from backoffice.core.choices import Role, SyncState
from backoffice.core.models import RemoteCall
from backoffice.subcompanies import services
from backoffice.subcompanies.choices import OperationKind
from backoffice.subcompanies.models import SubCompany, SubCompanyOperation, UsageSnapshot
from tests.browser.conftest import CHROMIUM, screenshot
from tests.conftest import make_user
from tests.subcompanies.conftest import PAGE_SCALE as SCALE, new_vkn
from tests.testapp.testing import _empty, wait_for

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's Chromium at /usr/bin/chromium"),
    pytest.mark.django_db(transaction=True),
]


@pytest.fixture
def queue():
    queue = django_rq.get_queue("default")
    _empty(queue)
    yield queue
    _empty(queue)


def work(queue):
    """Run every queued job with a real RQ worker, in this process, until the shared queue and every company's
    (core.queues.all_queues) are empty."""
    SimpleWorker(queues.all_queues(queue.connection), connection=queue.connection).work(burst=True, with_scheduler=False)


def wait_for_window(company):
    wait_for(lambda: not services.report_wait_seconds(company), timeout=15, interval=0.1,
             message="the report window to open")


def add_history(company):
    """Earlier reports, as if the report had been fetched over the last days: the trend and forecasts
    need some history, which a test cannot wait for. Each is the latest report with less credit used."""
    latest = UsageSnapshot.objects.filter(company=company).first()

    def scaled(node, factor):
        node = dict(node)
        node["usages"] = [{**u, "quantity": int(u.get("quantity", 0) * factor)} for u in node.get("usages", [])]
        node["subCustomers"] = [scaled(child, factor) for child in node.get("subCustomers", [])]
        return node

    for days, factor in ((6, 0.35), (5, 0.45), (4, 0.55), (3, 0.65), (2, 0.75), (1, 0.88)):
        services.snapshot_save(company=company, body=scaled(latest.raw, factor),
                               fetched_at=latest.fetched_at - timedelta(days=days))


def login(page, url, username):
    page.goto(f"{url}/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", f"pass-{username}")
    page.click("button[type=submit]")
    page.wait_for_url(f"{url}/")


@pytest.mark.slow
def test_create_wait_appear_bulk_credit_and_dashboard(live_server, browser_page, sandbox, make_sandbox_company,
                                                      settings, queue):
    """Slow (over 10 s): sub-companies created, waited for, credited and charted in a real browser, with the report's
    rate-limit window waited out twice."""
    for role in Role:
        Group.objects.get_or_create(name=role.value)
    settings.RATE_LIMIT_SCALE = SCALE
    sandbox.configure(rate_limit_scale=SCALE)
    company = make_sandbox_company(credits=250_000, name="Anadolu Dağıtım A.Ş.")
    owner = str(company.customer_unique_id)
    sandbox.control("POST", "crm/settings", {"customer_unique_id": owner, "creation_delay_seconds": 1})
    # One sub-company the platform already knows (attached through the provider's portal), over its credit.
    sandbox.control("POST", "crm/sub-customers", {"customer_unique_id": owner, "identifier": new_vkn(),
                                                  "name": "Ege Gıda Ltd.", "credit": 20_000, "used": 23_500})
    make_user("ayse", Role.ADMINISTRATOR, [company])
    make_user("mehmet", Role.MANAGER, [company])
    page = browser_page
    url = live_server.url

    # An administrator creates a sub-company: saved, sent by the worker, then waiting for the platform.
    login(page, url, "ayse")
    page.click(".app-nav a.nav-link[href='/sub-companies/']")
    page.click("a.btn-primary[href='/sub-companies/add/']")
    identifier = new_vkn()
    page.fill("#id_identifier", identifier)
    page.fill("#id_name", "Karadeniz Turizm A.Ş.")
    page.fill("#id_quantity", "12000")
    page.fill("#id_contact_full_name", "Zeynep Kaya")
    page.fill("#id_contact_email", "zeynep@example.com")
    page.fill("#id_contact_phone", "5321234567")
    page.click("form.edit-form button[type=submit]")
    page.wait_for_selector("#state-card")
    record = SubCompany.objects.get(identifier=identifier)
    assert page.url == f"{url}/sub-companies/{record.pk}/"
    assert page.locator("h1 [data-state=sending]").count() == 1
    work(queue)
    page.reload()
    assert page.locator("h1 [data-state=waiting]").count() == 1
    assert page.locator("#state-card [data-waiting]").count() == 1
    # A second one, sent straight through the service.
    second = services.create_subcompany(company=company, identifier=new_vkn(), name="Marmara Lojistik Ltd.",
                                        quantity=8000, contact_full_name="Ali Demir", contact_email="ali@example.com",
                                        contact_phone="5551234567")
    due = time.monotonic() + 1.2  # both are created on the platform after its 1 s delay
    work(queue)

    # The report refresh: the button queues the job; the worker fetches; the page reloads with the report.
    time.sleep(max(0, due - time.monotonic()))  # the sandbox's creation delay
    page.goto(f"{url}/sub-companies/usage/")
    page.click("#refresh-button[data-state=open]")
    page.wait_for_selector("#refresh-button[data-state=queued]")
    work(queue)
    page.wait_for_selector("#chart-companies", timeout=20_000)  # the card's poll reloads the page
    assert page.locator("#refresh-button[data-state=queued]").count() == 0

    page.goto(f"{url}/sub-companies/{record.pk}/")
    assert page.locator("h1 [data-state=active]").count() == 1
    record.refresh_from_db()
    assert record.remote_id in page.locator("#state-card").inner_text()
    credits = page.locator("#credits-card tbody tr")
    assert credits.count() == 1 and "12000" in credits.first.inner_text().replace(".", "")
    screenshot(page, "subcompany-detail")

    # Credit to the two new sub-companies in one bulk action.
    page.goto(f"{url}/sub-companies/?sort=name")
    for pk in (record.pk, second.pk):
        page.check(f"#object-list input[name=pk][value='{pk}']")
    page.click("button[data-bulk-action=add_credit]")
    page.wait_for_selector("#id_quantity")
    assert page.locator(".confirm-list li").count() == 2
    page.fill("#id_quantity", "3000")
    screenshot(page, "subcompany-bulk-credit")
    page.click("#bulk-submit")
    page.wait_for_url("**/sub-companies/requests/*/")
    operation = SubCompanyOperation.objects.get()
    assert operation.kind == OperationKind.ADD_CREDIT_BATCH
    work(queue)
    page.reload()
    operation.refresh_from_db()
    assert operation.sync_state == SyncState.SYNCED, operation.last_error
    assert RemoteCall.objects.get(operation="crm.add_credit_batch").status == 200
    wait_for_window(company)
    services.usage_report_request(company=company)
    work(queue)
    for sub, first_offer in ((record, 12000), (second, 8000)):
        sub.refresh_from_db()
        assert sorted(c.quantity for c in services.report_credits(sub)) == [3000, first_offer]

    # A manager opens the dashboard: the charts render.
    add_history(company)
    page.context.clear_cookies()
    login(page, url, "mehmet")
    page.click(".app-nav a.nav-link[href='/sub-companies/']")
    page.click(".subcompanies-tabs a[href='/sub-companies/usage/']")
    page.wait_for_function("() => window.Chart && Chart.getChart(document.getElementById('chart-companies'))"
                           " && Chart.getChart(document.getElementById('chart-trend'))")
    assert page.locator("#chart-companies[data-rendered=true]").count() == 1
    bars = page.evaluate("Chart.getChart(document.getElementById('chart-companies')).data.labels")
    assert bars[0] == "Anadolu Dağıtım A.Ş." and {"Karadeniz Turizm A.Ş.", "Marmara Lojistik Ltd.",
                                                  "Ege Gıda Ltd."} <= set(bars)
    assert page.evaluate("Chart.getChart(document.getElementById('chart-trend')).data.labels.length") == 8
    assert page.locator("#forecast-method").count() == 1  # the method is explained on the page
    assert page.locator("#forecast-card tbody tr").count() == 4
    assert page.locator("#refresh-button").count() == 1  # managers may refresh; nothing to create
    assert page.locator("a[href='/sub-companies/add/']").count() == 0
    path = screenshot(page, "usage-dashboard")
    assert path.stat().st_size > 20_000
    # The chart's height, given as data-height (no inline style under the Content-Security-Policy), is set.
    assert page.locator(".chart-box:has(#chart-companies)").evaluate("box => box.style.height").endswith("px")

    # The latest report: each sub-company's card is indented by its depth (data-indent, set the same way).
    latest = UsageSnapshot.objects.filter(company=company).first()
    page.goto(f"{url}/sub-companies/reports/{latest.pk}/")
    indents = page.locator(".report-customer").evaluate_all("cards => cards.map(card => card.style.marginLeft)")
    assert indents[0] == "0rem" and indents[1:] and set(indents[1:]) == {"1rem"}, indents


LONG_NAME = "Güneydoğu Anadolu Uluslararası Kargo Taşımacılığı ve Lojistik Hizmetleri Sanayi Ticaret A.Ş."


def test_pages_update_themselves_and_a_long_name_fits_the_chart(live_server, browser_page, sandbox,
                                                                make_sandbox_company, settings, queue):
    for role in Role:
        Group.objects.get_or_create(name=role.value)
    settings.RATE_LIMIT_SCALE = SCALE
    sandbox.configure(rate_limit_scale=SCALE)
    company = make_sandbox_company(credits=250_000, name="Trakya Dağıtım A.Ş.")
    sandbox.control("POST", "crm/settings", {"customer_unique_id": str(company.customer_unique_id),
                                             "creation_delay_seconds": 0})
    make_user("zeynep", Role.ADMINISTRATOR, [company])
    page = browser_page
    url = live_server.url
    background = []
    page.on("request", lambda request: background.append(request.headers.get("x-background-refresh"))
            if request.headers.get("hx-request") else None)

    # A creation on its way: the page shows "being sent", then "waiting" once the worker sent it, no reload.
    record = services.create_subcompany(company=company, identifier=new_vkn(), name=LONG_NAME, quantity=5000,
                                        contact_full_name="Ali Demir", contact_email="ali@example.com",
                                        contact_phone="5551234567")
    login(page, url, "zeynep")
    page.goto(f"{url}/sub-companies/{record.pk}/")
    assert page.locator("h1 [data-state=sending]").count() == 1
    assert page.locator("#subcompany-detail[data-refreshing=true]").count() == 1
    assert page.locator("#next-report").count() == 1
    work(queue)
    page.wait_for_selector("h1 [data-state=waiting]", timeout=15_000)
    assert "1" in background  # the polls say they are background requests

    # Shown by a report, then a credit offer: the page shows the accepted offer as soon as the worker sent it.
    wait_for_window(company)
    services.usage_report_request(company=company)
    work(queue)
    record.refresh_from_db()
    assert record.remote_id
    page.goto(f"{url}/sub-companies/{record.pk}/credit/")
    page.fill("#id_quantity", "2500")
    page.click("form.edit-form button[type=submit]")
    page.wait_for_selector("#credits-card [data-offer-state=sending]")
    work(queue)
    page.wait_for_selector("#credits-card [data-offer-state=accepted]", timeout=15_000)
    assert "2.500" in page.locator("#credits-card [data-offer-state=accepted]").inner_text()
    # Nothing is under way any more: the page stops polling.
    page.wait_for_function("() => !document.querySelector('#subcompany-detail[data-refreshing]')", timeout=15_000)

    # The usage chart: the long name is cut with an ellipsis on the axis, and given in full in the tooltip.
    page.goto(f"{url}/sub-companies/usage/")
    page.wait_for_function("() => window.Chart && Chart.getChart(document.getElementById('chart-companies'))")
    ticks = page.evaluate("Chart.getChart(document.getElementById('chart-companies')).scales.y.ticks"
                          ".map(tick => tick.label)")
    long_tick = next(t for t in ticks if t.startswith(LONG_NAME[:10]))
    assert long_tick.endswith("…") and len(long_tick) <= 30 and long_tick != LONG_NAME
    index = page.evaluate("Chart.getChart(document.getElementById('chart-companies')).data.labels"
                          f".indexOf({LONG_NAME!r})")
    assert index >= 0
    title = page.evaluate("i => Chart.getChart(document.getElementById('chart-companies'))"
                          ".options.plugins.tooltip.callbacks.title([{dataIndex: i}])", index)
    assert title == LONG_NAME
    screenshot(page, "usage-dashboard-long-name")
