"""Throughput at scale (issue 32), `make bench-scale`: a platform a network away and workers on several machines.

The sandbox answers every call of the ticket service BENCH_SCALE_LATENCY_MS (50) later. BENCH_SCALE_TICKETS (4,000)
event tickets numbered in 8 series go through 1, 2 and 4 worker processes (BENCH_SCALE_WORKERS="1,2,4"), each
started apart with its own environment, name and connections, as on separate machines, sharing one database and
one Redis. Each worker has one call in flight (TICKET_PUSH_CONCURRENCY=1; BENCH_SCALE_LANES=3 gives it the
default's three lanes). Each measured rate is printed against workers x a bare loop of one call in flight to the same
sandbox (200 POSTs, nothing recorded, just before and just after that run): the most one call in flight per worker
can reach against this sandbox, whose own work the latency comes on top of (the target: at least 0.85); and against
the nominal workers x 1 / latency (x 20 per second at 50 ms), which no client reaches here: the bare loop itself gets
about 0.8 of it.
The test process queues the batches for the workers' lanes (TICKET_PUSH_CONCURRENCY, shared by every host).
Asserted: every ticket reached the platform exactly once and is synced; never an absolute time.
"""

import os
import time
import uuid

import django_rq
import pytest
import requests
from django.db import connection
from django.test import override_settings
from rq import Worker

from backoffice.core.choices import SyncState
from backoffice.tickets import services
from backoffice.tickets.models import EventTicket
from tests.benchmarks.common import spread_over_series
from tests.testapp.testing import _empty, manage, output, stop, wait_for
from tests.tickets.conftest import make_tickets

COUNT = int(os.environ.get("BENCH_SCALE_TICKETS", 4000))
LATENCY_MS = int(os.environ.get("BENCH_SCALE_LATENCY_MS", 50))
WORKER_COUNTS = [int(n) for n in os.environ.get("BENCH_SCALE_WORKERS", "1,2,4").split(",")]
LANES = int(os.environ.get("BENCH_SCALE_LANES", 1))
BARE_TICKETS = 200
SERIES = ("SCA", "SCB", "SCC", "SCD", "SCE", "SCF", "SCG", "SCH")
CREATE_PATH = "/ticket/v1/event-ticket"

