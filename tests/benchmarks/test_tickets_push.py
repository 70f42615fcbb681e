"""Pushing tickets through the real worker to the sandbox against a bare loop of HTTP requests posting
the same payloads to the sandbox (half before the worker's run, half after). Prints both throughputs and their ratio, measured in the same run;
asserts the ratio (at least 0.5) and that every ticket went exactly once, never an absolute time.
Run with `make bench` (BENCH_PUSH_TICKETS changes the count, 5,000 by default; BENCH_PUSH_PREFIXES the
number of series they are numbered in, 3 by default: the tickets of one prefix go through one lane, in
number order, so 1 measures a company with a single series, one lane against the bare loop).
"""

import os
import time

import django_rq
import pytest
import requests
from django.db import connection
from rq import Worker

from backoffice.core.choices import SyncState
from backoffice.tickets import services
from backoffice.tickets.models import EventTicket
from tests.benchmarks.common import spread_over_series
from tests.testapp.testing import _empty, manage, output, stop, wait_for
from tests.tickets.conftest import make_tickets

COUNT = int(os.environ.get("BENCH_PUSH_TICKETS", 5000))
WORKERS = int(os.environ.get("BENCH_PUSH_WORKERS", 1))
WORKER_ARGS = os.environ.get("BENCH_WORKER_ARGS", "").split()
PREFIXES = ("PSA", "PSB", "PSC", "PSD", "PSE", "PSF")[:int(os.environ.get("BENCH_PUSH_PREFIXES", 3))]

pytestmark = [pytest.mark.bench, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_push_through_the_worker_against_a_bare_request_loop(sandbox, make_sandbox_company):
    worker_company, bare_company = make_sandbox_company(name="Worker A.Ş."), make_sandbox_company(name="Bare A.Ş.")
    tickets = spread_over_series(make_tickets(worker_company, COUNT), PREFIXES)
    payloads = [services.ticket_payload(ticket) for ticket in tickets]

    # The least a push can cost: one POST after another on a kept-alive session, nothing recorded. Half before the
    # worker's run and half after it, so that a machine busier in one part of the run weighs on both sides alike.
    session = requests.Session()
    session.trust_env = False
    url = worker_company.base_url("ticket") + "/v1/event-ticket"
    headers = {"x-api-key": bare_company.api_key}

    def bare_loop(part) -> float:
        start = time.perf_counter()
        for payload in part:
            response = session.post(url, json=payload, headers=headers, timeout=30)
            assert response.status_code == 200, response.text
        return time.perf_counter() - start

    bare_seconds = bare_loop(payloads[:COUNT // 2])

    # The same payloads through the job machinery and the real worker(s) with --with-scheduler.
    queue = django_rq.get_queue("default")
    _empty(queue)
    workers = [manage("rqworker", "default", "--with-scheduler", *WORKER_ARGS) for _ in range(WORKERS)]
    try:
        wait_for(lambda: len(Worker.all(queue=queue)) >= WORKERS, timeout=30, message="the workers to register")
        start = time.perf_counter()
        services.tickets_queue(tickets=tickets)  # batch jobs, on the queue when this returns (autocommit)
        enqueued = time.perf_counter() - start

        def done():
            return not EventTicket.objects.filter(company=worker_company).exclude(
                sync_state__in=[SyncState.SYNCED, SyncState.FAILED]).exists()

        try:
            wait_for(done, timeout=max(600, COUNT / 2), interval=0.5, message="every ticket to be pushed")
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{output(workers[0])[-4000:]}") from None
        worker_rate = COUNT / (time.perf_counter() - start)
    finally:
        for process in workers:
            stop(process)
        _empty(queue)

    bare_rate = COUNT / (bare_seconds + bare_loop(payloads[COUNT // 2:]))
    assert EventTicket.objects.filter(company=worker_company, sync_state=SyncState.SYNCED).count() == COUNT
    creates = sum(row["count"] for row in sandbox.stats()["requests"]
                  if row["method"] == "POST" and row["path"] == "/ticket/v1/event-ticket" and row["status"] == 200)
    assert creates == 2 * COUNT  # each ticket once by the loop, once by the worker
    ratio = worker_rate / bare_rate
    print(f"\n[bench] pushing {COUNT:,} event tickets in {len(PREFIXES)} series on {connection.vendor}: "
          f"bare request loop {bare_rate:,.0f}/s; "
          f"through {WORKERS} worker(s) {worker_rate:,.0f}/s (enqueueing took {enqueued:.1f} s of it); "
          f"ratio {ratio:.2f} (target at least 0.85; asserted at least 0.5, as a busy machine may fall below it)")
    assert ratio >= 0.5
