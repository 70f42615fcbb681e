"""Passenger-list operations (HackSoft style: keyword-only functions named entity_action).

The only code of this app that changes sync state or calls the platform client. Views call the
*_create / *_update / *_request functions, which check the rule, save and enqueue; the jobs (@job) are the
rest. Exports and the by-date report run as core jobs of their declarations (families.py).
Each docstring names the rule of document 2 it enforces.
"""

import logging
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Q, Sum, Value
from django.db.models.functions import Replace, Upper
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from backoffice.core import domains, jobs, sync
from backoffice.core.actions import ActionRefused
from backoffice.core.choices import SyncState
from backoffice.core.conf import tunable
from backoffice.core.exports import parse_when
from backoffice.core.jobs import job
from backoffice.core.models import Company
from backoffice.core.payloads import money, when
from backoffice.core.platform import client_for
from backoffice.remote.passenger_lists import PassengerListClient

from .choices import CURRENT_STATES, ISSUED_STATUSES, ListState
from .models import PassengerList

tickets_api = domains.api("tickets")

logger = logging.getLogger(__name__)

# The operator fields a list takes over from its tickets when they all agree (the commissions are summed).
COPIED_FROM_TICKETS = tuple(tickets_api.OPERATOR_PAYLOAD.values())


class PassengerListError(ActionRefused):
    """An operation the list's state does not allow, or a rule it breaks (on its form field when it has one)."""


def list_client(company):
    return client_for(company, PassengerListClient)


def plate_key(value) -> str:
    """Plates compare without spaces or dashes, in capitals (34 ABC 123 = 34abc-123), as the platform does."""
    return "".join(ch for ch in str(value or "") if ch.isalnum()).upper()


def _plate_expression():
    return Upper(Replace(Replace("vehicle_plate", Value(" "), Value("")), Value("-"), Value("")))


# ---------------------------------------------------------------------------------------------------
# Grouping (document 2, 4.3)


def issued_tickets(company):
    """Passenger tickets the platform counts in a list: issued, queued (20) or approved (60), or asked to be
    sent as queued and not on the platform yet."""
    on_their_way = Q(remote_status__isnull=True, requested_status=tickets_api.TicketStatus.QUEUED,
                     sync_state__in=[SyncState.LOCAL, SyncState.QUEUED, SyncState.SENDING])
    return tickets_api.PassengerTicket.objects.filter(company=company).filter(
        Q(remote_status__in=ISSUED_STATUSES) | on_their_way)


def expedition_tickets(*, company, expedition_number, expedition_time, vehicle_plate=None):
    """Document 2, 4.3: the tickets of an expedition (number and date), and of its plate unless the plate
    is given by hand (vehicle_plate None)."""
    tickets = issued_tickets(company).filter(expedition_number=expedition_number, expedition_time=expedition_time)
    if vehicle_plate is not None:
        tickets = tickets.alias(plate=_plate_expression()).filter(plate=plate_key(vehicle_plate))
    return tickets.order_by("ticket_number", "pk")


def list_tickets(plist):
    return expedition_tickets(company=plist.company, expedition_number=plist.expedition_number,
                              expedition_time=plist.expedition_time,
                              vehicle_plate=None if plist.is_manual_plate else plist.vehicle_plate)


def same_information(plist):
    """The current lists with the same expedition number, date and plate (other than this one)."""
    lists = PassengerList.objects.filter(company=plist.company, expedition_number=plist.expedition_number,
                                         expedition_time=plist.expedition_time, state__in=CURRENT_STATES)
    lists = lists.alias(plate=_plate_expression()).filter(plate=plate_key(plist.vehicle_plate))
    return lists.exclude(pk=plist.pk) if plist.pk else lists


