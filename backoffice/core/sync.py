"""Push / poll / fetch: how every RemoteRecord reaches the platform and hears back from it.

Plain keyword-only services (HackSoft style) that the domain apps call with their own callables:

    # invoices/services.py, at its end: sync.register_pushable(Invoice, invoice_push)
    # invoices/services.py:           sync.record_queue(invoice)
    #                                 @job(_("Send invoice"))
    #                                 def invoice_push(pk):
    #                                     return sync.record_push(Invoice, pk, send=invoice_send,
    #                                                             reconcile=invoice_reconcile)

sync_state: LOCAL -> QUEUED -> SENDING -> SYNCED, or FAILED (permanent error, message kept, the user edits
and resends), or back to QUEUED (transient error; the job runner retries with backoff or after the
rate-limit window). See ARCHITECTURE.md, "The life of a mirrored record".
"""

import hashlib
import itertools
import logging
from datetime import timedelta
from operator import attrgetter

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import transaction
from django.db.models import Case, F, Q, Value, When
from django.utils import timezone
from django.utils.translation import gettext as _

from backoffice.remote.errors import LOCAL, RateLimited, RemoteError

from . import jobs
from .choices import SyncState
from .failures import failure
from .registry import registry

logger = logging.getLogger("backoffice.sync")


class StateError(Exception):
    """A sync-state transition the record's state does not allow; the message is for the user."""


def register_pushable(model, push_job) -> None:
    """Make `model` known to record_queue() and to the sweep (registry["pushables"]: the import path of its push
    job, an entry point taking the record's pk, and the job's name). Call it where the job is declared
    (core.domains)."""
    registry["pushables"][model] = (jobs.func_path(push_job), getattr(push_job, "job_name", ""))


def pushable_models() -> list:
    return list(registry["pushables"])


def record_target(model, pk) -> str:
    """The JobRun target of a record: 'app_label.model:pk'."""
    return f"{model._meta.label_lower}:{pk}"


def selection_target(model, pks) -> str:
    """The JobRun target of a selection: 'app.model:pk' for one, 'app.model:first+more:digest' for many."""
    digest = hashlib.sha1(",".join(str(pk) for pk in sorted(pks)).encode()).hexdigest()[:10]
    label, first = model._meta.label_lower, min(pks)
    return f"{label}:{first}" if len(pks) == 1 else f"{label}:{first}+{len(pks) - 1}:{digest}"


def own_fields(model, **fields) -> dict:
    """The fields among these that the model has (requested_status and status_message are a domain's)."""
    names = {field.name for field in model._meta.concrete_fields}
    return {name: value for name, value in fields.items() if name in names}


def enqueue_push(model, pk, company_id, *, join_running=True):
    """The record's push job (deduplicated). join_running=False for a wake-up (what the record waited for has
    landed): a run still running may have looked before the landing and end with "waits", so it must not count."""
    try:
        path, name = registry["pushables"][model]
    except KeyError:
        raise ImproperlyConfigured(f"{model._meta.label} has no push job: call sync.register_pushable()") from None
    return jobs.enqueue(path, name=name or path.rsplit(".", 1)[-1], company=company_id,
                        target=record_target(model, pk), args=[pk], join_running=join_running)


def record_queue(record):
    """Ask for a record to be sent: LOCAL or FAILED -> QUEUED, and its push job runs after commit.

    Returns the JobRun. Raises StateError when the record is already on its way or synced.
    """
    model = type(record)
    with transaction.atomic():
        changed = model.objects.filter(pk=record.pk, sync_state__in=[SyncState.LOCAL, SyncState.FAILED]).update(
            sync_state=SyncState.QUEUED, last_error="", last_error_source="", updated_at=timezone.now())
        if not changed:
            record.refresh_from_db(fields=["sync_state"])
            raise StateError(_("Only a record saved locally or failed can be sent; this one is “%(state)s”.")
                             % {"state": record.get_sync_state_display()})
        record.sync_state, record.last_error, record.last_error_source = SyncState.QUEUED, "", ""
        return enqueue_push(model, record.pk, record.company_id)


