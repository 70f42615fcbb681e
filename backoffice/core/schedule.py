"""Recurring jobs each app declares in its AppConfig.ready(); backoffice/cron.py hands them to RQ's cron.

    schedule.register(func=tickets_poll_all, interval=60, name="tickets_poll", job_timeout=120)
    schedule.register(func=reports_nightly_job, args=("ticket_report_sync",), cron="30 2 * * *",
                      name="ticket_report_sync_nightly")

Names are unique: a second entry of one name is refused rather than silently replacing the first.
"""

from django.core.exceptions import ImproperlyConfigured

_entries: dict[str, dict] = {}


def register(*, func, name: str, interval: int | None = None, cron: str | None = None, args=(), kwargs=None,
             job_timeout: int | None = None, queue: str = "default") -> None:
    if (interval is None) == (cron is None):
        raise ImproperlyConfigured(f"cron entry {name}: give either interval or cron")
    entry = {"func": func, "queue_name": queue, "name": name, "args": tuple(args), "kwargs": dict(kwargs or {}),
             "interval": interval, "cron": cron, "job_timeout": job_timeout}
    known = _entries.get(name)
    if known is not None and known != entry:
        raise ImproperlyConfigured(f"two cron entries are called {name}")
    _entries[name] = entry


def entries() -> list[dict]:
    return list(_entries.values())

