"""Ticket operations (HackSoft style: keyword-only functions named entity_action).

The only code of this app that changes sync state or calls the platform client. Views call the
*_request functions, which check the rule, save and enqueue; the jobs (@job) are the rest. Cancel, status
changes, exports and reports run as core jobs of their declarations (TICKET_ACTIONS, families.py). Each
docstring names the rule of document 2 it enforces.
"""

import logging
from dataclasses import dataclass
from decimal import Decimal

from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from backoffice.core import actions, batch, jobs, schedule, sync
from backoffice.core.choices import SyncState
from backoffice.core.jobs import job
from backoffice.core.models import Company, DocumentSeries
from backoffice.core.payloads import money
from backoffice.core.platform import client_for
from backoffice.core.polling import changed_fields
from backoffice.remote.errors import PLATFORM, RemoteError
from backoffice.remote.tickets import EventTicketClient, PassengerTicketClient

from . import conf
from .choices import SENDABLE_STATUSES, WORKING_STATUSES, TicketKind, TicketStatus
from .models import TICKET_MODELS, EventTicket, PassengerTicket, TicketLine, TicketLineTax, TicketNote
from .payload import IDENTITY, ticket_differences, ticket_payload

logger = logging.getLogger(__name__)

TICKET_CLIENTS = {TicketKind.EVENT: EventTicketClient, TicketKind.PASSENGER: PassengerTicketClient}
SERIES_KIND = {TicketKind.EVENT: "event_ticket", TicketKind.PASSENGER: "passenger_ticket"}


class TicketError(actions.ActionRefused):
    """An operation the ticket's state does not allow; the message is for the user."""


def ticket_client(company, kind, *, interactive=False):
    return client_for(company, TICKET_CLIENTS[kind], interactive=interactive)


# ---------------------------------------------------------------------------------------------------
# Amounts


@dataclass
class LineAmounts:
    amount: Decimal
    discount_amount: Decimal
    net: Decimal
    vat_amount: Decimal
    tax_amounts: list
    payable: Decimal


def line_amounts(*, amount, discount_rate=0, vat_rate=0, tax_rates=()) -> LineAmounts:
    """A line's derived amounts: the discount and VAT (and other taxes) are rates of the amount.

    discount = amount x discount rate; net = amount - discount; VAT and each tax = net x its rate;
    payable = net + VAT + taxes; each rounded half up to the cent. static/js/tickets.js mirrors this.
    """
    amount = money(amount)
    discount = money(amount * Decimal(discount_rate or 0) / 100)
    net = amount - discount
    vat = money(net * Decimal(vat_rate or 0) / 100)
    taxes = [money(net * Decimal(rate or 0) / 100) for rate in tax_rates]
    return LineAmounts(amount, discount, net, vat, taxes, net + vat + sum(taxes, Decimal(0)))


# A ticket's stored totals, in the order totals() sums them.
TOTALS = ("total_amount", "total_discount", "total_vat", "total_taxes", "payable_amount")


def totals(lines) -> dict:
    """Ticket totals from line inputs (dicts with amount, discount_rate, vat_rate, taxes)."""
    result = dict.fromkeys(TOTALS, Decimal(0))
    for line in lines:
        a = line_amounts(amount=line.get("amount"), discount_rate=line.get("discount_rate"),
                         vat_rate=line.get("vat_rate"), tax_rates=[t.get("taxt_rate") for t in line.get("taxes", ())])
        for name, value in zip(TOTALS, (a.amount, a.discount_amount, a.vat_amount, sum(a.tax_amounts, Decimal(0)),
                                        a.payable)):
            result[name] += value
    return result


# ---------------------------------------------------------------------------------------------------
# Create and update


