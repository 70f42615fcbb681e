"""The directories of registered users (core.generic.directory), declared once for e-invoice and dispatch-note users:
everyone reads the list, only an administrator reads it again now (one job, not two), and the page says what the
list is for."""

import pytest
from django.urls import reverse

from backoffice.core.models import JobRun
from tests.tickets.conftest import login

pytestmark = pytest.mark.django_db

DIRECTORIES = (("invoices:taxpayer_list", "invoices:taxpayer_refresh", "taxpayers_refresh"),
               ("dispatch:dispatchtaxpayer_list", "dispatch:dispatchtaxpayer_refresh", "dispatch_taxpayers_refresh"))


@pytest.mark.parametrize("list_name, refresh_name, job", DIRECTORIES)
def test_an_administrator_reads_the_list_again_once(client, administrator, company, list_name, refresh_name, job):
    login(client, administrator, company)
    page = client.get(reverse(list_name)).content.decode()
    assert 'id="directory-refresh"' in page and reverse(refresh_name) in page
    first = client.post(reverse(refresh_name), follow=True)
    second = client.post(reverse(refresh_name), follow=True)
    assert first.redirect_chain[-1][0] == reverse(list_name)
    assert "being read" in str(list(first.context["messages"])[0])
    assert "already being read" in str(list(second.context["messages"])[0])
    assert JobRun.objects.filter(name=job).count() == 1


@pytest.mark.parametrize("list_name, refresh_name, job", DIRECTORIES)
def test_others_read_the_list_but_do_not_refresh_it(client, accountant, company, list_name, refresh_name, job):
    login(client, accountant, company)
    page = client.get(reverse(list_name))
    assert page.status_code == 200 and 'id="directory-refresh"' not in page.content.decode()
    assert client.post(reverse(refresh_name)).status_code == 403
    assert not JobRun.objects.filter(name=job).exists()


def test_the_dispatch_directory_names_the_generic_mailbox(client, accountant, company, settings):
    settings.DISPATCH_GENERIC_RECIPIENT_ALIAS = "urn:mail:genel@ornek.gov.tr"
    login(client, accountant, company)
    assert "urn:mail:genel@ornek.gov.tr" in client.get(reverse("dispatch:dispatchtaxpayer_list")).content.decode()
