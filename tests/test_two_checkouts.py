"""Two worker hosts (issue 32, docs/SCALING.md): two workers, each started from a checkout of its own, as on two
machines, against one PostgreSQL and one Redis. One of them dies with kill -9 (its work-horse and scheduler with it)
while tickets go out; the other and the sweep carry on. Nothing is sent twice and nothing is lost."""

import os
import shutil
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import django_rq
import pytest
from django.db import connection
from django.db.models import Count
from rq import Worker

from backoffice.core import sync
from backoffice.core.choices import SyncState
from backoffice.core.models import JobRun
from backoffice.tickets import services
from backoffice.tickets.models import EventTicket
from tests.benchmarks.common import spread_over_series
from tests.testapp.testing import _empty, database_url, wait_for
from tests.tickets.conftest import make_tickets

ROOT = Path(__file__).resolve().parent.parent
COUNT = 240
CREATE_PATH = "/ticket/v1/event-ticket"
# Short clocks on both sides of the test (the sweep runs here): a silent worker is lost after 3 beats + 10 s, a record
# it left SENDING is taken over once its call has timed out (connect + read + 5 s).
CLOCKS = {"WORKER_HEARTBEAT_SECONDS": "1", "PLATFORM_CONNECT_TIMEOUT": "2", "PLATFORM_READ_TIMEOUT": "4",
          "JOB_RETRY_BASE_SECONDS": "1", "JOB_RETRY_MAX_SECONDS": "5"}

pytestmark = [pytest.mark.worker, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def checkout(where: Path) -> Path:
    """A copy of the project's code, as another machine holds it: manage.py and backoffice/, nothing of the tests."""
    where.mkdir()
    shutil.copy2(ROOT / "manage.py", where / "manage.py")
    shutil.copytree(ROOT / "backoffice", where / "backoffice", ignore=shutil.ignore_patterns("__pycache__"))
    return where


def host_env() -> dict:
    env = {key: value for key, value in os.environ.items()
           if key not in ("BACKOFFICE_EXTRA_APPS", "PYTHONPATH", "DJANGO_SETTINGS_MODULE", "PYTEST_XDIST_WORKER")}
    # The same secrets and media as this run's (BACKOFFICE_VAR_DIR: what every host shares, docs/SCALING.md).
    return {**env, **CLOCKS, "DATABASE_URL": database_url(), "PYTHONUNBUFFERED": "1"}


def start_worker(home: Path, name: str) -> subprocess.Popen:
    log = open(home / "worker.log", "w")  # noqa: SIM115 (closed with the process)
    process = subprocess.Popen([sys.executable, "manage.py", "rqworker", "default", "--with-scheduler", "--name", name],
                               cwd=home, env=host_env(), stdin=subprocess.DEVNULL, stdout=log,
                               stderr=subprocess.STDOUT, start_new_session=True)
    process.log = log
    return process


def kill_host(process):
    """kill -9 of the worker, its work-horse and its scheduler: the machine is gone."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait(timeout=10)
    process.log.close()


@pytest.mark.parametrize("victim", [0, 1])
def test_two_hosts_lose_one_with_kill_9_and_send_each_ticket_once(victim, sandbox, sandbox_company, settings,
                                                                  tmp_path):
    """Slow (about a minute): a worker killed mid-push; its job is taken as lost after the beats' silence and its
    records left SENDING once their call has timed out, then asked about on the platform before any resend."""
    if connection.vendor != "postgresql":
        pytest.skip("two hosts share one PostgreSQL: a SQLite file belongs to one machine (CI's first pass has it)")
    settings.WORKER_HEARTBEAT_SECONDS = 1
    settings.PLATFORM_TIMEOUT = (2.0, 4.0)
    homes = [checkout(tmp_path / "host-a"), checkout(tmp_path / "host-b")]
    for home in homes:  # each host runs its own copy of the code, not this checkout's
        found = subprocess.run([sys.executable, "-c", "import backoffice; print(backoffice.__file__)"], cwd=home,
                               env=host_env(), capture_output=True, text=True, check=True).stdout
        assert found.startswith(str(home)), found
    sandbox.add_fault(path=CREATE_PATH, method="POST", latency_ms=30)  # a push that lasts long enough to be cut
    tickets = spread_over_series(make_tickets(sandbox_company, COUNT, prefix="TMP"), ("TKA", "TKB", "TKC"))
    queue = django_rq.get_queue("default")
    _empty(queue)
    names = [f"host-{index}-{uuid.uuid4().hex[:8]}" for index in range(2)]  # a killed worker's name stays taken
    workers = [start_worker(home, name) for home, name in zip(homes, names)]
    try:
        wait_for(lambda: set(names) <= {worker.name for worker in Worker.all(queue=queue)}, timeout=60,
                 message="both hosts' workers to register")
        services.tickets_queue(tickets=tickets)

        def synced():
            return EventTicket.objects.filter(company=sandbox_company, sync_state=SyncState.SYNCED).count()

        wait_for(lambda: synced() >= COUNT // 6, timeout=120, message="the push to be under way")
        kill_host(workers[victim])

        def all_synced():
            sync.sweep_stuck()  # as the cron runner does every 15 s
            return synced() == COUNT

        try:
            wait_for(all_synced, timeout=240, interval=1, message="every ticket to reach the platform after the kill")
        except AssertionError as exc:
            states = list(EventTicket.objects.values_list("sync_state").annotate(n=Count("pk")))
            runs = list(JobRun.objects.values_list("name", "status", "message")[:20])
            survivor = (homes[1 - victim] / "worker.log").read_text()[-3000:]
            raise AssertionError(f"{exc}\nstates {states}\nruns {runs}\nsurvivor:\n{survivor}") from None
    finally:
        for process in workers:
            if process.poll() is None:
                kill_host(process)
        _empty(queue)

    creates = sum(row["count"] for row in sandbox.stats()["requests"]
                  if row["method"] == "POST" and row["path"] == CREATE_PATH and row["status"] == 200)
    assert creates == COUNT  # each once, none twice
    assert EventTicket.objects.filter(company=sandbox_company).exclude(remote_id="").values("remote_id") \
        .distinct().count() == COUNT
