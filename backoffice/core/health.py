"""The health endpoint's checks: database, Redis, worker heartbeat."""

from django.db import connection
from django.utils import timezone


def _check_database():
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()
    return {"ok": True}


def _check_redis():
    import django_rq

    django_rq.get_connection("default").ping()
    return {"ok": True}


def _check_worker():
    """A worker is alive when RQ has a registered worker whose heartbeat is recent."""
    import django_rq
    from rq import Worker

    conn = django_rq.get_connection("default")
    workers = Worker.all(connection=conn)
    now = timezone.now()
    alive = [w for w in workers if w.last_heartbeat and (now - w.last_heartbeat).total_seconds() < 120]
    return {"ok": bool(alive), "workers": len(alive)}


CHECKS = {"database": _check_database, "redis": _check_redis, "worker": _check_worker}


def health_report() -> dict:
    report = {}
    for name, check in CHECKS.items():
        try:
            report[name] = check()
        except Exception as exc:  # the health page reports a failure; it must never fail itself
            report[name] = {"ok": False, "error": exc.__class__.__name__}
    report["ok"] = all(item["ok"] for item in report.values())
    return report