def _stuck_cutoff():
    return timezone.now() - timedelta(seconds=settings.SYNC_STUCK_AFTER_SECONDS)


def _claim(model, record) -> bool:
    """QUEUED -> SENDING by conditional UPDATE (RemoteRecord.claim); or take over a record left SENDING
    by a worker that died: when it is stale, or at once by the job run again after its loss (jobs.reap_lost
    saw its worker die), and only if nobody touched it since we read it."""
    if record.sync_state == SyncState.QUEUED:
        return model.claim(record.pk)
    if record.sync_state == SyncState.SENDING and (record.updated_at < _stuck_cutoff() or _lost_sender(record)):
        return model.objects.filter(pk=record.pk, sync_state=SyncState.SENDING, updated_at=record.updated_at).update(
            attempts=F("attempts") + 1, updated_at=timezone.now()) == 1
    return False


def _takeover_after() -> float:
    """Seconds after which a record left SENDING by a lost job may be taken over: a send still in flight (a
    work-horse that outlived its lost queue entry) has timed out by then (connect + read timeout)."""
    return sum(settings.PLATFORM_TIMEOUT) + 5


def _lost_sender(record) -> bool:
    """The current job runs again after its earlier run was lost, and the record has been still long enough."""
    return jobs.recovering() and record.updated_at < timezone.now() - timedelta(seconds=_takeover_after())


def previous_number(number: str) -> str:
    """The number before this one in its series (prefix + year + counter), or "" for the first."""
    counter = int(number[7:]) if number[7:].isdigit() else 0
    return f"{number[:7]}{counter - 1:09d}" if counter > 1 else ""


def next_number(number: str) -> str:
    """The number after this one in its series, or "" for a number without a counter."""
    counter = int(number[7:]) if number[7:].isdigit() else 0
    return f"{number[:7]}{counter + 1:09d}" if counter else ""


def series_lane(number_field: str, waiting: str):
    """A waits_for (record_push, core.batch) that keeps one lane per prefix across jobs: a series' numbers
    continue consecutively, so a create waits while the number before it (same prefix and year) is still on its
    way here, QUEUED or SENDING without a platform id (e.g. its push answered 503 and waits for its retry).
    Checking only the one before is enough: that one waited for its own predecessor. A number refused for good
    (FAILED) or never queued (LOCAL) holds nothing back, so nothing waits forever on a record nobody fixes; an
    update (the platform id known) waits for nothing. waiting: the message, with %(previous)s."""
    def waits_for(record) -> str:
        previous = previous_number(getattr(record, number_field) or "")
        if record.remote_id or not previous:
            return ""
        if type(record).objects.filter(company_id=record.company_id, remote_id="",
                                       sync_state__in=[SyncState.QUEUED, SyncState.SENDING],
                                       **{number_field: previous}).exists():
            return waiting % {"previous": previous}
        return ""

    def wake_next(record) -> None:
        """The number after this one, deferred while this one was on its way (its own push, or a batch holding it),
        goes now rather than at its time: a lane that fell behind (a job lost with its worker) would else catch up
        one number per deferral (SYNC_LANE_WAIT_SECONDS and the wait in the queue, about 5 s), slower than numbers
        arrive, and a batch that met another worker's batch of its series still running would wait out its 5 s."""
        following = next_number(getattr(record, number_field) or "")
        if not following:
            return
        model = type(record)
        pushable = registry["pushables"].get(model)
        pk = model.objects.filter(company_id=record.company_id, remote_id="", sync_state=SyncState.QUEUED,
                                  **{number_field: following}).values_list("pk", flat=True).first()
        if not pk:
            return
        if pushable and jobs.wake(name=pushable[1] or pushable[0].rsplit(".", 1)[-1], company_id=record.company_id,
                                  target=record_target(model, pk)):
            return
        jobs.wake_holding(company_id=record.company_id, label=model._meta.label_lower, pk=pk)  # a batch holds it

    waits_for.wake_next = wake_next
    return waits_for


