"""Several taxes on one line in a real browser: taxes added and removed in place on any line (a new line
too), the live totals summing every tax as the server does, and what was saved is what the page showed."""

import os
import re
from decimal import Decimal

import pytest
from django.contrib.auth.models import Group

from backoffice.core.choices import Role
from backoffice.tickets.models import EventTicket, TicketLineTax
from tests.browser.conftest import CHROMIUM, browser_page, csp_violations, fill_event_ticket, sign_in  # noqa: F401
from tests.conftest import make_user

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's Chromium at /usr/bin/chromium"),
    pytest.mark.django_db(transaction=True),
]


def total(page, name, text):
    page.wait_for_function(
        "([name, text]) => document.querySelector(`[data-total=${name}]`).textContent.trim() === text",
        arg=[name, text])


def test_taxes_added_and_removed_on_any_line_are_summed_and_saved(live_server, browser_page,  # noqa: F811
                                                                  make_sandbox_company):
    for role in Role:  # a transactional test sees no migration data another one flushed
        Group.objects.get_or_create(name=role.value)
    company = make_sandbox_company(name="Anadolu Etkinlik A.Ş.")
    make_user("zeynep", Role.ACCOUNTING, [company])
    page = browser_page
    sign_in(page, live_server, "zeynep")
    page.goto(f"{live_server.url}/tickets/event/add/")
    fill_event_ticket(page, payment="NAKIT")
    page.fill("#id_lines-0-amount", "250")
    page.fill("#id_lines-0-discount_rate", "10")
    page.fill("#id_lines-0-vat_rate", "20")

    # Three taxes on the first line, one of them removed again: 225 net, 5 % = 11,25 and 1,5 % = 3,38.
    line = page.locator("tr[data-line]").first
    for _ in range(3):
        line.locator("[data-add-tax]").click()
    page.fill("#id_lines-0-taxes-0-tax_code", "9021")
    page.fill("#id_lines-0-taxes-0-taxt_rate", "5")
    page.fill("#id_lines-0-taxes-1-tax_code", "0071")
    page.fill("#id_lines-0-taxes-1-taxt_rate", "1,5")
    page.fill("#id_lines-0-taxes-2-tax_code", "4080")
    page.fill("#id_lines-0-taxes-2-taxt_rate", "50")
    total(page, "total_taxes", "127,13")
    line.locator("[data-tax]").nth(2).locator("[data-remove-tax]").click()
    total(page, "total_taxes", "14,63")
    assert line.locator("[data-out=tax]").inner_text() == "14,63"

    # A new line gets its own taxes (its own prefix, lines-1-taxes-0-...).
    page.click("[data-add-line]")
    page.fill("#id_lines-1-service_description", "Hizmet bedeli")
    page.fill("#id_lines-1-amount", "10")
    page.locator("tr[data-line]").nth(1).locator("[data-add-tax]").click()
    page.fill("#id_lines-1-taxes-0-tax_code", "9021")
    page.fill("#id_lines-1-taxes-0-taxt_rate", "10")
    # 225 + 45 + 14,63 and 10 + 1: payable 295,63.
    total(page, "total_taxes", "15,63")
    total(page, "payable_amount", "295,63")

    page.click("button[name=requested_status][value='0']")
    page.wait_for_url(re.compile(r".*/tickets/event/\d+/$"))
    ticket = EventTicket.objects.get(prefix="ETK")
    assert (ticket.total_taxes, ticket.payable_amount) == (Decimal("15.63"), Decimal("295.63"))
    assert list(TicketLineTax.objects.order_by("line__position", "pk").values_list(
        "line__position", "tax_code", "taxt_amount")) == [
        (1, "9021", Decimal("11.25")), (1, "0071", Decimal("3.38")), (2, "9021", Decimal("1.00"))]