pytestmark = [pytest.mark.bench, pytest.mark.scale, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def start_workers(count):
    """count worker processes as on count machines: each its own process, name and connections; the first runs the
    scheduler too (the batches that wait for an earlier number are run again through it)."""
    workers = []
    for index in range(count):
        env = {"TICKET_PUSH_CONCURRENCY": str(LANES)}
        scheduler = ["--with-scheduler"] if index == 0 else []
        name = f"scale-{index + 1}-{uuid.uuid4().hex[:8]}"  # a name of an earlier run may still be registered
        workers.append(manage("rqworker", "default", *scheduler, "--name", name, env=env))
        workers[-1].worker_name = name
    return workers


def push_through(workers_count, company):
    """The tickets of company pushed by workers_count workers: tickets a second."""
    tickets = spread_over_series(make_tickets(company, COUNT, prefix="TMP"), SERIES)  # no number taken twice
    queue = django_rq.get_queue("default")
    _empty(queue)
    workers = start_workers(workers_count)
    try:
        names = {process.worker_name for process in workers}
        wait_for(lambda: names <= {worker.name for worker in Worker.all(queue=queue)}, timeout=60,
                 message="the workers to register")
        start = time.perf_counter()
        # Here too: the batches are cut for the workers' lanes where they are queued (the web's setting; every host
        # shares it, docs/SCALING.md). Queued for 3 lanes, a 1-lane worker's batch held 3 series whose next runs
        # other workers' batches waited for.
        with override_settings(TICKET_PUSH_CONCURRENCY=LANES):
            services.tickets_queue(tickets=tickets)

        def done():
            return not EventTicket.objects.filter(company=company).exclude(
                sync_state__in=[SyncState.SYNCED, SyncState.FAILED]).exists()

        try:
            wait_for(done, timeout=max(600, 4 * COUNT * LATENCY_MS / 1000), interval=0.5,
                     message="every ticket to be pushed")
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{output(workers[0])[-4000:]}") from None
        return COUNT / (time.perf_counter() - start)
    finally:
        for process in workers:
            stop(process)
        _empty(queue)


def bare_rate(sandbox, make_sandbox_company) -> float:
    """One POST after another (one call in flight, nothing recorded) to the same sandbox BARE_TICKETS times: what a
    worker of one lane could reach at best, the sandbox's own work included (the ideal counts only its latency)."""
    sandbox.clear_faults()  # latencies of several rules add up: one rule, as the workers' runs have
    sandbox.add_fault(path="/ticket/*", latency_ms=LATENCY_MS)
    company = make_sandbox_company(name="Çıplak döngü A.Ş.")
    payloads = [services.ticket_payload(ticket) for ticket in make_tickets(company, BARE_TICKETS, prefix="BAR")]
    session = requests.Session()
    session.trust_env = False
    url, headers = company.base_url("ticket") + "/v1/event-ticket", {"x-api-key": company.api_key}
    start = time.perf_counter()
    for payload in payloads:
        assert session.post(url, json=payload, headers=headers, timeout=30).status_code == 200
    return BARE_TICKETS / (time.perf_counter() - start)


def test_workers_on_several_machines_against_a_platform_a_network_away(sandbox, make_sandbox_company):
    rows = []
    # A bare loop before each worker count and after the last: each row is held against the mean of the loops just
    # before and after it, as a shared machine's speed moves within minutes (one loop at the start read 12/s on a run
    # where the next read 15/s).
    bares = [bare_rate(sandbox, make_sandbox_company)]
    for workers_count in WORKER_COUNTS:
        sandbox.reset()  # the request log counted from here; the customers stay
        sandbox.add_fault(path="/ticket/*", latency_ms=LATENCY_MS)
        company = make_sandbox_company(name=f"Ölçek {workers_count} A.Ş.")
        rate = push_through(workers_count, company)
        assert EventTicket.objects.filter(company=company, sync_state=SyncState.SYNCED).count() == COUNT
        creates = sum(row["count"] for row in sandbox.stats()["requests"]
                      if row["method"] == "POST" and row["path"] == CREATE_PATH and row["status"] == 200)
        assert creates == COUNT  # each ticket exactly once
        bares.append(bare_rate(sandbox, make_sandbox_company))
        rows.append((workers_count, rate, workers_count * 1000 / LATENCY_MS, (bares[-2] + bares[-1]) / 2))
    # The target (at least 0.85) is held against workers x the bare loop: one call in flight to this sandbox, whose
    # own work (10 to 15 ms a call on a shared 2-core machine) a platform answering in 50 ms would not add. The issue's
    # nominal ideal, workers x 1 / latency, is printed beside it with what the bare loop itself reaches of it.
    print(f"\n[bench] {COUNT:,} event tickets in {len(SERIES)} series, {LATENCY_MS} ms added to every call of the sandbox, "
          f"on {connection.vendor}, {LANES} lane(s) per worker; bare loops of one call in flight: "
          + ", ".join(f"{bare:,.1f}/s" for bare in bares)
          + f" ({min(bares) * LATENCY_MS / 1000:.2f} to {max(bares) * LATENCY_MS / 1000:.2f} of 1 / latency):")
    for workers_count, rate, ideal, bare in rows:
        print(f"[bench]   {workers_count} worker(s): {rate:,.1f}/s; against {workers_count} x the bare loops around it "
              f"({workers_count * bare:,.1f}/s): ratio {rate / workers_count / bare:.2f} (target at least 0.85); "
              f"against {workers_count} x 1 / latency ({ideal:,.0f}/s): {rate / ideal:.2f}")
    if len(rows) > 1:
        base = rows[0][1] / rows[0][0]
        print("[bench]   per worker against " + f"{rows[0][0]} worker(s): " + ", ".join(
            f"{w} workers {rate / w / base:.2f}" for w, rate, _, _ in rows[1:]))
