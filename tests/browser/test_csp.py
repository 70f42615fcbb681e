"""The Content-Security-Policy in a real browser: every page of the menu is sent with a strict policy (our own
files only, no inline script or style) and shows without the browser refusing anything; an inline script
slipped into a page is refused, and browser_page's check notices it (so that check can fail)."""

import os

import pytest
from django.contrib.auth.models import Group
from playwright.sync_api import expect

from backoffice.core.choices import Role
from backoffice.core.models import Company
from tests.browser.conftest import CHROMIUM
from tests.conftest import make_user

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's Chromium at /usr/bin/chromium"),
    pytest.mark.django_db(transaction=True),
]

# Runs in the page: an inline <script> added to the document, the way an injected one would be. Resolves
# with the securitypolicyviolation event it causes, and whether the script ran anyway.
INJECT_INLINE_SCRIPT = """() => new Promise((resolve) => {
  document.addEventListener("securitypolicyviolation", (event) => resolve({
    directive: event.effectiveDirective, blocked: event.blockedURI, ran: window.__injectedScriptRan === true,
  }), {once: true});
  const script = document.createElement("script");
  script.textContent = "window.__injectedScriptRan = true;";
  document.body.append(script);
})"""

# Runs in the page: content swapped in by htmx, with a size given as a data-attribute (a progress bar);
# resolves with the width backoffice.js gave it once htmx has settled the new content.
SWAP_PROGRESS_BAR = """() => new Promise((resolve) => {
  const box = document.createElement("div");
  document.getElementById("main").append(box);
  document.body.addEventListener("htmx:afterSettle", () => {
    resolve(box.querySelector(".progress-bar").style.width);
  }, {once: true});
  htmx.swap(box, '<div class="progress"><div class="progress-bar" data-width="42"></div></div>',
            {swapStyle: "innerHTML"});
})"""


def assert_strict_policy(response):
    policy = response.headers.get("content-security-policy", "")
    assert "script-src 'self'" in policy, f"{response.url}: {policy!r}"
    assert "style-src 'self'" in policy, f"{response.url}: {policy!r}"
    assert "'unsafe-inline'" not in policy and "'unsafe-eval'" not in policy, f"{response.url}: {policy!r}"


def test_every_menu_page_keeps_to_a_strict_policy_and_an_inline_script_is_refused(live_server, browser_page,
                                                                                  csp_violations):
    for role in Role:
        Group.objects.get_or_create(name=role.value)
    company = Company.objects.create(name="Acme Turizm A.Ş.", api_key="key-acme", credit_quantity=250_000)
    make_user("ayse", "administrator", [company])
    page = browser_page

    response = page.goto(f"{live_server.url}/login/")
    assert_strict_policy(response)
    page.fill("input[name=username]", "ayse")
    page.fill("input[name=password]", "pass-ayse")
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")

    # Every page of the side menu, as an administrator sees it.
    links = page.locator(".app-nav a.nav-link:not(.disabled)")
    hrefs = list(dict.fromkeys(link.get_attribute("href") for link in links.all()))
    assert len(hrefs) >= 5, hrefs
    for href in hrefs:
        response = page.goto(f"{live_server.url}{href}")
        assert response.ok, f"{href}: {response.status}"
        assert_strict_policy(response)
        # htmx's indicator rules come from backoffice.css, not from a <style> element it would add.
        assert page.locator("style").count() == 0, href
    # The error pages too.
    response = page.goto(f"{live_server.url}/no-such-page/")
    assert response.status == 404
    assert_strict_policy(response)
    # Bootstrap's dropdown (positioned by Popper through the CSSOM) opens without a refusal.
    page.goto(f"{live_server.url}/")
    page.click("#user-menu")
    expect(page.locator("#user-menu + .dropdown-menu")).to_be_visible()
    # Sizes given as data-attributes are applied to content htmx swaps in, through the CSSOM.
    assert page.evaluate(SWAP_PROGRESS_BAR) == "42%"
    page.wait_for_timeout(100)
    assert csp_violations == []  # (browser_page checks this too, at the end)

    # An inline script slipped into the page is refused, and the refusal is seen.
    violation = page.evaluate(INJECT_INLINE_SCRIPT)
    assert violation == {"directive": "script-src-elem", "blocked": "inline", "ran": False}
    assert page.evaluate("() => window.__injectedScriptRan") is None
    # browser_page's witnesses saw it too (the event and the console error), so this test would fail at
    # teardown if it did not forget them here.
    page.wait_for_timeout(100)
    assert any(seen.get("directive") == "script-src-elem" for seen in csp_violations), csp_violations
    assert any("Content Security Policy" in seen.get("console", "") for seen in csp_violations), csp_violations
    csp_violations.clear()
