"""Several taxes on one line (document 2, section 2.4: taxes is an array of taxCode, taxName, taxtRate,
taxtAmount): typed in the ticket form, kept, sent to the platform (the sandbox, over HTTP) with every one
of them, shown again on the edit page; a wrong tax is marked on its own field and nothing is saved."""

import re
from decimal import Decimal

import pytest
from django.urls import reverse
from django.utils import translation

from backoffice.core.choices import SyncState
from backoffice.core.models import DocumentSeries, JobRun
from backoffice.core.platform import client_for
from backoffice.remote.tickets import EventTicketClient
from backoffice.tickets import services
from backoffice.tickets.models import EventTicket, TicketLine, TicketLineTax
from tests.conftest import form_post, make_user

from .conftest import event_data, login

pytestmark = pytest.mark.django_db

EVENT_ADD = "tickets:eventticket_add"
TWO_TAXES = ({"service_description": "Salon bileti", "amount": "250,00", "discount_rate": "10", "vat_rate": "20",
              "taxes": [{"tax_code": "9021", "tax_name": "Eğlence vergisi", "taxt_rate": "5"},
                        {"tax_code": "0071", "tax_name": "ÖTV", "taxt_rate": "1,5"}]},
             {"service_description": "Hizmet bedeli", "amount": "10", "vat_rate": "20"})


@pytest.fixture(autouse=True)
def english():
    with translation.override("en"):
        yield


@pytest.fixture
def signed_in(client, sandbox, sandbox_company):
    return login(client, make_user("muhasebe", "accounting", [sandbox_company]), sandbox_company)


def test_a_line_with_two_taxes_is_saved_sent_and_the_body_carries_both(signed_in, sandbox_company):
    response = form_post(signed_in, reverse(EVENT_ADD), event_data(lines=TWO_TAXES))
    assert response.status_code == 302, response.context and response.context["formset"].errors

    ticket = EventTicket.objects.get()
    first, second = ticket.lines.order_by("position")
    # 250 - 10 % = 225 net: VAT 45, taxes 11.25 and 3.38; the second line 10 + VAT 2.
    assert list(first.taxes.order_by("pk").values_list("tax_code", "tax_name", "taxt_rate", "taxt_amount")) == [
        ("9021", "Eğlence vergisi", Decimal("5.00"), Decimal("11.25")),
        ("0071", "ÖTV", Decimal("1.50"), Decimal("3.38"))]
    assert not second.taxes.exists()
    assert (ticket.total_taxes, ticket.payable_amount) == (Decimal("14.63"), Decimal("296.63"))

    assert services.event_ticket_push(ticket.pk) == "Sent to the platform."
    ticket.refresh_from_db()
    assert ticket.sync_state == SyncState.SYNCED
    remote = client_for(sandbox_company, EventTicketClient).get(ticket.remote_id)
    assert remote["ticketLines"][0]["taxes"] == [
        {"taxCode": "9021", "taxName": "Eğlence vergisi", "taxtRate": 5, "taxtAmount": 11.25},
        {"taxCode": "0071", "taxName": "ÖTV", "taxtRate": 1.5, "taxtAmount": 3.38}]
    assert remote["ticketLines"][1]["taxes"] == []

    # The edit page offers both again, and a tax removed there is gone after saving.
    url = reverse("tickets:eventticket_edit", args=[ticket.pk])
    page = signed_in.get(url)
    taxes = page.context["formset"].forms[0].taxes
    assert [form.initial["tax_code"] for form in taxes.forms] == ["9021", "0071"]
    html = page.content.decode()
    assert 'name="lines-0-taxes-1-taxt_rate"' in html and 'name="lines-0-taxes-TOTAL_FORMS"' in html
    assert 'data-tax-template' in html and "lines-__prefix__-taxes-__tax__-tax_code" in html
    removed = [dict(TWO_TAXES[0], taxes=[TWO_TAXES[0]["taxes"][0], {**TWO_TAXES[0]["taxes"][1], "DELETE": "on"}]),
               TWO_TAXES[1]]
    data = {key: value for key, value in event_data(lines=removed).items() if key != "prefix"}
    data.update({"lines-INITIAL_FORMS": "2", "lines-0-taxes-INITIAL_FORMS": "2"})  # as the page sends them
    assert form_post(signed_in, url, data).status_code == 302
    assert list(TicketLineTax.objects.values_list("tax_code", flat=True)) == ["9021"]


@pytest.mark.parametrize("tax, field, message", [
    ({"tax_code": "0071", "taxt_rate": ""}, "taxt_rate", "Give the rate of the other tax."),
    ({"tax_code": "", "taxt_rate": "1,5"}, "tax_code", "Give the tax code of the other tax."),
    ({"tax_code": "0071", "taxt_rate": "150"}, "taxt_rate", "less than or equal to 100"),
])
def test_a_wrong_tax_is_marked_on_its_field_and_nothing_is_saved(signed_in, tax, field, message):
    lines = (dict(TWO_TAXES[0], taxes=[TWO_TAXES[0]["taxes"][0], tax]),)
    response = form_post(signed_in, reverse(EVENT_ADD), event_data(lines=lines))

    assert response.status_code == 200
    good, bad = response.context["formset"].forms[0].taxes.forms
    assert not good.errors and message in " ".join(bad.errors[field])
    html = response.content.decode()
    # The message sits under that field, which is marked invalid and points at it.
    errors = re.search(rf'<div class="invalid-feedback d-block" id="id_lines-0-taxes-1-{field}_errors">([^<]*)</div>',
                       html)
    assert errors and message in errors.group(1).replace("&#x27;", "'")
    widget = re.search(rf'<input[^>]*name="lines-0-taxes-1-{field}"[^>]*>', html).group(0)
    assert "is-invalid" in widget and f'aria-describedby="id_lines-0-taxes-1-{field}_errors"' in widget
    assert "Please correct the fields marked below." in html
    # Nothing half-saved: no ticket, line, tax, number or job.
    assert not EventTicket.objects.exists() and not TicketLine.objects.exists()
    assert not TicketLineTax.objects.exists() and not DocumentSeries.objects.exists() and not JobRun.objects.exists()
