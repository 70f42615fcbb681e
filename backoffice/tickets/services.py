"""Ticket operations (HackSoft style: keyword-only functions named entity_action).

The only code of this app that changes sync state or calls the platform client. Views call the
*_request functions, which check the rule, save and enqueue; jobs call the rest. Each docstring names
the rule of document 2 it enforces.
"""

import contextvars
import hashlib
import logging
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from decimal import ROUND_HALF_UP, Decimal

from django.db import connection, transaction
from django.db.models import Q, prefetch_related_objects
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from backoffice.core import exports as core_exports
from backoffice.core import jobs, sync
from backoffice.core import reports as core_reports
from backoffice.core.choices import SyncState
from backoffice.core.models import DocumentSeries
from backoffice.core.platform import client_for
from backoffice.remote.errors import RemoteError

from . import conf
from .choices import STATUS_CHANGES, WORKING_STATUSES, TicketKind, TicketStatus
from .models import (
    REPORT_ITEM_MODELS,
    TICKET_MODELS,
    EventTicket,
    ReportRun,
    TicketExport,
    TicketLine,
    TicketLineTax,
    TicketNote,
)

logger = logging.getLogger(__name__)

CENT = Decimal("0.01")
EXPORT_WINDOW = core_exports.EXPORT_WINDOW
REPORT_PAGE_SIZE = core_reports.REPORT_PAGE_SIZE
CLIENT_ATTRIBUTE = {TicketKind.EVENT: "event_tickets", TicketKind.PASSENGER: "passenger_tickets"}
SERIES_KIND = {TicketKind.EVENT: "event_ticket", TicketKind.PASSENGER: "passenger_ticket"}


class TicketError(Exception):
    """An operation the ticket's state does not allow; the message is for the user."""


def ticket_client(company, kind, *, interactive=False):
    return getattr(client_for(company, interactive=interactive), CLIENT_ATTRIBUTE[kind])


def kind_of(model_or_ticket) -> str:
    return model_or_ticket.kind


# ---------------------------------------------------------------------------------------------------
# Amounts


def money(value) -> Decimal:
    return Decimal(value or 0).quantize(CENT, rounding=ROUND_HALF_UP)


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


def totals(lines) -> dict:
    """Ticket totals from line inputs (dicts with amount, discount_rate, vat_rate, taxes)."""
    result = {"total_amount": Decimal(0), "total_discount": Decimal(0), "total_vat": Decimal(0),
              "total_taxes": Decimal(0), "payable_amount": Decimal(0)}
    for line in lines:
        a = line_amounts(amount=line.get("amount"), discount_rate=line.get("discount_rate"),
                         vat_rate=line.get("vat_rate"), tax_rates=[t.get("taxt_rate") for t in line.get("taxes", ())])
        result["total_amount"] += a.amount
        result["total_discount"] += a.discount_amount
        result["total_vat"] += a.vat_amount
        result["total_taxes"] += sum(a.tax_amounts, Decimal(0))
        result["payable_amount"] += a.payable
    return result


# ---------------------------------------------------------------------------------------------------
# Create and update


def _ticket_fk(ticket) -> dict:
    return {"event_ticket": ticket} if isinstance(ticket, EventTicket) else {"passenger_ticket": ticket}


def _store_children(ticket, lines, notes):
    """Replace the ticket's lines, taxes and notes, and write its totals (the one place they change)."""
    fk = _ticket_fk(ticket)
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
    ticket.save(update_fields=list(totals([]).keys()))


