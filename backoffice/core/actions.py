"""Record actions: a state change of records the platform holds (cancel, a status change), declared once.

A domain declares its actions on a model (tickets: services.TICKET_ACTIONS), registered at the end of the module
that declares them (core.domains):

    register_actions(EventTicket, ActionSet(
        client=lambda company, model: client_for(company, EventTicketClient),
        number="ticket_number", error=TicketError, empty=_("Select at least one ticket."), ...,
        actions=[RecordAction("cancel", label=_("Cancel tickets"), call=lambda client, ids: client.cancel(ids),
                              leads_to=CANCELLED, refused=..., undoable=False, ...)]))

and gets from it: the request service (rule check, claim by `pending_action`, one job), the job body (the
client call, the platform's refusal kept on each record, the new state, a status refresh), the list's bulk
actions and the detail page's buttons (`buttons(record, user)`). One job name per action, so labels and
duplicate protection never collide between domains.
"""

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from operator import attrgetter

from django.apps import apps
from django.contrib import messages
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from backoffice.remote import errors
from backoffice.remote.errors import RateLimited, RemoteError

from . import jobs, refresh
from .choices import SyncState
from .failures import failure
from .generic.refresh import register_refresh_view
from .generic.registry import model_url
from .generic.views import BulkAction
from .joblabels import register_job_labels
from .registry import registry
from .roles import EDITORS, EVERYONE, has_role
from .sync import own_fields, selection_target

logger = logging.getLogger("backoffice.actions")

REFRESH = "refresh"  # the bulk action and button that re-read statuses (core.refresh); no action may be named so


class ActionRefused(Exception):
    """An action the records' state does not allow, or a rule it breaks; the message is for the user.
    field: the form field the message belongs to, when there is one."""

    def __init__(self, message, field=None):
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class RecordAction:
    name: str  # also the value of pending_action while it runs
    label: str  # the list's bulk action and the job's label
    call: Callable  # call(client, remote_ids): the platform call; raises RemoteError when refused
    leads_to: int  # the remote_status the records have once the platform accepted
    refused: str  # "... cannot ...: %(numbers)s" (also %(source)s / %(target)s labels of the statuses)
    done: Callable  # done(count) -> the job's message
    sources: tuple | None = None  # remote statuses it starts from; None: any but `excluded`
    excluded: tuple = ()
    button: str = ""  # the detail page's button label (the bulk label when empty)
    confirm: str = ""
    style: str = "primary"
    icon: str = ""
    undoable: bool = True  # False: the confirmation says it cannot be undone (the text is in `confirm`)
    sets_requested: bool = False  # the record's requested_status follows (a status change)
    refresh: bool = False  # read the platform's statuses afterwards (best effort)
    after: Callable | None = None  # after(records, **params): e.g. poll the statuses soon
    # Takes what the user chooses on a page of its own (call(client, ids, **params)): no bulk action or button.
    takes_params: bool = False
    # Platform statuses that show the action took effect (default: leads_to alone); a status change to
    # "queued" is done too once the platform has moved the record on (approved, error).
    reached: tuple = ()
    # An action on another life of the record than its set's (an invoice's posting moves record_status on the
    # accounting service; its e-archive cancellation moves its invoice status on the invoice service): the field
    # it moves, the client its call and statuses() are made on, and what a record is to them. Empty: the set's.
    state_field: str = ""
    client: Callable | None = None
    target: Callable | None = None
    check: Callable | None = None  # check(records): this action's own rules, after the set's; raises its error
    # marks(**params) -> more fields of a record the action is done on (what the user chose, kept with it), set
    # with the new state whichever way it is learnt (the call's answer, or asked after a failure)
    marks: Callable | None = None

    def took_effect(self, status) -> bool:
        return status is not None and int(status) in (self.reached or (self.leads_to,))

    def allowed(self, record, state_field: str = "remote_status") -> bool:
        """Whether the record's platform state allows this action (the platform decides the rest)."""
        if not record.remote_id:
            return False
        state = getattr(record, state_field)
        if self.sources is not None:
            return state in self.sources
        return state not in self.excluded


