"""Issue 9 acceptance, in a real browser in Turkish: a company with a wrong API key. The administrator runs
"Test the connection" on the company page and reads, in Turkish, that the platform refused the API key and
what to do; a ticket pushed with that company shows the Turkish message about the company's credentials (who
can fix it), not the platform's English "Unauthorized" nor "The platform refused"."""

import os

import pytest
from django.conf import settings
from django.contrib.auth.models import Group
from django.utils import translation

from backoffice.core.choices import Role, SyncState
from backoffice.core.models import Company, ErrorSource
from backoffice.remote.errors import AuthenticationFailed
from backoffice.tickets.choices import TicketStatus
from tests.browser.conftest import CHROMIUM, screenshot
from tests.conftest import make_user
from tests.tickets.test_services import new_event, push

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's Chromium at /usr/bin/chromium"),
    pytest.mark.django_db(transaction=True),
]

TR_CREDENTIALS = ("Platform şirketin kimlik bilgilerini kabul etmedi (API anahtarı veya servis kullanıcısı). Bir "
                  "yönetici şirket sayfasında bilgileri düzeltip bağlantıyı test etmelidir.")


def sign_in(page, live_server, username):
    page.goto(f"{live_server.url}/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", f"pass-{username}")
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")


def test_wrong_api_key_in_turkish_on_the_connection_test_and_on_the_ticket(live_server, browser_page, sandbox,
                                                                          make_sandbox_company):
    for role in Role:
        Group.objects.get_or_create(name=role.value)
    sandbox.configure(ticket_processing_seconds=0)
    company = make_sandbox_company(name="Anadolu Etkinlik A.Ş.")
    Company.objects.filter(pk=company.pk).update(api_key="sbx-yanlis-anahtar")
    company.refresh_from_db()
    make_user("selin", "administrator", [company])
    make_user("zeynep", "accounting", [company])
    page = browser_page

    # The administrator tests the connection on the company page.
    sign_in(page, live_server, "selin")
    page.goto(f"{live_server.url}{company.get_absolute_url()}")
    assert "Henüz test edilmedi" in page.locator("#connection").inner_text()
    page.click("#connection-test-button")
    page.wait_for_selector("#connection-results[data-ok='false']")
    card = page.locator("#connection")
    key_row = card.locator("[data-service='auth']")
    assert key_row.get_attribute("data-outcome") == "credentials"
    assert "kimlik bilgileri reddedildi" in key_row.inner_text()
    assert "Platform API anahtarını reddetti" in key_row.inner_text()
    assert "API yönetimi modülünden yeniden kopyalayın" in key_row.inner_text()
    assert card.locator("[data-service='crm']").get_attribute("data-outcome") == "skipped"
    assert "Son test:" in page.locator("#connection-checked-at").inner_text()
    assert "bağlantı testi sorunlar buldu" in page.locator("body").inner_text()
    assert "Unauthorized" not in card.inner_text() and "not valid" not in card.inner_text()
    card.scroll_into_view_if_needed()
    screenshot(page, "company-connection-test")

    # A ticket of that company is pushed (the push job's body, run here) and refused for the credentials.
    ticket = new_event(company, status=TicketStatus.QUEUED)
    with pytest.raises(AuthenticationFailed), translation.override(settings.LANGUAGE_CODE):  # as the worker does
        push(ticket)
    assert ticket.sync_state == SyncState.FAILED and ticket.last_error_source == ErrorSource.CREDENTIALS

    page.context.clear_cookies()  # signed out: the accountant comes next
    sign_in(page, live_server, "zeynep")
    page.goto(f"{live_server.url}{ticket.get_absolute_url()}")
    alert = page.locator("#ticket-error")
    alert.wait_for()
    assert alert.get_attribute("data-error-source") == "credentials"
    text = alert.inner_text()
    assert "Şirketin kimlik bilgileri reddedildi" in text and TR_CREDENTIALS in text
    assert "Platform reddetti" not in text and "Unauthorized" not in text and "UnicodeEncodeError" not in text
    screenshot(page, "ticket-credentials-refused")
