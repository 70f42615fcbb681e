"""Shared by the browser tests: Debian's Chromium, the `browser_page` fixture and the screenshot helper.

Every page runs as a user in Turkey would see it: Turkish locale (Accept-Language tr-TR, Intl formats, date
inputs as dd.mm.yyyy) and the Istanbul time zone, so the screenshots show Turkish formats.

Every page also runs under the site's Content-Security-Policy (no inline script or style): a test during which
the browser refuses anything because of it fails at the fixture's teardown, with the list of what was refused.
Give Playwright's page.wait_for_function() a function ("() => ..."), not a bare expression: it evaluates a bare
expression with eval() on every poll, which that policy refuses (a function is evaluated once, by DevTools).
"""

import json
import os
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
# `SCREENSHOTS=1 make test` refreshes the README's pictures; otherwise they go to an ignored folder, so a
# test run leaves the tree clean.
SCREENSHOT_DIR = ROOT / "docs" / "screenshots" if os.environ.get("SCREENSHOTS") == "1" else ROOT / "tests" / "browser" / "artifacts"
# Keyword arguments of Playwright's browser.new_context() for any page of these tests.
CONTEXT_OPTIONS = {"viewport": {"width": 1440, "height": 900}, "locale": "tr-TR", "timezone_id": "Europe/Istanbul"}


# Runs in every document before its own scripts: each Content-Security-Policy violation the page sees (the
# securitypolicyviolation event, fired for an inline style attribute, an inline script, eval, ...) is kept on
# window.__cspViolations and handed at once to the test (the binding below), so that a violation just before
# a navigation is not lost with its page.
CSP_LISTENER = """
(() => {
  const seen = [];
  Object.defineProperty(window, "__cspViolations", {value: seen});
  const record = (event) => {
    const violation = {directive: event.effectiveDirective || event.violatedDirective, blocked: event.blockedURI,
                       sample: event.sample, source: event.sourceFile, line: event.lineNumber,
                       page: String(document.location)};
    seen.push(violation);
    if (typeof window.__reportCspViolation === "function") { window.__reportCspViolation(violation); }
  };
  document.addEventListener("securitypolicyviolation", record, true);
})();
"""


def screenshot(page, name: str) -> Path:
    """Save a full-window screenshot as <name>.png and return its path."""
    SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOT_DIR / f"{name}.png"
    page.screenshot(path=str(path))
    return path


@pytest.fixture
def csp_violations():
    """What the browser refused because of the Content-Security-Policy during the test, filled by browser_page.

    The list is checked at browser_page's teardown: a test that provokes a violation on purpose clears it."""
    return []


@pytest.fixture
def browser_page(csp_violations):
    """A page of a fresh Chromium context in Turkish and Istanbul time that can reach the live server only.

    The test fails (at teardown) when the browser reported a Content-Security-Policy violation meanwhile."""
    # Playwright's sync API runs an event loop in this thread; Django's ORM calls of the test itself
    # stay synchronous and safe.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            # Date inputs follow the browser's UI language, and Debian's Chromium ships only en-US for it:
            # this feature makes them follow the page's <html lang="tr"> instead (dd.mm.yyyy, 24 hours).
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run",
                  "--enable-blink-features=LangAttributeAwareFormControlUI"],
        )
        context = browser.new_context(**CONTEXT_OPTIONS)
        # Two witnesses of a refusal: the page's securitypolicyviolation event, and Chromium's console error
        # ("Refused to apply inline style because it violates the following Content Security Policy ...").
        context.expose_binding("__reportCspViolation", lambda source, violation: csp_violations.append(violation))
        context.add_init_script(CSP_LISTENER)
        page = context.new_page()
        page.on("console", lambda message: csp_violations.append({"console": message.text[:200], "page": page.url})
                if "Content Security Policy" in message.text else None)
        page.set_default_timeout(15_000)
        # Nothing may leave the machine: every request goes to the live server only.
        page.route("**/*", lambda route: route.continue_()
                   if route.request.url.startswith(("http://localhost", "http://127.0.0.1"))
                   else route.abort())
        yield page
        try:
            # Violation events are dispatched as tasks: let the last ones arrive before looking.
            page.wait_for_timeout(100)
        finally:
            context.close()
            browser.close()
    if csp_violations:
        seen = Counter(json.dumps(violation, ensure_ascii=False, sort_keys=True) for violation in csp_violations)
        pytest.fail("the browser refused content because of the Content-Security-Policy:\n" + "\n".join(
            f"{count} x {violation}" for violation, count in seen.items()), pytrace=False)


def sign_in(page, live_server, username, password=None):
    """Sign in through the login page (password: the test users' "pass-<username>") and land on the dashboard."""
    page.goto(f"{live_server.url}/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password or f"pass-{username}")
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")


def fill_event_ticket(page, *, seat="B-12", first_name="Ayşe", payment="KREDIKARTI"):
    """Every required field of the new event-ticket form but the line amounts."""
    from tests.tickets.conftest import VKN

    page.fill("#id_prefix", "ETK")
    page.select_option("#id_payment_type", payment)
    page.fill("#id_event_name", "Bahar Konseri")
    page.fill("#id_event_time", "2026-12-20T20:00")
    page.fill("#id_seat_number", seat)
    page.fill("#id_event_location", "Salon A")
    page.select_option("#id_event_city_id", "34")
    page.fill("#id_event_municipality", "Kadıköy")
    page.fill("#id_event_organizer_vkn_tckn", VKN)
    page.fill("#id_customer_first_name", first_name)
    page.fill("#id_customer_last_name", "Yılmaz")
    page.fill("#id_lines-0-service_description", "Salon bileti")


# What a browser test that needs a real worker and the sandbox is marked with (tests/browser/test_*.py).
WORKER_BROWSER_MARKS = [
    pytest.mark.browser,
    pytest.mark.worker,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's Chromium at /usr/bin/chromium"),
    pytest.mark.django_db(transaction=True),
]


def settled(page, worker, selector, message, timeout=90_000):
    """Wait for what the worker and the platform do, followed by the page's own refresh; the worker's output when
    it does not come."""
    from tests.testapp.testing import output

    try:
        page.wait_for_selector(selector, state="attached", timeout=timeout)
    except Exception:
        raise AssertionError(f"timed out waiting for {message} ({selector})\n--- worker output ---\n"
                             f"{output(worker)[-5000:]}") from None
