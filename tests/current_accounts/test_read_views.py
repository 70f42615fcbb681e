"""The buttons that read from the platform now (core.generic.reading): an account's "read again" and the
chart's "read the platform's chart": POST only, queued (nothing waits for the platform), said, back to the page;
editors only; an account the platform does not have, or another company's, is a 404."""

import pytest
from django.contrib.messages import get_messages
from django.urls import reverse

from backoffice.core.choices import SyncState
from backoffice.core.models import JobRun
from backoffice.current_accounts.models import CurrentAccount
from tests.tickets.conftest import login

pytestmark = pytest.mark.django_db

VKN = "1234567890"


def synced(company, remote_id="501"):
    return CurrentAccount.objects.create(company=company, name="Bir", identifier=VKN, remote_id=remote_id,
                                         sync_state=SyncState.SYNCED)


def said(response):
    return [str(message) for message in get_messages(response.wsgi_request)]


def test_reading_an_account_again_is_queued_and_said(client, accountant, company):
    web = login(client, accountant, company)
    account = synced(company)
    url = reverse("current_accounts:currentaccount_read", args=[account.pk])
    assert web.get(url).status_code == 405
    response = web.post(url)
    assert response.status_code == 302 and response.url == reverse("current_accounts:currentaccount_detail",
                                                                   args=[account.pk])
    assert said(response) == ["Reading the account from the platform; this page shows it when done."]
    assert JobRun.objects.filter(company=company, target=f"current_accounts.currentaccount:{account.pk}").exists()


def test_an_account_not_on_the_platform_or_another_companys_is_404(client, accountant, company, other_company):
    web = login(client, accountant, company)
    for account in (synced(company, remote_id=""), synced(other_company)):
        assert web.post(reverse("current_accounts:currentaccount_read", args=[account.pk])).status_code == 404
    assert not JobRun.objects.exists()


def test_only_editors_read_again(client, manager, company):
    web = login(client, manager, company)
    account = synced(company)
    assert web.post(reverse("current_accounts:currentaccount_read", args=[account.pk])).status_code == 403
    assert web.post(reverse("chart_of_accounts:account_mirror")).status_code == 403
    assert not JobRun.objects.exists()


def test_reading_the_chart_is_queued_and_said(client, accountant, company):
    web = login(client, accountant, company)
    response = web.post(reverse("chart_of_accounts:account_mirror"))
    assert response.status_code == 302 and response.url == reverse("chart_of_accounts:account_list")
    assert said(response) == ["Reading the chart of accounts from the platform; the list fills as pages arrive."]
    assert JobRun.objects.filter(company=company).count() == 1