def _store_children(ticket, lines, notes):
    """Replace the ticket's lines, taxes and notes, and write its totals (the one place they change)."""
    fk = {"event_ticket": ticket} if isinstance(ticket, EventTicket) else {"passenger_ticket": ticket}
    TicketLine.objects.filter(**fk).delete()
    TicketNote.objects.filter(**fk).delete()
    for position, line in enumerate(lines, start=1):
        taxes = list(line.get("taxes", ()))
        a = line_amounts(amount=line["amount"], discount_rate=line.get("discount_rate"),
                         vat_rate=line.get("vat_rate"), tax_rates=[t["taxt_rate"] for t in taxes])
        row = TicketLine.objects.create(
            **fk, position=position, service_type=line.get("service_type") or "",
            service_description=line.get("service_description") or "", amount=a.amount,
            discount_rate=line.get("discount_rate") or 0, discount_amount=a.discount_amount,
            vat_rate=line.get("vat_rate") or 0, vat_amount=a.vat_amount,
        )
        TicketLineTax.objects.bulk_create([
            TicketLineTax(line=row, tax_code=tax["tax_code"], tax_name=tax.get("tax_name") or "",
                          taxt_rate=tax["taxt_rate"], taxt_amount=amount)
            for tax, amount in zip(taxes, a.tax_amounts)
        ])
    TicketNote.objects.bulk_create([TicketNote(**fk, position=i, note=note) for i, note in enumerate(notes, 1)])
    for name, value in totals(lines).items():
        setattr(ticket, name, value)
    ticket.save(update_fields=list(TOTALS))


def edit_refusal(ticket) -> str:
    """Why the ticket cannot be changed now ("" when it can): document 2, section 3, update only in status 0 or 40."""
    return "" if ticket.is_editable else _("Ticket %(number)s cannot be changed now: only a draft or a ticket in "
                                           "error can be updated, and not while it is being sent.") % {
        "number": ticket.ticket_number}


def ticket_create(*, ticket, lines, notes=(), requested_status=TicketStatus.DRAFT, user=None):
    """Save a new ticket with its lines and notes and send it (document 2, sections 2.1 and 3).

    The ticketNumber is allocated from the company's series (prefix + year + 9-digit counter,
    consecutive from 1) in the transaction that saves the ticket, so a rollback gives the number back.
    The create body's status is 0 (draft) or 20 (queued); the push runs after commit.
    """
    if requested_status not in SENDABLE_STATUSES:
        raise TicketError(_("A ticket is created as a draft or sent to be queued."))
    with transaction.atomic():
        year = timezone.localtime(ticket.ticket_date).year if ticket.ticket_date else timezone.localdate().year
        ticket.prefix = ticket.prefix.upper()
        ticket.ticket_number = DocumentSeries.allocate(company=ticket.company, kind=SERIES_KIND[ticket.kind],
                                                       prefix=ticket.prefix, year=year)
        ticket.requested_status = requested_status
        ticket.sync_state = SyncState.LOCAL
        ticket.created_by = user if user is not None and user.is_authenticated else None
        ticket.save()
        _store_children(ticket, lines, notes)
        sync.record_queue(ticket)
    return ticket


def ticket_update(*, ticket, lines, notes=(), requested_status=TicketStatus.DRAFT):
    """Save the changes of a ticket and send them (document 2, section 3: update only in status 0 or 40;
    a ticket the platform does not have yet is sent as a create)."""
    if requested_status not in SENDABLE_STATUSES:
        raise TicketError(_("A ticket is saved as a draft or sent to be queued."))
    model = type(ticket)
    with transaction.atomic():
        current = model.objects.select_for_update().get(pk=ticket.pk)
        if refusal := edit_refusal(current):
            raise TicketError(refusal)
        # Number, prefix and ettn never change once given.
        ticket.ticket_number, ticket.prefix, ticket.remote_id = current.ticket_number, current.prefix, current.remote_id
        ticket.remote_status, ticket.attempts = current.remote_status, current.attempts
        ticket.requested_status = requested_status
        ticket.sync_state = SyncState.LOCAL
        ticket.last_error = ""
        ticket.save()
        _store_children(ticket, lines, notes)
        sync.record_queue(ticket)
    return ticket


