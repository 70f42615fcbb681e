"""The shared runner of background work (NetBox jobs, Paperless task rows).

Every job goes through enqueue() and run_job(). A JobRun row says what runs, for whom, and how it ended,
so the UI shows progress and failures without logs; Redis holds only the queue. Job entry points take
only ids, load by pk and call one service; the runner owns the retry policy:

- transient RemoteError: RETRYING, run again after an exponential backoff with jitter, until
  settings.JOB_MAX_ATTEMPTS; then FAILED.
- RateLimited / TryLater: DEFERRED, run again when the window frees (a scheduled RQ job: the worker runs
  with --with-scheduler). A worker never sleeps. Deferrals do not count as attempts.
- permanent RemoteError: FAILED with the platform's message.
- anything else: FAILED with a short message; the traceback (redacted) goes to the log only.

Fair between companies: a company's jobs wait on a queue of their own and the workers take the queues in turn;
work that waits a while comes back through the shared queue's schedule (core.queues).
"""

import contextvars
import logging
import math
import random
import traceback
import uuid
from datetime import datetime, timedelta
from datetime import timezone as dt_timezone
from functools import partial

import django_rq
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone
from django.utils.module_loading import import_string
from django.utils.translation import gettext as _
from redis.exceptions import RedisError
from rq.job import Job
from rq.job import JobStatus as RQStatus

from backoffice.remote.errors import RateLimited, RemoteError

from . import queues
from .choices import JobStatus
from .failures import failure
from .joblabels import register_job_labels
from .models import Company, JobRun
from .redaction import redact
from .registry import registry

logger = logging.getLogger("backoffice.jobs")

# A JobRun in one of these states will still run: enqueue() returns it instead of a second one.
ACTIVE = (JobStatus.QUEUED, JobStatus.RUNNING, JobStatus.RETRYING, JobStatus.DEFERRED)
# The states a run starts from. Not RUNNING: its RQ job delivered a second time (wake() and the scheduler moving one
# deferred job in the same instant) finds it running and does nothing; a run lost while RUNNING is QUEUED again first.
_STARTABLE = tuple(status for status in ACTIVE if status != JobStatus.RUNNING)
# RQ states in which a job will still run (or runs now).
_RQ_ALIVE = {RQStatus.QUEUED, RQStatus.STARTED, RQStatus.SCHEDULED, RQStatus.DEFERRED}
# A new JobRun's RQ job appears only after the caller's commit; until then it is not "lost".
_SUBMIT_GRACE = timedelta(seconds=60)

_current_run: contextvars.ContextVar = contextvars.ContextVar("backoffice_job_run", default=None)


class TryLater(Exception):
    """Raised by a job body whose work is not ready yet (an export being prepared): the runner runs
    the job again in `wait` seconds, as DEFERRED, without counting an attempt."""

    def __init__(self, wait: float, message: str = ""):
        self.wait = max(0.0, float(wait))
        self.message = message
        super().__init__(message or f"not ready: again in {self.wait:.0f} s")


def func_path(func) -> str:
    """The import path RQ and the JobRun use for a job body (a dotted path is kept as it is)."""
    if isinstance(func, str):
        return func
    return f"{func.__module__}.{func.__qualname__}"


def current_run() -> JobRun | None:
    """The JobRun being run by this worker, or None outside run_job()."""
    return _current_run.get()


def set_progress(percent, message: str = "") -> None:
    """Record progress of long work on the current JobRun (the UI shows a bar); no-op outside a job."""
    run = current_run()
    if run is None:
        return
    percent = max(0, min(100, int(percent)))
    JobRun.objects.filter(pk=run.pk).update(progress=percent, message=message)
    run.progress, run.message = percent, message


def retry_delay(attempt: int) -> float:
    """Seconds to wait after failed attempt `attempt` (1-based): exponential, capped, with "equal
    jitter" so that a batch that failed together does not come back together."""
    base = float(getattr(settings, "JOB_RETRY_BASE_SECONDS", 15))
    cap = float(getattr(settings, "JOB_RETRY_MAX_SECONDS", 900))
    delay = min(cap, base * 2 ** max(0, attempt - 1))
    return random.uniform(delay / 2, delay)


def max_attempts() -> int:
    return int(getattr(settings, "JOB_MAX_ATTEMPTS", 6))


def will_run_again(exc: BaseException) -> bool:
    """Whether the runner will run the current job again after `exc`.

    Outside a job nobody retries at once, but the record stays queued and the sweep picks it up: True.
    """
    if isinstance(exc, (RateLimited, TryLater)):
        return True
    if not isinstance(exc, RemoteError) or exc.permanent:
        return False
    run = current_run()
    return run is None or run.attempts < max_attempts()


