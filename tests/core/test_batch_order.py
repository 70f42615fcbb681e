"""Batch pushes keep the numbers of one prefix in order (document 2: the ticket numbers of a prefix continue
consecutively), while different prefixes still go in parallel lanes (core.batch.push_batch)."""

import threading
import uuid

import pytest

from backoffice.core import batch
from backoffice.core.choices import SyncState
from backoffice.core.platform import client_for
from backoffice.remote.tickets import EventTicketClient
from backoffice.tickets import services
from backoffice.tickets.models import EventTicket
from tests.tickets.conftest import make_tickets

CREATE_PATH = "/ticket/v1/event-ticket"

# Lanes are threads with their own database connections: they must see committed rows.
# The database engine matters here (bulk writes take another path on PostgreSQL (core.batch)): CI's SQLite pass runs
# these too.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.database]


def test_lane_groups_keep_one_key_together_in_the_given_order():
    prefix = {1: "AAA", 2: "BBB", 3: "AAA", 4: "CCC", 5: "AAA", 6: "BBB"}
    assert batch.lane_groups([1, 2, 3, 4, 5, 6], prefix.get) == [[1, 3, 5], [2, 6], [4]]
    assert batch.lane_groups([3, 1, 2]) == [[3], [1], [2]]  # no key: each record on its own


@pytest.mark.parametrize("count,series,lanes", [(4000, 8, 1), (4000, 8, 3), (5000, 3, 3), (250, 1, 3), (7, 3, 3),
                                               (1001, 2, 2), (4, 2, 1), (150, 1, 3)])
def test_series_batches_keep_each_series_in_order_and_give_lanes_and_workers_series_of_their_own(count, series, lanes):
    key = {pk: f"S{pk % series}" for pk in range(count)}.get
    batches = batch.series_batches(list(range(count)), key, lanes)

    taken = [pk for one in batches for pk in one]
    assert sorted(taken) == list(range(count))  # every record once
    for name in {key(pk) for pk in taken}:  # a series' numbers in order, batch after batch
        numbers = [pk for pk in taken if key(pk) == name]
        assert numbers == sorted(numbers)
    assert max(len(one) for one in batches) <= batch.PUSH_BATCH_SIZE
    for one in batches:  # a series in one run of a batch: one lane takes it whole
        for name in {key(pk) for pk in one}:
            at = [index for index, pk in enumerate(one) if key(pk) == name]
            assert at == list(range(at[0], at[-1] + 1))
    # Batches that run side by side (as many as there are series' first runs) push different series.
    first_turn = batches[:max(1, series // lanes)]
    names = [name for one in first_turn for name in {key(pk) for pk in one}]
    assert len(names) == len(set(names))


def test_tickets_are_queued_in_batches_cut_along_their_series(company, settings):
    settings.TICKET_PUSH_CONCURRENCY = 1
    for prefix in ("AAA", "BBB", "CCC"):
        tickets = make_tickets(company, 150, prefix=prefix)
    jobs = services.tickets_queue(tickets=tickets)

    batches = [run.job_args["args"][-1] for run in jobs]
    prefixes = [{ticket.prefix for ticket in EventTicket.objects.filter(pk__in=one)} for one in batches]
    assert prefixes == [{"AAA"}, {"BBB"}, {"CCC"}] * 2  # one series a batch, the series in turn
    assert all(len(one) == 75 for one in batches)
    assert set(EventTicket.objects.values_list("sync_state", flat=True)) == {SyncState.QUEUED}


def test_a_batch_of_several_prefixes_reaches_the_platform_in_number_order(sandbox, sandbox_company, settings):
    settings.TICKET_PUSH_CONCURRENCY = 3
    settings.PLATFORM_TIMEOUT = (5, 10)
    make_tickets(sandbox_company, 6, prefix="AAA")
    make_tickets(sandbox_company, 3, prefix="BBB")
    tickets = make_tickets(sandbox_company, 2, prefix="CCC")
    # Whichever create arrives first is held back a second: in parallel lanes the next numbers of its prefix
    # would overtake it.
    sandbox.add_fault(path=CREATE_PATH, method="POST", latency_ms=1000, remaining=1)
    services.tickets_queue(tickets=tickets)

    services.tickets_push_batch("event", [t.pk for t in tickets])

    assert set(EventTicket.objects.values_list("sync_state", flat=True)) == {SyncState.SYNCED}
    arrived = [item["ticketNumber"] for item in client_for(sandbox_company, EventTicketClient).list(1, 500)["items"]]
    assert len(arrived) == 11  # the list is in order of creation on the platform
    for prefix in ("AAA", "BBB", "CCC"):
        numbers = [number for number in arrived if number.startswith(prefix)]
        assert numbers == sorted(numbers), f"{prefix} arrived out of order: {numbers}"


def test_different_prefixes_are_pushed_at_the_same_time(company):
    """The first AAA ticket is sent only once a BBB ticket has been: one lane for everything would wait forever."""
    make_tickets(company, 2, prefix="AAA")
    tickets = make_tickets(company, 2, prefix="BBB")
    EventTicket.objects.update(sync_state=SyncState.QUEUED)
    by_pk = {t.pk: t for t in tickets}
    other_prefix_sent = threading.Event()
    sent, waited = [], []

    def make():
        def send(record):
            if record.ticket_number.startswith("AAA") and record.ticket_number.endswith("000000001"):
                waited.append(other_prefix_sent.wait(timeout=10))
            sent.append(record.ticket_number)
            if record.ticket_number.startswith("BBB"):
                other_prefix_sent.set()
            return {"remote_id": str(uuid.uuid4()), "remote_status": 0}

        return send, lambda record: None

    pks = sorted(by_pk, key=lambda pk: by_pk[pk].ticket_number)
    counts = batch.push_batch(batch.Pusher(EventTicket, make, lanes=2, key=lambda pk: by_pk[pk].prefix), pks)

    assert counts == {"sent": 4, "refused": 0}
    assert waited == [True]
    assert [n for n in sent if n.startswith("AAA")] == sorted(n for n in sent if n.startswith("AAA"))
    assert [n for n in sent if n.startswith("BBB")] == sorted(n for n in sent if n.startswith("BBB"))
