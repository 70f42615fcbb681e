"""Typed the Turkish way through the invoice and dispatch pages (issue 29, section 2): a quantity of "5.000" and a
unit price of "1.250,75" are saved as 5000 and 1250.75; an exchange rate of "32.125" or a VAT rate of "18.500" is
asked on its field, and nothing is saved."""

from decimal import Decimal

import pytest
from django.urls import reverse
from django.utils import timezone, translation

from backoffice.dispatch.models import DispatchNote
from backoffice.invoices.models import Invoice, Taxpayer
from tests.conftest import form_post
from tests.dispatch.builders import LINE, directory, note_data, receiver
from tests.tickets.conftest import login

pytestmark = pytest.mark.django_db

ASKED = "after a comma, e.g. 32,125"
CUSTOMER_VKN = "4840000006"  # an e-archive customer of the invoice (no mailbox to choose) and the note's receiver


@pytest.fixture
def web(client, accountant, company):
    assert receiver(company).identifier == CUSTOMER_VKN  # with its address (district, city, postal code)
    directory()  # the dispatch-note users: the receiver's one mailbox
    # The e-invoice users' list, loaded: the customer is not on it as an e-invoice user, so an e-archive invoice.
    Taxpayer.objects.create(identifier=CUSTOMER_VKN, alias="urn:mail:irsaliye@ornek.com.tr", app_type="3",
                            seen_at=timezone.now())
    with translation.override("en"):
        yield login(client, accountant, company)


def invoice_data(**fields):
    from tests.invoices.test_forms_and_views import invoice_data as data
    from tests.invoices.test_forms_and_views import line

    line_fields = {name: fields.pop(name) for name in ("quantity", "unit_price", "vat_rate") if name in fields}
    return data(lines=[line(0, **line_fields)], account=CUSTOMER_VKN, **fields)


def errors(response, formset, name):
    context = response.context
    if formset:
        return " ".join(str(message) for message in context[formset].forms[0].errors.get(name, []))
    return " ".join(str(message) for message in context["form"].errors.get(name, []))


def test_invoice_quantity_and_price_typed_the_turkish_way(web):
    response = form_post(web, reverse("invoices:invoice_add"),
                         invoice_data(quantity="5.000", unit_price="1.250,75", vat_rate="20",
                                      currency_code="USD", exchange_rate="32,125", exchange_rate_source="TCMB",
                                      exchange_rate_comment="döviz satış"))
    assert response.status_code == 302, response.context and response.context["form"].errors
    invoice = Invoice.objects.get()
    line = invoice.lines.get()
    assert (line.quantity, line.unit_price) == (Decimal(5000), Decimal("1250.75"))
    assert invoice.exchange_rate == Decimal("32.125")
    assert line.line_extension_amount == Decimal("6253750.00")  # 5000 x 1250.75


@pytest.mark.parametrize("fields,formset,name", [
    ({"currency_code": "USD", "exchange_rate": "32.125", "exchange_rate_source": "TCMB",
      "exchange_rate_comment": "döviz satış"}, None, "exchange_rate"),
    ({"vat_rate": "18.500"}, "lines", "vat_rate"),
])
def test_invoice_rates_are_asked(web, fields, formset, name):
    response = form_post(web, reverse("invoices:invoice_add"), invoice_data(quantity="5.000", **fields))
    assert response.status_code == 400
    assert ASKED in errors(response, formset, name)
    assert errors(response, "lines", "quantity") == ""  # 5.000 is read, not asked
    assert not Invoice.objects.exists()


def test_dispatch_quantity_and_price_typed_the_turkish_way(web, company):
    line = {**LINE, "quantity": "5.000", "unit_price": "1.250,75", "vat_rate": "20"}
    response = form_post(web, reverse("dispatch:dispatchnote_add"), note_data(lines=[line], requested_status="0"))
    assert response.status_code == 302, response.context and response.context["form"].errors
    saved = DispatchNote.objects.get(company=company).lines.get()
    assert (saved.quantity, saved.unit_price) == (Decimal(5000), Decimal("1250.75"))
    assert saved.line_amount == Decimal("6253750.00")


def test_dispatch_vat_rate_is_asked(web, company):
    line = {**LINE, "quantity": "5.000", "vat_rate": "18.500"}
    response = form_post(web, reverse("dispatch:dispatchnote_add"), note_data(lines=[line], requested_status="0"))
    assert response.status_code == 400
    assert ASKED in errors(response, "lines", "vat_rate")
    assert errors(response, "lines", "quantity") == ""
    assert not DispatchNote.objects.exists()
