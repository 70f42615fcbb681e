"""Ticket numbers the platform holds already, and one lane per prefix (issue 28, class 4): a ticket found by our
number is ours only when its content is; a single push never overtakes an earlier number of its prefix; the
sandbox refuses a number whose predecessor it does not have (document 2, 2.1)."""

import pytest
from django.urls import reverse

from backoffice.core import jobs, sync
from backoffice.core.choices import SyncState
from backoffice.core.models import DocumentSeries
from backoffice.core.platform import client_for
from backoffice.remote.errors import RemoteError
from backoffice.remote.tickets import EventTicketClient
from backoffice.tickets import services
from backoffice.tickets.models import EventTicket
from tests.conftest import make_user

from .conftest import VKN, login
from .test_services import CREATE_PATH, creates, english, fast, new_event, push  # noqa: F401 (fixtures)

# The database engine matters here (ticket numbers taken under the database's locking): CI's SQLite pass runs these
# too.
pytestmark = [pytest.mark.django_db, pytest.mark.database]


def someone_elses(ticket, **changes):
    """The body of another ticket under our ticket's number (a series started elsewhere, a restored backup)."""
    body = services.ticket_payload(ticket)
    body.update({"customerFirstName": "Mehmet", "customerLastName": "Demir", "seatNumber": "C-7", **changes})
    return body


# --- a number the platform holds already ---------------------------------------------------------------------

def test_a_resend_does_not_take_another_tickets_number_for_ours(fast, sandbox_company, client):
    ticket = new_event(sandbox_company)
    other = client_for(sandbox_company, EventTicketClient).create(someone_elses(ticket))
    # A resend: the attempt before ours may have reached the platform, so the push looks the number up first.
    EventTicket.objects.filter(pk=ticket.pk).update(attempts=1)
    with pytest.raises(RemoteError):
        push(ticket)
    assert ticket.sync_state == SyncState.FAILED and ticket.remote_id == ""  # never shown synced as the other one
    assert f"Ticket number {ticket.ticket_number} is taken" in ticket.last_error
    assert other["ettn"] in ticket.last_error and "customerFirstName" in ticket.last_error
    assert "start the series ETK" in ticket.last_error and "above the platform's last number" in ticket.last_error
    assert creates(fast) == 1  # only the other one's: ours was never sent
    # The ticket's page says it, with what to do.
    login(client, make_user("muhasebe2", "accounting"), sandbox_company)
    page = client.get(reverse("tickets:eventticket_detail", args=[ticket.pk]))
    assert page.status_code == 200 and f"Ticket number {ticket.ticket_number} is taken" in page.content.decode()


def test_a_first_send_refused_as_a_duplicate_says_the_number_is_taken_and_what_to_do(fast, sandbox_company):
    ticket = new_event(sandbox_company)
    client_for(sandbox_company, EventTicketClient).create(someone_elses(ticket, seatNumber=ticket.seat_number,
                                                                        customerFirstName=ticket.customer_first_name,
                                                                        identifier="10000000146"))
    with pytest.raises(RemoteError):
        push(ticket)
    assert ticket.sync_state == SyncState.FAILED and ticket.remote_id == ""
    assert f"Ticket number {ticket.ticket_number} is taken" in ticket.last_error
    assert "identifier" in ticket.last_error and "Document series" in ticket.last_error


def test_a_refused_duplicate_that_is_ours_is_success(fast, sandbox_company):
    """Our earlier create arrived but we never heard (the answer lost, the attempt not counted): the platform
    refuses the number as used, and the ticket holding it is ours: already done is success."""
    ticket = new_event(sandbox_company)
    ours = client_for(sandbox_company, EventTicketClient).create(services.ticket_payload(ticket))
    push(ticket)
    assert ticket.sync_state == SyncState.SYNCED and ticket.remote_id == ours["ettn"] and ticket.last_error == ""


# --- one lane per prefix across jobs -------------------------------------------------------------------------

def platform_numbers(company):
    return [item["ticketNumber"] for item in client_for(company, EventTicketClient).list(1, 50)["items"]]


def test_a_single_push_waits_while_the_number_before_it_is_on_its_way(fast, sandbox_company):
    """A 503 on N, then N+1 pushed by its own job: N+1 waits (its job runs again shortly, nothing sent) until N
    is on the platform, so the platform never sees N+1 before N."""
    first = new_event(sandbox_company)
    fast.add_fault(path=CREATE_PATH, method="POST", error_rate=1, error_status=503, remaining=1)
    with pytest.raises(RemoteError):
        push(first)
    assert first.sync_state == SyncState.QUEUED  # waits for its retry
    second = new_event(sandbox_company)
    with pytest.raises(jobs.TryLater, match=f"Waiting for ticket {first.ticket_number}"):
        push(second)
    assert second.sync_state == SyncState.QUEUED and second.attempts == 0 and platform_numbers(sandbox_company) == []
    push(first)
    push(second)
    assert (first.sync_state, second.sync_state) == (SyncState.SYNCED, SyncState.SYNCED)
    assert platform_numbers(sandbox_company) == [first.ticket_number, second.ticket_number]