def remote_message(exc) -> str:
    """A failed call as people read it: a refusal of the credentials says what to do (core.failures), in
    the worker's language; anything else is the platform's own words."""
    return failure(exc)[0]


def run_or_fail(work, *, failed):
    """Run work(); when the runner will not run the job again after an error, record it first with
    failed(message) (the platform's message, or just the error's class) and re-raise."""
    try:
        return work()
    except TryLater:
        raise
    except RemoteError as exc:
        if not will_run_again(exc):
            failed(remote_message(exc))
        raise
    except Exception as exc:
        failed(exc.__class__.__name__)
        raise


# ---------------------------------------------------------------------------------------------------
# Enqueue


def job(label, *, name: str = ""):
    """Decorator of a job body: its name (the function's unless given), under which registry["jobs"] holds it,
    and the words people read for it, registered when its module is imported (the app's DomainConfig names it:
    core.domains).
    enqueue(func) then needs no name; run_job finds the body by that name when its import path moved."""

    def decorate(func):
        func.job_name = name or func.__name__
        known = registry["jobs"].get(func.job_name)
        if known is not None and func_path(known) != func_path(func):
            raise ImproperlyConfigured(f"two job bodies are called {func.job_name}: {func_path(known)}, "
                                       f"{func_path(func)}")
        registry["jobs"][func.job_name] = func
        register_job_labels({func.job_name: label})
        return func

    return decorate


def enqueue(func, *, name: str = "", company=None, target: str = "", args=(), kwargs=None, delay: float | None = None,
            queue: str = queues.DEFAULT_QUEUE, join_running: bool = True) -> JobRun:
    """Create a JobRun (QUEUED) and put the job on the RQ queue when the caller's transaction commits.

    func: the job body (callable or dotted path); it gets *args / **kwargs, which must be plain ids and
    strings. (name, company, target) identify the work: while such a JobRun is queued, running or
    waiting to run again, it is returned instead of a second one (duplicate protection). The returned
    JobRun has `is_new` set to tell the two cases apart. join_running=False: a run already running does not
    count (a poll that has read its work may miss what came since; one more waits behind it).
    """
    name = name or getattr(func, "job_name", "") or func_path(func).rsplit(".", 1)[-1]
    company_id = company.pk if isinstance(company, Company) else company
    if queue == queues.DEFAULT_QUEUE and company_id:
        queue = queues.company_queue(company_id)
    existing = _active_run(name=name, company_id=company_id, target=target,
                           statuses=ACTIVE if join_running else tuple(s for s in ACTIVE if s != JobStatus.RUNNING))
    if existing is not None:
        existing.is_new = False
        return existing
    run = JobRun.objects.create(name=name, company_id=company_id, target=target, status=JobStatus.QUEUED,
                                rq_job_id=uuid.uuid4().hex, func_path=func_path(func), queue=queue,
                                job_args={"args": list(args), "kwargs": dict(kwargs or {})})
    run.is_new = True
    submit = partial(_submit, queue, run.rq_job_id, delay, run.pk, func_path(func), list(args), dict(kwargs or {}),
                     description=f"{name} {target}".strip())
    transaction.on_commit(submit)
    return run


def runs_of(record, limit: int = 10):
    """The jobs that worked on a record, newest first: its own and those of selections it came first in."""
    target = f"{record._meta.label_lower}:{record.pk}"
    return JobRun.objects.filter(company=record.company_id).filter(
        Q(target=target) | Q(target__startswith=f"{target}+"))[:limit]


def enqueue_per_company(func, *, name: str) -> int:
    """Cron helper: enqueue `func(company_id)` once for every active company (duplicates are skipped)."""
    count = 0
    for company_id in Company.objects.filter(is_active=True).values_list("pk", flat=True):
        count += enqueue(func, name=name, company=company_id, args=[company_id]).is_new
    return count


def _active_run(*, name, company_id, target, statuses=ACTIVE) -> JobRun | None:
    runs = JobRun.objects.filter(name=name, company_id=company_id, target=target, status__in=statuses)
    for run in runs.order_by("-pk")[:5]:
        if _is_alive(run) or _mark_lost(run):  # alive, or enqueued again just now
            run.refresh_from_db()
            return run
    return None


