"""The mirror is re-read (issue 11): a ticket cancelled on the platform behind the back-office's back shows as
cancelled after the periodic refresh or the "Re-read now" buttons; the refresh reads the oldest first, within
its budget, and each company at its own time."""

from datetime import timedelta
from unittest import mock

import pytest
from django.urls import reverse
from django.utils import timezone

from backoffice.core import refresh
from backoffice.core.choices import JobStatus, SyncState
from backoffice.core.models import JobRun
from backoffice.core.platform import client_for
from backoffice.core.registry import registry
from backoffice.remote.tickets import EventTicketClient
from backoffice.tickets.choices import TicketStatus
from backoffice.tickets.models import EventTicket

from .conftest import login
from .test_reconcile import approved, english, fast  # noqa: F401, F811 (fixtures)
from .test_services import new_event

pytestmark = pytest.mark.django_db

STATUS_PATH = "/ticket/v1/event-ticket/status"


def status_calls(sandbox):
    return sum(row["count"] for row in sandbox.stats()["requests"] if row["path"] == STATUS_PATH)


def test_a_ticket_cancelled_behind_our_back_shows_cancelled_after_the_refresh(fast, sandbox_company):
    tickets = approved(sandbox_company, 2)
    assert {t.remote_status for t in tickets} == {TicketStatus.APPROVED}
    client_for(sandbox_company, EventTicketClient).cancel([tickets[0].remote_id])  # in the provider's portal
    message = refresh.status_refresh_job("tickets.eventticket", sandbox_company.pk)
    assert message == "1 status changed on the platform."
    cancelled, other = EventTicket.objects.filter(pk__in=[t.pk for t in tickets]).order_by("pk")
    assert (cancelled.remote_status, other.remote_status) == (TicketStatus.CANCELLED, TicketStatus.APPROVED)
    assert cancelled.status_read_at and other.status_read_at


def test_the_refresh_reads_the_oldest_first_within_its_budget(fast, sandbox_company, settings):
    settings.STATUS_REFRESH_IDS = 2
    settings.STATUS_REFRESH_CALLS = 1  # the ticket status call has no documented limit: the default budget
    tickets = approved(sandbox_company, 5)
    before = status_calls(fast)
    refresh.status_refresh(EventTicket, sandbox_company)
    assert status_calls(fast) == before + 1
    read = set(EventTicket.objects.exclude(status_read_at=None).values_list("pk", flat=True))
    assert read == {tickets[0].pk, tickets[1].pk}  # never read first, in order
    refresh.status_refresh(EventTicket, sandbox_company)
    refresh.status_refresh(EventTicket, sandbox_company)
    assert EventTicket.objects.filter(status_read_at=None).count() == 0
    oldest = EventTicket.objects.order_by("status_read_at", "pk").first()
    refresh.status_refresh(EventTicket, sandbox_company)  # now the one read longest ago comes first
    assert EventTicket.objects.get(pk=oldest.pk).status_read_at > oldest.status_read_at


def test_the_budget_is_a_share_of_a_documented_limit(company, settings):
    """Where the documents give the status call a limit (invoices: 100 per 180 minutes at T1), the refresh
    uses at most STATUS_REFRESH_SHARE of it over one interval."""
    from backoffice.core import actions

    settings.STATUS_REFRESH_INTERVAL, settings.STATUS_REFRESH_SHARE = 3600, 0.3
    action_set = registry["action_sets"][EventTicket]
    with mock.patch.object(action_set, "status_operation", lambda model: "invoice.outbox_status"):
        assert refresh.calls_per_run(company, EventTicket) == 10  # 100 * 60/180 * 0.3
    settings.STATUS_REFRESH_CALLS = 7
    assert refresh.calls_per_run(company, EventTicket) == 7


def test_old_records_and_records_under_an_action_are_not_read(company, settings):
    settings.STATUS_REFRESH_DAYS = 30
    fresh = new_event(company)
    old = new_event(company)
    busy = new_event(company)
    EventTicket.objects.update(sync_state=SyncState.SYNCED, remote_status=TicketStatus.APPROVED)
    for ticket, remote_id in ((fresh, "e-1"), (old, "e-2"), (busy, "e-3")):
        EventTicket.objects.filter(pk=ticket.pk).update(remote_id=remote_id)
    EventTicket.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=31))
    EventTicket.objects.filter(pk=busy.pk).update(pending_action="cancel")
    assert [t.pk for t in refresh.due(EventTicket, company, 10)] == [fresh.pk]


