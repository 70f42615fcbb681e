"""One parsing rule for numbers in the browser and on the server (issue 29, section 2): every row of
tests/data/number_inputs.json through static/js/numbers.js (TrNumber) on a real page, with the results the table
and parse_decimal give (tests/core/test_fields_table.py runs the same rows on the server). Then the invoice and
dispatch forms' live totals read "5.000" as five thousand, and a rate of "32.125" is marked, as the server asks."""

import os
import re

import pytest
from django.contrib.auth.models import Group
from playwright.sync_api import expect

from backoffice.core.choices import Role
from backoffice.core.fields import NumberFormatError, is_ambiguous_rate, parse_decimal
from tests.browser.conftest import CHROMIUM, sign_in
from tests.conftest import make_user
from tests.core.test_fields_table import ROWS

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's Chromium at /usr/bin/chromium"),
    pytest.mark.django_db(transaction=True),
]

INVALID = re.compile(r"\bis-invalid\b")


def server(typed):
    try:
        number = format(parse_decimal(typed), "f")
    except NumberFormatError:
        number = None
    return {"number": number, "ambiguous_rate": is_ambiguous_rate(typed)}


@pytest.fixture
def page(live_server, browser_page, make_sandbox_company):
    for role in Role:
        Group.objects.get_or_create(name=role.value)
    company = make_sandbox_company(name="Anadolu Ticaret A.Ş.")
    make_user("zeynep", Role.ACCOUNTING, [company])
    sign_in(browser_page, live_server, "zeynep")
    return browser_page


def scripts(page):
    return page.evaluate("() => Array.from(document.scripts, (script) => script.getAttribute('src') || '')")


def test_every_row_reads_the_same_in_the_browser_and_on_the_server(live_server, page):
    page.goto(f"{live_server.url}/invoices/add/")
    loaded = [src.rsplit("/", 1)[-1] for src in scripts(page)]
    assert loaded.index("numbers.js") < loaded.index("invoice-totals.js")  # read before it is used

    typed = [row["typed"] for row in ROWS]
    browser = page.evaluate("""([rows]) => rows.map((text) => ({
        number: TrNumber.parse(text), ambiguous_rate: TrNumber.isAmbiguousRate(text)}))""", [typed])
    for row, got in zip(ROWS, browser, strict=True):
        expected = {"number": row["number"], "ambiguous_rate": row["ambiguous_rate"]}
        assert got == expected == server(row["typed"]), (row["typed"], got)
    # The live totals' own name for it is the same function.
    assert page.evaluate("() => InvoiceTotals.parse('5.000')") == "5000"


def test_invoice_live_totals_read_5_000_as_five_thousand(live_server, page):
    page.goto(f"{live_server.url}/invoices/add/")
    quantity, price = page.locator("#id_lines-0-quantity"), page.locator("#id_lines-0-unit_price")
    rate = page.locator("#id_exchange_rate")
    # What the server's field is, the page says: a quantity reads 5.000, a rate asks.
    assert quantity.get_attribute("data-number") == "" and rate.get_attribute("data-number") == "rate"
    assert page.locator("#id_lines-0-vat_rate").get_attribute("data-number") == "rate"
    quantity.fill("5.000")
    price.fill("1.250,75")
    line = page.locator("[data-line]").first
    expect(line.locator("[data-line-total]")).to_have_text("6.253.750,00")  # 5000 x 1250.75
    expect(quantity).not_to_have_class(INVALID)
    quantity.fill("5,000")  # five
    expect(line.locator("[data-line-total]")).to_have_text("6.253,75")

    rate.fill("32.125")
    expect(rate).to_have_class(INVALID)  # asked, as the server asks
    rate.fill("32,125")
    expect(rate).not_to_have_class(INVALID)


def test_dispatch_live_totals_read_5_000_as_five_thousand(live_server, page):
    page.goto(f"{live_server.url}/dispatch/add/")
    assert "numbers.js" in " ".join(scripts(page))
    page.fill("#id_lines-0-quantity", "5.000")
    page.fill("#id_lines-0-unit_price", "1.250,75")
    page.fill("#id_lines-0-vat_rate", "20")
    # parseFloat read 5.000 as 5 (6.253,75): the server saves 5000.
    expect(page.locator('[data-total="amount"]')).to_have_text("6.253.750,00")
    expect(page.locator('[data-total="vat"]')).to_have_text("1.250.750,00")
    # A VAT rate the server would ask about counts for nothing until it is written clearly.
    page.fill("#id_lines-0-vat_rate", "18.500")
    expect(page.locator('[data-total="vat"]')).to_have_text("0,00")
    page.fill("#id_lines-0-vat_rate", "18,5")
    expect(page.locator('[data-total="vat"]')).to_have_text("1.156.943,75")
