"""Tickets through a real `manage.py rqworker --with-scheduler`, the test Redis and the sandbox over HTTP:
push, the first poll it schedules, a push that times out after the platform received it, a cancel and
an export that waits for the platform."""

from datetime import timedelta

import pytest
from django.utils import timezone

from backoffice.core.choices import JobStatus, SyncState
from backoffice.core.exports import ExportState
from backoffice.core.models import JobRun
from backoffice.tickets import services
from backoffice.tickets.choices import TicketKind, TicketStatus
from backoffice.tickets.families import TICKET_EXPORTS
from backoffice.tickets.models import EventTicket, TicketExport
from tests.testapp.testing import finished_run, output, wait_for

from .conftest import make_tickets
from .test_services import CREATE_PATH, creates, new_event

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

WORKER_ENV = {"JOB_RETRY_BASE_SECONDS": "1", "JOB_RETRY_MAX_SECONDS": "2", "JOB_MAX_ATTEMPTS": "4",
              "PLATFORM_READ_TIMEOUT": "1.5", "SYNC_STUCK_AFTER_SECONDS": "60",
              "TICKET_POLL_DELAY_SECONDS": "1", "TICKET_EXPORT_POLL_SECONDS": "1"}


@pytest.fixture(scope="module")
def worker_env():
    return WORKER_ENV


def wait(worker, predicate, message, timeout=30):
    try:
        return wait_for(predicate, timeout=timeout, interval=0.2, message=message)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n--- worker output ---\n{output(worker)[-5000:]}") from None


def settled(ticket_pk, status):
    return EventTicket.objects.filter(pk=ticket_pk, sync_state=SyncState.SYNCED, remote_status=status).exists()


def test_push_then_poll_until_approved(worker, sandbox, sandbox_company):
    sandbox.configure(ticket_processing_seconds=1)
    tickets = [new_event(sandbox_company, status=TicketStatus.QUEUED) for _ in range(3)]
    for ticket in tickets:
        wait(worker, lambda: settled(ticket.pk, TicketStatus.APPROVED), "the ticket to be approved")
    # The poll's run is marked done just after it settled the tickets.
    wait(worker, lambda: JobRun.objects.filter(name="tickets_poll", status=JobStatus.SUCCEEDED).exists(),
         "the poll's run to finish")
    assert JobRun.objects.filter(name="event_ticket_push", status=JobStatus.SUCCEEDED).count() == 3
    assert creates(sandbox) == 3


def test_a_push_that_timed_out_after_the_platform_received_it_is_reconciled(worker, sandbox, sandbox_company):
    sandbox.add_fault(path=CREATE_PATH, method="POST", timeout_seconds=2.5, timeout_after=True, remaining=1)
    ticket = new_event(sandbox_company)
    wait(worker, lambda: settled(ticket.pk, TicketStatus.DRAFT), "the ticket to be synced")
    ticket.refresh_from_db()
    assert ticket.attempts == 2 and ticket.remote_id
    run = finished_run(name="event_ticket_push")
    assert (run.status, run.attempts) == (JobStatus.SUCCEEDED, 2)
    wait_for(lambda: creates(sandbox) == 1, timeout=10, message="the slow create to be logged")
    items = [r for r in sandbox.stats()["requests"] if r["method"] == "GET" and r["path"] == CREATE_PATH]
    assert sum(r["count"] for r in items) == 1  # asked once (find_by_number), created once


def test_cancel_through_the_worker(worker, sandbox, sandbox_company):
    ticket = new_event(sandbox_company)
    wait(worker, lambda: settled(ticket.pk, TicketStatus.DRAFT), "the draft to be synced")
    services.tickets_cancel_request(tickets=[EventTicket.objects.get(pk=ticket.pk)])
    wait(worker, lambda: settled(ticket.pk, TicketStatus.CANCELLED), "the ticket to be cancelled")
    assert EventTicket.objects.get(pk=ticket.pk).pending_action == ""