# ---------------------------------------------------------------------------------------------------
# Push and reconcile (bodies of the push jobs, through sync.record_push)


def ticket_send(ticket, *, client=None, payload=None) -> dict:
    """Create the ticket on the platform, or update it when it is there already (its ettn is known).

    A refused create may be a number the platform holds already: looked up by number, it is ours when its
    content is (an earlier create did arrive: success, not sent again), else NumberTaken says what to do."""
    client = client or ticket_client(ticket.company, ticket.kind)
    if ticket.remote_id:
        result = client.update(ticket.remote_id, payload or ticket_payload(ticket, update=True))
    else:
        try:
            result = client.create(payload or ticket_payload(ticket))
        except RemoteError as exc:
            if not exc.permanent or exc.source != PLATFORM or exc.status not in (400, 409, 422):
                raise
            found = ticket_reconcile(ticket, client=client)
            if found is None:
                raise
            return found
    ettn = (result or {}).get("ettn") or ticket.remote_id
    return {"remote_id": str(ettn), "remote_status": int(ticket.requested_status), "status_message": ""}


def ticket_reconcile(ticket, *, client=None) -> dict | None:
    """Before sending again, ask whether an earlier create arrived (looked up by ticketNumber): a ticket
    must never be created twice. An update is a PUT of the whole body: sending it again is harmless.
    The ticket found is ours only when its content is (ticket_differences); another ticket holding our number
    (a series started elsewhere, a database restored from an older backup) refuses ours: NumberTaken."""
    if ticket.remote_id:
        return None
    client = client or ticket_client(ticket.company, ticket.kind)
    found = client.find_by_number(ticket.ticket_number)
    if not found:
        return None
    ettn = str(found.get("ettn") or found.get("id"))
    if not IDENTITY.keys() & {key for key, value in found.items() if value not in (None, "")}:
        found = {**found, **client.get(ettn)}  # a list item too thin to tell: the ticket in full
    differ = ticket_differences(ticket, found)
    if differ:
        raise NumberTaken(ticket, ettn, differ)
    status = found.get("status")
    return {"remote_id": ettn, "remote_status": int(status) if status is not None else ticket.requested_status,
            "status_message": found.get("message") or ""}


class NumberTaken(RemoteError):
    """The platform holds another ticket under our ticket's number: ours is refused, on its number, never
    taken for the other one (issue 28)."""

    def __init__(self, ticket, ettn, differ):
        series = ticket.ticket_number[:7]
        super().__init__(
            _("Ticket number %(number)s is taken: the platform already holds another ticket with this number "
              "(ettn %(ettn)s; %(fields)s differ), so this ticket was not sent. An administrator can start the "
              "series %(series)s above the platform's last number (Document series); then enter this ticket again "
              "as a new one, which takes the next free number.")
            % {"number": ticket.ticket_number, "ettn": ettn, "fields": ", ".join(differ), "series": series},
            permanent=True, source=PLATFORM)


# One lane per prefix across jobs (document 2, 2.1: a prefix's numbers continue consecutively, and the platform
# refuses N+1 before it has N).
ticket_waits_for = sync.series_lane("ticket_number", gettext_lazy(
    "Waiting for ticket %(previous)s to reach the platform first (its numbers go in order)."))


def ticket_push(model, pk):
    """The push of one ticket (sync.record_push: claimed, reconciled before any resend; it waits for the number
    before it: ticket_waits_for)."""
    message = sync.record_push(model, pk, send=ticket_send, reconcile=ticket_reconcile, waits_for=ticket_waits_for)
    ticket = model.objects.filter(pk=pk).only("company_id", "remote_status", "sync_state").first()
    if ticket and ticket.sync_state == SyncState.SYNCED and ticket.remote_status in WORKING_STATUSES:
        poll_soon(company_id=ticket.company_id)
    return message


