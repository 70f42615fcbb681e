"""Status polling, declared once: what the platform still works on is asked again until it settles.

A domain declares a StatusPoll and registers it in its AppConfig.ready(); core runs it as a job per company,
soon after a send (following the records for a while) and from the cron for every company with work. The module
that declares it registers it at its end (core.domains):

    NOTES_POLL = StatusPoll(
        name="notes_poll", label=_("Read dispatch note statuses"), model=DispatchNote,
        select=lambda: DispatchNote.objects.filter(remote_status__in=BUSY),
        fetch=lambda company, notes: {note.remote_id: client(company).status(note.remote_id) for note in notes},
        settle=lambda note, answer: changed_fields(note, answer))
    polling.register(NOTES_POLL, every=60)
    # after a send: polling.poll_soon(NOTES_POLL, company_id)

One run asks batch after batch, the least recently asked first, within its budget of calls (`calls`), and stamps
every record it asked (`stamp`), whatever the answer: one that keeps failing goes to the back of the line and
never blocks the others. A RateLimited answer defers the run (nothing asked yet) or ends it (the next run goes on);
any other failure of one call is logged and the batch waits for its turn again.
"""

import logging
from dataclasses import dataclass, field
from typing import Callable

from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from backoffice.remote.errors import RateLimited, RemoteError

from . import jobs, schedule
from .choices import SyncState
from .joblabels import register_job_labels
from .models import Company
from .registry import registry

logger = logging.getLogger("backoffice.polling")


@dataclass(frozen=True)
class StatusPoll:
    name: str  # the job's name (one run per company at a time) and the key in registry["polls"]
    label: str  # the job's label, as people read it
    model: type
    select: Callable  # () -> the records still moving, of every company (synced, idle and known there is added)
    fetch: Callable  # (company, records) -> {remote_id: answer}; an id left out was not answered
    settle: Callable  # (record, answer) -> model fields that change, or None
    batch: Callable = lambda company: 100  # (company) -> records asked in one call
    calls: Callable = lambda company: 1  # (company) -> calls one run may make (its budget)
    take: Callable | None = None  # (records in line, batch size) -> the next batch; default the first ones
    stamp: str = "updated_at"  # the field that says when a record was last asked (its place in the line)
    follow_seconds: Callable = lambda: 0  # how long a send is followed (0: not at all)
    follow_delay: Callable = lambda: 10  # seconds between two runs while following
    keep_following: Callable | None = None  # (company) -> bool; default: a send was less than follow_seconds ago
    defer_when_limited: bool = True  # RateLimited before anything was asked: run again when the window frees
    after: Callable | None = None  # (company, records) after a run, with the records it changed (what follows them)
    options: dict = field(default_factory=dict)


def register(poll: StatusPoll, *, every: int, job_timeout: int = 600) -> None:
    """Declare a poll: its job's label, and a cron entry that polls every company with work every `every` s."""
    registry["polls"][poll.name] = poll
    register_job_labels({poll.name: poll.label})
    schedule.register(func=poll_all, args=(poll.name,), interval=every, name=poll.name, job_timeout=job_timeout)


def _moving(poll: StatusPoll):
    idle = {"pending_action": ""} if hasattr(poll.model, "pending_action") else {}
    return poll.select().filter(sync_state=SyncState.SYNCED, **idle).exclude(remote_id="")


def _line(poll: StatusPoll, company):
    """The company's records to ask, the least recently asked first."""
    return _moving(poll).filter(company=company).order_by(F(poll.stamp).asc(nulls_first=True), "pk")


def run(poll: StatusPoll, company) -> tuple[int, int]:
    """One run for one company: (calls made, records changed)."""
    started, budget = timezone.now(), poll.calls(company)
    calls, moved = 0, []
    while calls < budget:
        line = _line(poll, company).exclude(**{f"{poll.stamp}__gte": started})
        size = max(1, int(poll.batch(company)))
        records = poll.take(line, size) if poll.take else list(line[:size])
        if not records:
            break
        calls += 1
        try:
            answers = poll.fetch(company, records) or {}
        except RateLimited as exc:
            if calls == 1 and poll.defer_when_limited:
                raise
            logger.info("%s of company %s stopped by the rate limit: %s", poll.name, company.pk, exc)
            break
        except RemoteError as exc:
            logger.warning("%s: statuses of %s not read: %s", poll.name, [r.remote_id for r in records], exc)
            answers = {}
        moved += _keep(poll, records, answers)
    if moved and poll.after is not None:
        poll.after(company, moved)
    return calls, len(moved)


