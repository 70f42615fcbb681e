"""The health endpoint's checks: database, Redis, worker heartbeat, cron runner heartbeat.

The report says only "ok" or "failed" per check (the endpoint needs no login); the reason of a failure
goes to the log.
"""

import logging
import time

import redis
from django.conf import settings
from django.db import connection
from rq import Worker, cron_scheduler_registry
from rq.defaults import DEFAULT_WORKER_TTL
from rq.utils import now  # aware UTC, like Worker.last_heartbeat

logger = logging.getLogger(__name__)

# An idle RQ worker heartbeats only every worker_ttl - 15 s (405 s by default) and RQ lets its key expire
# worker_ttl + 60 s after the last one: that is RQ's own limit for "alive", so it is ours too.
WORKER_MAX_SILENCE = DEFAULT_WORKER_TTL + 60
# The cron runner heartbeats on every loop and sleeps at most 60 s between loops.
CRON_MAX_SILENCE = 120
# A health probe must answer fast even when Redis hangs.
REDIS_TIMEOUT = 2


def _redis():
    # Read the URL from settings on every call (not django_rq's import-time copy), with short timeouts.
    url = settings.RQ_QUEUES["default"]["URL"]
    return redis.Redis.from_url(url, socket_connect_timeout=REDIS_TIMEOUT, socket_timeout=REDIS_TIMEOUT)


def _check_database():
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        return cursor.fetchone() == (1,)


def _check_redis():
    return bool(_redis().ping())


def _check_worker():
    """Alive when RQ lists a worker (its key has not expired) whose heartbeat is recent."""
    workers = Worker.all(connection=_redis())
    current = now()
    return any(
        w.last_heartbeat and (current - w.last_heartbeat).total_seconds() < WORKER_MAX_SILENCE for w in workers
    )


def _check_cron():
    """Alive when a cron scheduler heartbeated lately (RQ keeps the last beat as a sorted-set score)."""
    key = cron_scheduler_registry.get_registry_key()
    return _redis().zcount(key, time.time() - CRON_MAX_SILENCE, "+inf") > 0


CHECKS = {"database": _check_database, "redis": _check_redis, "worker": _check_worker, "cron": _check_cron}


def health_report() -> dict:
    """{"ok": bool, "checks": {"database": "ok" | "failed", ...}}."""
    checks = {}
    for name, check in CHECKS.items():
        try:
            passed = bool(check())
            if not passed:
                logger.warning("health check %s failed", name)
        except Exception as exc:  # the health page reports a failure; it must never fail itself
            logger.warning("health check %s failed: %s", name, exc.__class__.__name__)
            passed = False
        checks[name] = "ok" if passed else "failed"
    return {"ok": all(value == "ok" for value in checks.values()), "checks": checks}