def _sending(model, pk):
    return model.objects.filter(pk=pk, sync_state=SyncState.SENDING)


def record_push(model, pk, *, send, reconcile, waits_for=None):
    """Send one record to the platform, exactly once (the body of every push job).

    send(record) -> dict of model fields the platform gave (remote_id, remote_status, ...).
    reconcile(record) -> the same dict when the platform already has the record, else None.
    waits_for(record) -> why a QUEUED record must not go yet (an earlier number of its series still on its way),
    or "": it stays QUEUED and the job runs again shortly (jobs.TryLater: no sleeping worker, no attempt used).

    Only the worker that claims the record goes on. When an earlier attempt may have reached the
    platform (a MaybeSent timeout, a crash while SENDING, any retry) the platform is asked first and the
    record is sent again only when it has nothing. Errors are re-raised for the job runner, which retries
    transient ones (the record waits in QUEUED) and defers rate-limited ones; permanent ones leave the
    record FAILED with the platform's message.
    """
    record = model.objects.filter(pk=pk).first()
    if record is None:
        return _("The record no longer exists.")
    if waits_for is not None and record.sync_state == SyncState.QUEUED and (reason := waits_for(record)):
        raise jobs.TryLater(getattr(settings, "SYNC_LANE_WAIT_SECONDS", 5), reason)
    if not _claim(model, record):
        if record.sync_state == SyncState.SENDING and jobs.recovering():
            left = (record.updated_at + timedelta(seconds=_takeover_after()) - timezone.now()).total_seconds()
            raise jobs.TryLater(max(left, 1), _("Waiting for the lost attempt's call to time out before asking the "
                                                "platform."))
        return _("Nothing to send: the record is “%(state)s”.") % {"state": record.get_sync_state_display()}
    record.refresh_from_db()
    fields, reconciled = push_claimed(model, record, send=send, reconcile=reconcile)
    records_synced(model, {pk: fields})
    if getattr(waits_for, "wake_next", None):
        waits_for.wake_next(record)  # after the commit of SYNCED above: the next number no longer waits for it
    return pushed_message(reconciled)


def pushed_message(reconciled: bool) -> str:
    if reconciled:
        return _("Found on the platform; not sent again.")
    return _("Sent to the platform.")


def push_claimed(model, record, *, send, reconcile) -> tuple[dict, bool]:
    """The platform's part of record_push, for a record this caller claimed (record.attempts as counted by the
    claim): asked first when an earlier attempt may have arrived, else sent. Returns (fields, reconciled), for
    records_synced; on an error the record's state is written here and the error re-raised."""
    pk = record.pk
    try:
        fields = reconcile(record) if record.attempts > 1 else None
        reconciled = fields is not None
        if not reconciled:
            fields = send(record)
    except RateLimited:
        # Not sent: give the attempt back, so that the next one reconciles only if an earlier one did happen.
        _sending(model, pk).update(sync_state=SyncState.QUEUED, attempts=F("attempts") - 1, updated_at=timezone.now())
        raise
    except jobs.TryLater as exc:
        # The reconciliation waits for the platform to tell (e.g. the next usage report): back in line.
        _sending(model, pk).update(sync_state=SyncState.QUEUED, last_error=exc.message, last_error_source="",
                                   updated_at=timezone.now())
        raise
    except RemoteError as exc:
        _keep_failure(model, pk, exc)
        raise
    except Exception as exc:
        # A bug, not the platform: show it on the record (the runner logs the traceback). A resend
        # reconciles first, in case the request had gone out.
        _fail(model, pk, _("Unexpected error (%(error)s).") % {"error": exc.__class__.__name__}, LOCAL)
        raise
    return fields or {}, reconciled


