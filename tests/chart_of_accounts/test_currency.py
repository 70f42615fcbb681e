"""Issue 29: a sub-account's currency defaults to TRY and is shown by its code (TRY, USD, EUR), never as the
platform's currencyCodeId number, in the form, the list and the account's page."""

import re

import pytest
from django.urls import reverse

from backoffice.chart_of_accounts.choices import currency_ids
from backoffice.chart_of_accounts.models import Account
from tests.conftest import form_post
from tests.tickets.conftest import login

pytestmark = pytest.mark.django_db

ADD = reverse("chart_of_accounts:account_add")
LIST = reverse("chart_of_accounts:account_list")


@pytest.fixture
def web(client, accountant, company):
    return login(client, accountant, company, language="tr")


@pytest.fixture
def main(company):
    return Account.objects.create(company=company, type=0, base_code="120", name="Alıcılar")


def currency_options(page: str) -> list:
    select = re.search(r'<select name="currency_code_id".*?</select>', page, re.S).group(0)
    return re.findall(r'<option value="([^"]*)"( selected)?>([^<]*)</option>', select)


def test_the_new_account_form_offers_currencies_by_code_with_try_chosen(web):
    options = currency_options(web.get(ADD).content.decode())
    assert [(value, text) for value, _selected, text in options][:4] == [("", "—"), ("1", "TRY"), ("2", "USD"),
                                                                        ("3", "EUR")]
    assert [text for _value, selected, text in options if selected] == ["TRY"]
    assert all(not text.isdigit() for _value, _selected, text in options)


def test_a_sub_account_saved_as_the_form_comes_is_kept_in_try(web, company, main):
    response = form_post(web, ADD, {"type": "2", "parent": main.pk, "unit_code": "001", "name": "Çınar Ltd.",
                                    "currency_code_id": str(currency_ids()["TRY"])})
    assert response.status_code == 302
    assert Account.objects.get(full_code="120.001").currency == "TRY"


def test_an_existing_accounts_form_keeps_its_currency(web, company, main):
    sub = Account.objects.create(company=company, type=2, parent=main, base_code="120", code="120", unit_code="002",
                                 name="Dış", currency_code_id=currency_ids()["USD"])
    options = currency_options(web.get(reverse("chart_of_accounts:account_edit", args=[sub.pk])).content.decode())
    assert [text for _value, selected, text in options if selected] == ["USD"]


def test_the_list_and_the_page_show_the_code_not_the_number(web, company, main):
    sub = Account.objects.create(company=company, type=2, parent=main, base_code="120", code="120", unit_code="003",
                                 name="Avro alıcılar", currency_code_id=currency_ids()["EUR"])
    listing = web.get(LIST).content.decode()
    row = re.search(r"<tr[^>]*>(?:(?!</tr>).)*Avro alıcılar.*?</tr>", listing, re.S).group(0)
    assert ">EUR<" in row and ">3<" not in row
    detail = web.get(reverse("chart_of_accounts:account_detail", args=[sub.pk])).content.decode()
    field = re.search(r">Para birimi</th>\s*<td>(.*?)</td>", detail, re.S)
    assert field and field.group(1).strip() == "EUR", detail[detail.find("Para birimi") - 200:][:600]