def test_each_company_is_read_once_per_interval_at_its_own_time(company, other_company, settings,
                                                               django_capture_on_commit_callbacks):
    settings.STATUS_REFRESH_INTERVAL = 3600
    for owner in (company, other_company):
        ticket = new_event(owner)
        EventTicket.objects.filter(pk=ticket.pk).update(sync_state=SyncState.SYNCED, remote_id=f"e-{owner.pk}")
    start = timezone.now()
    enqueued = []
    for minute in range(0, 121, 5):  # two hours of the cron's looks
        moment = start + timedelta(minutes=minute)
        with mock.patch("django.utils.timezone.now", return_value=moment):
            with django_capture_on_commit_callbacks(execute=False):
                refresh.refresh_all()
        runs = JobRun.objects.filter(name=refresh.JOB, status=JobStatus.QUEUED)
        enqueued += [(run.company_id, minute) for run in runs]
        runs.update(status=JobStatus.SUCCEEDED, enqueued_at=moment)  # done, at that moment
    by_company = {owner.pk: [m for c, m in enqueued if c == owner.pk] for owner in (company, other_company)}
    # Read at the first look (never read), then once in each following hour of its own clock.
    assert all(2 <= len(minutes) <= 3 for minutes in by_company.values()), by_company
    for owner, minutes in by_company.items():
        assert minutes[0] == 0  # never read: at once
        # then at the start of each hour of the company's own clock (its offset), the first look after it
        offset_minutes = refresh.company_offset(owner, 3600) / 60
        for minute in minutes[1:]:
            boundary = (start + timedelta(minutes=minute)).timestamp() / 60 - offset_minutes
            assert boundary % 60 < 5, (owner, minutes)
        assert all(55 <= b - a <= 65 for a, b in zip(minutes[1:], minutes[2:])), by_company
    assert not JobRun.objects.filter(name=refresh.JOB, target="tickets.passengerticket").exists()  # none there


def test_the_buttons_re_read_now(fast, sandbox_company, accountant, client, django_capture_on_commit_callbacks):
    [ticket] = approved(sandbox_company, 1)
    login(client, accountant, sandbox_company)
    page = client.get(reverse("tickets:eventticket_detail", args=[ticket.pk])).content.decode()
    assert "Re-read now" in page and 'data-action="refresh"' in page
    client_for(sandbox_company, EventTicketClient).cancel([ticket.remote_id])
    with django_capture_on_commit_callbacks(execute=False):
        response = client.post(reverse("tickets:eventticket_bulk", kwargs={"action": "refresh"}),
                               {"pk": [ticket.pk], "return_url": reverse("tickets:eventticket_detail",
                                                                        args=[ticket.pk])})
    assert response.status_code == 302
    run = JobRun.objects.get(name=refresh.JOB)
    assert run.target == f"tickets.eventticket:{ticket.pk}"
    refresh.status_refresh_job(*run.job_args["args"])
    ticket.refresh_from_db()
    assert ticket.remote_status == TicketStatus.CANCELLED
    # The list's button: the whole company's recent tickets.
    page = client.get(reverse("tickets:eventticket_list")).content.decode()
    assert reverse("tickets:eventticket_refresh") in page
    with django_capture_on_commit_callbacks(execute=False):
        response = client.post(reverse("tickets:eventticket_refresh"))
    assert response.status_code == 302
    assert JobRun.objects.filter(name=refresh.JOB, target="tickets.eventticket").exists()
    assert client.get(reverse("tickets:eventticket_refresh")).status_code == 405


def test_another_companys_ticket_cannot_be_re_read(company, other_company, accountant, client,
                                                   django_capture_on_commit_callbacks):
    foreign = new_event(other_company)
    EventTicket.objects.filter(pk=foreign.pk).update(sync_state=SyncState.SYNCED, remote_id="e-x")
    login(client, accountant, company)
    with django_capture_on_commit_callbacks(execute=False):
        client.post(reverse("tickets:eventticket_bulk", kwargs={"action": "refresh"}), {"pk": [foreign.pk]})
    assert not JobRun.objects.filter(name=refresh.JOB).exists()