def claim_many(model, pks) -> dict:
    """QUEUED -> SENDING for those of `pks` still QUEUED, in one transaction whose row locks (taken in pk order)
    let only one caller claim each (RemoteRecord.claim for many). Returns {pk: record as claimed, attempts
    counted}; a record another caller holds, or in another state, is not in it. Nothing is claimed when the
    UPDATE does not meet exactly the rows read (a database without row locks raced us): the caller then goes
    record by record."""
    if not pks:
        return {}
    now = timezone.now()
    with transaction.atomic():
        records = {record.pk: record for record in model.objects.select_for_update()
                   .filter(pk__in=list(pks), sync_state=SyncState.QUEUED).order_by("pk")}
        if records and model.objects.filter(pk__in=list(records), sync_state=SyncState.QUEUED).update(
                sync_state=SyncState.SENDING, attempts=F("attempts") + 1, updated_at=now) != len(records):
            transaction.set_rollback(True)
            return {}
    for record in records.values():
        record.sync_state, record.attempts, record.updated_at = SyncState.SENDING, record.attempts + 1, now
    return records


def unclaim(model, records) -> int:
    """Records claimed by claim_many that were not sent (their batch stopped before them): back to QUEUED, the
    attempt given back, so that their next push sends without asking the platform first. Only while still as
    the claim left them (SENDING, its time): one taken over since is not ours any more."""
    count = 0
    for claimed_at, group in itertools.groupby(sorted(records, key=attrgetter("updated_at")),
                                               key=attrgetter("updated_at")):
        count += model.objects.filter(pk__in=[record.pk for record in group], sync_state=SyncState.SENDING,
                                      updated_at=claimed_at).update(
            sync_state=SyncState.QUEUED, attempts=F("attempts") - 1, updated_at=timezone.now())
    return count


def records_synced(model, outcomes: dict) -> int:
    """SENDING -> SYNCED with what the platform gave each record ({pk: fields} of push_claimed), in one UPDATE:
    a field whose value differs between records is written with CASE. Returns how many changed; a record no
    longer SENDING (taken over meanwhile) is logged and left as it is."""
    if not outcomes:
        return 0
    now = timezone.now()
    values = {}
    for name in sorted({name for fields in outcomes.values() for name in fields}):
        given = {pk: fields[name] for pk, fields in outcomes.items() if name in fields}
        distinct = set(map(repr, given.values()))
        if len(given) == len(outcomes) and len(distinct) == 1:
            values[name] = next(iter(given.values()))
        else:
            field = model._meta.get_field(name)
            values[name] = Case(*[When(pk=pk, then=Value(value, output_field=field)) for pk, value in given.items()],
                                default=F(name), output_field=field)
    changed = model.objects.filter(pk__in=list(outcomes), sync_state=SyncState.SENDING).update(
        **values, sync_state=SyncState.SYNCED, synced_at=now, last_error="", last_error_source="", updated_at=now)
    if changed < len(outcomes):
        done = set(model.objects.filter(pk__in=list(outcomes), sync_state=SyncState.SYNCED, synced_at=now)
                   .values_list("pk", flat=True))
        for pk in outcomes:
            if pk not in done:
                logger.warning("%s was no longer SENDING when its push finished", record_target(model, pk))
    return changed


