"""Many records sent at once: batch jobs pushing in parallel lanes, and "send again" for failed ones.

Each record still goes through sync.record_push (claimed, reconciled before a resend); a batch only saves
the per-record job and overlaps one record's database work with another's wait for the platform. The
sweep re-enqueues, one by one, whatever a lost batch left behind.
"""

import contextvars
import threading
from contextlib import contextmanager
from dataclasses import dataclass

from django.contrib import messages
from django.db import connection, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from backoffice.remote.errors import RemoteError

from . import jobs, sync
from .actions import selection_target
from .choices import SyncState

PUSH_BATCH_SIZE = 100


@contextmanager
def relaxed_commits():
    """PostgreSQL: commits are visible at once but flushed to disk a moment later (synchronous_commit off),
    instead of one disk flush per claim, result and audit row. Safe by design: a state lost in a crash
    leaves a record QUEUED or SENDING (or a report page missing), and what runs again asks the platform
    before it sends anything again; nothing is sent twice."""
    if connection.vendor != "postgresql":
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("SET synchronous_commit TO OFF")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET synchronous_commit")


def batch_queue(records, *, job, name, args=()) -> list:
    """LOCAL/FAILED -> QUEUED in one UPDATE, and one job per PUSH_BATCH_SIZE records:
    job(*args, pks) pushes them (push_batch)."""
    records = list(records)
    if not records:
        return []
    model = type(records[0])
    with transaction.atomic():
        pks = list(model.objects.filter(pk__in=[r.pk for r in records],
                                         sync_state__in=[SyncState.LOCAL, SyncState.FAILED])
                   .order_by("pk").values_list("pk", flat=True))
        model.objects.filter(pk__in=pks).update(sync_state=SyncState.QUEUED, last_error="", updated_at=timezone.now())
        return [jobs.enqueue(job, name=name, company=records[0].company_id, target=selection_target(model, batch),
                             args=[*args, batch])
                for batch in (pks[i:i + PUSH_BATCH_SIZE] for i in range(0, len(pks), PUSH_BATCH_SIZE))]


@dataclass
class Pusher:
    """How one lane pushes: make(lane_client) -> (send, reconcile) for sync.record_push."""

    model: type
    make: object
    lanes: int = 1


def push_batch(pusher: Pusher, pks) -> dict:
    """Push the QUEUED records of `pks` in order over pusher.lanes threads. A refused record is left FAILED
    and the batch goes on; a transient error or a rate limit stops it (re-raised for the runner, which runs
    the batch again: what was sent is skipped, what may have arrived is reconciled first).
    Returns {"sent": n, "refused": n}."""
    todo = iter(pks)
    lock = threading.Lock()
    counts = {"sent": 0, "refused": 0}
    stopped: list[BaseException] = []

    def lane():
        send, reconcile = pusher.make()
        with relaxed_commits():
            while not stopped:
                with lock:
                    pk = next(todo, None)
                if pk is None:
                    return
                outcome = push_one(pusher.model, pk, send, reconcile, stopped)
                if outcome is None:
                    return
                with lock:
                    counts[outcome] += 1

    run_lanes(lane, max(1, min(pusher.lanes, len(pks))))
    jobs.set_progress(100 * (counts["sent"] + counts["refused"]) / max(1, len(pks)))
    if stopped:
        raise stopped[0]
    return counts


def push_one(model, pk, send, reconcile, stopped):
    """"sent", "refused", or None after a failure that stops the batch (kept in `stopped`)."""
    try:
        sync.record_push(model, pk, send=send, reconcile=reconcile)
        return "sent"
    except RemoteError as exc:
        if exc.permanent:
            return "refused"
        stopped.append(exc)
    except BaseException as exc:
        stopped.append(exc)
    return None


def run_lanes(lane, count):
    """Run lane() `count` times at once: here when 1, else in threads that see the job's context (the
    current JobRun) and close their own database connection at the end."""
    if count <= 1:
        lane()
        return

    def in_thread(context):
        try:
            context.run(lane)
        finally:
            connection.close()

    threads = [threading.Thread(target=in_thread, args=(contextvars.copy_context(),), daemon=True)
               for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def resend_bulk(*, queue_many=None, refused_message):
    """The list's "send again" action: records whose sending failed are queued again (one job each, or
    queue_many(records) for a batch)."""

    def run(request, queryset):
        failed = list(queryset.filter(sync_state=SyncState.FAILED).order_by("pk"))
        if not failed:
            messages.error(request, refused_message)
            return 0
        if len(failed) == 1 or queue_many is None:
            for record in failed:
                sync.record_queue(record)
        else:
            queue_many(failed)
        return len(failed)

    return run


def nothing_to_send() -> str:
    return _("Nothing to send.")