@dataclass
class ActionSet:
    """The actions of one model, with what they share: the client, how records are named in messages."""

    client: Callable  # client(company, model) -> the service client with the actions' calls and statuses()
    actions: list
    number: str = "remote_id"  # the field naming a record in a refusal
    error: type = ActionRefused  # raised to the caller (a domain's own error class, a subclass is fine)
    empty: str = ""
    busy: str = ""
    status_label: Callable = str  # status code -> label, for %(source)s / %(target)s
    roles: tuple = EDITORS
    # status_operation(model) -> the endpoint name of the client's statuses() call: the mirror is re-read
    # with it (core.refresh) and its documented rate limit, if any, sets the budget.
    status_operation: Callable | None = None
    # The field the actions move (invoices: record_status, posted or not; their remote_status is another
    # life), and what a record is to the client's calls and statuses() (an id; an invoice's {ettn, isSend}).
    state_field: str = "remote_status"
    target: Callable = attrgetter("remote_id")
    check: Callable | None = None  # check(name, records): the domain's own rules first; raises its error
    by_name: dict = field(init=False)
    model: type | None = field(default=None, init=False)  # set when registered

    def __post_init__(self):
        self.by_name = {action.name: action for action in self.actions}

    def add(self, *actions) -> None:
        """More actions of the model, declared where their domain rules live (an invoice's answers and
        cancellation beside its posting): one set a model, so its list and page show them together."""
        for action in actions:
            assert action.name not in self.by_name and action.name != REFRESH, action.name
            self.actions.append(action)
            self.by_name[action.name] = action
        if self.model is not None:
            register_job_labels({job_name(self.model, action): action.label for action in actions})

    def allowed(self, action, record) -> bool:
        return action.allowed(record, self.field_of(action))

    def field_of(self, action) -> str:
        return action.state_field or self.state_field

    def client_of(self, action, company, model):
        return (action.client or self.client)(company, model)

    def targets(self, records, action=None) -> list:
        target = (action.target if action is not None else None) or self.target
        return [target(record) for record in records]


def register_actions(model, action_set: ActionSet) -> None:
    """Make the actions of `model` known (registry["action_sets"]; call where they are declared); each gets its
    job label, and a model whose statuses can be read its "Re-read now" view (core.generic.refresh)."""
    assert REFRESH not in action_set.by_name, REFRESH
    registry["action_sets"][model] = action_set
    action_set.model = model
    if action_set.status_operation:
        register_refresh_view(model)
    register_job_labels({job_name(model, action): action.label for action in action_set.actions})


def job_name(model, action) -> str:
    return f"{model._meta.app_label}_{action.name}"


# --- the request (views call it) -------------------------------------------------------------------------

def action_request(model, name, records, params=None) -> "jobs.JobRun":
    """Check the rule for every record, claim them for the action (pending_action) and enqueue one job.
    params: what the user chose for an action that takes some (a prefix, a reason), passed to its call and after;
    JSON-serialisable, as they travel with the job."""
    action_set = registry["action_sets"][model]
    action = action_set.by_name[name]
    records = list(records)
    if action_set.check:
        action_set.check(name, records)
    if action.check:
        action.check(records)
    if not records:
        raise action_set.error(action_set.empty or _("Select at least one record."))
    refused = [str(getattr(r, action_set.number)) for r in records if not action_set.allowed(action, r)]
    if refused:
        source = action.sources[0] if action.sources else None
        raise action_set.error(action.refused % {
            "numbers": ", ".join(refused), "target": action_set.status_label(action.leads_to),
            "source": action_set.status_label(source) if source is not None else ""})
    on_the_way = (SyncState.QUEUED, SyncState.SENDING)
    sending = [str(getattr(r, action_set.number)) for r in records if r.sync_state in on_the_way]
    if sending:
        raise action_set.error(_("A change of these records is on its way to the platform; wait until it is there: "
                                 "%(numbers)s") % {"numbers": ", ".join(sending)})
    pks = [r.pk for r in records]
    with transaction.atomic():
        # A record whose push is on its way is not changed meanwhile: the platform would act on what it had.
        claimed = model.objects.filter(pk__in=pks, pending_action="").exclude(sync_state__in=on_the_way).update(
            pending_action=name, last_error="", updated_at=timezone.now())
        if claimed != len(pks):
            raise action_set.error(action_set.busy or _("Another action on these records is still running; wait "
                                                        "for it to finish."))
        return jobs.enqueue(action_job, name=job_name(model, action), company=records[0].company_id,
                            target=selection_target(model, pks),
                            args=[model._meta.label_lower, name, pks, *([params] if params else [])])