def ticket_create(*, ticket, lines, notes=(), requested_status=TicketStatus.DRAFT, user=None):
    """Save a new ticket with its lines and notes and send it (document 2, sections 2.1 and 3).

    The ticketNumber is allocated from the company's series (prefix + year + 9-digit counter,
    consecutive from 1) in the transaction that saves the ticket, so a rollback gives the number back.
    The create body's status is 0 (draft) or 20 (queued); the push runs after commit.
    """
    if requested_status not in (TicketStatus.DRAFT, TicketStatus.QUEUED):
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
    if requested_status not in (TicketStatus.DRAFT, TicketStatus.QUEUED):
        raise TicketError(_("A ticket is saved as a draft or sent to be queued."))
    model = type(ticket)
    with transaction.atomic():
        current = model.objects.select_for_update().get(pk=ticket.pk)
        if not current.is_editable:
            raise TicketError(_("Ticket %(number)s cannot be changed now: only a draft or a ticket in error can be "
                                "updated, and not while it is being sent.")
                              % {"number": current.ticket_number})
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


def ticket_resend(*, ticket):
    """Send again a ticket whose push failed (the user may have fixed nothing: the platform decides)."""
    try:
        return sync.record_queue(ticket)
    except sync.StateError as exc:
        raise TicketError(str(exc)) from None


# ---------------------------------------------------------------------------------------------------
# The payload (document 2, sections 2.1 to 2.4)


def _num(value):
    return None if value is None else float(value)


def _when(value):
    return None if value is None else timezone.localtime(value).isoformat()


COMMON_FIELDS = {
    "documentType": "document_type", "ticketNumber": "ticket_number", "prefix": "prefix",
    "currencyCode": "currency_code", "referenceNumber": "reference_number", "identifier": "identifier",
    "customerFirstName": "customer_first_name", "customerLastName": "customer_last_name",
    "customerStreet": "customer_street", "customerBuildingName": "customer_building_name",
    "customerBuildingNo": "customer_building_no", "customerDoorNo": "customer_door_no",
    "customerTown": "customer_town", "customerDistrict": "customer_district", "customerCity": "customer_city",
    "customerPostCode": "customer_post_code", "customerCountry": "customer_country",
    "customerTelephone": "customer_telephone", "customerEmail": "customer_email", "isEmailSend": "is_email_send",
    "customerTaxCenter": "customer_tax_center", "paymentType": "payment_type",
    "paymentDescription": "payment_description", "recordExpensesVknTckn": "record_expenses_vkn_tckn",
    "recordExpensesTitle": "record_expenses_title", "xsltCode": "xslt_code",
}
EVENT_FIELDS = {
    "seatNumber": "seat_number", "eventName": "event_name", "eventLocation": "event_location",
    "eventCity": "event_city", "eventMunicipality": "event_municipality", "eventDescription": "event_description",
    "eventOrganizerVknTckn": "event_organizer_vkn_tckn",
}
PASSENGER_FIELDS = {
    "vehiclePlate": "vehicle_plate", "vehicleOperatingVknTckn": "vehicle_operating_vkn_tckn",
    "vehicleOperatingTitle": "vehicle_operating_title", "vehicleOperatingTaxCenter": "vehicle_operating_tax_center",
    "vehicleOperatingCountry": "vehicle_operating_country", "vehicleOperatingCity": "vehicle_operating_city",
    "vehicleOperatingDistrict": "vehicle_operating_district", "vehicleOperatingTown": "vehicle_operating_town",
    "vehicleOperatingStreet": "vehicle_operating_street",
    "vehicleOperatingBuildingName": "vehicle_operating_building_name",
    "vehicleOperatingBuildingNo": "vehicle_operating_building_no",
    "vehicleOperatingDoorNo": "vehicle_operating_door_no", "vehicleOperatingPostCode": "vehicle_operating_post_code",
    "vehicleOperatingMersisNo": "vehicle_operating_mersis_no",
    "vehicleOperatingRegisterNo": "vehicle_operating_register_no",
    "vehicleOperatingTelephone": "vehicle_operating_telephone", "vehicleOperatingEmail": "vehicle_operating_email",
    "expeditionNumber": "expedition_number", "departureLocation": "departure_location",
    "destination": "destination", "seatNumber": "seat_number",
}


