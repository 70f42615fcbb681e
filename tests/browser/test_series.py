"""An administrator starts a document series above its next number in a real browser (issue 28): the form, the
confirmation that names the numbers skipped, the new start in the table; typed the Turkish way ("5.000")."""

import os

import pytest

from backoffice.core.choices import Role
from backoffice.core.models import Company, DocumentSeries
from tests.browser.conftest import CHROMIUM, screenshot, sign_in
from tests.conftest import make_user

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's Chromium at /usr/bin/chromium"),
    pytest.mark.django_db(transaction=True),
]


@pytest.mark.parametrize("width", [1400, 390])
def test_an_administrator_starts_a_series_above_after_confirming(live_server, browser_page, width):
    company = Company.objects.create(name="Anadolu Bilet A.Ş.", api_key="key-anadolu-1")
    for _ in range(3):
        DocumentSeries.allocate(company=company, kind="event_ticket", prefix="ETK", year=2026)
    make_user("ayse", Role.ADMINISTRATOR, [company])
    page = browser_page
    page.set_viewport_size({"width": width, "height": 900})
    sign_in(page, live_server, "ayse")
    page.goto(f"{live_server.url}/series/")
    assert page.locator("#series-table").inner_text().count("ETK2026000000004") == 1

    page.select_option("#id_kind", "event_ticket")
    page.fill("#id_prefix", "etk")
    page.fill("#id_year", "2026")
    page.fill("#id_next_counter", "5.000")
    page.click("#series-start button[type=submit]")
    confirm = page.locator("#series-confirm")
    confirm.wait_for()
    text = confirm.inner_text()
    assert "ETK2026000005000" in text and "ETK2026000000004" in text and "ETK2026000004999" in text
    assert DocumentSeries.objects.get().last_counter == 3  # nothing changed before the confirmation
    screenshot(page, f"series-confirm-{width}")

    page.click("#series-start button[type=submit]")
    page.locator(".alert-success, .messages, [role=alert]").first.wait_for()
    assert "ETK2026000005001" not in page.locator("#series-table").inner_text()
    assert "ETK2026000005000" in page.locator("#series-table").inner_text()
    assert DocumentSeries.objects.get().last_counter == 4999
    screenshot(page, f"series-{width}")
