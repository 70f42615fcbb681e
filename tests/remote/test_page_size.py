"""pageSize at most 500 on every list and report call (document 1, section 8): a larger page is refused
here, before anything is sent; 500 itself goes through."""

import datetime

import pytest

from backoffice.core.models import RemoteCall
from backoffice.remote.common import MAX_PAGE_SIZE
from tests.remote.bundle import services_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def client(sandbox, sandbox_company):
    return services_for(sandbox_company)


DAY = datetime.date(2025, 3, 10)
CALLS = {
    "event tickets list": lambda c, size: c.event_tickets.list(1, size),
    "passenger tickets list": lambda c, size: c.passenger_tickets.list(1, size),
    "event ticket report": lambda c, size: c.event_tickets.report(DAY, 1, size),
    "passenger list query": lambda c, size: c.passenger_lists.query(1, size),
    "passenger list report": lambda c, size: c.passenger_lists.report(DAY, 1, size),
    "incoming invoices": lambda c, size: c.invoices.inbox_list(pageIndex=1, pageSize=size),
    "e-archive statuses": lambda c, size: c.invoices.earchive_status_list(pageIndex=1, pageSize=size),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_a_page_of_more_than_500_is_refused_before_sending(client, name):
    for size in (MAX_PAGE_SIZE + 1, 10_000, "501", 0):
        with pytest.raises(ValueError, match="500"):
            CALLS[name](client, size)
    assert not RemoteCall.objects.exists()  # nothing went out


@pytest.mark.parametrize("name", ["event tickets list", "passenger list query", "incoming invoices"])
def test_a_page_of_500_goes_through(client, name):
    CALLS[name](client, MAX_PAGE_SIZE)
    assert RemoteCall.objects.count() == 1