def check_grouping(plist, tickets=None):
    """Document 2, 4.3: grouped by plate (isManualPlate false), the list cannot be built when no ticket
    matches the expedition number, date and plate."""
    tickets = list_tickets(plist) if tickets is None else tickets
    if not plist.is_manual_plate and not tickets.exists():
        raise PassengerListError(
            _("No issued passenger ticket matches expedition %(number)s at %(time)s with plate %(plate)s. Check "
              "the plate, or give the plate by hand to group the expedition's tickets whatever their plate.")
            % {"number": plist.expedition_number, "plate": plist.vehicle_plate,
               "time": timezone.localtime(plist.expedition_time).strftime("%d.%m.%Y %H:%M")},
            field="vehicle_plate")
    return tickets


def list_totals(plist, tickets) -> dict:
    """Total payable of the tickets; commission and its VAT are the list's own when it names the vehicle
    operator, else the sums of its tickets' (the sandbox computes the same)."""
    sums = tickets.aggregate(payable=Sum("payable_amount"), commission=Sum("commission_amount"),
                             commission_tax=Sum("commission_tax_amount"))
    own = plist.has_operator
    return {"ticket_count": tickets.count(), "total_payable_amount": money(sums["payable"]),
            "total_commission_amount": money(plist.commission_amount if own else sums["commission"]),
            "total_commission_tax_amount": money(plist.commission_tax_amount if own else sums["commission_tax"])}


def _store_tickets(plist, tickets):
    """Link the list to its tickets and write its totals (the one place they change)."""
    plist.tickets.set(list(tickets))
    fields = list_totals(plist, tickets)
    for name, value in fields.items():
        setattr(plist, name, value)
    plist.save(update_fields=list(fields))


@dataclass
class Expedition:
    """What a selection of tickets says about the list to build from them."""

    tickets: list
    expedition_number: str
    expedition_time: object
    vehicle_plate: str
    plates: list
    initial: dict
    existing: PassengerList | None
    probe: PassengerList  # unsaved: the list they would make, for list_tickets()


def expedition_of(*, company, pks) -> Expedition:
    """The expedition of the selected tickets (one expedition number and date; several plates mean the
    plate is given by hand), with the vehicle operator they agree on (and the sums of the expedition's
    commissions), and the current list it has if any."""
    tickets = list(tickets_api.PassengerTicket.objects.filter(company=company, pk__in=pks)
                   .order_by("ticket_number", "pk"))
    if not tickets:
        raise PassengerListError(_("Select the passenger tickets of one expedition first."))
    expeditions = {(t.expedition_number, t.expedition_time) for t in tickets}
    if len(expeditions) > 1:
        raise PassengerListError(_("A passenger list covers one expedition: the selected tickets belong to "
                                   "%(count)s (expedition number and date differ). Filter the list to one "
                                   "expedition first.") % {"count": len(expeditions)})
    plates = sorted({plate_key(t.vehicle_plate) for t in tickets})
    first = tickets[0]
    initial = {"expedition_number": first.expedition_number, "expedition_time": first.expedition_time,
               "vehicle_plate": first.vehicle_plate, "is_manual_plate": len(plates) > 1}
    for name in COPIED_FROM_TICKETS:
        values = {getattr(t, name) for t in tickets}
        if len(values) == 1 and None not in values and "" not in values:
            initial[name] = values.pop()
    probe = PassengerList(company=company, expedition_number=first.expedition_number,
                          expedition_time=first.expedition_time, vehicle_plate=first.vehicle_plate,
                          is_manual_plate=initial["is_manual_plate"])
    if initial.get("vehicle_operating_vkn_tckn"):
        # The list's commission is the expedition's: the sum over all of its tickets, not only the selected.
        sums = list_tickets(probe).aggregate(commission_amount=Sum("commission_amount"),
                                             commission_tax_amount=Sum("commission_tax_amount"))
        initial.update({name: money(total) if total is not None else None for name, total in sums.items()})
    existing = same_information(probe).order_by("-created_at", "-pk").first()
    return Expedition(tickets, first.expedition_number, first.expedition_time, first.vehicle_plate, plates, initial,
                      existing, probe)


# ---------------------------------------------------------------------------------------------------
# Create and update (document 2, 4.3 and section 3)


