"""The security pages in a real browser, in Turkish: an administrator creates a member (a weak password refused on
its field first), gives them a role; wrong passwords lock the sign-in with a page that says what to do; a page that
refreshes itself marks its requests as background work (they do not keep an idle session alive)."""

import os

import pytest
from django.contrib.auth.models import Group, User
from playwright.sync_api import expect

from backoffice.core.choices import JobStatus, Role
from backoffice.core.models import Company, JobRun, Membership
from tests.browser.conftest import CHROMIUM, screenshot
from tests.conftest import make_user

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's Chromium at /usr/bin/chromium"),
    pytest.mark.django_db(transaction=True),
]


def _company_and_administrator():
    # A transactional test before this one may have flushed the groups the roles migration created.
    for role in Role:
        Group.objects.get_or_create(name=role.value)
    company = Company.objects.create(name="Acme Turizm A.Ş.", api_key="key-acme", credit_quantity=250_000)
    admin = make_user("ayse", "administrator", [company])
    admin.first_name, admin.last_name = "Ayşe", "Yılmaz"
    admin.save()
    return company, admin


def _sign_in(page, live_server, username, password):
    page.goto(f"{live_server.url}/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")


def test_an_administrator_creates_a_member_and_gives_a_role(live_server, browser_page):
    company, _admin = _company_and_administrator()
    page = browser_page
    _sign_in(page, live_server, "ayse", "pass-ayse")
    page.wait_for_url(f"{live_server.url}/")
    page.click("a.nav-link:has-text('Üyeler')")
    page.click("#member-create")
    expect(page.locator("h1")).to_have_text("Yeni kullanıcı")
    page.fill("input[name=username]", "mehmet.kaya")
    page.fill("input[name=first_name]", "Mehmet")
    page.fill("input[name=last_name]", "Kaya")
    page.fill("input[name=email]", "mehmet@acme.example")
    page.check("input[name=roles][value=accounting]")
    page.fill("input[name=password1]", "123")
    page.fill("input[name=password2]", "123")
    page.click("form.edit-form button[type=submit]")
    # Django's password rules, on the field, in Turkish; nothing created.
    expect(page.locator("#id_password2_errors")).to_contain_text("kısa")
    assert not User.objects.filter(username="mehmet.kaya").exists()
    screenshot(page, "member-create")
    page.fill("input[name=password1]", "Uzun-Bir-Parola-2026")
    page.fill("input[name=password2]", "Uzun-Bir-Parola-2026")
    page.click("form.edit-form button[type=submit]")
    expect(page.locator(".alert-success")).to_contain_text("mehmet.kaya artık giriş yapabilir")
    page.click("a:has-text('mehmet.kaya')")
    expect(page.locator("h1")).to_have_text("Mehmet Kaya")
    page.click("#member-roles")
    page.check("input[name=roles][value=manager]")
    page.click("form.edit-form button[type=submit]")
    expect(page.locator("td:has-text('Yönetici')")).to_be_visible()
    user = User.objects.get(username="mehmet.kaya")
    assert set(user.groups.values_list("name", flat=True)) == {"accounting", "manager"}
    assert list(Membership.objects.filter(user=user).values_list("company", flat=True)) == [company.pk]
    screenshot(page, "member-detail")
    page.set_viewport_size({"width": 390, "height": 844})
    screenshot(page, "member-detail-narrow")


def test_wrong_passwords_lock_the_sign_in_with_a_page_that_says_what_to_do(live_server, browser_page, settings):
    _company_and_administrator()
    page = browser_page
    for attempt in range(settings.AXES_FAILURE_LIMIT):
        _sign_in(page, live_server, "ayse", f"yanlis-{attempt}")
    expect(page.locator("#locked-out h1")).to_have_text("Çok fazla hatalı giriş denemesi")
    expect(page.locator("#locked-out")).to_contain_text("15 dakika")
    page.set_viewport_size({"width": 390, "height": 844})
    screenshot(page, "sign-in-locked")
    _sign_in(page, live_server, "ayse", "pass-ayse")  # the right password: still locked
    expect(page.locator("#locked-out")).to_be_visible()


def test_a_refreshing_page_marks_its_own_requests_as_background(live_server, browser_page):
    company, _admin = _company_and_administrator()
    JobRun.objects.create(company=company, name="Bilet gönderimi", status=JobStatus.RUNNING, progress=30)
    page = browser_page
    _sign_in(page, live_server, "ayse", "pass-ayse")
    page.wait_for_url(f"{live_server.url}/")
    page.goto(f"{live_server.url}/jobs/")
    expect(page.locator("[data-refreshing=true]")).to_have_count(1)
    # The list polls every 5 s by itself: that request carries the header; the user's own page load did not.
    with page.expect_request(lambda request: request.headers.get("hx-request") == "true", timeout=20_000) as polled:
        pass
    assert polled.value.headers.get("x-background-refresh") == "1"
    with page.expect_request(lambda request: "/jobs/" in request.url and "status=" in request.url) as chosen:
        page.select_option("select[name=status]", "running")
    assert chosen.value.headers.get("x-background-refresh") is None
