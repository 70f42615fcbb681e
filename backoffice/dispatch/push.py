"""Outgoing dispatch notes sent to the platform: the JSON and UBL bodies (document 3, 2.9; inner fields from the
facts file), the push (exactly once, sync.record_push: a lost create is found again by its localReferenceId) and
the status changes 0 -> 20 and 40 -> 0 (core.actions), sending a draft being its own confirmed step (issue 29).
"""

from decimal import Decimal

from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from backoffice.core import actions, polling, sync
from backoffice.core.choices import SyncState
from backoffice.core.jobs import job
from backoffice.core.payloads import integer
from backoffice.remote.errors import RemoteError

from . import ubl
from .choices import (
    DESPATCH_TYPE_SEVK,
    EDITABLE_STATUSES,
    PROFILE_NUMBERS,
    WORKING_STATUSES,
    DispatchStatus,
    Numbering,
    Profile,
    Source,
)
from .mirror import NOTES_POLL
from .models import DispatchNote
from .services import DispatchError, answer_fields, dispatch_client, number_field


# --- the bodies (document 3, 2.9; inner fields from the facts file) ---------------------------------------
def _party(note, who) -> dict | None:
    """The note's actual buyer or seller (`who`), when it names one."""
    values = {member: getattr(note, f"{who}_{name}") for member, name in (
        ("identificationNumber", "identifier"), ("name", "name"), ("personSurName", "surname"), ("city", "city"),
        ("district", "district"), ("countryName", "country"))}
    if not (values["identificationNumber"] or values["name"]):
        return None
    return {key: value for key, value in values.items() if value}


def note_body(note) -> dict:
    """The JSON model of a note written in the form (document 3, 2.9)."""
    lines = list(note.lines.all())
    drivers = list(note.drivers.all())
    general = {"issueDate": note.issue_date, "issueTime": (note.issue_time or timezone.localtime().time())
               .strftime("%H:%M:%S"), "despatchProfileType": PROFILE_NUMBERS[Profile(note.profile)],
               "currencyCode": note.currency_code or "TRY", "despatchType": DESPATCH_TYPE_SEVK,
               "payableAmount": note.payable_amount, "totalAmount": note.total_amount}
    if note.numbering != Numbering.PLATFORM and note.despatch_number:
        general[number_field()] = note.despatch_number
    despatch_lines = []
    for line in lines:
        body = {"productName": line.product_name, "amount": line.quantity, "unitCode": line.unit_code,
                "unitPrice": line.unit_price, "lineAmount": line.line_amount,
                "taxTotal": {"taxAmount": line.vat_amount, "taxSubTotals": [
                    {"taxableAmount": line.line_amount, "taxAmount": line.vat_amount, "percent": line.vat_rate}]}}
        if line.product_code:
            body["manufacturersItemIdentification"] = line.product_code
        despatch_lines.append(body)
    shipment = {"shipmentPlateNo": note.plate_number} if note.plate_number else {}
    if note.has_carrier:
        shipment.update(shipmentSenderTitle=note.carrier_title, shipmentSenderTcknVkn=note.carrier_vkn_tckn)
    else:
        shipment["driverLines"] = [{"driverName": d.name, "driverSurname": d.surname, "driverTckn": d.tckn}
                                   for d in drivers]
    body = {
        "status": int(note.requested_status), "xsltCode": note.xslt_code,
        "localReferenceId": note.local_reference_id,
        "useManualDespatchAdviceId": note.numbering != Numbering.PLATFORM,
        "addressBook": {"identificationNumber": note.receiver_identifier, "alias": note.target_alias,
                        "name": note.receiver_name, "receiverCity": note.receiver_city,
                        "receiverCountry": note.receiver_country, "receiverDistrict": note.receiver_district},
        "generalInfo": general, "despatchLines": despatch_lines,
        "deliveryAddressInfo": {key: value for key, value in {
            "district": note.delivery_district, "city": note.delivery_city, "zipCode": note.delivery_zip_code,
            "countryName": note.delivery_country}.items() if value},
        "despatchShipmentInfo": shipment,
        "orderInfo": {"shipmentDate": timezone.localtime(note.shipment_date).strftime("%Y-%m-%d %H:%M:%S")}
        if note.shipment_date else {},
        "notes": [{"note": text} for text in note.note_list()],
    }
    if not note.remote_id:  # new: listed once; an update keeps what our listing already marked read
        body["isNew"] = True
    for member, who in (("despatchBuyerCustomerInfo", "buyer"), ("sellerSupplierInfo", "seller")):
        if party := _party(note, who):
            body[member] = party
    return body