def test_a_batch_waits_for_a_single_push_of_its_prefix_and_sends_the_other_prefixes(fast, sandbox_company, settings):
    settings.TICKET_PUSH_CONCURRENCY = 1  # in this thread: the test's transaction is not visible to others
    first = new_event(sandbox_company)
    fast.add_fault(path=CREATE_PATH, method="POST", error_rate=1, error_status=503, remaining=1)
    with pytest.raises(RemoteError):
        push(first)
    tickets = [new_event(sandbox_company), new_event(sandbox_company), new_event(sandbox_company, prefix="KNS")]
    pks = [t.pk for t in tickets]
    with pytest.raises(jobs.TryLater):
        services.tickets_push_batch("event", pks)
    states = dict(EventTicket.objects.filter(pk__in=pks).values_list("prefix", "sync_state").distinct())
    assert states == {"ETK": SyncState.QUEUED, "KNS": SyncState.SYNCED}  # the other prefix went on
    push(first)
    assert services.tickets_push_batch("event", pks) == "2 tickets sent, 0 refused."
    numbers = platform_numbers(sandbox_company)
    assert [n for n in numbers if n.startswith("ETK")] == sorted(n for n in numbers if n.startswith("ETK"))
    assert len(numbers) == 4


def test_a_number_refused_for_good_holds_nothing_back(fast, sandbox_company):
    """The rule when N is refused for good (FAILED): N+1 does not wait for it (nobody may ever fix N); the
    platform refuses N+1 while N is missing, and once N is fixed and sent, N+1 is sent again and accepted."""
    first = new_event(sandbox_company)
    EventTicket.objects.filter(pk=first.pk).update(event_organizer_vkn_tckn="12")  # past our form
    with pytest.raises(RemoteError):
        push(first)
    assert first.sync_state == SyncState.FAILED
    second = new_event(sandbox_company)
    with pytest.raises(RemoteError):
        push(second)
    assert second.sync_state == SyncState.FAILED and f"{first.ticket_number} is not there" in second.last_error
    EventTicket.objects.filter(pk=first.pk).update(event_organizer_vkn_tckn=VKN)  # fixed
    for ticket in (first, second):
        sync.record_queue(ticket)
        push(ticket)
        assert ticket.sync_state == SyncState.SYNCED
    assert platform_numbers(sandbox_company) == [first.ticket_number, second.ticket_number]


def test_a_series_started_elsewhere_continues_here_once_an_administrator_starts_it_above(fast, sandbox_company):
    """Another program numbered ETK 1 to 3 on the platform: our first ticket is refused as taken, saying what to
    do; once the series starts at 4 here, a new ticket takes 4 and the platform accepts it (its 3 is there)."""
    taken = new_event(sandbox_company)
    year = taken.ticket_number[3:7]
    client = client_for(sandbox_company, EventTicketClient)
    for counter in (1, 2, 3):
        client.create(someone_elses(taken, ticketNumber=f"ETK{year}{counter:09d}"))
    with pytest.raises(RemoteError):
        push(taken)
    assert taken.sync_state == SyncState.FAILED and "is taken" in taken.last_error

    DocumentSeries.start_at(company=sandbox_company, kind="event_ticket", prefix="ETK", year=int(year), next_counter=4)
    ticket = new_event(sandbox_company)
    assert ticket.ticket_number == f"ETK{year}000000004"
    assert push(ticket) == "Sent to the platform."
    assert ticket.sync_state == SyncState.SYNCED


@pytest.mark.parametrize("written,same", [
    ("2026-03-14T19:30:00+03:00", True), ("2026-03-14T16:30:59Z", True), ("2026-03-14T19:30:00", True),
    ("2026-03-14", True), ("14.03.2026", True),  # a date only, or written another way: not held against it
    ("2026-03-14T20:30:00+03:00", False), ("2026-03-15", False)])
def test_the_ticket_date_is_compared_to_the_minute_in_istanbul_time(written, same):
    from datetime import datetime, timezone

    ticket = EventTicket(ticket_number="ETK2026000000001", ticket_date=datetime(2026, 3, 14, 16, 30, 12,
                                                                                tzinfo=timezone.utc))
    assert (services.ticket_differences(ticket, {"ticketDate": written}) == []) is same
