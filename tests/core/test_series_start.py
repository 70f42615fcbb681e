"""An administrator starts a document series above its next number (issue 28): a series started elsewhere, whose
numbers the platform holds; confirmed before anything changes, never at or below a number used here."""

import re

import pytest
from django.urls import reverse
from django.utils import translation

from backoffice.core.models import DocumentSeries
from tests.conftest import make_user
from tests.tickets.conftest import login

# The database engine matters here (the series' numbers taken under the database's locking): CI's SQLite pass runs
# these too.
pytestmark = [pytest.mark.django_db, pytest.mark.database]

URL = reverse("core:series")


@pytest.fixture(autouse=True)
def english():
    with translation.override("en"):
        yield


def start(**fields):
    return {"kind": "event_ticket", "prefix": "etk", "year": "2026", "next_counter": "101", **fields}


def test_an_administrator_starts_a_series_above_its_next_number_after_confirming(client, administrator, company):
    login(client, administrator, company)
    assert client.get(URL).status_code == 200

    asked = client.post(URL, start())
    page = asked.content.decode()
    assert asked.status_code == 200 and asked.context["confirm"]
    assert "ETK2026000000101" in page and "ETK2026000000001 to ETK2026000000100" in page
    assert not DocumentSeries.objects.filter(last_counter__gt=0).exists()  # nothing changed before the confirmation

    # The confirmation page carries the form as hidden fields: posting what it holds applies it.
    held = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', page))
    assert held["confirmed"] == "on" and held["next_counter"] == "101" and held["year"] == "2026"
    done = client.post(URL, held, follow=True)
    assert "takes the number ETK2026000000101" in " ".join(str(m) for m in done.context["messages"])
    assert DocumentSeries.allocate(company=company, kind="event_ticket", prefix="ETK", year=2026) == "ETK2026000000101"
    assert "ETK2026000000102" in client.get(URL).content.decode()  # the table shows the next number


@pytest.mark.parametrize("next_counter", ["5", "6"])
def test_a_start_at_or_below_a_number_used_here_is_refused_on_its_field(client, administrator, company,
                                                                        next_counter):
    for _ in range(5):
        DocumentSeries.allocate(company=company, kind="event_ticket", prefix="ETK", year=2026)
    login(client, administrator, company)
    response = client.post(URL, {**start(next_counter=next_counter), "confirmed": "on"})
    assert response.status_code == 200
    [error] = response.context["form"].errors["next_counter"]
    assert "The next number of ETK2026 is 6 already" in error and "up to 5 are used here" in error
    assert DocumentSeries.objects.get().last_counter == 5


def test_the_model_refuses_a_start_that_went_stale_after_the_confirmation(company):
    """Between the form's check and the save another document took a number: the row lock re-checks."""
    from django.core.exceptions import ValidationError

    DocumentSeries.start_at(company=company, kind="event_ticket", prefix="ETK", year=2026, next_counter=10)
    for _ in range(3):
        DocumentSeries.allocate(company=company, kind="event_ticket", prefix="ETK", year=2026)
    with pytest.raises(ValidationError) as info:
        DocumentSeries.start_at(company=company, kind="event_ticket", prefix="ETK", year=2026, next_counter=12)
    assert "next_counter" in info.value.message_dict
    assert DocumentSeries.objects.get().last_counter == 12


def test_bad_input_is_refused_on_each_field(client, administrator, company):
    login(client, administrator, company)
    response = client.post(URL, start(kind="invoice", prefix="E-K", year="1999", next_counter="1"))
    assert set(response.context["form"].errors) == {"kind", "prefix", "year", "next_counter"}
    assert not DocumentSeries.objects.exists()


def test_only_administrators_and_only_the_active_companys_series(client, accountant, company, other_company):
    login(client, accountant, company)
    assert client.get(URL).status_code == 403
    assert client.post(URL, {**start(), "confirmed": "on"}).status_code == 403
    DocumentSeries.allocate(company=other_company, kind="event_ticket", prefix="OTH", year=2026)
    admin = make_user("yonetim2", "administrator", [company])
    login(client, admin, company)
    assert "OTH" not in client.get(URL).content.decode()
    client.post(URL, {**start(prefix="OTH"), "confirmed": "on"})
    assert DocumentSeries.objects.get(company=other_company).last_counter == 1  # the other company's is untouched


def test_a_number_typed_the_turkish_way_is_read_as_typed(client, administrator, company):
    # "5.000" is five thousand (Django's IntegerField would read 5); the confirmation carries it back as typed.
    login(client, administrator, company)
    asked = client.post(URL, start(next_counter="5.000"))
    page = asked.content.decode()
    assert asked.context["confirm"] and "ETK2026000005000" in page
    held = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', page))
    client.post(URL, held)
    assert DocumentSeries.allocate(company=company, kind="event_ticket", prefix="ETK", year=2026) == "ETK2026000005000"
