"""Typing as people in Turkey do (issue 9, point 8), in a real browser: "1.250,75" in a ticket line's amount
is stored as 1250.75 and the live totals read it the same way; the typed data of a form is not lost without
a question when the user switches language or company or follows a link; sending the form asks nothing."""

import os
import re
from decimal import Decimal

import pytest
from django.contrib.auth.models import Group

from backoffice.core.choices import Role
from backoffice.core.fields import NumberFormatError, parse_decimal
from backoffice.tickets.models import EventTicket, TicketLine
from tests.browser.conftest import CHROMIUM, screenshot, sign_in
from tests.browser.conftest import fill_event_ticket as fill_event
from tests.conftest import make_user
from tests.core import test_localized_input as unit

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's Chromium at /usr/bin/chromium"),
    pytest.mark.django_db(transaction=True),
]

QUESTION = "() => document.body.dataset.unsavedChanges"


def _cases(test):
    return next(mark.args[1] for mark in test.pytestmark if mark.name == "parametrize")


@pytest.fixture
def accountant_page(live_server, browser_page, make_sandbox_company):
    for role in Role:
        Group.objects.get_or_create(name=role.value)
    company = make_sandbox_company(name="Anadolu Etkinlik A.Ş.")
    other = make_sandbox_company(name="Ege Organizasyon Ltd.")
    make_user("zeynep", Role.ACCOUNTING, [company, other])
    page = browser_page
    sign_in(page, live_server, "zeynep")
    page.company = company
    return page


def fill_event_ticket(page):
    fill_event(page, payment="NAKIT")
    page.fill("#id_customer_telephone", "0532 123 45 67")


def test_turkish_amount_is_stored_as_typed(live_server, accountant_page):
    page = accountant_page
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.type), dialog.dismiss()))
    page.goto(f"{live_server.url}/tickets/event/add/")
    amount = page.locator("#id_lines-0-amount")
    assert amount.get_attribute("type") == "text" and amount.get_attribute("inputmode") == "decimal"

    # The page's parser (static/js/numbers.js, which tickets.js uses) and the server's agree on every case of the
    # unit tests (the shared table is run by tests/browser/test_number_parsing.py).
    cases = [*_cases(unit.test_parse), *((typed, None) for typed in _cases(unit.test_refused))]
    got = page.evaluate("([texts]) => texts.map((text) => TrNumber.parse(text))", [[typed for typed, _n in cases]])
    for (typed, number), parsed in zip(cases, got, strict=True):
        if number is None:
            with pytest.raises(NumberFormatError):
                parse_decimal(typed)
            assert parsed is None, typed
        else:
            assert Decimal(parsed) == parse_decimal(typed) == Decimal(number), (typed, parsed)
    # The ticket's percentages are rates: the page marks nothing but counts a rate it would ask about as 0.
    assert page.locator("#id_lines-0-vat_rate").get_attribute("data-number") == "rate"
    assert amount.get_attribute("data-number") == ""

    fill_event_ticket(page)
    amount.fill("1.250,75")
    page.fill("#id_lines-0-vat_rate", "20")
    page.fill("#id_lines-0-discount_rate", "%10.000")  # asked by the server: no discount counted yet
    # 1250.75 + VAT 20 % 250.15 = 1500.90
    page.wait_for_function(
        "() => document.querySelector('[data-total=payable_amount]').textContent.trim() === '1.500,90'")
    page.fill("#id_lines-0-discount_rate", "%10")
    page.wait_for_function(
        "() => document.querySelector('[data-total=total_amount]').textContent.trim() === '1.250,75'")
    amount.fill("5.000")  # five thousand, as the server reads it
    page.wait_for_function(
        "() => document.querySelector('[data-total=total_amount]').textContent.trim() === '5.000,00'")
    amount.fill("1.250,75")
    page.wait_for_function(
        "() => document.querySelector('[data-total=total_amount]').textContent.trim() === '1.250,75'")
    # 1250.75 - 125.08 discount = 1125.67; VAT 20 % = 225.13; payable 1350.80
    assert page.locator("[data-total=payable_amount]").inner_text() == "1.350,80"
    page.click("button[name=requested_status][value='0']")
    page.wait_for_url(re.compile(r".*/tickets/event/\d+/$"))  # not add/
    ticket = EventTicket.objects.get(prefix="ETK")
    line = TicketLine.objects.get(event_ticket=ticket)
    assert line.amount == Decimal("1250.75") and line.discount_rate == Decimal(10)
    assert ticket.total_amount == Decimal("1250.75") and ticket.payable_amount == Decimal("1350.80")
    assert dialogs == []  # sending the form asked nothing

    # Junk is refused on the field, with what to type instead; a good amount comes back as typed.
    page.goto(f"{live_server.url}/tickets/event/add/")
    fill_event_ticket(page)
    page.fill("#id_seat_number", "B-13")
    page.fill("#id_lines-0-amount", "12,50,75")
    page.fill("#id_lines-0-vat_rate", "18")
    page.click("button[name=requested_status][value='0']")
    page.wait_for_selector("#id_lines-0-amount.is-invalid")
    assert "1.250,75" in page.locator("#ticket-lines .invalid-feedback").first.inner_text()
    assert page.locator("#id_lines-0-amount").input_value() == "12,50,75"
    assert page.locator("#id_lines-0-vat_rate").input_value() == "18"
    assert EventTicket.objects.count() == 1
    screenshot(page, "ticket-amount-refused")