def ticket_payload(ticket, *, update=False) -> dict:
    """The create (or update) body of a ticket, with the platform's field names.

    currencyCode is never empty (TRY); eventCityId is not part of the update model; ettn is required
    for an update; taxes are spelled taxtRate / taxtAmount.
    """
    body = {"status": int(ticket.requested_status), "ticketType": ticket.ticket_type,
            "ticketDate": _when(ticket.ticket_date), "exchangeRate": _num(ticket.exchange_rate)}
    body.update({key: getattr(ticket, name) for key, name in COMMON_FIELDS.items()})
    body["currencyCode"] = ticket.currency_code or "TRY"
    if isinstance(ticket, EventTicket):
        body.update({key: getattr(ticket, name) for key, name in EVENT_FIELDS.items()})
        body["eventTime"] = _when(ticket.event_time)
        if not update:
            body["eventCityId"] = ticket.event_city_id
    else:
        body.update({key: getattr(ticket, name) for key, name in PASSENGER_FIELDS.items()})
        body.update({"commissionAmount": _num(ticket.commission_amount),
                     "commissionTaxAmount": _num(ticket.commission_tax_amount),
                     "expeditionTime": _when(ticket.expedition_time),
                     "departureDate": _when(ticket.departure_date)})
    prefetch_related_objects([ticket], "lines__taxes", "notes")  # no-op when the caller prefetched them
    body["ticketLines"] = [
        {"serviceType": line.service_type, "serviceDescription": line.service_description,
         "amount": _num(line.amount), "discountRate": _num(line.discount_rate),
         "discountAmount": _num(line.discount_amount), "vatRate": _num(line.vat_rate),
         "vatAmount": _num(line.vat_amount),
         "taxes": [{"taxCode": tax.tax_code, "taxName": tax.tax_name, "taxtRate": _num(tax.taxt_rate),
                    "taxtAmount": _num(tax.taxt_amount)} for tax in line.taxes.all()]}
        for line in ticket.lines.all()
    ]
    body["notes"] = [{"note": note.note} for note in ticket.notes.all()]
    if update:
        body["ettn"] = ticket.remote_id
    return body


# ---------------------------------------------------------------------------------------------------
# Push and reconcile (bodies of the push jobs, through sync.record_push)


def ticket_send(ticket, *, client=None, payload=None) -> dict:
    """Create the ticket on the platform, or update it when it is there already (its ettn is known)."""
    client = client or ticket_client(ticket.company, ticket.kind)
    if ticket.remote_id:
        result = client.update(ticket.remote_id, payload or ticket_payload(ticket, update=True))
    else:
        result = client.create(payload or ticket_payload(ticket))
    ettn = (result or {}).get("ettn") or ticket.remote_id
    return {"remote_id": str(ettn), "remote_status": int(ticket.requested_status), "status_message": ""}


def ticket_reconcile(ticket, *, client=None) -> dict | None:
    """Before sending again, ask whether an earlier create arrived (looked up by ticketNumber): a ticket
    must never be created twice. An update is a PUT of the whole body: sending it again is harmless."""
    if ticket.remote_id:
        return None
    client = client or ticket_client(ticket.company, ticket.kind)
    found = client.find_by_number(ticket.ticket_number)
    if not found:
        return None
    ettn = found.get("ettn") or found.get("id")
    status = found.get("status")
    return {"remote_id": str(ettn), "remote_status": int(status) if status is not None else ticket.requested_status,
            "status_message": found.get("message") or ""}


def ticket_push(model, pk):
    """Body of the push job of one ticket (sync.record_push: claimed, reconciled before any resend)."""
    message = sync.record_push(model, pk, send=ticket_send, reconcile=ticket_reconcile)
    ticket = model.objects.filter(pk=pk).only("company_id", "remote_status", "sync_state").first()
    if ticket and ticket.sync_state == SyncState.SYNCED and ticket.remote_status in WORKING_STATUSES:
        poll_soon(company_id=ticket.company_id)
    return message


PUSH_BATCH_SIZE = 100