# --- the job -------------------------------------------------------------------------------------------

def action_job(model_label, name, pks, params=None):
    """Job entry point of every record action."""
    return action_run(apps.get_model(model_label), name, pks, params)


def action_run(model, name, pks, params=None):
    """Make the platform call for the claimed records, keep its refusal on each, or record the new state.

    The call changes state on the platform, so an outcome we could not read (a 5xx, a timeout, a worker
    that died) may still have taken effect. Before sending again, and after any failure, the platform's
    statuses are read: records already in the wanted state are done ("already cancelled" is success),
    only the others are sent again or keep the refusal.
    """
    action_set = registry["action_sets"][model]
    action = action_set.by_name[name]
    records = list(model.objects.filter(pk__in=pks, pending_action=name).exclude(remote_id=""))
    if not records:
        return _("Nothing to do.")
    client = action_set.client_of(action, records[0].company, model)
    total = len(records)
    run = jobs.current_run()
    if run is not None and run.attempts > 1:  # an earlier attempt may have reached the platform
        try:
            records = _settle_reached(model, action_set, action, client, records, params)
        except RemoteError as exc:  # not known: not sent again blindly (the claim stays while the runner retries)
            keep_refusal(model, [r.pk for r in records], exc)
            raise
    for round_ in (1, 2):
        if not records:
            break
        try:
            action.call(client, action_set.targets(records, action), **(params or {}))
        except RemoteError as exc:
            if not _worth_asking(exc):
                keep_refusal(model, [r.pk for r in records], exc)
                raise
            try:
                left = _settle_reached(model, action_set, action, client, records, params)
            except RemoteError:  # we cannot tell what happened: the runner tries again, asking first
                unknown = RemoteError(f"{exc} (the statuses could not be read to tell whether it took effect)",
                                      operation=getattr(exc, "operation", ""), permanent=False)
                keep_refusal(model, [r.pk for r in records], unknown)
                raise unknown from exc
            if left and round_ == 1 and len(left) < len(records):
                # Some were done already: an all-or-none refusal may have been theirs. The others once more.
                records = left
                continue
            if left:
                keep_refusal(model, [r.pk for r in left], exc)
                raise
            records = []
        else:
            _mark_done(model, action_set, action, [r.pk for r in records], params)
            records = []
    if action.refresh:
        statuses_refresh(client, model, list(model.objects.filter(pk__in=pks)), action_set, action)
    if action.after:
        action.after(list(model.objects.filter(pk__in=pks)), **(params or {}))
    return action.done(total)


def _worth_asking(exc: RemoteError) -> bool:
    """Whether the platform may have applied a call that failed this way: anything but a refusal of the
    credentials or our own limiter (nothing was sent then)."""
    if isinstance(exc, RateLimited):  # ours held it back, or the platform's 429 turned it away
        return False
    return getattr(exc, "source", "") not in (errors.CREDENTIALS, errors.PERMISSION, errors.LOCAL)


def _mark_done(model, action_set, action, pks, params=None) -> None:
    fields = {"pending_action": "", "last_error": "", "last_error_source": "",
              action_set.field_of(action): action.leads_to, **(action.marks(**(params or {})) if action.marks else {})}
    if action.sets_requested:  # the record's own wish follows, and the platform's old message goes
        fields.update(own_fields(model, requested_status=action.leads_to, status_message=""))
    model.objects.filter(pk__in=pks).update(**fields, updated_at=timezone.now())


