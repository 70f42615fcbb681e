"""`make run` from nothing: everything comes up, /health/ says so, a killed worker is started again, and
one Ctrl-C leaves no process behind, not even RQ's work-horse in the middle of a job.

Runs scripts/run.py (what `make run` runs) with a fresh var/ directory, free ports and no REDIS_URL or
DATABASE_URL, exactly as on a fresh clone: SQLite files and the embedded Redis.
"""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))
START_TIMEOUT = 150  # migrations of two fresh databases, demo data, then the health checks


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def get(url):
    """(status, body) of a GET; (None, error) when nothing answers."""
    try:
        with NO_PROXY.open(url, timeout=5) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()
    except (urllib.error.URLError, OSError) as error:
        return None, str(error).encode()


def descendants(pid):
    """Every live process under pid, from /proc (children run in their own sessions)."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            parents[int(entry.name)] = int(fields[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def alive(pid):
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def stat_fields(pid):
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def parent(pid):
    fields = stat_fields(pid)
    return fields and int(fields[1])


def process_group(pid):
    fields = stat_fields(pid)
    return fields and int(fields[2])


def wait_for_line(log_path, pattern, supervisor, timeout=60):
    deadline = time.monotonic() + timeout
    while True:
        found = re.search(pattern, log_path.read_text())
        if found:
            return found
        assert supervisor.poll() is None, f"run.py exited with {supervisor.returncode}:\n{log_path.read_text()}"
        assert time.monotonic() < deadline, f"no line {pattern!r}:\n{log_path.read_text()[-5000:]}"
        time.sleep(0.2)


@pytest.fixture
def ports():
    try:
        return free_port(), free_port()
    except OSError as error:
        pytest.skip(f"cannot bind a local port: {error}")


@pytest.mark.slow
def test_make_run_brings_everything_up_and_one_ctrl_c_stops_it(tmp_path, ports):
    """Slow (over 10 s): `make run` itself, from migrations to every process up, then stopped."""
    web_port, sandbox_port = ports
    env = {key: value for key, value in os.environ.items()
           if key not in {"REDIS_URL", "DATABASE_URL", "SANDBOX_DATABASE_URL", "SANDBOX_URL",
                          "BACKOFFICE_EXTRA_APPS", "DJANGO_SETTINGS_MODULE", "SANDBOX_CONTROL_TOKEN"}}
    env.update(BACKOFFICE_VAR_DIR=str(tmp_path / "var"), BACKOFFICE_WEB_PORT=str(web_port),
               SANDBOX_PORT=str(sandbox_port), PYTHONUNBUFFERED="1")
    log_path = tmp_path / "run.log"
    with open(log_path, "w") as log:
        supervisor = subprocess.Popen([sys.executable, str(ROOT / "scripts" / "run.py")], cwd=ROOT, env=env,
                                      stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                      start_new_session=True)
    children = set()
    try:
        expected = {"database", "redis", "worker"} | ({"cron"} if (ROOT / "backoffice" / "cron.py").exists() else set())
        deadline = time.monotonic() + START_TIMEOUT
        checks = {}
        while time.monotonic() < deadline:
            assert supervisor.poll() is None, f"run.py exited with {supervisor.returncode}:\n{log_path.read_text()}"
            status, body = get(f"http://127.0.0.1:{web_port}/health/")
            if status in (200, 503):
                checks = json.loads(body)["checks"]
                if all(checks.get(name) == "ok" for name in expected):
                    break
            time.sleep(1)
        assert all(checks.get(name) == "ok" for name in expected), f"{checks}\n{log_path.read_text()[-5000:]}"

        assert get(f"http://127.0.0.1:{web_port}/login/")[0] == 200
        # A wrong address is the product's own page in Turkish with what to do next, not Django's English
        # debug page; the static files are still served.
        status, body = get(f"http://127.0.0.1:{web_port}/no-such-page/")
        assert status == 404 and "Gösterge paneline dön" in body.decode(), body[:500]
        assert get(f"http://127.0.0.1:{web_port}/static/js/backoffice.js")[0] == 200
        # The sandbox is its own server: its admin's login page answers.
        assert get(f"http://127.0.0.1:{sandbox_port}/admin/login/")[0] == 200
        # The demo logins are printed with their passwords (generated once, kept in var/).
        stored = dict(line.split(" = ", 1) for line in (tmp_path / "var" / "demo-credentials.txt")
                      .read_text().splitlines() if " = " in line)
        output = log_path.read_text()
        for username in ("muhasebe", "yonetici", "yonetim"):
            assert f"{username} / {stored[f'password.{username}']}" in output

        # Redis keeps its append-only file in var/ (scheduled jobs survive a restart).
        assert (tmp_path / "var" / "redis.aof").exists()

        # A worker killed outright is started again; the others keep running.
        worker_pid = int(re.search(r"started worker \(pid (\d+)\)", output).group(1))
        os.kill(worker_pid, signal.SIGKILL)
        restarted = wait_for_line(log_path, r"restarted worker \(pid (\d+)\)", supervisor)
        worker_pid = int(restarted.group(1))
        assert "worker was killed by SIGKILL after" in log_path.read_text()
        assert get(f"http://127.0.0.1:{web_port}/login/")[0] == 200

        # Ctrl-C while the work-horse is in the middle of a job: it is stopped too.
        import redis
        from rq import Queue

        connection = redis.Redis.from_url(f"unix://{tmp_path / 'var' / 'redis.sock'}")
        job = Queue("default", connection=connection).enqueue("time.sleep", 600, job_timeout=900)
        deadline = time.monotonic() + 120  # behind the cron entries enqueued at start
        while job.get_status(refresh=True) != "started":
            assert time.monotonic() < deadline, f"the job did not start: {job.get_status()}"
            time.sleep(0.2)
        children = descendants(supervisor.pid)
        assert len(children) >= 5, children  # redis, sandbox, web, worker, work-horse (+ cron, the RQ scheduler…)
        horses = {pid for pid in children if process_group(pid) == pid and parent(pid) == worker_pid}
        assert horses, "no work-horse found under the worker"
        supervisor.send_signal(signal.SIGINT)
        assert supervisor.wait(60) == 0, log_path.read_text()[-5000:]
        time.sleep(0.5)
        left = {pid for pid in children if alive(pid)}
        assert not left, f"processes left after Ctrl-C: {left}"
        assert get(f"http://127.0.0.1:{web_port}/health/")[0] is None
    finally:
        if supervisor.poll() is None:
            supervisor.terminate()
            try:
                supervisor.wait(20)
            except subprocess.TimeoutExpired:
                supervisor.kill()
        for pid in children | descendants(supervisor.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