@contextmanager
def _relaxed_commits():
    """PostgreSQL: commits of a push batch are visible at once but flushed to disk a moment later
    (synchronous_commit off), instead of one disk flush per claim, result and audit row. Safe here by
    design: a state lost in a crash leaves the record QUEUED or SENDING, and the sweep's push asks the
    platform before it sends again (reconcile before resend); nothing is sent twice."""
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


def tickets_queue(*, tickets) -> list:
    """Send many tickets (of one kind and company) in batch jobs: the records go LOCAL/FAILED -> QUEUED
    in one UPDATE and one job pushes up to PUSH_BATCH_SIZE of them, one after the other, on one
    connection. Each ticket still goes through sync.record_push (claimed, reconciled before a resend);
    the sweep re-enqueues any that a lost batch left behind, one by one."""
    tickets = list(tickets)
    if not tickets:
        return []
    model = type(tickets[0])
    with transaction.atomic():
        pks = list(model.objects.filter(pk__in=[t.pk for t in tickets],
                                         sync_state__in=[SyncState.LOCAL, SyncState.FAILED])
                   .order_by("pk").values_list("pk", flat=True))
        model.objects.filter(pk__in=pks).update(sync_state=SyncState.QUEUED, last_error="", updated_at=timezone.now())
        return [jobs.enqueue("backoffice.tickets.jobs.tickets_push_batch", name="tickets_push_batch",
                             company=tickets[0].company_id, target=_selection_target(model, batch),
                             args=[model.kind, batch])
                for batch in (pks[i:i + PUSH_BATCH_SIZE] for i in range(0, len(pks), PUSH_BATCH_SIZE))]


def tickets_push_batch(*, model, pks) -> str:
    """Body of a batch push job. The bodies are built from one prefetching read, then up to
    TICKET_PUSH_CONCURRENCY lanes (threads, each with its own connections) push the tickets in order, so
    that one ticket's database work overlaps another's wait for the platform. A refused ticket is left
    FAILED and the batch goes on; a transient error or a rate limit stops the batch (the runner runs it
    again or later: what was sent is skipped, what may have arrived is reconciled first)."""
    queued = {t.pk: t for t in model.objects.filter(pk__in=pks, sync_state=SyncState.QUEUED)
              .select_related("company").prefetch_related("lines__taxes", "notes")}
    if not queued:
        return _("Nothing to send.")
    company = next(iter(queued.values())).company
    payloads = {pk: ticket_payload(t, update=bool(t.remote_id)) for pk, t in queued.items()}
    todo = iter([pk for pk in pks if pk in queued])
    lock = threading.Lock()
    counts = {"sent": 0, "refused": 0}
    stopped: list[BaseException] = []

    def lane():
        client = ticket_client(company, model.kind)  # a session of its own

        def send(record):
            return ticket_send(record, client=client, payload=payloads.get(record.pk))

        def reconcile(record):
            return ticket_reconcile(record, client=client)

        with _relaxed_commits():
            while not stopped:
                with lock:
                    pk = next(todo, None)
                if pk is None:
                    return
                try:
                    sync.record_push(model, pk, send=send, reconcile=reconcile)
                    outcome = "sent"
                except RemoteError as exc:
                    if not exc.permanent:
                        stopped.append(exc)
                        return
                    outcome = "refused"
                except BaseException as exc:
                    stopped.append(exc)
                    return
                with lock:
                    counts[outcome] += 1

    _run_lanes(lane, min(int(conf.get("TICKET_PUSH_CONCURRENCY")), len(queued)))
    jobs.set_progress(100 * (counts["sent"] + counts["refused"]) / len(queued))
    if stopped:
        raise stopped[0]
    if model.objects.filter(pk__in=pks, sync_state=SyncState.SYNCED, remote_status__in=WORKING_STATUSES).exists():
        poll_soon(company_id=company.pk)
    return ngettext("%(sent)s ticket sent, %(refused)s refused.", "%(sent)s tickets sent, %(refused)s refused.",
                    counts["sent"]) % counts


def _run_lanes(lane, count):
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