@job(gettext_lazy("Send event ticket"))
def event_ticket_push(pk):
    return ticket_push(EventTicket, pk)


@job(gettext_lazy("Send passenger ticket"))
def passenger_ticket_push(pk):
    return ticket_push(PassengerTicket, pk)


def tickets_queue(*, tickets) -> list:
    """Send many tickets (of one kind and company) in batch jobs (core.batch: LOCAL/FAILED -> QUEUED in one
    UPDATE, one job per 100 tickets cut along their series; each still claimed and reconciled before a resend)."""
    tickets = list(tickets)
    kind = type(tickets[0]).kind if tickets else None
    return batch.batch_queue(tickets, job=tickets_push_batch, name="tickets_push_batch", args=[kind],
                             series=lambda ticket: (ticket.ticket_number[:7], ticket.ticket_number),
                             lanes=int(conf.get("TICKET_PUSH_CONCURRENCY")))


@job(gettext_lazy("Send tickets"))
def tickets_push_batch(kind, pks) -> str:
    """A batch push job: the bodies come from one prefetching read, then TICKET_PUSH_CONCURRENCY lanes (threads
    with their own database connections, sharing the company's HTTP session) push the tickets, each prefix's in
    number order through one lane (core.batch.push_batch)."""
    model = TICKET_MODELS[TicketKind(kind)]
    # A run again after its worker died also takes what that run left SENDING (record_push asks the platform).
    states = [SyncState.QUEUED, SyncState.SENDING] if jobs.recovering() else [SyncState.QUEUED]
    queued = {t.pk: t for t in model.objects.filter(pk__in=pks, sync_state__in=states)
              .select_related("company").prefetch_related("lines__taxes", "notes")}
    if not queued:
        return batch.nothing_to_send()
    company = next(iter(queued.values())).company
    payloads = {pk: ticket_payload(t, update=bool(t.remote_id)) for pk, t in queued.items()}

    def lane():
        client = ticket_client(company, model.kind)
        return (lambda record: ticket_send(record, client=client, payload=payloads.get(record.pk)),
                lambda record: ticket_reconcile(record, client=client))

    # One prefix through one lane in number order (document 2: a prefix's numbers continue consecutively).
    in_number_order = sorted((pk for pk in pks if pk in queued), key=lambda pk: queued[pk].ticket_number)
    numbers = {t.ticket_number for t in queued.values()}

    def waits_for(record):
        # The number before it is in this batch: its lane pushed it just before (or stopped before this one).
        return "" if sync.previous_number(record.ticket_number) in numbers else ticket_waits_for(record)

    def landed(record):
        # The next number is another job's (a later batch, or a ticket queued alone): it may wait for this one.
        if sync.next_number(record.ticket_number) not in numbers:
            ticket_waits_for.wake_next(record)

    counts = batch.push_batch(batch.Pusher(model, lane, int(conf.get("TICKET_PUSH_CONCURRENCY")),
                                           key=lambda pk: queued[pk].prefix, waits_for=waits_for, landed=landed),
                              in_number_order)
    if model.objects.filter(pk__in=pks, sync_state=SyncState.SYNCED, remote_status__in=WORKING_STATUSES).exists():
        poll_soon(company_id=company.pk)
    return ngettext("%(sent)s ticket sent, %(refused)s refused.", "%(sent)s tickets sent, %(refused)s refused.",
                    counts["sent"]) % counts


# ---------------------------------------------------------------------------------------------------
# Status polling (document 2, section 3: a queued ticket settles to approved, error or cancelled)


def poll_soon(*, company_id, delay=None, follow=True):
    """Enqueue one poll of the company's queued tickets (deduplicated: one waits at a time); follow: it asks
    again shortly while tickets wait (tickets_poll), the cron's own polls do not."""
    delay = conf.get("TICKET_POLL_DELAY_SECONDS") if delay is None else delay
    if follow:
        poll_follow(company_id)
    # Not joined to a poll already running: it may have read what waits before this ticket was queued.
    return jobs.enqueue(tickets_poll, company=company_id, args=[company_id, follow], delay=delay, join_running=False)


