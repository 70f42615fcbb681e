"""Many records sent at once: batch jobs pushing in parallel lanes, and "send again" for failed ones.

Each record is still claimed, and reconciled before a resend (sync.claim_many, sync.push_claimed: the steps of
sync.record_push); a batch saves the per-record job, does its own database work per run of records instead of
per record, and overlaps one lane's work with another's wait for the platform. The sweep re-enqueues, one by
one, whatever a lost batch left behind.
"""

import contextvars
import itertools
import logging
import math
import threading
from collections.abc import Callable, Hashable
from contextlib import contextmanager
from dataclasses import dataclass

from django.conf import settings
from django.contrib import messages
from django.db import connection, transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from backoffice.remote.errors import RateLimited, RemoteError

from . import jobs, sync
from .choices import SyncState
from .generic.registry import model_url
from .generic.views import BulkAction
from .platform import audits_in_bulk, flush_audits
from .roles import EDITORS, has_role
from .sync import selection_target

logger = logging.getLogger(__name__)

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


def batch_queue(records, *, job, name, args=(), series=None, lanes=1) -> list:
    """LOCAL/FAILED -> QUEUED in one UPDATE, and one job per PUSH_BATCH_SIZE records: job(*args, pks) pushes
    them (push_batch). series(record) -> (key, number) of a numbered record: the batches are then cut along the
    series (series_batches) for lanes that run side by side, in one job and across workers."""
    records = list(records)
    if not records:
        return []
    model = type(records[0])
    with transaction.atomic():
        pks = list(model.objects.filter(pk__in=[r.pk for r in records],
                                         sync_state__in=[SyncState.LOCAL, SyncState.FAILED])
                   .order_by("pk").values_list("pk", flat=True))
        model.objects.filter(pk__in=pks).update(sync_state=SyncState.QUEUED, last_error="", updated_at=timezone.now())
        if series is None:
            batches = [pks[i:i + PUSH_BATCH_SIZE] for i in range(0, len(pks), PUSH_BATCH_SIZE)]
        else:
            numbered = {record.pk: series(record) for record in records}
            batches = series_batches(sorted(pks, key=lambda pk: numbered[pk][1]), lambda pk: numbered[pk][0], lanes)
        return [jobs.enqueue(job, name=name, company=records[0].company_id, target=selection_target(model, batch),
                             args=[*args, batch])
                for batch in batches]