# ---------------------------------------------------------------------------------------------------
# Status polling (document 2, section 3: a queued ticket settles to approved, error or cancelled)


def poll_soon(*, company_id, delay=None):
    """Enqueue one poll of the company's queued tickets (deduplicated: one waits at a time)."""
    delay = conf.get("TICKET_POLL_DELAY_SECONDS") if delay is None else delay
    return jobs.enqueue("backoffice.tickets.jobs.tickets_poll", name="tickets_poll", company=company_id,
                        args=[company_id], delay=delay)


def tickets_poll(*, company, model, batch_size=100) -> int:
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
        fields = {"remote_status": int(status), "status_message": answer.get("message") or ""}
        if fields["remote_status"] == record.remote_status and fields["status_message"] == record.status_message:
            return None
        return fields

    return sync.records_poll(model, company=company, select=Q(remote_status__in=WORKING_STATUSES),
                             fetch_statuses=fetch, settle=settle, batch_size=batch_size)


def tickets_waiting(*, company) -> bool:
    return any(model.objects.filter(company=company, sync_state=SyncState.SYNCED,
                                    remote_status__in=WORKING_STATUSES).exists() for model in TICKET_MODELS.values())


# ---------------------------------------------------------------------------------------------------
# Cancel and status change (document 2, sections 3 and 4: one or many; failures are Error {title, detail})


def _selection_target(model, pks) -> str:
    digest = hashlib.sha1(",".join(str(pk) for pk in sorted(pks)).encode()).hexdigest()[:10]
    first = min(pks)
    return f"{model._meta.label_lower}:{first}" if len(pks) == 1 else f"{model._meta.label_lower}:{first}+{len(pks) - 1}:{digest}"


def _claim_for_action(tickets, action) -> list:
    pks = [t.pk for t in tickets]
    model = type(tickets[0])
    changed = model.objects.filter(pk__in=pks, pending_action="").update(pending_action=action, last_error="",
                                                                          updated_at=timezone.now())
    if changed != len(pks):
        raise TicketError(_("Another action on these tickets is still running; wait for it to finish."))
    return pks


def tickets_cancel_request(*, tickets) -> "jobs.JobRun":
    """Ask for the cancellation of one or many tickets of one kind and company.

    Only a ticket the platform has (it has an ettn) and that is not cancelled already can be cancelled;
    the platform decides the rest and its refusal (title and detail) is kept on each ticket.
    """
    tickets = list(tickets)
    if not tickets:
        raise TicketError(_("Select at least one ticket."))
    refused = [t.ticket_number for t in tickets
               if not t.remote_id or t.remote_status in (TicketStatus.CANCELLED, TicketStatus.DELETED)]
    if refused:
        raise TicketError(_("These tickets cannot be cancelled (not on the platform yet, or cancelled already): "
                            "%(numbers)s") % {"numbers": ", ".join(refused)})
    model = type(tickets[0])
    with transaction.atomic():
        pks = _claim_for_action(tickets, "cancel")
        return jobs.enqueue("backoffice.tickets.jobs.tickets_cancel", name="tickets_cancel",
                            company=tickets[0].company_id, target=_selection_target(model, pks),
                            args=[model.kind, pks])


def tickets_status_change_request(*, tickets, status) -> "jobs.JobRun":
    """Ask for a status change of one or many tickets: 40 -> 0 (back to draft) or 0 -> 20 (queue and
    send); document 2, section 3. Any other transition is refused here, before asking the platform."""
    status = int(status)
    sources = [source for source, target in STATUS_CHANGES.items() if target == status]
    if not sources:
        raise TicketError(_("A ticket's status can only be changed to draft or queued."))
    tickets = list(tickets)
    if not tickets:
        raise TicketError(_("Select at least one ticket."))
    source = sources[0]
    refused = [t.ticket_number for t in tickets if not t.remote_id or t.remote_status != source]
    if refused:
        raise TicketError(_("Only tickets in status “%(source)s” can be changed to “%(target)s”; these cannot: "
                            "%(numbers)s") % {"source": TicketStatus(source).label,
                                              "target": TicketStatus(status).label, "numbers": ", ".join(refused)})
    model = type(tickets[0])
    with transaction.atomic():
        pks = _claim_for_action(tickets, f"status:{status}")
        return jobs.enqueue("backoffice.tickets.jobs.tickets_update_status", name="tickets_update_status",
                            company=tickets[0].company_id, target=_selection_target(model, pks),
                            args=[model.kind, pks, status])