def ubl_body(note, *, update=False) -> dict:
    """The UBL form's body (document 3, 2.9): the kept file zipped, as Base64 text."""
    with note.ubl_file.open("rb") as handle:
        xml = handle.read()
    manual = note.numbering == Numbering.MANUAL and not update
    return {"despatchAdviceZip": ubl.zipped_base64(f"note-{note.pk}.xml", xml),
            "localReferenceId": note.local_reference_id,
            "prefix": None if note.numbering == Numbering.MANUAL or not note.prefix else note.prefix,
            "targetAlias": note.target_alias or None, "useManualDespatchAdviceId": manual,
            "checkLocalReferenceId": not update, "status": int(note.requested_status)}


# --- the push (sync.record_push: claimed, reconciled before any resend) ----------------------------------------
def note_send(note, *, client=None) -> dict:
    client = client or dispatch_client(note.company)
    if not note.remote_id and note.source == Source.FORM and not note.local_reference_id.startswith("BO-"):
        # The ERP's reference may be on a note written elsewhere: the JSON model has no duplicate check of its own.
        # Before our first attempt nothing on the platform is ours, even with the same content (reconcile asks later).
        found = client.find(note.local_reference_id)
        if found is not None and (note.attempts <= 1 or not _is_ours(note, found)):
            raise _reference_taken(note, found)
    if note.source == Source.UBL:
        answer = (client.update_ubl(note.remote_id, ubl_body(note, update=True)) if note.remote_id
                  else client.create_ubl(ubl_body(note)))
    else:
        answer = client.update(note.remote_id, note_body(note)) if note.remote_id else client.create(note_body(note))
    fields = answer_fields(answer, note)
    # The create answer's status is what the body asked (document 3, 3.3); the polls follow it from there.
    fields.setdefault("remote_status", int(note.requested_status))
    fields.update(status_message="", envelope_id="", envelope_status="", envelope_message="")
    # Its message is a warning the note was taken with (document 3, 2.9: an undefined prefix, "no prefix found").
    fields["platform_warning"] = str(answer.get("message") or "")
    return fields


def note_reconcile(note, *, client=None) -> dict | None:
    """Before sending again, ask the platform whether an earlier attempt arrived. A create: the note with our
    localReferenceId. An update: when the note left 0 / 40 (it asked for 20 and got it), it arrived; otherwise
    sending the whole body again is harmless."""
    client = client or dispatch_client(note.company)
    if not note.remote_id:
        found = client.find(note.local_reference_id)
        if found is not None and not _is_ours(note, found):
            raise _reference_taken(note, found)
        if found is None and note.despatch_number:  # our number, under another reference: not ours either
            found = client.find_number(note.despatch_number)
            if found is not None and not _is_ours(note, found):
                raise _number_taken(note, found)
        return _found_fields(note, found) if found is not None else None
    answer = client.status(note.remote_id)
    status = integer(answer.get("status"))
    # Only an update that asked to send (20) moves the note out of 0 / 40 by itself.
    if note.requested_status == DispatchStatus.QUEUED and status is not None and status not in EDITABLE_STATUSES:
        return answer_fields(answer, note)
    return None


def _found_fields(note, found) -> dict:
    """A create whose answer was lost, found on the platform. Its answer's warning is lost with it; a number from
    another series than the prefix asked says what the warning said (document 3, 2.9: an undefined prefix)."""
    fields = answer_fields(found, note)
    number = fields.get("despatch_number", "")
    if note.numbering == Numbering.PLATFORM and note.prefix and number and not number.startswith(note.prefix):
        fields["platform_warning"] = _(
            "The platform numbered this note %(number)s from another series than the prefix %(prefix)s asked: the "
            "prefix is not defined there. (Its answer to the send was lost; its number says so.)") % {
            "number": number, "prefix": note.prefix}
    return fields


