"""A worker's memory over a long run (issue 32), `make bench-scale`: flat from the first to the last document.

One worker process pushes BENCH_MEMORY_TICKETS (20,000) event tickets in 8 series through the local sandbox. Every
half second the benchmark reads the worker's resident memory and that of its work-horse (RQ forks one per job:
the batch's lanes run in it), from /proc, with how many tickets are on the platform by then. Printed: the worker's
memory and the largest work-horse's over the first tenth of the tickets against the last tenth (the issue's target:
within 20 %). Asserted: every ticket reached the platform once, and the last tenth within 20 % of the first tenth
(a ratio of the same run, never an absolute figure).
"""

import os
import statistics
import time
import uuid
from pathlib import Path

import django_rq
import pytest
from rq import Worker

from backoffice.core.choices import SyncState
from backoffice.tickets import services
from backoffice.tickets.models import EventTicket
from tests.benchmarks.common import spread_over_series
from tests.testapp.testing import _empty, manage, output, stop, wait_for
from tests.tickets.conftest import make_tickets

COUNT = int(os.environ.get("BENCH_MEMORY_TICKETS", 20000))
SERIES = ("MEA", "MEB", "MEC", "MED", "MEE", "MEF", "MEG", "MEH")

pytestmark = [pytest.mark.bench, pytest.mark.scale, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def resident_kb(pid) -> int:
    """The process's resident memory in kB (0 once it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def children(pid) -> list[int]:
    try:
        return [int(child) for task in Path(f"/proc/{pid}/task").iterdir()
                for child in (task / "children").read_text().split()]
    except OSError:
        return []


def test_a_workers_memory_stays_flat_over_twenty_thousand_documents(sandbox, make_sandbox_company):
    company = make_sandbox_company(credits=10 * COUNT, name="Bellek A.Ş.")
    tickets = spread_over_series(make_tickets(company, COUNT, prefix="TMP"), SERIES)
    queue = django_rq.get_queue("default")
    _empty(queue)
    name = f"memory-{uuid.uuid4().hex[:8]}"
    worker = manage("rqworker", "default", "--with-scheduler", "--name", name)
    samples = []  # (tickets on the platform, worker kB, work-horse kB)
    try:
        wait_for(lambda: name in {each.name for each in Worker.all(queue=queue)}, timeout=60,
                 message="the worker to register")
        services.tickets_queue(tickets=tickets)
        deadline = time.monotonic() + max(900, COUNT / 5)
        synced = 0
        while synced < COUNT:
            assert time.monotonic() < deadline, output(worker)[-4000:]
            assert worker.poll() is None, output(worker)[-4000:]
            horses = [resident_kb(child) for child in children(worker.pid)]
            synced = EventTicket.objects.filter(company=company, sync_state=SyncState.SYNCED).count()
            samples.append((synced, resident_kb(worker.pid), max(horses, default=0)))
            time.sleep(0.5)
    finally:
        stop(worker)
        _empty(queue)
    tenth = COUNT / 10
    first = [sample for sample in samples if sample[0] <= tenth and sample[2]]
    last = [sample for sample in samples if sample[0] >= COUNT - tenth and sample[2]]
    assert first and last, samples
    rows = []
    for index, what in ((1, "the worker"), (2, "its work-horse (largest)")):
        before = statistics.median(sample[index] for sample in first) if index == 1 else max(s[2] for s in first)
        after = statistics.median(sample[index] for sample in last) if index == 1 else max(s[2] for s in last)
        rows.append((what, before, after))
    print(f"\n[bench] one worker, {COUNT:,} event tickets in {len(SERIES)} series, the local sandbox; resident memory "
          "over the first tenth of the tickets against the last tenth:")
    for what, before, after in rows:
        print(f"[bench]   {what}: {before / 1024:,.1f} MB, then {after / 1024:,.1f} MB: ratio {after / before:.2f} "
              "(target at most 1.20)")
    for what, before, after in rows:
        assert after <= 1.2 * before, (what, before, after)