def _refused(model, pks, exc: RemoteError):
    """Keep the platform's refusal on each ticket (unless the runner will try again) and re-raise."""
    if jobs.will_run_again(exc):
        raise exc
    message, source = sync.failure(exc)
    model.objects.filter(pk__in=pks).update(pending_action="", last_error=message[:2000], last_error_source=source,
                                            updated_at=timezone.now())
    raise exc


def tickets_cancel(*, model, pks):
    """Cancel the tickets on the platform (body {"ids": [...]}); they become cancelled (100)."""
    tickets = list(model.objects.filter(pk__in=pks, pending_action="cancel").exclude(remote_id=""))
    if not tickets:
        return _("Nothing to cancel.")
    client = ticket_client(tickets[0].company, model.kind)
    ettns = [t.remote_id for t in tickets]
    try:
        client.cancel(ettns)
    except RemoteError as exc:
        _refused(model, [t.pk for t in tickets], exc)
    model.objects.filter(pk__in=[t.pk for t in tickets]).update(
        pending_action="", last_error="", remote_status=TicketStatus.CANCELLED, updated_at=timezone.now())
    _refresh_statuses(client, model, tickets)
    return ngettext("%(count)s ticket cancelled.", "%(count)s tickets cancelled.", len(tickets)) % {
        "count": len(tickets)}


def tickets_update_status(*, model, pks, status):
    """Change the tickets' status on the platform (body {"ids": [...], "status": 0 or 20})."""
    tickets = list(model.objects.filter(pk__in=pks, pending_action=f"status:{status}").exclude(remote_id=""))
    if not tickets:
        return _("Nothing to change.")
    client = ticket_client(tickets[0].company, model.kind)
    try:
        client.update_status([t.remote_id for t in tickets], status)
    except RemoteError as exc:
        _refused(model, [t.pk for t in tickets], exc)
    model.objects.filter(pk__in=[t.pk for t in tickets]).update(
        pending_action="", last_error="", remote_status=status, requested_status=status, status_message="",
        updated_at=timezone.now())
    if status in WORKING_STATUSES:
        poll_soon(company_id=tickets[0].company_id)
    return ngettext("%(count)s ticket changed to “%(status)s”.", "%(count)s tickets changed to “%(status)s”.",
                    len(tickets)) % {"count": len(tickets),
                                                                 "status": TicketStatus(status).label}


def _refresh_statuses(client, model, tickets):
    """Best effort: the platform's own word on the new statuses (the action succeeded either way)."""
    try:
        answers = {str(a.get("id")): a for a in client.statuses([t.remote_id for t in tickets]) or []}
    except RemoteError as exc:
        logger.info("statuses after an action not read: %s", exc)
        return
    for ticket in tickets:
        answer = answers.get(ticket.remote_id)
        if answer and answer.get("status") is not None:
            model.objects.filter(pk=ticket.pk).update(remote_status=int(answer["status"]),
                                                      status_message=answer.get("message") or "")


# ---------------------------------------------------------------------------------------------------
# HTML (a download the user waits for: called from the view)


def ticket_html(*, ticket, standard=True) -> str:
    """The ticket rendered by the platform: its standard layout, or the company's own default one. The
    user waits for it: one attempt with the short interactive timeout (core.platform.client_for)."""
    if not ticket.remote_id:
        raise TicketError(_("The platform does not have this ticket yet."))
    return ticket_client(ticket.company, ticket.kind, interactive=True).html(ticket.remote_id, standard=standard)