def passenger_list_create(plist, *, user=None):
    """Build a new list (isNewList true) and send it. Creating again with the same information replaces
    the old list once the platform has the new one (services.mark_replaced)."""
    with transaction.atomic():
        tickets = check_grouping(plist)
        plist.is_new_list = True
        plist.state = ListState.SAVED
        plist.sync_state = SyncState.LOCAL
        plist.remote_id, plist.passenger_list_number, plist.last_error = "", "", ""
        plist.created_by = user if user is not None and user.is_authenticated else None
        plist.save()
        _store_tickets(plist, tickets)
        sync.record_queue(plist)
    return plist


def passenger_list_update(plist, *, user=None):
    """Update the list of the expedition (isNewList false) and send it. Document 2, section 3: a list
    already reported to the tax authority cannot be updated; nor can a replaced one. The expedition number
    and date (and the plate, unless given by hand) say which list the platform updates: they do not change.
    A list the platform does not have yet is sent as a new one. The list keeps who built it, not `user`."""
    with transaction.atomic():
        current = PassengerList.objects.select_for_update().get(pk=plist.pk)
        if current.state == ListState.REPORTED:
            raise PassengerListError(_("Passenger list %(number)s was reported to the tax authority and cannot be "
                                       "updated. Build it again to replace it.") % {"number": current})
        if current.state == ListState.REPLACED:
            raise PassengerListError(_("Passenger list %(number)s was replaced by %(new)s; change that one.")
                                     % {"number": current, "new": current.replaced_by or "—"})
        if current.is_busy:
            raise PassengerListError(_("Passenger list %(number)s is being sent; wait for it to finish.")
                                     % {"number": current})
        plist.expedition_number, plist.expedition_time = current.expedition_number, current.expedition_time
        if not current.is_manual_plate or not plist.is_manual_plate:
            plist.vehicle_plate = current.vehicle_plate
        for name in ("remote_id", "passenger_list_number", "state", "attempts", "created_by_id", "platform_created",
                     "reported_at"):
            setattr(plist, name, getattr(current, name))
        tickets = check_grouping(plist)
        plist.is_new_list = not current.remote_id
        plist.sync_state = SyncState.LOCAL
        plist.last_error = ""
        plist.save()
        _store_tickets(plist, tickets)
        sync.record_queue(plist)
    return plist


def passenger_list_rebuild(*, plist, user=None) -> PassengerList:
    """Create the list again with the same information: the new list replaces this one (document 2,
    section 3), also after it was reported. The tickets are grouped anew."""
    if plist.is_busy:
        raise PassengerListError(_("Passenger list %(number)s is being sent; wait for it to finish.")
                                 % {"number": plist})
    copy = PassengerList.objects.get(pk=plist.pk)
    copy.pk = copy.id = None
    copy._state.adding = True
    copy.replaced_by, copy.reported_at, copy.platform_created = None, None, None
    copy.attempts, copy.synced_at = 0, None
    return passenger_list_create(plist=copy, user=user)


# ---------------------------------------------------------------------------------------------------
# The payload and the push


def passenger_list_payload(plist) -> dict:
    """The save body of document 2, 4.3. isManualPlate is declared as a string; empty operator fields go
    as null (the five are all given or none)."""
    body = {"expeditionNumber": plist.expedition_number, "expeditionTime": when(plist.expedition_time),
            "vehiclePlate": plist.vehicle_plate, "isManualPlate": "true" if plist.is_manual_plate else "false",
            "isNewList": bool(plist.is_new_list)}
    return {**body, **tickets_api.operator_body(plist, empty=None)}


def passenger_list_send(plist) -> dict:
    result = list_client(plist.company).save(passenger_list_payload(plist))
    return {"remote_id": result["ettn"], "passenger_list_number": result["passengerListNumber"]}


