"""A batch's own database work per run of records, not per record (issue 32): claimed together, outcomes and audit
rows written together, and still exactly once: what was claimed and not sent goes back to QUEUED, or, after a
crash, is asked for on the platform before it is sent again."""

import logging
import threading

import pytest
from django.db import DatabaseError, connection
from django.test.utils import CaptureQueriesContext
from django.utils import translation

from backoffice.core import batch, jobs, sync
from backoffice.core.choices import SyncState
from backoffice.core.models import JobRun, RemoteCall
from backoffice.tickets import services as tickets
from backoffice.tickets.models import EventTicket
from tests.testapp import services
from tests.testapp.models import Probe
from tests.testapp.testing import rq_queue  # noqa: F401 (fixture)
from tests.tickets.conftest import make_tickets

# The claim's row locks and the bulk UPDATEs differ by engine: CI's SQLite pass runs these too.
pytestmark = pytest.mark.database


def probes(company, count, *script, state=SyncState.QUEUED):
    return [Probe.objects.create(company=company, payload={"script": list(script)}, sync_state=state)
            for _ in range(count)]


def pusher(**options):
    return batch.Pusher(Probe, lambda: (services.probe_send, services.probe_reconcile), **options)


def states(records):
    return [(p.sync_state, p.attempts) for p in Probe.objects.filter(pk__in=[r.pk for r in records]).order_by("pk")]


