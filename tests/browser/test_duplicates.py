"""No second legal ticket by accident, in a real browser (issue 9): Back after "Save" and "Save" again lands
on the ticket already created; a company switched in a second tab refuses the first tab's form; a second
ticket for a taken seat needs a reason."""

import os
import re

import pytest
from django.contrib.auth.models import Group

from backoffice.core.choices import Role
from backoffice.core.models import Company, DocumentSeries
from backoffice.tickets.models import EventTicket
from tests.browser.conftest import CHROMIUM, fill_event_ticket, screenshot, sign_in
from tests.conftest import make_user

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's Chromium at /usr/bin/chromium"),
    pytest.mark.django_db(transaction=True),
]


@pytest.fixture
def accountant_page(live_server, browser_page):
    for role in Role:
        Group.objects.get_or_create(name=role.value)
    first = Company.objects.create(name="Anadolu Etkinlik A.Ş.", api_key="key-anadolu-1")
    second = Company.objects.create(name="İzmir Sahne Ltd.", api_key="key-izmir-2")
    make_user("zeynep", "accounting", [first, second])
    page = browser_page
    sign_in(page, live_server, "zeynep")
    return page, first, second


def fill_event(page, seat="B-12", first_name="Ayşe"):
    fill_event_ticket(page, seat=seat, first_name=first_name)
    page.fill("#id_lines-0-amount", "250")
    page.fill("#id_lines-0-vat_rate", "20")


TICKET_DETAIL = re.compile(r".*/tickets/event/\d+/$")  # not "add/", which a glob's * would match


def save_draft(page):
    page.click("button[name=requested_status][value='0']")


def test_back_and_save_again_lands_on_the_ticket_already_created(accountant_page, live_server):
    page, _first, _second = accountant_page
    page.goto(f"{live_server.url}/tickets/event/add/")
    fill_event(page)
    key = page.locator("input[name=submission_key]").input_value()
    save_draft(page)
    page.wait_for_url(TICKET_DETAIL)
    ticket = EventTicket.objects.get()
    detail = page.url

    page.go_back()
    page.wait_for_selector("#ticket-form")
    # Back re-fetched the form (a new key on the page); the key it was sent with is put back.
    assert page.locator("input[name=submission_key]").input_value() == key
    assert page.locator("#id_event_name").input_value() == "Bahar Konseri"  # the form as it was sent
    save_draft(page)
    page.wait_for_url(detail)

    assert EventTicket.objects.count() == 1
    assert DocumentSeries.objects.get().last_counter == 1
    message = page.locator(".alert-info").first.inner_text()
    assert ticket.ticket_number in message
    screenshot(page, "ticket-resubmitted")


def test_a_company_switched_in_a_second_tab_refuses_the_first_tabs_form(accountant_page, live_server):
    page, first, second = accountant_page
    page.goto(f"{live_server.url}/tickets/event/add/")
    fill_event(page)

    other_tab = page.context.new_page()
    other_tab.goto(f"{live_server.url}/")
    other_tab.click("#company-switcher button.dropdown-toggle")
    other_tab.click(f"#company-switcher button[name=company][value='{second.pk}']")
    other_tab.wait_for_selector(f"#company-switcher .app-company-name:has-text('{second.name}')")
    other_tab.close()

    save_draft(page)
    alert = page.locator("#ticket-form .alert-danger").first
    alert.wait_for()
    text = alert.inner_text()
    assert first.name in text and second.name in text
    assert not EventTicket.objects.exists() and not DocumentSeries.objects.exists()
    assert page.locator("#id_event_name").input_value() == "Bahar Konseri"  # nothing typed is lost
    screenshot(page, "ticket-company-switched")


def test_a_second_ticket_for_a_taken_seat_needs_a_reason(accountant_page, live_server):
    page, first, _second = accountant_page
    page.goto(f"{live_server.url}/tickets/event/add/")
    fill_event(page)
    save_draft(page)
    page.wait_for_url(TICKET_DETAIL)
    taken = EventTicket.objects.get()

    page.goto(f"{live_server.url}/tickets/event/add/")
    fill_event(page, first_name="Mehmet")
    save_draft(page)
    page.wait_for_selector("#id_seat_number_errors")
    assert taken.ticket_number in page.locator("#id_seat_number_errors").inner_text()
    assert EventTicket.objects.count() == 1
    reason = page.locator("#id_duplicate_reason")
    reason.wait_for()
    screenshot(page, "ticket-seat-taken")

    reason.fill("İlk bilet yanlış kişiye kesildi; iptal edilecek.")
    save_draft(page)
    page.wait_for_url(TICKET_DETAIL)
    assert EventTicket.objects.count() == 2
    assert "yanlış kişiye" in page.locator("[data-submission-note]").inner_text()


def test_back_to_a_new_form_that_was_never_sent_saves_it(accountant_page, live_server):
    """The key put back is the one of that page's own history entry: a second "new" form, left by a link and
    come back to, is a new ticket, not a replay of the first one."""
    page, _first, _second = accountant_page
    page.goto(f"{live_server.url}/tickets/event/add/")
    fill_event(page)
    save_draft(page)
    page.wait_for_url(TICKET_DETAIL)

    page.goto(f"{live_server.url}/tickets/event/add/")
    fill_event(page, seat="B-13", first_name="Mehmet")
    page.on("dialog", lambda dialog: dialog.accept())  # "leave with unsaved changes?": yes
    page.goto(f"{live_server.url}/jobs/")
    page.go_back()
    page.wait_for_selector("#ticket-form")
    fill_event(page, seat="B-13", first_name="Mehmet")  # whatever the browser refilled, the form complete
    save_draft(page)
    page.wait_for_url(TICKET_DETAIL)
    assert EventTicket.objects.count() == 2
    assert EventTicket.objects.filter(seat_number="B-13", customer_first_name="Mehmet").exists()
