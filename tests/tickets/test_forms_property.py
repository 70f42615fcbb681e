"""Property: no input to the ticket forms gives a server error.

Random posts to the create views (and to an update view), mixing valid values, near-misses and
arbitrary text, must end in a page with errors (200) or a saved ticket (302), never a 500 or an
exception. The test client re-raises any exception of the view, so a crash fails the test too.
"""

import pytest
from django.urls import reverse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backoffice.core.choices import SyncState
from backoffice.tickets.choices import TicketStatus
from backoffice.tickets.models import EventTicket
from tests.conftest import form_post
from tests.properties import examples

from .conftest import TCKN, VKN, event_data, login, passenger_data

pytestmark = pytest.mark.django_db

SETTINGS = settings(max_examples=examples(40), deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

junk = st.one_of(
    st.text(max_size=30),
    st.text(alphabet="0123456789.,-+eE", max_size=25),
    st.sampled_from(["", " ", "0", "-1", "1e9999", "NaN", "Infinity", "99999999999999999999", "1.005",
                     "2026-02-30T10:00", "0001-01-01T00:00", "9999-12-31T23:59", "\x00", "ABC", "etk", VKN, TCKN,
                     "on", "DIGER", "20", "40", "100", "81", "82", "İstanbul", "<script>x</script>"]),
)


def mutate(base: dict, names):
    return st.fixed_dictionaries({}, optional={name: junk for name in names}).map(lambda changes: {**base, **changes})


EVENT_FIELDS = list(event_data()) + ["is_email_send", "customer_email", "payment_description", "exchange_rate",
                                     "record_expenses_vkn_tckn", "record_expenses_title", "identifier",
                                     "customer_country", "notes_text", "lines-1-amount", "lines-0-taxes-0-taxt_rate",
                                     "lines-0-taxes-0-tax_code", "lines-0-taxes-1-tax_name",
                                     "lines-0-taxes-0-DELETE", "lines-0-taxes-TOTAL_FORMS", "lines-TOTAL_FORMS",
                                     "lines-INITIAL_FORMS"]
PASSENGER_FIELDS = list(passenger_data()) + ["vehicle_operating_vkn_tckn", "vehicle_operating_title",
                                             "vehicle_operating_tax_center", "commission_amount",
                                             "commission_tax_amount", "vehicle_operating_email", "lines-0-DELETE"]


@pytest.fixture
def signed_in(client, accountant, company):
    return login(client, accountant, company)


@SETTINGS
@given(data=mutate(event_data(), EVENT_FIELDS))
def test_event_create_never_fails(signed_in, data):
    response = form_post(signed_in, reverse("tickets:eventticket_add"), data)
    assert response.status_code in (200, 302)


@SETTINGS
@given(data=mutate(passenger_data(), PASSENGER_FIELDS))
def test_passenger_create_never_fails(signed_in, data):
    response = form_post(signed_in, reverse("tickets:passengerticket_add"), data)
    assert response.status_code in (200, 302)


@SETTINGS
@given(data=st.dictionaries(st.text(max_size=20), st.text(max_size=20), max_size=15))
def test_arbitrary_fields_never_fail(signed_in, data):
    for name in ("tickets:eventticket_add", "tickets:passengerticket_add"):
        assert signed_in.post(reverse(name), data).status_code in (200, 302)


@pytest.fixture
def draft(signed_in, company):
    form_post(signed_in, reverse("tickets:eventticket_add"), event_data())
    ticket = EventTicket.objects.get()
    EventTicket.objects.filter(pk=ticket.pk).update(sync_state=SyncState.SYNCED, remote_id="e-1",
                                                    remote_status=TicketStatus.DRAFT)
    return ticket


@SETTINGS
@given(data=mutate(event_data(), EVENT_FIELDS))
def test_event_update_never_fails(signed_in, draft, data):
    EventTicket.objects.filter(pk=draft.pk).update(sync_state=SyncState.SYNCED)
    response = signed_in.post(reverse("tickets:eventticket_edit", args=[draft.pk]), data)
    assert response.status_code in (200, 302)
