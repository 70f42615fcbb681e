"""Recurring jobs each app declares where their jobs are (core.domains); backoffice/cron.py hands them to RQ's cron.

    schedule.register(func=tickets_poll_all, interval=60, name="tickets_poll", job_timeout=120)
    schedule.register(func=reports_daily_job, args=("ticket_report_sync",), interval=900,
                      name="ticket_report_sync_daily")

Work that runs for every company starts each company at its own stable offset (company_offset), so that
the platform sees it spread over the day (document 1, section 8).

Names are unique: a second entry of one name is refused rather than silently replacing the first.
"""

import hashlib

from django.core.exceptions import ImproperlyConfigured

from .registry import registry


def register(*, func, name: str, interval: int | None = None, cron: str | None = None, args=(), kwargs=None,
             job_timeout: int | None = None, queue: str = "default") -> None:
    if (interval is None) == (cron is None):
        raise ImproperlyConfigured(f"cron entry {name}: give either interval or cron")
    entry = {"func": func, "queue_name": queue, "name": name, "args": tuple(args), "kwargs": dict(kwargs or {}),
             "interval": interval, "cron": cron, "job_timeout": job_timeout}
    known = registry["schedule"].get(name)
    if known is not None and known != entry:
        raise ImproperlyConfigured(f"two cron entries are called {name}")
    registry["schedule"][name] = entry


def entries() -> list[dict]:
    return list(registry["schedule"].values())


def company_offset(company_id, period: float) -> float:
    """A stable offset in [0, period) seconds for one company: its periodic work starts there, so that the
    companies' calls spread over the period instead of all at the same minute (document 1, section 8)."""
    digest = hashlib.sha256(f"company:{company_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % max(1, int(period))
