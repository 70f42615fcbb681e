"""The test databases of a parallel run: migrated once into templates, copied for each xdist worker.

Migrating the back-office's schema takes about 10 s and the sandbox's a few more; a parallel run would pay that
once per worker. The controller (the process that hands out the tests, tests/services_plugin.py) migrates both
once, before the workers start, into templates; each worker copies them (a file copy on SQLite, CREATE DATABASE
... TEMPLATE on PostgreSQL). The copies are taken one at a time under a file lock: PostgreSQL refuses to copy a
template another copy is reading. A run without xdist (one file, a debugger) migrates as pytest-django does.
"""

import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

TEMPLATE = "BO_TEST_DATABASE_TEMPLATE"  # the back-office's migrated test database
SANDBOX_TEMPLATE = "BO_TEST_SANDBOX_TEMPLATE"  # the sandbox's migrated SQLite file
LOCK = "BO_TEST_DATABASE_LOCK"
ROOT = Path(__file__).resolve().parent.parent


def sandbox_env(database: Path, **extra) -> dict:
    """The environment of a sandbox process (migrate or serve) on its own SQLite file."""
    return {**os.environ, "DJANGO_SETTINGS_MODULE": "backoffice.sandbox.settings",
            "SANDBOX_DATABASE_URL": f"sqlite:///{database}", "DJANGO_DEBUG": "0", "PYTHONUNBUFFERED": "1", **extra}


def migrate_sandbox(database: Path, env=None):
    subprocess.run([sys.executable, str(ROOT / "manage.py"), "migrate", "--noinput", "-v", "0"], cwd=ROOT,
                   env=env or sandbox_env(database), check=True)


# --- the controller -------------------------------------------------------------------------------------------

def make_templates(blocker):
    """Migrate the back-office's test database and the sandbox's once, for every worker of this run."""
    from django.db import connections

    folder = Path(tempfile.mkdtemp(prefix="bo-templates-"))
    sandbox = folder / "sandbox.sqlite3"
    # The sandbox's schema in a process of its own, while this one migrates the back-office's.
    sandbox_migration = subprocess.Popen([sys.executable, str(ROOT / "manage.py"), "migrate", "--noinput", "-v", "0"],
                                         cwd=ROOT, env=sandbox_env(sandbox))
    connection = connections["default"]
    with blocker.unblock():
        name = connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
        connection.close()
    if sandbox_migration.wait() != 0:
        raise RuntimeError(f"the sandbox's migrations failed (exit {sandbox_migration.returncode})")
    os.environ.update({TEMPLATE: name, SANDBOX_TEMPLATE: str(sandbox), LOCK: str(folder / "lock")})
    return folder


def drop_templates(blocker, folder: Path):
    from django.db import connections

    with blocker.unblock():
        _drop(connections["default"])
    shutil.rmtree(folder, ignore_errors=True)


def _drop(connection):
    """Drop the database the connection points at. On PostgreSQL WITH (FORCE): a session left behind by a process
    a test started (a worker it killed, a live server's thread) would otherwise keep it alive."""
    name = connection.settings_dict["NAME"]
    connection.close()
    if connection.vendor == "postgresql":
        with connection.creation._nodb_cursor() as cursor:
            cursor.execute(f"DROP DATABASE IF EXISTS {connection.ops.quote_name(name)} WITH (FORCE)")
    else:
        connection.creation._destroy_test_db(name, verbosity=0)


# --- a worker -------------------------------------------------------------------------------------------------

@contextmanager
def _one_copy_at_a_time():
    with open(os.environ[LOCK], "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def copy_template():
    """This worker's test database, copied from the template under the name pytest-django gives it (the test
    name with the worker's suffix); the connection and settings then point at it. Returns the name to restore."""
    from django.conf import settings
    from django.db import connections

    connection = connections["default"]
    creation = connection.creation
    template, target = os.environ[TEMPLATE], creation._get_test_db_name()
    connection.close()
    with _one_copy_at_a_time():
        if connection.vendor == "sqlite":
            shutil.copyfile(template, target)
        else:
            quote = connection.ops.quote_name
            with creation._nodb_cursor() as cursor:
                cursor.execute(f"DROP DATABASE IF EXISTS {quote(target)}")
                cursor.execute(f"CREATE DATABASE {quote(target)} TEMPLATE {quote(template)}")
    original = connection.settings_dict["NAME"]
    settings.DATABASES[connection.alias]["NAME"] = connection.settings_dict["NAME"] = target
    return original


def drop_copy(original):
    """Drop this worker's copy and point the connection back at the name it had."""
    from django.conf import settings
    from django.db import connections

    connection = connections["default"]
    _drop(connection)
    settings.DATABASES[connection.alias]["NAME"] = connection.settings_dict["NAME"] = original


def copy_sandbox(database: Path) -> bool:
    """The sandbox's database copied from the run's template; False when there is none (then migrate)."""
    template = os.environ.get(SANDBOX_TEMPLATE)
    if not template:
        return False
    shutil.copyfile(template, database)
    return True
