"""Shared by the browser tests: Debian's Chromium, the `browser_page` fixture and the screenshot helper.

Every page runs as a user in Turkey would see it: Turkish locale (Accept-Language tr-TR, Intl formats, date
inputs as dd.mm.yyyy) and the Istanbul time zone, so the screenshots show Turkish formats.
"""

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
# `SCREENSHOTS=1 make test` refreshes the README's pictures; otherwise they go to an ignored folder, so a
# test run leaves the tree clean.
SCREENSHOT_DIR = ROOT / "docs" / "screenshots" if os.environ.get("SCREENSHOTS") == "1" else ROOT / "tests" / "browser" / "artifacts"
# Keyword arguments of Playwright's browser.new_context() for any page of these tests.
CONTEXT_OPTIONS = {"viewport": {"width": 1440, "height": 900}, "locale": "tr-TR", "timezone_id": "Europe/Istanbul"}


def screenshot(page, name: str) -> Path:
    """Save a full-window screenshot as <name>.png and return its path."""
    SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOT_DIR / f"{name}.png"
    page.screenshot(path=str(path))
    return path


@pytest.fixture
def browser_page():
    """A page of a fresh Chromium context in Turkish and Istanbul time that can reach the live server only."""
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
        page = context.new_page()
        page.set_default_timeout(15_000)
        # Nothing may leave the machine: every request goes to the live server only.
        page.route("**/*", lambda route: route.continue_()
                   if route.request.url.startswith(("http://localhost", "http://127.0.0.1"))
                   else route.abort())
        yield page
        context.close()
        browser.close()
