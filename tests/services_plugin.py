"""Loaded with `-p tests.services_plugin`, before Django's settings are read: gives the suite a Redis.

REDIS_URL set (CI: the machine's Redis) is used as it is; otherwise an embedded redis-server is
started on a unix socket for this run. The work happens at import because pytest-django reads the
settings in its own early hook, before any hook of ours could run.
"""

import atexit
import os
import tempfile
from pathlib import Path

# Keep test artefacts (SQLite test files, media) out of the developer's var/.
os.environ.setdefault("BACKOFFICE_VAR_DIR", tempfile.mkdtemp(prefix="bo-var-"))

if not os.environ.get("REDIS_URL") and not os.environ.get("PYTEST_XDIST_WORKER"):
    from backoffice.core import embedded_redis

    _socket = Path(tempfile.mkdtemp(prefix="bo-redis-")) / "redis.sock"
    _process = embedded_redis.start(_socket)
    atexit.register(_process.terminate)
    os.environ["REDIS_URL"] = f"unix://{_socket}"