def _settle_reached(model, action_set, action, client, records, params=None) -> list:
    """Ask the platform which records the action already took effect on; those are done (with the status
    the platform gives). Returns the others. A failed status read is raised: nothing is sent again, or
    called refused, without knowing."""
    # GUIDs compared in any letter case: a platform may write them in capitals
    answers = {str(a.get("id")).lower(): a for a in client.statuses(action_set.targets(records, action)) or []}
    reached = [r for r in records if action.took_effect((answers.get(r.remote_id.lower()) or {}).get("status"))]
    if reached:
        _mark_done(model, action_set, action, [r.pk for r in reached], params)
        logger.info("%s: %s record(s) already done on the platform; not sent again", action.name, len(reached))
    for record in records:  # the mirror learns the platform's own status either way (it may have moved on)
        status = (answers.get(record.remote_id.lower()) or {}).get("status")
        if status is not None:
            model.objects.filter(pk=record.pk).update(**{action_set.field_of(action): int(status)})
            setattr(record, action_set.field_of(action), int(status))  # a call sent again is built from it
    return [r for r in records if r not in reached]


def keep_refusal(model, pks, exc: RemoteError) -> None:
    """The platform's refusal (title and detail) on each record, and the claim given back; nothing when the
    runner will try again (the claim stays, so no other action starts meanwhile)."""
    if jobs.will_run_again(exc):
        return
    message, source = failure(exc)
    model.objects.filter(pk__in=pks).update(pending_action="", last_error=message[:2000], last_error_source=source,
                                            updated_at=timezone.now())


def statuses_refresh(client, model, records, action_set=None, action=None) -> None:
    """Best effort: the platform's own word on the records' statuses (the action succeeded either way)."""
    action_set = action_set or registry["action_sets"][model]
    try:
        answers = {str(a.get("id")).lower(): a for a in client.statuses(action_set.targets(records, action)) or []}
    except RemoteError as exc:
        logger.info("statuses after an action not read: %s", exc)
        return
    for record in records:
        answer = answers.get(record.remote_id.lower())
        if answer and answer.get("status") is not None:
            field_name = action_set.field_of(action) if action is not None else action_set.state_field
            model.objects.filter(pk=record.pk).update(**{field_name: int(answer["status"])}, **own_fields(
                model, status_message=answer.get("message") or ""))


# --- pages: bulk actions of the list, buttons of the detail page ------------------------------------------

def bulk_actions(model) -> dict:
    """The list's bulk actions of a model's declared record actions (core.generic BulkAction), and "Re-read
    from the platform" where the model's statuses can be read (core.refresh)."""
    action_set = registry["action_sets"].get(model)
    if action_set is None:
        return {}
    bulk = {action.name: BulkAction(action.label, bulk_runner(model, action.name, action_set.error),
                                    confirm=action.confirm, style=action.style, required_roles=action_set.roles)
            for action in action_set.actions if not action.takes_params}
    if action_set.status_operation:
        bulk[REFRESH] = BulkAction(gettext_lazy("Re-read from the platform"), refresh_runner(model), style="secondary",
                                   required_roles=EVERYONE, ask=False)
    return bulk


def bulk_runner(model, name, error):
    def run(request, queryset):
        try:
            action_request(model, name, queryset.order_by("pk"))
        except error as exc:
            messages.error(request, str(exc))
            return 0
        return queryset.count()

    return run


def refresh_runner(model):
    def run(request, queryset):
        pks = list(queryset.exclude(remote_id="").order_by("pk").values_list("pk", flat=True)[:1000])
        if not pks:
            messages.error(request, _("None of the selected records is on the platform yet."))
            return 0
        refresh.refresh_request(model, queryset.first().company, pks)
        messages.info(request, refresh.refresh_message())
        return len(pks)

    return run


def buttons(record, user) -> list:
    """(name, bulk URL, label, style, icon) of each action the user may start on this record now, and
    "Re-read now" where the record's status can be read again."""
    model = type(record)
    action_set = registry["action_sets"].get(model)
    if action_set is None or record.is_busy:
        return []
    found = []
    if has_role(user, *action_set.roles):
        found = [(action.name, model_url(model, "bulk", action=action.name), action.button or action.label,
                  action.style, action.icon)
                 for action in action_set.actions if action_set.allowed(action, record) and not action.takes_params]
    if action_set.status_operation and record.remote_id:
        found.append((REFRESH, model_url(model, "bulk", action=REFRESH), _("Re-read now"), "secondary",
                      "arrow-repeat"))
    return found