def series_batches(pks, key, lanes=1) -> list[list]:
    """Batches of numbered records (pks in number order) whose lanes seldom wait for one another: each series
    (key) is cut into runs of at most PUSH_BATCH_SIZE / lanes consecutive numbers (/ series when there are fewer),
    the runs are dealt out in turn (the first run of every series before the second of any), and a batch takes the
    runs that follow in that order while they fit in it, never two of one series. So a worker's lanes each push a
    series of their own, workers taking the next batches side by side mostly push other series, and a series' next
    run comes as late as it can (number N+1 never goes before N: core.sync.series_lane)."""
    groups = lane_groups(pks, key)
    longest = max(1, PUSH_BATCH_SIZE // max(1, min(lanes, len(groups))))
    runs = []
    for group in groups:
        size = math.ceil(len(group) / math.ceil(len(group) / longest))  # even runs, none longer than `longest`
        runs.append([group[i:i + size] for i in range(0, len(group), size)])
    batches, names = [[]], set()
    for run in (run for turn in itertools.zip_longest(*runs) for run in turn if run):
        if len(batches[-1]) + len(run) > PUSH_BATCH_SIZE or key(run[0]) in names:
            batches.append([])
            names = set()
        batches[-1].extend(run)
        names.add(key(run[0]))
    return [one for one in batches if one]


@dataclass
class Pusher:
    """How one lane pushes: make() -> (send, reconcile) for sync.record_push.

    key(pk) names the series a record is numbered in (a ticket's prefix): the records of one key go through
    one lane, one after the other in the order given, so the platform receives number N before N+1
    (document 2: the numbers of a prefix continue consecutively); different keys still go in parallel.
    Without a key nothing is kept in order: lanes take runs of records as they come. waits_for: as
    sync.record_push's, for what other jobs of the same series still send: a record that waits ends its group,
    the other groups go on, and the batch then runs again shortly (jobs.TryLater). It is asked at the record's
    turn, when its lane has claimed the record's run and has not yet written the outcomes of the run's earlier
    records: it must let a record follow the batch's own earlier numbers (tickets_push_batch's does)."""

    model: type
    make: object
    lanes: int = 1
    key: Callable[[object], Hashable] | None = None
    waits_for: Callable[[object], str] | None = None
    # Called with the last record of each run of a lane once it is written SYNCED: what another job deferred
    # behind it goes now (tickets: the next number's push or batch, core.sync.series_lane's wake_next).
    landed: Callable[[object], None] | None = None


def lane_groups(pks, key=None) -> list[list]:
    """The pks in groups a lane takes whole: one per key, in the order of their first record, each keeping
    the given order."""
    if key is None:
        return [[pk] for pk in pks]
    groups: dict = {}
    for pk in pks:
        groups.setdefault(key(pk), []).append(pk)
    return list(groups.values())


def push_batch(pusher: Pusher, pks) -> dict:
    """Push the QUEUED records of `pks` in order over pusher.lanes threads, each lane taking whole groups
    (lane_groups: one series stays in order). A refused record is left FAILED and the batch goes on; a
    transient error or a rate limit stops it (re-raised for the runner, which runs the batch again: what was
    sent is skipped, what may have arrived is reconciled first). Returns {"sent": n, "refused": n}.

    A lane's own work is done per run of CLAIM_SIZE records, not per record (LaneRun): claimed in one
    transaction, their outcomes written in one UPDATE and the audit rows of their calls in one INSERT."""
    if pusher.key is None:  # no order to keep: runs of records a lane claims at once, spread over the lanes
        size = max(1, min(CLAIM_SIZE, math.ceil(len(pks) / max(1, pusher.lanes))))
        groups = [list(pks[i:i + size]) for i in range(0, len(pks), size)]
    else:
        groups = lane_groups(pks, pusher.key)
    todo = iter(groups)
    lock = threading.Lock()
    counts = {"sent": 0, "refused": 0}
    stopped: list[BaseException] = []
    waiting: list[jobs.TryLater] = []  # a series waiting for another job's earlier number: its group ends

    def lane():
        send, reconcile = pusher.make()
        with relaxed_commits(), audits_in_bulk():
            run = LaneRun(pusher, send, reconcile, stopped)
            try:
                while not stopped:
                    with lock:
                        group = next(todo, None)
                    if group is None:
                        return
                    for outcome in run.push_group(group):
                        if isinstance(outcome, jobs.TryLater):
                            waiting.append(outcome)
                        else:
                            with lock:
                                counts[outcome] += 1
            except BaseException as exc:  # the lane's own claim or write failed: the batch stops, as for a send
                stopped.append(exc)
            finally:
                run.close()

    run_lanes(lane, max(1, min(pusher.lanes, len(groups))))
    done = counts["sent"] + counts["refused"]
    jobs.set_progress(100 * done / max(1, len(pks)))
    if stopped:
        error = stopped[0]
        if done and isinstance(error, RemoteError) and not error.permanent and not isinstance(error, RateLimited):
            # Progress was made: the batch runs again soon without using up an attempt, so that a platform
            # failing now and then (a 500 here and there) never exhausts a batch that keeps moving.
            raise jobs.TryLater(jobs.retry_delay(1), _("%(done)s of %(count)s sent; the rest again shortly (%(error)s).")
                                % {"done": done, "count": len(pks), "error": error.user_message()})
        if not jobs.will_run_again(error):
            hand_over(pusher.model, pks)
        raise error
    if waiting:
        raise waiting[0]  # the runner runs the batch again shortly: what was sent is skipped
    return counts


# Records a lane claims at once: its database work is per run, and a crash leaves at most these SENDING
# unsent (their next push asks the platform first, one read each).
CLAIM_SIZE = 25


class LaneRun:
    """One lane's pushes, a run of records at a time: claimed together (sync.claim_many), each then reconciled
    or sent in order (sync.push_claimed), the successes written together (sync.records_synced) with the audit
    rows of their calls, at the end of each run and whenever the lane stops. What the lane claimed but did not
    send when it stops goes back to QUEUED (sync.unclaim); after a crash it is SENDING, and its next push asks
    the platform before sending."""

    def __init__(self, pusher: Pusher, send, reconcile, stopped: list):
        self.pusher, self.send, self.reconcile, self.stopped = pusher, send, reconcile, stopped
        self.claimed: dict = {}  # pk -> record claimed and not yet pushed
        self.synced: dict = {}  # pk -> fields the platform gave, not yet written
        self.last = None  # the last record of those

    def push_group(self, group):
        """Yield the outcome of each record of the group, in order: "sent", "refused", or the TryLater of a
        record that waits for an earlier number (the group ends there). Stops at another lane's stop or at an
        error that stops the batch (kept in `stopped`)."""
        model, waits_for = self.pusher.model, self.pusher.waits_for
        for start in range(0, len(group), CLAIM_SIZE):
            run = group[start:start + CLAIM_SIZE]
            if self.stopped:
                return
            self.claimed = sync.claim_many(model, run)
            try:
                for pk in run:
                    # Another lane's stop ends this group too: its next number waits for the runner's retry.
                    if self.stopped:
                        return
                    record = self.claimed.pop(pk, None)
                    if record is None:  # not QUEUED when claimed (taken over, left SENDING...): record by record
                        outcome = push_one(model, pk, self.send, self.reconcile, self.stopped, waits_for)
                    elif waits_for is not None and (reason := waits_for(record)):
                        # Asked at its turn, as record_push asks a QUEUED record; given back with the rest.
                        self.claimed[pk] = record
                        outcome = jobs.TryLater(getattr(settings, "SYNC_LANE_WAIT_SECONDS", 5), reason)
                    else:
                        outcome = self.push_claimed(record)
                    if outcome is None:
                        return
                    yield outcome
                    if isinstance(outcome, jobs.TryLater):
                        return
            finally:
                self.write()

    def push_claimed(self, record):
        """As push_one, for a record claimed here: "sent", "refused", a TryLater, or None after a stop."""
        try:
            self.synced[record.pk], _reconciled = sync.push_claimed(self.pusher.model, record, send=self.send,
                                                                    reconcile=self.reconcile)
            self.last = record
            return "sent"
        except jobs.TryLater as exc:
            if self.pusher.waits_for is None:
                self.stopped.append(exc)
                return None
            return exc
        except RemoteError as exc:
            if exc.permanent:
                return "refused"
            self.stopped.append(exc)
        except BaseException as exc:
            self.stopped.append(exc)
        return None

    def write(self):
        """The run's outcomes and audit rows; what was claimed and not sent goes back to QUEUED."""
        synced, self.synced = self.synced, {}
        unsent, self.claimed = list(self.claimed.values()), {}
        last, self.last = self.last, None
        try:
            sync.records_synced(self.pusher.model, synced)
            if unsent:
                sync.unclaim(self.pusher.model, unsent)
        finally:
            flush_audits()
        if last is not None and self.pusher.landed is not None:
            try:
                self.pusher.landed(last)
            except Exception:  # a wake-up is a shortcut: what it would move still runs at its time
                logger.warning("could not wake what waits behind %s", selection_target(type(last), [last.pk]),
                               exc_info=True)

    def close(self):
        try:
            self.write()
        except BaseException as exc:  # what stays SENDING is asked for on the platform by its next push
            self.stopped.append(exc)


def hand_over(model, pks) -> int:
    """The batch gives up: what it leaves QUEUED or SENDING goes on as one push job per record (each asks the
    platform before sending again), instead of waiting for the sweep's safety net."""
    count = 0
    for pk, company_id in model.objects.filter(pk__in=pks, sync_state__in=[SyncState.QUEUED, SyncState.SENDING]) \
            .values_list("pk", "company_id"):
        count += sync.enqueue_push(model, pk, company_id).is_new
    return count


def push_one(model, pk, send, reconcile, stopped, waits_for=None):
    """"sent", "refused", the TryLater of a record that waits for an earlier number (waits_for), or None after a
    failure that stops the batch (kept in `stopped`)."""
    try:
        sync.record_push(model, pk, send=send, reconcile=reconcile, waits_for=waits_for)
        return "sent"
    except jobs.TryLater as exc:
        if waits_for is None:
            stopped.append(exc)
            return None
        return exc
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


def resend_action(*, refused, confirm, queue_many=None) -> BulkAction:
    """The list's "Send again" bulk action (resend_bulk) for editors; refused: the message when none of the
    selected records failed."""
    return BulkAction(gettext_lazy("Send again"), resend_bulk(queue_many=queue_many, refused_message=refused),
                      confirm=confirm, required_roles=EDITORS)


def resend_buttons(record, user, ready=None) -> list:
    """The detail page's "Send again" button (it posts to the list's resend action), for an editor on a record
    whose sending failed; ready(record): the domain's own condition besides (default: no action holds it)."""
    ready = ready or (lambda failed: not failed.pending_action)
    if record.sync_state != SyncState.FAILED or not ready(record) or not has_role(user, *EDITORS):
        return []
    return [("resend", model_url(type(record), "bulk", action="resend"), _("Send again"), "primary", "arrow-repeat")]


def nothing_to_send() -> str:
    return _("Nothing to send.")