def test_typed_data_is_not_lost_without_a_question(live_server, accountant_page):
    page = accountant_page
    seen = []
    answer = {"accept": False}

    def on_dialog(dialog):
        seen.append((dialog.type, dialog.message))
        dialog.accept() if answer["accept"] else dialog.dismiss()

    page.on("dialog", on_dialog)
    page.goto(f"{live_server.url}/tickets/event/add/")

    # Nothing typed yet: switching language asks nothing.
    page.click("#topbar-language button[value=en]")
    page.wait_for_function("() => document.documentElement.lang === 'en'")
    page.click("#topbar-language button[value=tr]")
    page.wait_for_function("() => document.documentElement.lang === 'tr'")
    assert seen == []

    # Typed (with the keyboard: the browser asks before unloading only a page the user has used).
    page.click("#id_event_name")
    page.keyboard.type("Bahar Konseri")

    # The language switch asks; "stay" keeps the page and what was typed.
    page.click("#topbar-language button[value=en]")
    page.wait_for_function("() => document.querySelector('#id_event_name').value === 'Bahar Konseri'")
    assert seen and seen[-1] == ("confirm", page.evaluate(QUESTION))
    assert page.evaluate("() => document.documentElement.lang") == "tr"

    # The company switch asks too.
    count = len(seen)
    page.click("#company-switcher > button")
    page.click("#company-switcher button[name=company]:not(.active)")
    page.wait_for_function("() => document.querySelector('#company-switcher form') !== null")
    assert len(seen) == count + 1 and seen[-1][0] == "confirm"
    assert page.locator("#id_event_name").input_value() == "Bahar Konseri"

    # A link: the browser's own question before unloading; "stay" keeps the page.
    count = len(seen)
    page.click(".app-nav a.nav-link[href='/']")
    page.wait_for_function("() => document.querySelector('#id_event_name') !== null")
    assert len(seen) == count + 1 and seen[-1][0] == "beforeunload"
    assert page.url.endswith("/tickets/event/add/")

    # Answered "leave": the language changes, the question is not asked twice.
    answer["accept"] = True
    count = len(seen)
    page.click("#topbar-language button[value=en]")
    page.wait_for_function("() => document.documentElement.lang === 'en'")
    assert len(seen) == count + 1 and seen[-1][0] == "confirm"


def test_sending_a_form_with_errors_asks_nothing_and_its_data_counts_as_unsaved(live_server, accountant_page):
    page = accountant_page
    seen = []
    page.on("dialog", lambda dialog: (seen.append(dialog.type), dialog.dismiss()))
    page.goto(f"{live_server.url}/tickets/event/add/")
    page.click("#id_event_name")
    page.keyboard.type("Bahar Konseri")
    page.click("button[name=requested_status][value='0']")  # much is missing: sent back with errors
    page.wait_for_selector(".is-invalid")
    assert seen == []
    # Nothing typed since, but what was typed before is not saved: the language switch asks.
    page.click("#topbar-language button[value=en]")
    page.wait_for_function("() => document.querySelector('.is-invalid') !== null")
    assert seen == ["confirm"]
    assert not EventTicket.objects.exists()
