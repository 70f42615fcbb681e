"""A state change the platform applied although its answer was lost (issue 11): a cancel or status change
answered 500, or with a dropped connection, after taking effect ends as success with the right local status;
a retry asks the platform before sending again, and "already done" is success."""

import pytest

from backoffice.core import actions, jobs
from backoffice.core.choices import JobStatus
from backoffice.core.models import JobRun
from backoffice.core.platform import client_for
from backoffice.remote.errors import RemoteError
from backoffice.remote.tickets import EventTicketClient
from backoffice.tickets import services
from backoffice.tickets.choices import TicketStatus
from backoffice.tickets.models import EventTicket

from .test_services import english, fast, new_event, poll, push  # noqa: F401, F811 (fixtures)

# The database engine matters here (reconciling by queries over the mirror): CI's SQLite pass runs these too.
pytestmark = [pytest.mark.django_db, pytest.mark.database]

CANCEL_PATH = "/ticket/v1/event-ticket/cancel"
STATUS_PATH = "/ticket/v1/event-ticket/updatestatuslist"


def calls(sandbox, method, path):
    return sum(row["count"] for row in sandbox.stats()["requests"] if row["method"] == method and row["path"] == path)


def approved(company, count=2):
    tickets = [new_event(company, status=TicketStatus.QUEUED) for _ in range(count)]
    for ticket in tickets:
        push(ticket)
    poll(company)
    return list(EventTicket.objects.filter(pk__in=[t.pk for t in tickets]).order_by("pk"))


def platform_statuses(company, tickets):
    answers = client_for(company, EventTicketClient).statuses([t.remote_id for t in tickets])
    return {a["id"]: a["status"] for a in answers}


@pytest.mark.parametrize("after_apply", ["error", "drop"])
def test_cancel_answered_500_after_taking_effect_ends_as_success(fast, sandbox_company, after_apply):
    tickets = approved(sandbox_company)
    fast.add_fault(path=CANCEL_PATH, method="POST", error_rate=1, error_status=500, after_apply=after_apply,
                   remaining=1)
    services.tickets_cancel_request(tickets=tickets)
    result = actions.action_job("tickets.eventticket", "cancel", [t.pk for t in tickets])
    assert result == "2 tickets cancelled."
    assert calls(fast, "POST", CANCEL_PATH) == 1  # not sent again: the statuses said it was done
    for ticket in EventTicket.objects.filter(pk__in=[t.pk for t in tickets]):
        assert (ticket.remote_status, ticket.pending_action, ticket.last_error) == (TicketStatus.CANCELLED, "", "")
    assert set(platform_statuses(sandbox_company, tickets).values()) == {TicketStatus.CANCELLED}


def test_status_change_answered_500_after_taking_effect_ends_as_success(fast, sandbox_company):
    fast.configure(ticket_error_rate=1)
    [ticket] = approved(sandbox_company, count=1)
    assert ticket.remote_status == TicketStatus.ERROR
    # A PUT is retried by the transport itself: every answer is a 500, the first after taking effect.
    fast.add_fault(path=STATUS_PATH, method="PUT", error_rate=1, error_status=500, after_apply="error")
    services.tickets_status_change_request(tickets=[ticket], status=TicketStatus.DRAFT)
    assert actions.action_job("tickets.eventticket", "draft", [ticket.pk]) == "1 ticket changed to “Draft”."
    ticket.refresh_from_db()
    assert (ticket.remote_status, ticket.requested_status, ticket.pending_action) == (TicketStatus.DRAFT,
                                                                                     TicketStatus.DRAFT, "")
    assert platform_statuses(sandbox_company, [ticket]) == {ticket.remote_id: TicketStatus.DRAFT}


def test_a_retry_asks_first_and_sends_only_what_is_not_done(fast, sandbox_company):
    """The first attempt's answer was lost and the status read failed too: the runner tries again, and the
    retry reads the statuses before it sends: a ticket already cancelled is not sent again."""
    tickets = approved(sandbox_company)
    client_for(sandbox_company, EventTicketClient).cancel([tickets[0].remote_id])  # behind our back
    services.tickets_cancel_request(tickets=tickets)
    run = JobRun.objects.get(name="tickets_cancel")
    JobRun.objects.filter(pk=run.pk).update(attempts=2)  # the runner's second attempt
    token = jobs._current_run.set(JobRun.objects.get(pk=run.pk))
    try:
        assert actions.action_job("tickets.eventticket", "cancel", [t.pk for t in tickets]) == "2 tickets cancelled."
    finally:
        jobs._current_run.reset(token)
    assert calls(fast, "POST", CANCEL_PATH) == 2  # ours behind the back, and one for the other ticket only
    assert set(EventTicket.objects.filter(pk__in=[t.pk for t in tickets]).values_list("remote_status", flat=True)) \
        == {TicketStatus.CANCELLED}


def test_a_refusal_that_is_not_done_is_kept(fast, sandbox_company):
    """The platform refuses and the statuses show the action did not happen: the refusal stays on the record."""
    fast.configure(ticket_processing_seconds=3600)  # stays queued: the platform refuses to cancel it
    ticket = new_event(sandbox_company, status=TicketStatus.QUEUED)
    push(ticket)
    EventTicket.objects.filter(pk=ticket.pk).update(remote_status=TicketStatus.APPROVED)
    services.tickets_cancel_request(tickets=[EventTicket.objects.get(pk=ticket.pk)])
    with pytest.raises(RemoteError):
        actions.action_job("tickets.eventticket", "cancel", [ticket.pk])
    ticket.refresh_from_db()
    assert ticket.pending_action == "" and ticket.last_error.startswith("Cancel refused")
    assert ticket.remote_status == TicketStatus.QUEUED  # what the platform said after refusing (not what we thought)
    assert not JobRun.objects.filter(status=JobStatus.SUCCEEDED).exists()
