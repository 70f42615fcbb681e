"""`make chaos` in small: the same script (scripts/chaos.py) with a few dozen documents of every sending domain and a
short chaos phase, so that `make test` runs it. It starts everything of its own (database, Redis, sandbox, four
workers, cron) and needs nothing of the test run's; it must pass every check, in every domain, and stop every
process it started."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [pytest.mark.worker]

# Small enough for `make test` (about two minutes): every kind of chaos event still happens once at least. The
# settling time covers the slowest recovery after the last event: a job lost with a Redis killed at the end of the
# chaos is taken as lost once its submission grace has passed (core.jobs._SUBMIT_GRACE, 60 s) and put back by the
# next sweep (15 s); 75 s of settling inside 115 s of wall time left about 50 s, and the run failed when Redis was
# killed late. The chaos phase runs on (up to its length again) until every kind of event has happened once, as a
# work-horse can be killed only while a job runs: 200 s keep the whole settling time after such a longer phase.
# 60 documents: a few of each domain for each company (chaos_domains.plan), the tickets the rest.
ARGS = ["--documents", "60", "--chaos-seconds", "25", "--settle-seconds", "95", "--max-seconds", "200",
        "--event-every", "3", "5", "--action-every", "3", "--seed", "11"]
DOMAINS = ("tickets", "passenger lists", "current accounts", "chart accounts", "invoices", "dispatch notes",
           "replies", "ledger uploads")


@pytest.mark.slow
def test_a_small_chaos_run_loses_nothing_and_leaves_no_process(tmp_path):
    """Slow (about two minutes: 80 to 110 s measured): the chaos script's own processes through faults, then a
    settling time longer than the jobs' submission grace (60 s); see ARGS."""
    # With DATABASE_URL (CI's first pass) the run makes a database of its own on that PostgreSQL server and drops
    # it; without, a SQLite file in its directory.
    env = {**os.environ, "TMPDIR": str(tmp_path)}  # the run's directory (kept when a check fails) lands in the test's
    process = subprocess.Popen([sys.executable, str(ROOT / "scripts" / "chaos.py"), *ARGS], cwd=ROOT, env=env,
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        out, _ = process.communicate(timeout=320)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, out
    for figure in ("documents saved locally / found once on the sandbox", "lost", "duplicates on the sandbox",
                   "creates refused by the sandbox", "status differs from the sandbox's", "stuck records", "stuck jobs",
                   "tokens issued"):
        assert f"ok   {figure}" in out, out
    # Every domain had documents, each found once, none lost, duplicated, different or stuck.
    table = out.split("\nper domain:", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    for domain in DOMAINS:
        line = next((row.strip() for row in table if row.strip().startswith(domain + " ")), None)
        assert line is not None, (domain, out)
        figures, stuck = line[len(domain):].split(";")
        saved, found, lost, duplicates, differ, processed = (int(value) for value in figures.split("/"))
        assert saved > 0 and saved == found and not (lost or duplicates or differ or processed), (domain, line)
        assert int(stuck) == 0, (domain, line)
    # The users' next steps happened: drafts sent, invoices posted, notes answered, months uploaded.
    follow_ups = next(line for line in out.splitlines() if line.startswith("follow-ups:  "))
    for step in ("invoices sent", "invoices posted", "dispatch drafts sent", "journals uploaded"):
        assert step in follow_ups, follow_ups
    assert any(answer in follow_ups for answer in ("partial acceptances", "acceptances", "rejections")), follow_ups
    # Every kind of fault happened.
    chaos = next(line for line in out.splitlines() if line.startswith("chaos:       "))
    for fault in ("work-horses killed", "workers killed", "Redis restarts", "429 storms"):
        count = int(chaos.split(fault, 1)[1].split()[0].strip(",;"))
        assert count >= 1, chaos
    # Nothing of the run is left behind: no process names its directory in its command line or environment
    # (every child has it in DATABASE_URL or BACKOFFICE_VAR_DIR; Redis in its arguments).
    run_dir = next(line for line in out.splitlines() if "run directory" in line).split("run directory ")[1].split()[0]
    assert not Path(run_dir).exists()
    leftovers = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                seen = (entry / "cmdline").read_bytes() + (entry / "environ").read_bytes()
            except OSError:
                continue
            if run_dir.encode() in seen:
                leftovers.append(entry.name)
    assert not leftovers, leftovers