def _follow_key(company_id) -> str:
    return f"tickets:poll-follow:{company_id}"


def poll_follow(company_id) -> None:
    """A push or an action asked for a poll now: the company's polls follow its tickets for
    TICKET_POLL_FOLLOW_SECONDS from now (a poll the push joined may have been queued long before)."""
    jobs.flag_set(_follow_key(company_id), conf.get("TICKET_POLL_FOLLOW_SECONDS"))


def ticket_statuses_poll(*, company, model, batch_size=100) -> int:
    """Ask the statuses of one batch of tickets in status 20 and keep what the platform says (status and
    message). Returns how many changed."""
    client = ticket_client(company, model.kind)

    def fetch(records):
        answers = client.statuses([r.remote_id for r in records]) or []
        return {str(answer.get("id")): answer for answer in answers}

    def settle(record, answer):
        status = answer.get("status")
        if status is None:
            return None
        return changed_fields(record, {"remote_status": int(status), "status_message": answer.get("message") or ""})

    return sync.records_poll(model, company=company, select=Q(remote_status__in=WORKING_STATUSES),
                             fetch_statuses=fetch, settle=settle, batch_size=batch_size)


def tickets_waiting(*, company) -> bool:
    return any(model.objects.filter(company=company, sync_state=SyncState.SYNCED,
                                    remote_status__in=WORKING_STATUSES).exists() for model in TICKET_MODELS.values())


@job(gettext_lazy("Ask ticket statuses"))
def tickets_poll(company_id, follow=True):
    """Poll one batch of queued tickets of each kind. A poll asked for by a push or an action (follow) asks
    again every TICKET_POLL_DELAY_SECONDS while tickets still wait, for TICKET_POLL_FOLLOW_SECONDS after the
    latest push or action asked (poll_follow; also when it joined a poll queued long before): a ticket pushed
    just before the poll ran would otherwise wait for the cron's minute."""
    company = Company.objects.get(pk=company_id)
    changed = sum(ticket_statuses_poll(company=company, model=model) for model in TICKET_MODELS.values())
    following = follow and jobs.current_run() is not None and jobs.flag_is_set(_follow_key(company.pk))
    if following and tickets_waiting(company=company):
        raise jobs.TryLater(conf.get("TICKET_POLL_DELAY_SECONDS"),
                            _("Tickets still queued on the platform; asking again shortly."))
    return ngettext("%(count)s ticket changed.", "%(count)s tickets changed.", changed) % {"count": changed}


def tickets_poll_all():
    """Cron: one poll job per company that has tickets the platform still works on."""
    waiting = [company for company in Company.objects.filter(is_active=True) if tickets_waiting(company=company)]
    return sum(poll_soon(company_id=company.pk, delay=0, follow=False).is_new for company in waiting)


# ---------------------------------------------------------------------------------------------------
# Cancel and status change (document 2, sections 3 and 4: one or many; a refusal is Error {title, detail}),
# declared once for core.actions: the request, the job, the list's bulk actions and the detail's buttons.


def poll_after(records):
    poll_soon(company_id=records[0].company_id)


def status_change(name, label, button, source, target, **options):
    """Document 2, section 3: 0 -> 20 (send) and 40 -> 0 (back to draft), one or many."""
    return actions.RecordAction(
        name, label, button=button, sources=(source,), leads_to=target, sets_requested=True,
        call=lambda client, ids: client.update_status(ids, target),
        refused=gettext_lazy("Only tickets in status “%(source)s” can be changed to “%(target)s”; these cannot: "
                             "%(numbers)s"),
        done=lambda count: ngettext("%(count)s ticket changed to “%(status)s”.",
                                    "%(count)s tickets changed to “%(status)s”.", count) % {
            "count": count, "status": TicketStatus(target).label}, **options)