@pytest.mark.django_db(transaction=True)
def test_claims_of_overlapping_runs_at_once_give_each_record_to_one_caller(company):
    records = probes(company, 30)
    pks = [p.pk for p in records]
    barrier, claimed, lock = threading.Barrier(6), [], threading.Lock()

    def claim(part):
        try:
            barrier.wait()
            got = sync.claim_many(Probe, part)
            with lock:
                claimed.extend(got)
        finally:
            connection.close()

    # Six callers over runs that overlap, in both orders (row locks taken in pk order: no deadlock).
    parts = [pks[0:20], pks[10:30], pks[::-1], pks[5:25], pks[::2], pks[1::2]]
    threads = [threading.Thread(target=claim, args=(part,)) for part in parts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(claimed) == sorted(pks)  # every record once
    assert set(states(records)) == {(SyncState.SENDING, 1)}


def test_a_claim_takes_only_queued_records_and_counts_their_attempt(company):
    queued = probes(company, 2)
    Probe.objects.filter(pk=queued[1].pk).update(attempts=2)
    others = [probes(company, 1, state=state)[0] for state in (SyncState.SENDING, SyncState.SYNCED, SyncState.LOCAL)]

    claimed = sync.claim_many(Probe, [p.pk for p in queued + others])

    assert sorted(claimed) == [p.pk for p in queued]
    assert [claimed[p.pk].attempts for p in queued] == [1, 3]
    assert states(queued) == [(SyncState.SENDING, 1), (SyncState.SENDING, 3)]
    assert [s for s, _ in states(others)] == [SyncState.SENDING, SyncState.SYNCED, SyncState.LOCAL]


def test_outcomes_of_a_run_are_written_in_one_update_each_with_its_own_fields(company, caplog):
    records = probes(company, 3)
    claimed = sync.claim_many(Probe, [p.pk for p in records])
    Probe.objects.filter(pk=records[2].pk).update(sync_state=SyncState.QUEUED)  # taken back meanwhile
    outcomes = {p.pk: {"remote_id": f"R-{p.pk}", "remote_status": 1} for p in records}

    with CaptureQueriesContext(connection) as queries, caplog.at_level(logging.WARNING, "backoffice.sync"):
        assert sync.records_synced(Probe, outcomes) == 2
    assert len([q for q in queries if q["sql"].startswith("UPDATE")]) == 1

    rows = {p.pk: p for p in Probe.objects.filter(pk__in=claimed)}
    assert [(rows[p.pk].sync_state, rows[p.pk].remote_id) for p in records[:2]] == [
        (SyncState.SYNCED, f"R-{records[0].pk}"), (SyncState.SYNCED, f"R-{records[1].pk}")]
    assert (rows[records[2].pk].sync_state, rows[records[2].pk].remote_id) == (SyncState.QUEUED, "")
    assert "no longer SENDING" in caplog.text


def test_a_claim_given_back_only_while_still_as_claimed(company):
    records = probes(company, 2)
    claimed = sync.claim_many(Probe, [p.pk for p in records])
    Probe.objects.filter(pk=records[1].pk).update(updated_at=claimed[records[1].pk].updated_at.replace(year=2030))

    assert sync.unclaim(Probe, list(claimed.values())) == 1
    assert states(records) == [(SyncState.QUEUED, 0), (SyncState.SENDING, 1)]  # the second was taken over


@pytest.mark.django_db(transaction=True)
def test_a_transient_error_gives_back_the_rest_of_the_run_unsent_and_unasked(company):
    records = probes(company, 2) + probes(company, 1, "transient") + probes(company, 4)

    with pytest.raises(jobs.TryLater):  # progress was made: the batch runs again shortly
        batch.push_batch(pusher(), [p.pk for p in records])

    # Sent before the error: SYNCED; the failed one back in line; the rest as if never claimed (attempts 0).
    assert states(records) == [(SyncState.SYNCED, 1)] * 2 + [(SyncState.QUEUED, 1)] + [(SyncState.QUEUED, 0)] * 4
    assert batch.push_batch(pusher(), [p.pk for p in records]) == {"sent": 7, "refused": 0}
    assert set(states(records)) == {(SyncState.SYNCED, 1), (SyncState.SYNCED, 2)}
    asked = {p.pk for p in records if p.calls.filter(kind="reconcile").exists()}
    assert asked == {records[2].pk}  # only the one that may have arrived is asked for first
    assert all(p.calls.filter(kind="send").count() == 1 for p in records if p is not records[2])


@pytest.mark.django_db(transaction=True)
def test_what_a_crash_left_claimed_is_asked_for_on_the_platform_before_it_is_sent(company, settings):
    records = probes(company, 3)
    services.probe_send(Probe.objects.get(pk=records[0].pk))  # it reached the platform...
    sync.claim_many(Probe, [p.pk for p in records])  # ...and the process died with the run claimed
    settings.SYNC_STUCK_AFTER_SECONDS = 0  # the sweep's push takes the records over

    for probe in records:
        sync.record_push(Probe, probe.pk, send=services.probe_send, reconcile=services.probe_reconcile)

    assert set(states(records)) == {(SyncState.SYNCED, 2)}
    assert [p.calls.filter(kind="send").count() for p in records] == [1, 1, 1]  # the first never sent twice
    assert all(p.calls.filter(kind="reconcile").count() == 1 for p in records)


@pytest.mark.django_db(transaction=True)
def test_a_batch_does_its_own_database_work_per_run_not_per_record(company):
    records = probes(company, 60)

    def make():
        return (lambda probe: {"remote_id": f"R-{probe.pk}", "remote_status": 1}), (lambda probe: None)

    with CaptureQueriesContext(connection) as queries:  # one lane: it runs in this thread
        assert batch.push_batch(batch.Pusher(Probe, make), [p.pk for p in records]) == {"sent": 60, "refused": 0}

    assert set(states(records)) == {(SyncState.SYNCED, 1)}
    assert len(queries) <= 10 * (60 // batch.CLAIM_SIZE + 1), [q["sql"][:80] for q in queries]


@pytest.mark.django_db(transaction=True)
def test_a_batch_writes_the_audit_row_of_every_call_in_bulk(sandbox, sandbox_company, settings):
    settings.TICKET_PUSH_CONCURRENCY = 1
    make_tickets(sandbox_company, 30, prefix="AUD")
    queued = list(EventTicket.objects.filter(company=sandbox_company).order_by("pk"))
    tickets.tickets_queue(tickets=queued)
    before = RemoteCall.objects.count()

    with CaptureQueriesContext(connection) as queries, translation.override("en"):
        assert tickets.tickets_push_batch("event", [t.pk for t in queued]) == "30 tickets sent, 0 refused."

    calls = RemoteCall.objects.filter(company=sandbox_company, operation="event_ticket.create").order_by("pk")
    assert RemoteCall.objects.count() - before == calls.count() == 30
    assert {(call.status, call.method) for call in calls} == {(200, "POST")}
    assert [call.created_at for call in calls] == sorted(call.created_at for call in calls)  # each its call's time
    inserts = [q for q in queries if q["sql"].startswith('INSERT INTO "core_remotecall"')]
    assert 1 <= len(inserts) <= 30 // batch.CLAIM_SIZE + 1


@pytest.mark.django_db(transaction=True)
def test_a_lane_whose_own_write_fails_stops_the_batch_and_loses_nothing(company, monkeypatch, rq_queue):
    records = probes(company, 2 * batch.CLAIM_SIZE)
    real, claims = sync.claim_many, []

    def claim_many(model, pks):
        claims.append(pks)
        if len(claims) == 2:
            raise DatabaseError("the database went away")
        return real(model, pks)

    monkeypatch.setattr(sync, "claim_many", claim_many)
    with pytest.raises(DatabaseError):  # in a thread of its own, a lane's failure still reaches the runner
        batch.push_batch(pusher(lanes=2), [p.pk for p in records])

    # The other lane stopped too: what it sent is SYNCED, what it claimed and did not send was given back; nothing
    # is left SENDING, and what waits is handed over to a push job each.
    after = states(records)
    assert set(after) <= {(SyncState.SYNCED, 1), (SyncState.QUEUED, 0)}
    waiting = after.count((SyncState.QUEUED, 0))
    assert waiting >= batch.CLAIM_SIZE  # the run never claimed
    assert JobRun.objects.filter(name="probe_push").count() == waiting
