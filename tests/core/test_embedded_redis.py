"""The embedded Redis (backoffice/core/embedded_redis.py): with an append-only directory (`make run`) RQ's
scheduled jobs survive a killed redis-server; without one (the test suite's) nothing is kept on disk."""

import os
import shutil
import signal
import tempfile
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

import pytest
import redis
from rq import Queue
from rq.job import Job
from rq.registry import ScheduledJobRegistry

from backoffice.core import embedded_redis


@pytest.fixture
def redis_dir():
    # A short path of its own: a unix socket path is limited to 107 bytes.
    path = Path(tempfile.mkdtemp(prefix="bo-er-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@contextmanager
def server(socket_path, **options):
    process = embedded_redis.start(socket_path, **options)
    try:
        yield redis.Redis.from_url(f"unix://{socket_path}"), process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()


def test_a_scheduled_job_survives_a_killed_redis_with_an_append_only_file(redis_dir):
    socket_path = redis_dir / "redis.sock"
    with server(socket_path, append_only_dir=redis_dir) as (connection, process):
        queue = Queue("default", connection=connection)
        job = queue.enqueue_in(timedelta(hours=1), "time.sleep", 0)
        queue.enqueue("time.sleep", 0)  # a queued job, too
        os.kill(process.pid, signal.SIGKILL)  # a crash: no shutdown, no last write
        process.wait()
    assert (redis_dir / embedded_redis.APPEND_ONLY_FILENAME).stat().st_size > 0

    with server(socket_path, append_only_dir=redis_dir) as (connection, _):
        queue = Queue("default", connection=connection)
        assert ScheduledJobRegistry(queue=queue).get_job_ids() == [job.id]
        assert Job.fetch(job.id, connection=connection).get_status() == "scheduled"
        assert queue.count == 1


def test_without_an_append_only_directory_nothing_is_kept(redis_dir):
    socket_path = redis_dir / "redis.sock"
    with server(socket_path) as (connection, process):
        connection.set("kept", "no")
        process.terminate()  # even a clean stop writes nothing
        process.wait()
    with server(socket_path) as (connection, _):
        assert connection.get("kept") is None
    assert sorted(path.name for path in redis_dir.iterdir() if path.name != "redis.sock") == []