TICKET_ACTIONS = actions.ActionSet(
    client=lambda company, model: ticket_client(company, model.kind), number="ticket_number", error=TicketError,
    empty=gettext_lazy("Select at least one ticket."),
    busy=gettext_lazy("Another action on these tickets is still running; wait for it to finish."),
    status_label=lambda status: TicketStatus(status).label,
    status_operation=lambda model: f"{model.kind}_ticket.status",
    actions=[
        status_change("send", gettext_lazy("Send (draft → queued)"), gettext_lazy("Send"), TicketStatus.DRAFT,
                      TicketStatus.QUEUED, after=poll_after, icon="send",
                      reached=(TicketStatus.QUEUED, TicketStatus.APPROVED, TicketStatus.ERROR),
                      confirm=gettext_lazy("The selected drafts will be sent to the platform's queue for processing.")),
        status_change("draft", gettext_lazy("Back to draft (error → draft)"), gettext_lazy("Back to draft"),
                      TicketStatus.ERROR, TicketStatus.DRAFT, style="secondary", icon="arrow-counterclockwise",
                      confirm=gettext_lazy("The selected tickets in error will become drafts and can be edited.")),
        actions.RecordAction(
            "cancel", gettext_lazy("Cancel tickets"), button=gettext_lazy("Cancel ticket"),
            excluded=(TicketStatus.CANCELLED, TicketStatus.DELETED), call=lambda client, ids: client.cancel(ids),
            leads_to=TicketStatus.CANCELLED, undoable=False, refresh=True, style="danger", icon="x-octagon",
            refused=gettext_lazy("These tickets cannot be cancelled (not on the platform yet, or cancelled already): "
                          "%(numbers)s"),
            confirm=gettext_lazy("The selected tickets will be cancelled on the platform. This cannot be undone."),
            done=lambda count: ngettext("%(count)s ticket cancelled.", "%(count)s tickets cancelled.", count) % {
                "count": count}),
    ])


def tickets_cancel_request(*, tickets):
    """Ask for the cancellation of one or many tickets of one kind and company (any the platform has that is
    not cancelled already; the platform decides the rest and its refusal is kept on each ticket)."""
    tickets = list(tickets)
    return actions.action_request(type(tickets[0]) if tickets else EventTicket, "cancel", tickets)


def tickets_status_change_request(*, tickets, status):
    """Ask for a status change: 40 -> 0 (back to draft) or 0 -> 20 (queue and send); document 2, section 3.
    Any other transition is refused here, before asking the platform."""
    name = {TicketStatus.QUEUED: "send", TicketStatus.DRAFT: "draft"}.get(int(status))
    if name is None:
        raise TicketError(_("A ticket's status can only be changed to draft or queued."))
    tickets = list(tickets)
    return actions.action_request(type(tickets[0]) if tickets else EventTicket, name, tickets)


# ---------------------------------------------------------------------------------------------------
# HTML (a download the user waits for: called from the view)


def ticket_html(*, ticket, standard=True) -> str:
    """The ticket rendered by the platform: its standard layout, or the company's own default one. The
    user waits for it: one attempt with the short interactive timeout (core.platform.client_for)."""
    if not ticket.remote_id:
        raise TicketError(_("The platform does not have this ticket yet."))
    return ticket_client(ticket.company, ticket.kind, interactive=True).html(ticket.remote_id, standard=standard)


# --- what core runs for this domain (read when the app is ready: core.domains) --------------------------------------
sync.register_pushable(EventTicket, event_ticket_push)
sync.register_pushable(PassengerTicket, passenger_ticket_push)
actions.register_actions(EventTicket, TICKET_ACTIONS)
actions.register_actions(PassengerTicket, TICKET_ACTIONS)
# Poll the statuses of queued tickets: a job per company that has some.
schedule.register(func=tickets_poll_all, interval=60, name="tickets_poll", job_timeout=120)