def _keep(poll: StatusPoll, records, answers) -> list:
    """What the platform said of each record asked; every one is stamped, so the line turns. Returns the records
    that changed."""
    now, changed, unchanged = timezone.now(), [], []
    idle = {"pending_action": ""} if hasattr(poll.model, "pending_action") else {}
    for record in records:
        answer = answers.get(record.remote_id)
        fields = poll.settle(record, answer) if answer is not None else None
        if fields:
            if poll.model.objects.filter(pk=record.pk, sync_state=SyncState.SYNCED, **idle).update(
                    **{poll.stamp: now, **fields}):
                changed.append(record)
        else:
            unchanged.append(record.pk)
    poll.model.objects.filter(pk__in=unchanged).update(**{poll.stamp: now})
    return changed


# --- for a poll's fetch and settle ----------------------------------------------------------------------------
def ask_each(records, ask, what) -> dict:
    """{remote_id: answer} of one status call per record (for a service that has no call for several). One the platform
    does not answer goes to the back of the line (the poll stamps it); the others are still asked."""
    answers = {}
    for record in records:
        try:
            answers[record.remote_id] = ask(record.remote_id)
        except RateLimited:
            raise
        except RemoteError as exc:
            logger.warning("status of %s %s not read: %s", what, record.remote_id, exc)
    return answers


def changed_fields(record, fields) -> dict | None:
    """The fields of an answer that differ from the record's (its id is never changed by a poll)."""
    fields.pop("remote_id", None)
    return {name: value for name, value in fields.items() if getattr(record, name) != value} or None


@jobs.job(gettext_lazy("Read statuses from the platform"))
def poll_job(name, company_id, follow=False) -> str:
    """The job of every poll: one run for one company; while following, one more run shortly."""
    poll = registry["polls"][name]
    company = Company.objects.get(pk=company_id)
    calls, changed = run(poll, company)
    if follow and _following(poll, company):
        poll_soon(poll, company_id, delay=poll.follow_delay(), renew=False)
    return _("%(calls)s status call(s), %(changed)s record(s) changed.") % {"calls": calls, "changed": changed}


def _follow_key(poll: StatusPoll, company_id) -> str:
    return f"poll-follow:{poll.name}:{company_id}"


def _following(poll: StatusPoll, company) -> bool:
    if poll.keep_following is not None:
        return poll.keep_following(company)
    return jobs.flag_is_set(_follow_key(poll, company.pk)) and _line(poll, company).exists()


def poll_soon(poll: StatusPoll, company_id, *, delay=None, renew=True):
    """One run for the company shortly (deduplicated; one already running does not count: it may have read its
    line before the record that brings us here). renew: follow the company's records for follow_seconds from now
    (kept in Redis, so that every worker process sees it)."""
    if renew and poll.follow_seconds():
        jobs.flag_set(_follow_key(poll, company_id), poll.follow_seconds())
    return jobs.enqueue(poll_job, name=poll.name, company=company_id, args=[poll.name, company_id],
                        kwargs={"follow": bool(poll.follow_seconds())},
                        delay=poll.follow_delay() if delay is None else delay, join_running=False)


def poll_now(poll: StatusPoll, company_id):
    """One run for the company now (a user's "Read statuses again"; joins one already queued)."""
    return jobs.enqueue(poll_job, name=poll.name, company=company_id, args=[poll.name, company_id])


def waiting(poll: StatusPoll, company) -> bool:
    """Whether a run has anything to ask now."""
    return _line(poll, company).exists()


def companies_with_work(poll: StatusPoll):
    """The ids of the active companies that have a record in the poll's line (one query)."""
    return Company.objects.filter(is_active=True, pk__in=_moving(poll).values("company_id")).values_list(
        "pk", flat=True)


@jobs.job(gettext_lazy("Read statuses from the platform (every company)"))
def poll_all(name) -> str:
    """Cron: one run for every company with work (duplicates are skipped)."""
    poll = registry["polls"][name]
    count = sum(poll_now(poll, company_id).is_new for company_id in companies_with_work(poll))
    return _("%(count)s compan(ies) polled.") % {"count": count}
