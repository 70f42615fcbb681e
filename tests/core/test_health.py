"""The health endpoint against a real Redis and real RQ worker / cron processes."""

import os
import subprocess
import sys
import tempfile
from datetime import timedelta
from pathlib import Path

import pytest
import redis
from django.test import override_settings
from rq import Worker
from rq.utils import now, utcformat

from backoffice.core import embedded_redis
from tests.testapp.testing import wait_for

ROOT = Path(__file__).resolve().parents[2]
CHECK_NAMES = {"database", "redis", "worker", "cron"}


@pytest.fixture
def redis_url():
    """A Redis of this test's own: no worker or cron runner of another test (or of a parallel run sharing
    the suite's Redis) is seen here, and nothing needs flushing."""
    socket = Path(tempfile.mkdtemp(prefix="bo-health-")) / "redis.sock"
    process = embedded_redis.start(socket)
    yield f"unix://{socket}"
    process.terminate()
    process.wait()


def queues(url):
    return {"default": {"URL": url, "DEFAULT_TIMEOUT": 600}}


def get_health(client):
    response = client.get("/health/")
    body = response.json()
    # Nothing beyond ok / failed per check leaves the server: the page needs no login.
    assert set(body) == {"ok", "checks"}
    assert set(body["checks"]) == CHECK_NAMES
    assert set(body["checks"].values()) <= {"ok", "failed"}
    return response, body


def start(args, url, log_dir):
    """Start `manage.py <args>`; its output goes to a file (a pipe nobody reads blocks it once full)."""
    env = {**os.environ, "REDIS_URL": url, "PYTHONUNBUFFERED": "1"}
    log = open(log_dir / f"{args[0]}.log", "w+")
    process = subprocess.Popen([sys.executable, str(ROOT / "manage.py"), *args], cwd=ROOT, env=env,
                               stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    process.log = log
    return process


def output(*processes):
    return "\n".join(f"--- {' '.join(p.args[2:])} (exit {p.returncode}) ---\n" + Path(p.log.name).read_text(
        errors="replace")[-3000:] for p in processes)


def stop(process):
    process.terminate()
    try:
        process.wait(15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    process.log.close()


def listening(url):
    """RQ registers a worker (the page says ok) before it installs its SIGTERM handler and forks its
    scheduler; a worker stopped in between dies at once, without its goodbye. It says "idle" only once
    it listens for jobs, handler installed."""
    connection = redis.Redis.from_url(url)
    workers = Worker.all(connection=connection)
    return bool(workers) and all(connection.hget(w.key, "state") == b"idle" for w in workers)


@pytest.mark.worker
@pytest.mark.django_db
def test_healthy_with_a_real_worker_and_cron_runner(client, redis_url, tmp_path):
    cron_config = tmp_path / "cron_empty.py"
    # django-rq's runner takes its Redis from the first job's queue: one yearly job, never due here.
    cron_config.write_text("from rq import cron\nimport time\ncron.register(time.time, 'default', cron='0 0 1 1 *')\n")
    worker = start(["rqworker", "default", "--with-scheduler"], redis_url, tmp_path)
    cron = start(["rqcron", str(cron_config)], redis_url, tmp_path)

    def healthy():
        for process in (worker, cron):
            assert process.poll() is None, output(worker, cron)
        return get_health(client)[1]["ok"] and listening(redis_url)

    try:
        with override_settings(RQ_QUEUES=queues(redis_url)):
            # Both start Django first: minutes on a busy machine are not a failure of the page.
            try:
                wait_for(healthy, timeout=120, interval=0.2, message="the worker and the cron runner")
            except AssertionError as exc:
                raise AssertionError(f"{exc}\n{get_health(client)[1]}\n{output(worker, cron)}") from None
            response, body = get_health(client)
        assert response.status_code == 200, body
        assert body == {"ok": True, "checks": dict.fromkeys(CHECK_NAMES, "ok")}
    finally:
        stop(worker)
        stop(cron)
    # Both stopped on SIGTERM, each with its goodbye (not killed, not dead before its handler).
    assert (worker.returncode, cron.returncode) == (0, 0), output(worker, cron)
    # A worker that stopped cleanly has said goodbye: the page notices without waiting for RQ's key to
    # expire (minutes). The goodbye (its last Redis writes) precedes the exit: no wait is needed.
    with override_settings(RQ_QUEUES=queues(redis_url)):
        response, body = get_health(client)
    assert response.status_code == 503
    assert body["checks"]["worker"] == "failed", output(worker, cron)
    assert body["checks"]["cron"] == "failed", output(worker, cron)


@pytest.mark.django_db
def test_unhealthy_when_redis_is_unreachable(client, tmp_path):
    dead = f"unix://{tmp_path / 'nobody-listens.sock'}"
    with override_settings(RQ_QUEUES=queues(dead)):
        response, body = get_health(client)
    assert response.status_code == 503
    assert body == {"ok": False, "checks": {"database": "ok", "redis": "failed", "worker": "failed",
                                            "cron": "failed"}}
    assert b"nobody-listens" not in response.content


@pytest.mark.django_db
def test_unhealthy_when_no_worker_runs(client, redis_url):
    with override_settings(RQ_QUEUES=queues(redis_url)):
        response, body = get_health(client)
    assert response.status_code == 503
    assert body["checks"]["database"] == "ok"
    assert body["checks"]["redis"] == "ok"
    assert body["checks"]["worker"] == "failed"


@pytest.mark.django_db
def test_idle_worker_counts_until_rq_itself_would_expire_it(client, redis_url):
    """RQ 2.12: an idle worker beats only every worker_ttl - 15 = 405 s; its last_heartbeat is aware UTC."""
    connection = redis.Redis.from_url(redis_url)
    worker = Worker(["default"], connection=connection, name="idle-worker")
    worker.register_birth()
    try:
        with override_settings(RQ_QUEUES=queues(redis_url)):
            connection.hset(worker.key, "last_heartbeat", utcformat(now() - timedelta(seconds=300)))
            assert get_health(client)[1]["checks"]["worker"] == "ok"
            connection.hset(worker.key, "last_heartbeat", utcformat(now() - timedelta(seconds=600)))
            assert get_health(client)[1]["checks"]["worker"] == "failed"
    finally:
        worker.register_death()