# ---------------------------------------------------------------------------------------------------
# Excel exports (document 2, sections 4.1 and 4.2), kept for 24 hours on the platform


def export_start(*, company, kind, filters: dict, user=None) -> TicketExport:
    """Record the export the user asked for and start it in the background."""
    with transaction.atomic():
        export = TicketExport.objects.create(company=company, kind=kind, filters=filters,
                                             requested_by=user if user is not None and user.is_authenticated else None)
        _enqueue_export(export)
    return export


def _enqueue_export(export):
    return jobs.enqueue("backoffice.tickets.jobs.ticket_export_run", name="ticket_export", company=export.company_id,
                        target=f"tickets.ticketexport:{export.pk}", args=[export.pk])


def export_fetch_request(*, export) -> None:
    """Fetch an export seen in the platform's history (started elsewhere) while its window is open."""
    try:
        core_exports.export_fetch_request(export=export, enqueue=_enqueue_export)
    except core_exports.ExportError as exc:
        raise TicketError(str(exc)) from None


_export_started = core_exports.export_started
export_expired = core_exports.export_expired
_parse_when = core_exports.parse_when


def export_run(*, export):
    """Start the export on the platform (once), wait until it shows in the export history, then download
    the ZIP while its 24-hour window is open and keep it (core.exports). Not ready yet: the job runs again
    shortly."""
    return core_exports.export_run(export=export, client=ticket_client(export.company, export.kind),
                                   poll_every=conf.get("TICKET_EXPORT_POLL_SECONDS"))


export_keep = core_exports.export_keep


def export_failed(*, export_pk, message):
    core_exports.export_failed(model=TicketExport, pk=export_pk, message=message)


def export_history_sync(*, company, kind) -> int:
    """Read the platform's export history: exports started elsewhere appear (fetchable while their window
    is open), and the ones whose 24 hours passed are marked expired. Returns how many were new."""
    return core_exports.export_history_sync(model=TicketExport, client=ticket_client(company, kind),
                                            company=company, kind=kind)


def exports_expire(*, company=None) -> int:
    """Exports not downloaded within their 24 hours are shown as expired (no platform call)."""
    exports = TicketExport.objects.all()
    if company is not None:
        exports = exports.filter(company=company)
    return core_exports.exports_expire(exports)


def export_filters(kind, data: dict) -> dict:
    """The export body of document 2, 4.1 / 4.2 from the export form's cleaned data (empty values left out)."""
    names = ["status", "startDate", "endDate", "executionStartDate", "executionEndDate"]
    names += (["eventStartDate", "eventEndDate", "generateSummaryReport"] if kind == TicketKind.EVENT
              else ["departureStartDate", "departureEndDate", "isArchived"])
    body = {}
    for name in names:
        value = data.get(name)
        if value is None or value == "":
            continue
        if hasattr(value, "isoformat"):
            value = value.isoformat()
        body[name] = value
    if data.get("ids"):
        body["ids"] = list(data["ids"])
    return body


# ---------------------------------------------------------------------------------------------------
# By-date reports (document 2, sections 4.1 and 4.2): every page, pageIndex from 1, pageSize 500


def report_request(*, company, kind, report_date: date) -> ReportRun:
    """Fetch the report of one day in the background (a new run; the current one stays until it is done)."""
    return core_reports.report_request(model=ReportRun, job="backoffice.tickets.jobs.report_sync",
                                       name="report_sync", company=company, report_date=report_date, kind=kind)


_decimal = core_reports.decimal_or_none
_date_time = core_reports.date_time
_int = core_reports.int_or_none


