"""The UI shell in a real browser: Debian's Chromium driven by Playwright against the live server.

Signs in as a user of two companies, sees the Turkish UI, switches to English and back, switches
company, opens the background work, and saves the screenshots the README shows.
"""

import os
from datetime import timedelta

import pytest
from django.contrib.auth.models import Group
from django.utils import timezone

from backoffice.core.choices import JobStatus, Role
from backoffice.core.models import Company, JobRun, RemoteCall
from tests.browser.conftest import CHROMIUM, screenshot
from tests.conftest import make_user

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM),
                       reason="needs Debian's Chromium at /usr/bin/chromium (`make test` installs it)"),
]


def _demo_data():
    # A transactional test before this one may have flushed the groups the roles migration created.
    for role in Role:
        Group.objects.get_or_create(name=role.value)
    acme = Company.objects.create(name="Acme Turizm A.Ş.", api_key="key-acme", credit_quantity=250_000,
                                  environment="test")
    beta = Company.objects.create(name="Beta Lojistik Ltd.", api_key="key-beta", credit_quantity=12_000)
    user = make_user("ayse", "administrator", [acme, beta])
    user.first_name, user.last_name = "Ayşe", "Yılmaz"
    user.save()
    now = timezone.now()
    jobs = [
        ("Bilet gönderimi", "ETK2026000000041", JobStatus.SUCCEEDED, None, "Platforma gönderildi."),
        ("Bilet gönderimi", "ETK2026000000042", JobStatus.RUNNING, 60, ""),
        ("Fatura durum sorgusu", "FTR2026000000007", JobStatus.DEFERRED, None, "Hız sınırı için 12 sn bekleniyor."),
        ("Yolcu listesi gönderimi", "YL-2026-118", JobStatus.FAILED, None, "Sefer tarihi geçmiş: liste reddedildi."),
        ("Cari hesap eşitleme", "", JobStatus.SUCCEEDED, 100, "148 hesap güncellendi."),
    ]
    for minutes, (name, target, status, progress, message) in enumerate(jobs):
        JobRun.objects.create(company=acme, name=name, target=target, status=status, progress=progress,
                              message=message, enqueued_at=now - timedelta(minutes=5 * minutes + 1))
    JobRun.objects.create(company=beta, name="İrsaliye gönderimi", target="IRS2026000000003",
                          status=JobStatus.QUEUED)
    calls = [("ticket", "POST", "/v1/tickets", 201, 184), ("auth", "POST", "/connect/token", 200, 95),
             ("invoice", "GET", "/v2/invoices/status", 429, 12), ("ticket", "GET", "/v1/tickets/ETK2026000000041", 200, 77),
             ("ledger", "GET", "/api/periods", 503, 3010)]
    for seconds, (service, method, path, status, duration) in enumerate(calls):
        RemoteCall.objects.create(company=acme, service=service, method=method, path=path, status=status,
                                  duration_ms=duration, created_at=now - timedelta(seconds=40 * seconds + 5))
    return acme, beta


@pytest.mark.django_db(transaction=True)
def test_sign_in_switch_language_and_company(live_server, browser_page):
    acme, beta = _demo_data()
    page = browser_page

    page.goto(f"{live_server.url}/")
    assert "/login/" in page.url  # anonymous: sent to sign in
    assert page.locator("h1").inner_text() == "Giriş yap"
    screenshot(page, "login")

    page.fill("input[name=username]", "ayse")
    page.fill("input[name=password]", "pass-ayse")
    page.click("button[type=submit]:has-text('Giriş yap')")
    page.wait_for_url(f"{live_server.url}/")
    assert page.locator("h1.page-title").inner_text() == "Gösterge paneli"
    assert page.locator("html").get_attribute("lang") == "tr"
    company_card = page.locator("#company-card")
    assert "Acme Turizm A.Ş." in company_card.inner_text()
    assert "250.000" in company_card.inner_text()  # Turkish thousands separator
    # Every domain has landed: no menu entry is greyed as coming soon.
    assert page.locator(".app-nav .nav-link.disabled").count() == 0
    assert page.locator(".app-nav a.nav-link", has_text="İrsaliyeler").count() == 1

    # English and back.
    page.click("#topbar-language button[value=en]")
    page.wait_for_selector("h1.page-title:has-text('Dashboard')")
    assert page.locator("html").get_attribute("lang") == "en"
    assert "250,000" in page.locator("#company-card").inner_text()
    page.click("#topbar-language button[value=tr]")
    page.wait_for_selector("h1.page-title:has-text('Gösterge paneli')")

    # Switch company: the navbar, the message and the dashboard follow.
    page.click("#company-switcher > button")
    page.click(f"#company-switcher button[name=company][value='{beta.pk}']")
    page.wait_for_selector(".alert-success")
    assert "Beta Lojistik Ltd." in page.locator(".alert-success").inner_text()
    assert "Beta Lojistik Ltd." in page.locator("#company-switcher > button").inner_text()
    assert "Beta Lojistik Ltd." in page.locator("#company-card").inner_text()

    # Background work of the active company; the queued job keeps the list refreshing live.
    page.click(".app-nav a.nav-link:has-text('Arka plan işleri')")
    page.wait_for_selector("h1.page-title:has-text('Arka plan işleri')")
    rows = page.locator("#object-list table tbody tr")
    assert rows.count() == 1 and "İrsaliye gönderimi" in rows.first.inner_text()
    assert page.locator("#object-list[data-refreshing=true]").count() == 1

    # Back to the first company for the dashboard screenshot (with jobs and platform calls).
    page.click("#company-switcher > button")
    page.click(f"#company-switcher button[name=company][value='{acme.pk}']")
    page.wait_for_selector(".alert-success")
    page.click(".app-nav a.nav-link:has-text('Gösterge paneli')")
    page.wait_for_selector("#calls-card")
    assert screenshot(page, "dashboard").stat().st_size > 10_000

    # The jobs page filtered by htmx: the table alone is replaced and the address follows.
    page.click(".app-nav a.nav-link:has-text('Arka plan işleri')")
    page.wait_for_selector("#object-list tbody tr")
    assert page.locator("#object-list tbody tr").count() == 5
    screenshot(page, "background-work")
    sidebar = page.locator("#app-sidebar").element_handle()
    page.select_option("select[name=status]", "failed")
    page.wait_for_url("**status=failed**")
    page.wait_for_function("() => document.querySelectorAll('#object-list tbody tr').length === 1")
    assert "Sefer tarihi geçmiş" in page.locator("#object-list tbody").inner_text()
    page.select_option("select[name=status]", "")
    page.fill("input[name=q]", "Cari hesap")
    page.wait_for_url("**q=Cari**")
    page.wait_for_function("() => document.querySelectorAll('#object-list tbody tr').length === 1")
    assert "148 hesap güncellendi." in page.locator("#object-list tbody").inner_text()
    # Still the same page: htmx swapped the table, it did not reload the document.
    assert sidebar.evaluate("element => element.isConnected")