def _keep_failure(model, pk, exc: RemoteError) -> None:
    """A send that failed: the record FAILED when the platform refused for good, else back in line (QUEUED), the
    message kept either way. The refusal of the company's credentials is worded for the user, with who can fix
    it; `source` keeps our own failures from being shown as the platform's refusal."""
    message, source = failure(exc)
    if exc.permanent:
        _fail(model, pk, message, source)
    elif jobs.will_run_again(exc):
        _sending(model, pk).update(sync_state=SyncState.QUEUED, last_error=message, last_error_source=source,
                                   updated_at=timezone.now())
    else:
        # The job gives up, the record does not: the platform may have it (a 500 after applying), so it
        # never ends FAILED unasked. It waits QUEUED for the sweep, whose push asks the platform first.
        _sending(model, pk).update(sync_state=SyncState.QUEUED, last_error_source=source, updated_at=timezone.now(),
                                   last_error=_("%(error)s The job gave up for now; the record is tried again "
                                                "within %(minutes)s minutes, asking the platform first.")
                                   % {"error": message, "minutes": settings.SYNC_STUCK_AFTER_SECONDS // 60})


def _fail(model, pk, message, source=LOCAL):
    _sending(model, pk).update(sync_state=SyncState.FAILED, last_error=message[:2000], last_error_source=source,
                               updated_at=timezone.now())


def records_poll(model, *, company, select, fetch_statuses, settle, key=attrgetter("remote_id"), batch_size=100):
    """Ask the platform about one batch of synced records it still works on, and settle their state.

    select: a Q choosing the records whose platform status is not final (e.g. remote_status__in=...).
    fetch_statuses(records) -> {key(record): answer}, one call or a few (RateLimited defers the job).
    settle(record, answer) -> dict of model fields to change, or None.
    The oldest-polled records go first and every polled record is touched, so batches rotate.
    Returns the number of records that changed.
    """
    records = list(model.objects.filter(Q(company=company), Q(sync_state=SyncState.SYNCED), select)
                   .order_by("updated_at", "pk")[:batch_size])
    if not records:
        return 0
    answers = fetch_statuses(records) or {}
    now = timezone.now()
    changed, unchanged = 0, []
    for record in records:
        answer = answers.get(key(record))
        fields = settle(record, answer) if answer is not None else None
        if fields:
            changed += model.objects.filter(pk=record.pk, sync_state=SyncState.SYNCED).update(**fields, updated_at=now)
        else:
            unchanged.append(record.pk)
    model.objects.filter(pk__in=unchanged).update(updated_at=now)
    return changed


def pages_with_progress(pages):
    """The pages of a walk over one of the platform's lists, each shown as the job's progress."""
    for index, page in enumerate(pages, start=1):
        jobs.set_progress(100 * index / max(page["totalPages"], 1),
                          _("Page %(page)s of %(pages)s") % {"page": index, "pages": page["totalPages"]})
        yield page


def mirror_walk(pages, store) -> int:
    """Walk a list of the platform's page by page (progress shown on the job) and store(item) each item;
    store returns 1 for a record new here. Returns how many were new."""
    return sum(store(item) for page in pages_with_progress(pages) for item in page["items"])


def fill_blanks(record, **values) -> int:
    """What the platform says of a known record, kept where ours is still empty (a number, a date)."""
    changes = {name: value for name, value in values.items() if value and not getattr(record, name)}
    return type(record).objects.filter(pk=record.pk).update(**changes) if changes else 0


def fetch_ready(*, fetch, deadline, every: float = 60):
    """Fetch a result the platform prepares in the background (an Excel export kept 24 h).

    fetch() -> the result, or None while it is not ready. Not ready: the job runs again in `every`
    seconds (TryLater, no attempt counted); past `deadline` it fails for good.
    """
    result = fetch()
    if result is not None:
        return result
    left = (deadline - timezone.now()).total_seconds()
    if left <= 0:
        raise RemoteError(_("The platform did not prepare the result before its deadline."), permanent=True)
    raise jobs.TryLater(min(every, left), _("Not ready on the platform yet; asking again shortly."))


def sweep_stuck(models=None, *, batch_size: int = 500) -> int:
    """Cron: enqueue again the records left QUEUED or SENDING longer than SYNC_STUCK_AFTER_SECONDS.

    Redis holds only the queue; if a job was lost, its record is still here. A record whose job still
    waits to run is left alone (duplicate protection of jobs.enqueue); a SENDING one is taken over by its
    push, which asks the platform before sending again. Returns the number of jobs enqueued.
    """
    jobs.reap_lost()
    cutoff = _stuck_cutoff()
    count = 0
    for model in models or pushable_models():
        stuck = (model.objects.filter(sync_state__in=[SyncState.QUEUED, SyncState.SENDING], updated_at__lt=cutoff)
                 .order_by("updated_at").values_list("pk", "company_id")[:batch_size])
        for pk, company_id in stuck:
            count += enqueue_push(model, pk, company_id).is_new
    if count:
        logger.info("sweep: enqueued %s stuck record(s) again", count)
    return count
