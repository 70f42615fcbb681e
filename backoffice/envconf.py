"""Environment helpers shared by the back-office's settings and the sandbox's: plain functions, no setting.

Kept apart so that the sandbox (another company's server) reads no policy of the back-office's settings,
such as its refusal to start outside development without real secrets.
"""

import os
from pathlib import Path

import dj_database_url


def var_dir(base_dir: Path) -> Path:
    """BACKOFFICE_VAR_DIR, else var/ of the checkout: development databases, media, the Redis socket."""
    path = Path(os.environ.get("BACKOFFICE_VAR_DIR", base_dir / "var"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def env_bool(name, default=False):
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name, default=""):
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


def sqlite(path, var: Path):
    # Web, worker and cron write at once: WAL lets readers go on while one writes, the busy timeout
    # waits for the lock instead of failing, and IMMEDIATE takes the write lock at BEGIN so that a
    # transaction never has to upgrade a read lock (the classic "database is locked" deadlock).
    return {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": str(path),
        "OPTIONS": {
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            "transaction_mode": "IMMEDIATE",
            "timeout": 30,
        },
        "TEST": {"NAME": str(var / f"test_{Path(path).name}")},
    }


def database(url_var, sqlite_path, var: Path):
    url = os.environ.get(url_var)
    if not url:
        return sqlite(sqlite_path, var)
    config = dj_database_url.parse(url, conn_max_age=60, conn_health_checks=True)
    if config["ENGINE"] == "django.db.backends.sqlite3":
        return sqlite(config["NAME"], var)
    return config