def wake(*, name: str, company_id, target: str) -> bool:
    """A DEFERRED run of this job goes to its queue now instead of at its time, because what it waited for has
    happened (the number before it in its series reached the platform: core.sync.series_lane); a run still RUNNING
    goes at once when it defers (_wake_run). False when there is no such run or the scheduler moved it first."""
    run = _active_run(name=name, company_id=company_id, target=target, statuses=_WAKEABLE)
    return run is not None and _wake_run(run)


def wake_holding(*, company_id, label: str, pk) -> bool:
    """As wake(), for the batch of `label` (a selection target, core.sync.selection_target) whose records include
    pk: a batch of tickets that waited for a number another batch has just sent."""
    runs = JobRun.objects.filter(company_id=company_id, status__in=_WAKEABLE, target__startswith=f"{label}:")
    for run in runs.only("pk", "status", "rq_job_id", "job_args", "name", "target").order_by("pk")[:50]:
        args = (run.job_args or {}).get("args") or []
        if args and isinstance(args[-1], list) and pk in args[-1]:
            return _wake_run(run)
    return False


# A run still RUNNING when what it waits for happens (its other lanes still busy, say) will defer in a moment: it is
# marked, and goes to its queue as soon as it has (run_job), instead of at its time.
_WAKEABLE = (JobStatus.DEFERRED, JobStatus.RUNNING)
_WOKEN = "jobs:woken:{}"


def _wake_run(run: JobRun) -> bool:
    if run.status != JobStatus.RUNNING:
        return _move_now(run)
    flag_set(_WOKEN.format(run.pk), 600)
    run.refresh_from_db(fields=["status", "rq_job_id"])
    if run.status != JobStatus.DEFERRED:
        return True  # run_job takes the mark when it defers
    # It deferred meanwhile, perhaps before the mark was there: whoever takes the mark (here or run_job) moves it.
    return _take_mark(run) and _move_now(run)


def _take_mark(run: JobRun) -> bool:
    try:
        return bool(queues.connection().delete(_WOKEN.format(run.pk)))
    except RedisError:
        return False


def _move_now(run: JobRun) -> bool:
    return bool(run.rq_job_id) and queues.move_now(run.rq_job_id)


def _is_alive(run: JobRun, rq_job: Job | None = None, *, fetched=False, queued: dict | None = None) -> bool:
    """A JobRun is alive while its RQ job will still run; one whose RQ job vanished (Redis lost), failed
    outside our runner (a work-horse killed) or stopped beating (its worker killed) is not, and must not
    block new work."""
    if not fetched:
        try:
            rq_job = Job.fetch(run.rq_job_id, connection=queues.connection()) if run.rq_job_id else None
        except RedisError:
            return True  # cannot tell: do not risk a duplicate
        except Exception:  # NoSuchJobError, or a job that cannot be read any more
            rq_job = None
    young = timezone.now() - run.enqueued_at < _SUBMIT_GRACE
    if rq_job is None:
        return young and bool(run.rq_job_id)  # no id: its enqueue failed (_submit), nothing will run it
    status = rq_job.get_status(refresh=False)
    if status in (RQStatus.QUEUED, RQStatus.SCHEDULED) and not young and not queues.waiting(rq_job, status,
                                                                                                    queued):
        # Redis restarted from its append-only file may keep a job's hash but not its place in the queue or the
        # schedule (the last second is not on disk): nobody would ever run it.
        return False
    if status == RQStatus.STARTED and rq_job.last_heartbeat is not None:
        # The worker beats every WORKER_HEARTBEAT_SECONDS while the job runs (core.worker); silence for a
        # few beats means the worker died with its work-horse, and nobody will finish this job.
        silent = (datetime.now(dt_timezone.utc) - rq_job.last_heartbeat.replace(tzinfo=dt_timezone.utc))
        return silent.total_seconds() < heartbeat_lost_after()
    return status in _RQ_ALIVE


def heartbeat_lost_after() -> float:
    return 3 * float(getattr(settings, "WORKER_HEARTBEAT_SECONDS", 5)) + 10


# How many times a lost job is enqueued again by itself; then it waits for a click (the record's "send again",
# the page's button) so that a job that kills its worker every time does not loop for ever.
LOST_RETRIES = 3


