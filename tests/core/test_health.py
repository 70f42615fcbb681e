"""The health endpoint against a real Redis and real RQ worker / cron processes."""

import os
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest
import redis
from django.test import override_settings
from rq import Worker
from rq.utils import now, utcformat

ROOT = Path(__file__).resolve().parents[2]
CHECK_NAMES = {"database", "redis", "worker", "cron"}


@pytest.fixture
def redis_url():
    """The suite's Redis, but a database of its own: no worker of another test is seen here."""
    base = os.environ["REDIS_URL"]
    if base.startswith("unix://"):
        url = base.split("?")[0] + "?db=9"
    else:
        url = base.rsplit("/", 1)[0] + "/9" if base.count("/") > 2 else base + "/9"
    connection = redis.Redis.from_url(url)
    connection.flushdb()
    yield url
    connection.flushdb()


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


def start(args, url):
    env = {**os.environ, "REDIS_URL": url, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen([sys.executable, str(ROOT / "manage.py"), *args], cwd=ROOT, env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def stop(process):
    process.terminate()
    try:
        process.wait(15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@pytest.mark.worker
@pytest.mark.django_db
def test_healthy_with_a_real_worker_and_cron_runner(client, redis_url, tmp_path):
    cron_config = tmp_path / "cron_empty.py"
    # django-rq's runner takes its Redis from the first job's queue: one yearly job, never due here.
    cron_config.write_text("from rq import cron\nimport time\ncron.register(time.time, 'default', cron='0 0 1 1 *')\n")
    worker = start(["rqworker", "default", "--with-scheduler"], redis_url)
    cron = start(["rqcron", str(cron_config)], redis_url)
    try:
        with override_settings(RQ_QUEUES=queues(redis_url)):
            deadline = time.monotonic() + 60
            while True:
                response, body = get_health(client)
                if body["ok"] or time.monotonic() > deadline:
                    break
                for process in (worker, cron):
                    assert process.poll() is None, process.stdout.read().decode(errors="replace")
                time.sleep(0.5)
        assert response.status_code == 200, body
        assert body == {"ok": True, "checks": dict.fromkeys(CHECK_NAMES, "ok")}
    finally:
        stop(worker)
        stop(cron)
    # A worker that stopped cleanly has said goodbye: the page notices without waiting for RQ's key to
    # expire (minutes). On a busy machine the goodbye (its last Redis writes) may trail the exit a moment.
    deadline = time.monotonic() + 20
    with override_settings(RQ_QUEUES=queues(redis_url)):
        response, body = get_health(client)
        while body["checks"]["worker"] != "failed" and time.monotonic() < deadline:
            time.sleep(0.5)
            response, body = get_health(client)
    assert response.status_code == 503
    assert body["checks"]["worker"] == "failed"
    assert body["checks"]["cron"] == "failed"


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