def passenger_list_reconcile(plist) -> dict | None:
    """Before sending a create again, ask whether an earlier one arrived (a list of this expedition the
    platform has and we do not know): a list must never be created twice. An update is harmless to repeat."""
    if not plist.is_new_list:
        return None
    known = set(PassengerList.objects.filter(company=plist.company).exclude(remote_id="")
                .values_list("remote_id", flat=True))
    found = list_client(plist.company).find(expedition_number=plist.expedition_number,
                                            expedition_time=when(plist.expedition_time),
                                            vehicle_plate=plist.vehicle_plate, exclude=known)
    if not found:
        return None
    return {"remote_id": found["id"], "passenger_list_number": found["passengerListNumber"]}


def tickets_on_their_way(plist) -> int:
    """Covered tickets still being sent: the platform would not count them yet."""
    return plist.tickets.filter(sync_state__in=[SyncState.QUEUED, SyncState.SENDING]).count()


@job(gettext_lazy("Send passenger list"))
def passenger_list_push(pk):
    """Send one list (once; reconciled first after a timeout), after its tickets reached the platform. A new
    list that arrived replaces the current lists of the same information."""
    plist = PassengerList.objects.filter(pk=pk).first()
    if plist is None:
        return _("The record no longer exists.")
    if plist.sync_state == SyncState.QUEUED and tickets_on_their_way(plist):
        raise jobs.TryLater(tunable("PASSENGER_LIST_TICKET_WAIT_SECONDS", 3.0),
                            _("Waiting for the list's tickets to reach the platform."))
    message = sync.record_push(PassengerList, pk, send=passenger_list_send, reconcile=passenger_list_reconcile)
    plist.refresh_from_db()
    if plist.sync_state == SyncState.SYNCED and plist.is_new_list:
        mark_replaced(plist)
    return message


def mark_replaced(plist) -> int:
    """Document 2, section 3: creating a list again with the same information overwrites the old one and
    the new one is valid. The older lists stay, marked replaced and linked to the new one."""
    return same_information(plist).filter(created_at__lte=plist.created_at).update(
        state=ListState.REPLACED, replaced_by=plist, updated_at=timezone.now())


# ---------------------------------------------------------------------------------------------------
# The platform's lists (query, at most 500 per page)


@job(gettext_lazy("Read passenger lists from the platform"))
def passenger_lists_query(company_id):
    """Walk the platform's lists page by page: numbers and creation dates of ours are filled in, and lists
    built elsewhere appear (linked to the tickets of their expedition and plate)."""
    company = Company.objects.get(pk=company_id)
    new = sync.mirror_walk(list_client(company).query_pages(), lambda item: query_item_store(company, item))
    return ngettext("%(count)s new passenger list from the platform.",
                    "%(count)s new passenger lists from the platform.", new) % {"count": new}


def query_item_store(company, item) -> int:
    ettn = item.get("id")
    if not ettn:
        return 0
    created = parse_when(item.get("createDate"))
    known = PassengerList.objects.filter(company=company, remote_id=ettn).first()
    if known is not None:
        sync.fill_blanks(known, passenger_list_number=item.get("passengerListNumber"), platform_created=created)
        return 0
    moment = parse_when(item.get("expeditionTime"))
    if moment is None or not item.get("expeditionNumber"):
        logger.warning("passenger list %s from the platform has no expedition; skipped", ettn)
        return 0
    with transaction.atomic():
        plist = PassengerList.objects.create(
            company=company, remote_id=ettn, passenger_list_number=item.get("passengerListNumber") or "",
            expedition_number=str(item["expeditionNumber"])[:50], expedition_time=moment,
            vehicle_plate=str(item.get("vehiclePlate") or "")[:20], is_new_list=False, sync_state=SyncState.SYNCED,
            synced_at=timezone.now(), platform_created=created)
        _store_tickets(plist, list_tickets(plist))
    return 1


def query_sync_request(*, company):
    return jobs.enqueue(passenger_lists_query, company=company, args=[company.pk])


# --- what core runs for this domain (read when the app is ready: core.domains) --------------------------------------
sync.register_pushable(PassengerList, passenger_list_push)