COMMON_REPORT_FIELDS = (
    ("ticket_number", "ticketNumber", str), ("execution_date", "executionDate", _date_time),
    ("payment_type", "paymentType", str), ("total_amount", "totalAmount", _decimal),
    ("total_vat", "totalVat", _decimal), ("canceled_date", "canceledDate", _date_time),
    ("canceled", "canceled", bool), ("part_index", "partIndex", _int), ("create_date", "createDate", _date_time),
)
KIND_REPORT_FIELDS = {
    TicketKind.EVENT: (
        ("event_date", "eventDate", _date_time), ("location_city_code", "locationCityCode", str),
        ("location_municipality", "locationMunicipality", str),
        ("location_description", "locationDescription", str),
    ),
    TicketKind.PASSENGER: (
        ("departure_date", "departureDate", _date_time), ("departure_location", "departureLocation", str),
        ("destination", "destination", str), ("expedition_time", "expeditionTime", _date_time),
        ("expedition_number", "expeditionNumber", str), ("vehicle_plate", "vehiclePlate", str),
        ("payable_amount", "payableAmount", _decimal),
    ),
}
_TEXT_LIMITS = {"ticket_number": 20, "payment_type": 20, "location_city_code": 10, "location_municipality": 100,
                "location_description": 300, "departure_location": 200, "destination": 200,
                "expedition_number": 50, "vehicle_plate": 20}


def report_item_fields(kind, raw: dict) -> dict:
    return core_reports.item_fields((*COMMON_REPORT_FIELDS, *KIND_REPORT_FIELDS[kind]), raw, _TEXT_LIMITS)


def _row_builder(kind):
    """A function making an unsaved report item from (run, raw item), with positional arguments in the
    model's field order: Model(*values) skips the keyword handling that costs more than the insert."""
    model = REPORT_ITEM_MODELS[kind]
    spec = {name: (key, convert) for name, key, convert in (*COMMON_REPORT_FIELDS, *KIND_REPORT_FIELDS[kind])}
    names = [field.name for field in model._meta.concrete_fields]
    fixed = ("id", "company", "run", "report_date")
    assert names[:4] == list(fixed) and set(names[4:]) == set(spec), names
    converters = [(name, *spec[name]) for name in names[4:]]

    def value(name, key, convert, raw):
        item = raw.get(key)
        if convert is str:
            return ("" if item is None else str(item))[:_TEXT_LIMITS.get(name, 300)]
        return convert(item) if item is not None else (False if convert is bool else None)

    def build(run, raw):
        return model(None, run.company_id, run.pk, run.report_date,
                     *[value(name, key, convert, raw) for name, key, convert in converters])

    return build


_ROW_BUILDERS = {}


def report_store_page(*, run, page_index, envelope) -> int:
    """Store one page's items with the run's progress, in one transaction (a stopped walk resumes at the
    next page). Returns the number of items stored."""
    build = _ROW_BUILDERS.get(run.kind) or _ROW_BUILDERS.setdefault(run.kind, _row_builder(run.kind))
    rows = [build(run, raw) for raw in envelope.get("items") or []]
    return core_reports.report_store_page(run=run, page_index=page_index, envelope=envelope, rows=rows,
                                          item_model=REPORT_ITEM_MODELS[run.kind])


def report_sync(*, run):
    """Walk every page of the report of run.report_date (pageIndex from 1, pageSize 500) and store the
    items. No records is not an error: items is empty and totalCount 0 (document 2, section 4).
    Commits are relaxed on PostgreSQL: a crash loses at most the last pages, never one in the middle
    (commits are ordered), and the walk resumes after the last page it finds stored."""
    client = ticket_client(run.company, run.kind)
    with _relaxed_commits():
        return core_reports.report_walk(
            run=run, fetch_page=lambda page_index: client.report(run.report_date, page_index,
                                                                 page_size=run.page_size),
            store_page=lambda page_index, envelope: report_store_page(run=run, page_index=page_index,
                                                                      envelope=envelope))


def report_finish(*, run):
    core_reports.report_finish(run=run)


def report_failed(*, run_pk, message):
    core_reports.report_failed(model=ReportRun, run_pk=run_pk, message=message)


def current_report_run(*, company, kind, report_date):
    return ReportRun.objects.filter(company=company, kind=kind, report_date=report_date, is_current=True).first()