def test_an_export_waits_for_the_platform_then_is_kept(worker, sandbox, sandbox_company):
    sandbox.configure(export_ready_seconds=2)
    export = TICKET_EXPORTS.start(company=sandbox_company, kind=TicketKind.EVENT, filters={})
    wait(worker, lambda: JobRun.objects.filter(name="ticket_export", status=JobStatus.DEFERRED).exists()
         or TicketExport.objects.filter(pk=export.pk, state=ExportState.READY).exists(), "the export job to wait")
    wait(worker, lambda: TicketExport.objects.filter(pk=export.pk, state=ExportState.READY).exists(),
         "the export to be kept")
    export.refresh_from_db()
    assert export.size > 0 and export.fetched_at <= timezone.now() + timedelta(seconds=1)
    # The export row is kept inside the job; the run is marked done just after it returns.
    wait(worker, lambda: JobRun.objects.filter(name="ticket_export", status=JobStatus.SUCCEEDED).exists(),
         "the export's run to finish")
    assert JobRun.objects.get(name="ticket_export").progress == 100


def test_many_tickets_in_batches_with_parallel_lanes_each_sent_once(worker, sandbox, sandbox_company):
    # The first create is received by the platform but its answer never comes: the lane that sent it
    # stops the batch, the runner runs the batch again, and that ticket is reconciled, not sent again.
    sandbox.add_fault(path=CREATE_PATH, method="POST", timeout_seconds=2.5, timeout_after=True, remaining=1)
    tickets = make_tickets(sandbox_company, 150)
    runs = services.tickets_queue(tickets=tickets)
    assert len(runs) == 2  # batches of 100
    wait(worker, lambda: EventTicket.objects.filter(sync_state=SyncState.SYNCED).count() == 150,
         "every ticket to be pushed", timeout=90)
    wait_for(lambda: creates(sandbox) == 150, timeout=10, message="the slow create to be logged")
    assert len({t.remote_id for t in EventTicket.objects.all()}) == 150
    assert JobRun.objects.filter(name="tickets_push_batch", status=JobStatus.SUCCEEDED).count() == 2


def test_a_poll_that_ran_before_the_tickets_settled_asks_again(worker, sandbox, sandbox_company):
    # The first poll runs a second after the push, before the platform settles (3 s): it asks again by
    # itself instead of leaving the ticket to the cron's minute (no cron runs here).
    sandbox.configure(ticket_processing_seconds=3)
    ticket = new_event(sandbox_company, status=TicketStatus.QUEUED)
    wait(worker, lambda: settled(ticket.pk, TicketStatus.APPROVED), "the ticket to be approved", timeout=20)
    wait(worker, lambda: JobRun.objects.filter(name="tickets_poll", status=JobStatus.SUCCEEDED).exists(),
         "the poll's run to finish once nothing waits")


def test_a_503_on_n_never_lets_n_plus_1_overtake_it_across_jobs(worker, sandbox, sandbox_company):
    """Issue 28: two single push jobs of one prefix; N answered 503 and waits for its retry, N+1's job waits for
    N (run again shortly, not sleeping), so the platform receives N before N+1 and refuses nothing."""
    from backoffice.core.platform import client_for
    from backoffice.remote.tickets import EventTicketClient

    sandbox.add_fault(path=CREATE_PATH, method="POST", error_rate=1, error_status=503, remaining=1)
    first, second = new_event(sandbox_company), new_event(sandbox_company)
    for ticket in (first, second):
        wait(worker, lambda: settled(ticket.pk, TicketStatus.DRAFT), "both tickets to be synced")
    arrived = [item["ticketNumber"] for item in client_for(sandbox_company, EventTicketClient).list(1, 50)["items"]]
    assert arrived == [first.ticket_number, second.ticket_number]
    refused = [r for r in sandbox.stats()["requests"] if r["path"] == CREATE_PATH and r["status"] == 400]
    assert refused == []