def _other_note(found) -> dict:
    return {"number": found.get("despatchAdviceNumber") or found["id"], "receiver": found.get("targetVknTckn") or "?",
            "date": str(found.get("issueDate") or "?")[:10]}


def _reference_taken(note, found) -> RemoteError:
    return RemoteError(_("The platform's note %(number)s (receiver %(receiver)s, dated %(date)s) already has the ERP "
                         "reference %(reference)s and is not this note, which was not sent. Give this note another ERP "
                         "reference and send it again.") % {**_other_note(found), "reference": note.local_reference_id},
                       permanent=True)


def _number_taken(note, found) -> RemoteError:
    todo = (_("Upload the corrected file with another number.") if note.source == Source.UBL
            else _("Write it as a new note with another number or prefix."))
    return RemoteError(_("The number %(number)s is taken on the platform by another note (receiver %(receiver)s, dated "
                         "%(date)s); this note was not sent. %(todo)s") % {**_other_note(found), "todo": todo},
                       permanent=True)


def _is_ours(note, found) -> bool:
    """Whether the platform's note found under our localReferenceId or our number is this one: only when its
    content matches (issue 28): the same reference, our number when we gave one, the receiver and the date. An ERP's
    reference or a number may also be on a note written elsewhere (the portal, the ERP itself). A member the list
    item does not carry is not compared (document 3 does not show the item: tickets and invoices are read the same
    way); one it carries must be ours, a null included."""
    expected = {"despatchAdviceNumber": note.despatch_number, "localReferenceId": note.local_reference_id,
                "targetVknTckn": note.receiver_identifier,
                "issueDate": note.issue_date.isoformat() if note.issue_date else ""}
    for name, ours in expected.items():
        if not ours or name not in found:
            continue
        theirs = "" if found[name] is None else str(found[name])
        if (theirs[:10] if name == "issueDate" else theirs) != ours:  # a null or another value: not ours
            return False
    return True


_series_lane = sync.series_lane("despatch_number", gettext_lazy(
    "Waiting for dispatch note %(previous)s to reach the platform first (its numbers go in order)."))


def note_waits_for(note) -> str:
    """One lane per prefix across jobs for the notes our series numbers (document 3, 2.9; the facts file: a
    series' counter runs on consecutively): N+1 never reaches the platform before N, even when N's push answered
    503 and waits for its retry. A number typed by hand, or given by the platform, waits for nothing."""
    return _series_lane(note) if note.numbering == Numbering.SERIES else ""


@job(gettext_lazy("Send dispatch note"), name="dispatch_note_push")
def note_push(pk) -> str:
    message = sync.record_push(DispatchNote, pk, send=note_send, reconcile=note_reconcile, waits_for=note_waits_for)
    note = DispatchNote.objects.filter(pk=pk).only("company_id", "remote_status", "sync_state").first()
    if note and note.sync_state == SyncState.SYNCED and note.remote_status in WORKING_STATUSES:
        polling.poll_soon(NOTES_POLL, note.company_id)
    return message


# --- status changes (document 3, 3.3: 0 -> 20 and 40 -> 0, one or many), declared for core.actions -----------
def _poll_after(records):
    polling.poll_soon(NOTES_POLL, records[0].company_id)


def _envelope_gone(records):
    """Back to draft: the envelope of the failed send is history; a new send makes a new one."""
    DispatchNote.objects.filter(pk__in=[record.pk for record in records], remote_status=DispatchStatus.DRAFT).update(
        envelope_id="", envelope_status="", envelope_message="")


def status_change(name, label, button, source, target, *, refused, done, **options):
    """A status change of document 3, 3.3 (0 -> 20 or 40 -> 0, one record or many; the same for a note and a reply),
    declared for core.actions: the client's update_status. done(count): its message, naming %(count)s and
    %(status)s."""
    return actions.RecordAction(
        name, label, button=button, sources=(source,), leads_to=target, sets_requested=True, refused=refused,
        call=lambda client, ids: client.update_status(ids, target),
        done=lambda count: done(count) % {"count": count, "status": target.label}, **options)


