"""Loaded with `-p tests.services_plugin`, before Django's settings are read: gives the suite a Redis.

REDIS_URL set (CI: the machine's Redis) is used as it is; otherwise an embedded redis-server is
started on a unix socket for this run. The work happens at import because pytest-django reads the
settings in its own early hook, before any hook of ours could run.
"""

import atexit
import os
import tempfile
from pathlib import Path

# The suite runs in development mode (settings.DEVELOPMENT); tests of a production start strip it.
os.environ.setdefault("DJANGO_DEVELOPMENT", "1")

# Keep test artefacts (SQLite test files, media) out of the developer's var/.
os.environ.setdefault("BACKOFFICE_VAR_DIR", tempfile.mkdtemp(prefix="bo-var-"))

if not os.environ.get("REDIS_URL") and not os.environ.get("PYTEST_XDIST_WORKER"):
    from backoffice.core import embedded_redis

    _socket = Path(tempfile.mkdtemp(prefix="bo-redis-")) / "redis.sock"
    _process = embedded_redis.start(_socket)
    atexit.register(_process.terminate)
    os.environ["REDIS_URL"] = f"unix://{_socket}"

# The test sandbox server's address is the sandbox environment's URL of the settings (an operator's URL,
# trusted as set; typed company URLs would be refused for pointing at loopback). Each test process, xdist
# workers included, starts its own sandbox on its own port (tests/sandbox_server.py reads it back).
import socket as _socket

with _socket.socket() as _sock:
    _sock.bind(("127.0.0.1", 0))
    os.environ["SANDBOX_URL"] = f"http://127.0.0.1:{_sock.getsockname()[1]}"

# The test-only app of the job machinery (tests/testapp): settings append it to INSTALLED_APPS.
os.environ.setdefault("BACKOFFICE_EXTRA_APPS", "tests.testapp")

# Parallel runs (xdist) share one Redis: give each worker its own database so that the RQ worker one
# test starts never takes jobs enqueued by another test process.
if os.environ.get("PYTEST_XDIST_WORKER", "").startswith("gw"):
    from urllib.parse import urlsplit, urlunsplit

    _db = int(os.environ["PYTEST_XDIST_WORKER"][2:]) % 15 + 1
    _url = urlsplit(os.environ["REDIS_URL"])
    if _url.scheme == "unix":
        _query = "&".join([q for q in _url.query.split("&") if q and not q.startswith("db=")] + [f"db={_db}"])
        os.environ["REDIS_URL"] = f"unix://{_url.path}?{_query}"
    else:
        os.environ["REDIS_URL"] = urlunsplit(_url._replace(path=f"/{_db}"))

# The test databases of a parallel run, migrated once by the controller before its workers start
# (tests/databases.py); the workers copy them in tests/conftest.py's django_db_setup.
import pytest  # noqa: E402


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session):
    config = session.config
    if hasattr(config, "workerinput") or not config.pluginmanager.getplugin("dsession"):
        return
    from pytest_django.plugin import blocking_manager_key

    from tests import databases

    config.stash[_templates_key] = databases.make_templates(config.stash[blocking_manager_key])


def pytest_sessionfinish(session):
    folder = session.config.stash.get(_templates_key, None)
    if folder is not None:
        from pytest_django.plugin import blocking_manager_key

        from tests import databases

        databases.drop_templates(session.config.stash[blocking_manager_key], folder)


_templates_key = pytest.StashKey()