def _mark_lost(run: JobRun) -> bool:
    """A lost job is enqueued again (the same JobRun; its body asks the platform before sending anything
    again), up to LOST_RETRIES times, under its body's present path (job_body); after that, or for a run that
    does not know its body, it fails."""
    if run.func_path and run.lost_count < LOST_RETRIES:
        rq_job_id = uuid.uuid4().hex
        message = _("The job was lost from the queue (worker stopped or queue restarted); it was enqueued again.")
        if JobRun.objects.filter(pk=run.pk, status=run.status, rq_job_id=run.rq_job_id).update(
                status=JobStatus.QUEUED, message=message, rq_job_id=rq_job_id, lost_count=F("lost_count") + 1,
                enqueued_at=timezone.now()):
            logger.warning("job run %s (%s %s) lost from the queue; enqueued again", run.pk, run.name, run.target)
            arguments = run.job_args or {}
            transaction.on_commit(partial(
                _submit, run.queue or queues.DEFAULT_QUEUE, rq_job_id, None, run.pk, present_path(run.func_path),
                list(arguments.get("args") or []), dict(arguments.get("kwargs") or {}),
                description=f"{run.name} {run.target}".strip()))
            return True
        return False
    message = _("The job was lost from the queue (worker stopped or queue cleared) and was not enqueued again by "
                "itself; start it again from its page.")
    JobRun.objects.filter(pk=run.pk, status=run.status).update(
        status=JobStatus.FAILED, message=message, finished_at=timezone.now())
    logger.warning("job run %s (%s %s) lost from the queue", run.pk, run.name, run.target)
    return False


def recovering() -> bool:
    """Whether the current job runs again after its earlier run was lost (its worker died mid-way): what
    that run left half-done (a record SENDING) may be taken over at once."""
    run = current_run()
    return run is not None and run.lost_count > 0


def reap_lost(*, limit: int = 500) -> int:
    """Find the JobRuns that claim to be active but whose RQ job is gone, failed outside the runner or
    silent, and enqueue them again (_mark_lost). Run by the sweep every few seconds."""
    runs = list(JobRun.objects.filter(status__in=ACTIVE).order_by("enqueued_at")[:limit])
    if not runs:
        return 0
    try:
        rq_jobs = Job.fetch_many([run.rq_job_id or "-" for run in runs], connection=queues.connection())
    except RedisError:
        return 0
    lost, queued = 0, {}
    for run, rq_job in zip(runs, rq_jobs):
        if not _is_alive(run, rq_job, fetched=True, queued=queued):
            _mark_lost(run)
            lost += 1
    return lost


def _submit(queue_name, rq_job_id, delay, *job_args, description=""):
    queue = queues.get(queue_name)
    options = {"job_id": rq_job_id, "description": description}
    try:
        if delay:
            queues.shared().enqueue_at(queues.run_at(delay), run_job, *job_args, **options)  # see the module's note
        else:
            queue.enqueue(run_job, *job_args, **options)
    except RedisError:
        # The records are committed; the sweep finds them and enqueues them again. The run is told it has no place
        # in the queue, so the next sweep does not wait out the grace of a job still being put there.
        logger.exception("could not enqueue job %s; the sweep will enqueue the work again", rq_job_id)
        JobRun.objects.filter(rq_job_id=rq_job_id, status__in=ACTIVE).update(rq_job_id="")


# ---------------------------------------------------------------------------------------------------
# Run


def job_body(path: str) -> tuple:
    """(the function a job's import path names, the path to run it by). A path that no longer imports (a body
    moved: RQ or a JobRun may still hold `backoffice.<app>.jobs.<name>` of a relay module since deleted) names
    the app's job of that name (_moved_body): that body, and its present path. ImportError when neither is there."""
    try:
        return import_string(path), path
    except ImportError:
        body = _moved_body(path)
        if body is None:
            raise
        logger.info("job body %s moved; running %s, the job of that name", path, func_path(body))
        return body, func_path(body)


def _moved_body(path: str):
    """The one job body of the old path's app (or of an app split from it: dispatch_inbox from dispatch) whose job
    name or function bears the old relay's name (`backoffice.dispatch.jobs.note_push` -> dispatch.push.note_push,
    the job dispatch_note_push); never another app's job of the same name."""
    package, _relay, name = path.rsplit(".", 2) if path.count(".") >= 2 else ("", "", path)
    found = {body for body in registry["jobs"].values()
             if body.__module__.startswith(package) and name in (body.__name__, getattr(body, "job_name", ""))}
    return found.pop() if package and len(found) == 1 else None


def present_path(path: str) -> str:
    """The path a job's body runs by now (job_body); the path as it was when no body is found (the run that
    tries it records the failure)."""
    try:
        return job_body(path)[1]
    except ImportError:
        return path