NOTE_CHANGE = {
    "refused": gettext_lazy("Only notes in status “%(source)s” can be changed to “%(target)s”; these cannot: "
                            "%(numbers)s"),
    "done": lambda count: ngettext("%(count)s dispatch note changed to “%(status)s”.",
                                   "%(count)s dispatch notes changed to “%(status)s”.", count)}


NOTE_ACTIONS = actions.ActionSet(
    client=lambda company, model: dispatch_client(company), number="despatch_number", error=DispatchError,
    empty=gettext_lazy("Select at least one dispatch note."),
    busy=gettext_lazy("Another action on these notes is still running; wait for it to finish."),
    status_label=lambda status: DispatchStatus(status).label,
    status_operation=lambda model: "dispatch.outbox_status",
    actions=[
        status_change("send", gettext_lazy("Send (draft → queued)"), gettext_lazy("Send"), DispatchStatus.DRAFT,
                      DispatchStatus.QUEUED, **NOTE_CHANGE, after=_poll_after, icon="send",
                      # once sent the platform moves it on: any of these shows the change took effect
                      # (40 too: a draft reaches it only through 20)
                      reached=tuple(status for status in DispatchStatus.values if status != DispatchStatus.DRAFT),
                      confirm=gettext_lazy("The selected drafts will be sent: a dispatch note is legally binding "
                                           "once it reaches the tax authority.")),
        status_change("draft", gettext_lazy("Back to draft (error → draft)"), gettext_lazy("Back to draft"),
                      DispatchStatus.ERROR, DispatchStatus.DRAFT, **NOTE_CHANGE, style="secondary",
                      icon="arrow-counterclockwise", after=_envelope_gone,
                      confirm=gettext_lazy("The selected notes in error will become drafts and can be edited.")),
    ])


# --- sending a draft (issue 29: its own step, after a confirmation) -------------------------------------------
class AlreadySent(DispatchError):
    """The notes are sent already or on their way (a second POST of the same confirmation): nothing to do."""


def _send_action():
    return NOTE_ACTIONS.by_name["send"]


def send_refusal(note) -> str:
    """Why this note cannot be sent to the tax authority now ("" when it can): only a draft on the platform."""
    if note.is_busy:
        return _("This note is on its way to the platform; wait until it is there.")
    if not note.remote_id:
        return _("The draft is not on the platform yet: wait until it is, or send it again if that failed.")
    if not NOTE_ACTIONS.allowed(_send_action(), note):
        return _("Only a draft is sent; this one is “%(status)s”.") % {
            "status": note.get_remote_status_display() or note.remote_status}
    return ""


def _already_sent(note) -> bool:
    return note.pending_action == "send" or (
        bool(note.remote_id) and note.remote_status is not None and note.remote_status != DispatchStatus.DRAFT
        and _send_action().took_effect(note.remote_status) and note.requested_status == DispatchStatus.QUEUED)


def send_request(notes):
    """Send drafts (document 3, 3.3: the status change 0 -> 20) through core.actions, which refuses any note not
    a draft by its number (nothing is half-sent) and claims them once. When every note is already sent or being
    sent (Back and the same confirmation again), AlreadySent: nothing is sent twice."""
    notes = list(notes)
    if notes and all(_already_sent(note) for note in notes):
        raise AlreadySent(_("Already sent: %(numbers)s. Nothing was sent again.") % {
            "numbers": ", ".join(str(note) for note in notes)})
    actions.action_request(DispatchNote, "send", notes)
    return notes


def send_rows(notes) -> list[dict]:
    """What the send confirmation shows of each note: the receiver, its mailbox, the total."""
    return [{"pk": note.pk, "number": str(note), "recipient": note.receiver_name,
             "identifier": note.receiver_identifier, "mailbox": note.target_alias or "—",
             "total": note.payable_amount or Decimal(0), "currency": note.currency_code or "TRY"} for note in notes]


# --- what core runs for this domain (read when the app is ready: core.domains) --------------------------------------
sync.register_pushable(DispatchNote, note_push)
actions.register_actions(DispatchNote, NOTE_ACTIONS)