def run_job(run_id: int, path: str, args=(), kwargs=None):
    """The RQ entry point of every job: mark RUNNING, call the body, record the outcome on the JobRun."""
    now = timezone.now()
    started = JobRun.objects.filter(pk=run_id, status__in=_STARTABLE).update(
        status=JobStatus.RUNNING, started_at=now, finished_at=None, attempts=F("attempts") + 1)
    if not started:
        logger.info("job run %s is gone, already finished or running elsewhere; nothing to do", run_id)
        return None
    run = JobRun.objects.get(pk=run_id)
    token = _current_run.set(run)
    try:
        body, path = job_body(path)  # a retry or a deferral runs again by the body's present path
        result = body(*args, **(kwargs or {}))
    except (RateLimited, TryLater) as exc:
        if isinstance(exc, TryLater):
            message = exc.message or _("Not ready yet.")
        else:
            message = _("Waiting %(seconds)s s for the platform's rate limit.") % {"seconds": math.ceil(exc.wait)}
        _run_again(run, path, args, kwargs, exc.wait, JobStatus.DEFERRED, message, counted=False)
        # What it waits for happened while it ran (wake): at once. A rate-limit deferral keeps its time; its mark goes.
        if _take_mark(run) and isinstance(exc, TryLater):
            run.refresh_from_db(fields=["status", "rq_job_id"])
            _move_now(run)
        return None
    except RemoteError as exc:
        message = _safe_message(remote_message(exc), run)
        if exc.permanent:
            _finish(run, JobStatus.FAILED, message)
        elif run.attempts >= max_attempts():
            _finish(run, JobStatus.FAILED, _("Gave up after %(attempts)s attempts: %(error)s")
                    % {"attempts": run.attempts, "error": message})
        else:
            delay = retry_delay(run.attempts)
            at = timezone.localtime(queues.run_at(delay))
            _run_again(run, path, args, kwargs, delay, JobStatus.RETRYING,
                       _("Attempt %(attempt)s of %(max)s failed: %(error)s. Next attempt at %(time)s.")
                       % {"attempt": run.attempts, "max": max_attempts(), "error": message,
                          "time": at.strftime("%H:%M:%S")})
        return None
    except Exception as exc:
        logger.error("job %s #%s (%s) failed unexpectedly:\n%s", run.name, run.pk, run.target,
                     _safe_message(traceback.format_exc(), run))
        _finish(run, JobStatus.FAILED, _("Unexpected error (%(error)s); the details are in the worker's log.")
                % {"error": exc.__class__.__name__})
        return None
    else:
        _finish(run, JobStatus.SUCCEEDED, _safe_message(result, run) if isinstance(result, str) else "")
        return result
    finally:
        _current_run.reset(token)


def _safe_message(text, run: JobRun) -> str:
    secrets = run.company.secrets if run.company_id else ()
    return redact(str(text), secrets)[:2000]


def _finish(run: JobRun, status, message: str) -> None:
    progress = 100 if status == JobStatus.SUCCEEDED and run.progress is not None else run.progress
    JobRun.objects.filter(pk=run.pk).update(status=status, message=message, finished_at=timezone.now(),
                                            progress=progress)
    if status == JobStatus.FAILED:
        logger.warning("job %s #%s (%s) failed: %s", run.name, run.pk, run.target, message)


def _run_again(run: JobRun, path, args, kwargs, delay: float, status, message: str, *, counted=True) -> None:
    """Schedule the same JobRun to run again in `delay` seconds (never sleep in a worker)."""
    rq_job_id = uuid.uuid4().hex
    # The row first: the new RQ job must find it in its waiting state, never the other way round.
    JobRun.objects.filter(pk=run.pk).update(
        status=status, message=message, rq_job_id=rq_job_id,
        attempts=F("attempts") if counted else F("attempts") - 1)
    queues.shared().enqueue_at(queues.run_at(delay), run_job, run.pk, path, list(args), dict(kwargs or {}),
                                     job_id=rq_job_id, description=f"{run.name} {run.target}".strip())


def flag_set(key: str, seconds: float) -> None:
    """A short-lived mark every worker process sees (e.g. "poll this company's records closely for a minute"):
    kept in Redis, since RQ forks a new process per job. Lost with Redis: the cron's slower pace takes over."""
    try:
        django_rq.get_connection("default").set(key, "1", px=max(1, int(seconds * 1000)))
    except RedisError:
        logger.warning("could not set the mark %s", key)


def flag_is_set(key: str) -> bool:
    try:
        return bool(django_rq.get_connection("default").exists(key))
    except RedisError:
        return False
