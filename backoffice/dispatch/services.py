"""Outgoing dispatch notes: every rule of document 3 (2.9, 3.3, 4.5) that needs the database or the note's state,
the JSON and UBL bodies, the push (exactly once: a lost create is found again by its localReferenceId) and the status
changes (core.actions). Field rules are on the forms (forms.py); the UBL file's check is ubl.py; what the platform
says back (statuses, documents, the listing of new notes) is read by mirror.py; the users' directory is taxpayers.py.
"""

from decimal import ROUND_HALF_UP, Decimal

from django.conf import settings
from django.core.files.base import ContentFile
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from backoffice.core import actions, sync
from backoffice.core.choices import SyncState
from backoffice.core.conf import tunable
from backoffice.core.models import DocumentSeries
from backoffice.core.platform import client_for
from backoffice.remote.common import to_int
from backoffice.remote.dispatch import DispatchClient, OutboxExportClient
from backoffice.remote.errors import RemoteError

from . import taxpayers, ubl
from .choices import (
    DESPATCH_TYPE_SEVK,
    EDITABLE_STATUSES,
    PROFILE_NUMBERS,
    SENDABLE_STATUSES,
    WORKING_STATUSES,
    DispatchStatus,
    Numbering,
    Profile,
    Source,
)
from .models import DispatchDriver, DispatchLine, DispatchNote

DEFAULTS = {
    "DISPATCH_POLL_DELAY_SECONDS": 5,  # the first status poll after a send; then again while notes still move
    "DISPATCH_POLL_FOLLOW_SECONDS": 120,  # a send's polls follow it this long; after that the cron's minute
    "DISPATCH_POLL_BATCH": 50,  # notes a poll asks about (one status call each: the service has no bulk call)
    "DISPATCH_AWAITING_POLL_SECONDS": 3600,  # a note awaiting the receiver's answer (70) is asked about this often
    "DISPATCH_EXPORT_POLL_SECONDS": 30,
    "DISPATCH_LIST_PAGES": 20,  # pages of new notes one listing run reads (500 a page)
    # The receiving side (inbox.py, replies.py)
    "DISPATCH_ANSWER_DAYS": 7,  # days a receiver has to answer an incoming note: the inbox counts them down
    "DISPATCH_INBOX_SECONDS": 300,  # how often the incoming list and the receipt list are read
    "DISPATCH_INBOX_OVERLAP_SECONDS": 600,  # each read starts this much before where the last one stopped
    "DISPATCH_INBOX_WALK_DAYS": 30,  # once a day the incoming notes of this many days are read again
    "DISPATCH_INBOX_WALK_SECONDS": 86400,
    "DISPATCH_CLOCK_MARGIN_SECONDS": 2,  # endDate this much before now: the platform refuses a later one
}
SERIES_KIND = "dispatch_note"
CENT = Decimal("0.01")


def setting(name):
    return tunable(name, DEFAULTS)


def number_field() -> str:
    """Where the note's number goes in the JSON model: document 3 says despatchAdviceNumber, a public client
    despatchNumber (facts file)."""
    return getattr(settings, "DISPATCH_NUMBER_FIELD", "despatchAdviceNumber")


def reply_prefix() -> str:
    """The reply number's prefix the answer forms offer first (setting DISPATCH_REPLY_PREFIX)."""
    return getattr(settings, "DISPATCH_REPLY_PREFIX", "IRY")


class DispatchError(actions.ActionRefused):
    """A change a rule of document 3 or the note's state refuses; `field` is the form field it belongs to."""


def dispatch_client(company, *, interactive=False) -> DispatchClient:
    client = client_for(company, DispatchClient, interactive=interactive)
    client.number_field = number_field()
    return client


def export_client(company, kind=None) -> OutboxExportClient:
    return client_for(company, OutboxExportClient)


# --- amounts -----------------------------------------------------------------------------------------------
def money(value) -> Decimal:
    return Decimal(value).quantize(CENT, rounding=ROUND_HALF_UP)


def line_figures(quantity, unit_price, vat_rate) -> tuple[Decimal, Decimal]:
    """(amount, VAT) of a line: quantity × unit price, and its VAT, each rounded to the cent."""
    amount = money(Decimal(quantity or 0) * Decimal(unit_price or 0))
    return amount, money(amount * Decimal(vat_rate or 0) / 100)


def apply_totals(note, lines) -> None:
    """The note's totals from its lines: amount before VAT, VAT, and the total with VAT."""
    total = tax = Decimal(0)
    for line in lines:
        line.line_amount, line.vat_amount = line_figures(line.quantity, line.unit_price, line.vat_rate)
        total += line.line_amount
        tax += line.vat_amount
    note.line_count, note.total_amount, note.tax_total, note.payable_amount = len(lines), total, tax, total + tax


# --- create and update -------------------------------------------------------------------------------------
def edit_refusal(note) -> str:
    if note.source == Source.PLATFORM:
        return _("This note was written outside this back office: change it where it was written.")
    if note.source == Source.UBL:
        return _("This note came from a UBL file: upload the corrected file from the note's page.")
    if note.is_busy:
        return _("This note is on its way to the platform; wait until it is there.")
    if note.remote_id and note.remote_status not in EDITABLE_STATUSES:
        return _("Only a draft or a note in error can be changed; this one is “%(status)s”.") % {
            "status": note.get_remote_status_display() or note.remote_status}
    return ""


def _check_reference(note) -> None:
    if note.local_reference_id and DispatchNote.objects.filter(
            company=note.company, local_reference_id=note.local_reference_id).exclude(pk=note.pk).exists():
        raise DispatchError(_("Another dispatch note already has this ERP reference."), field="local_reference_id")


@transaction.atomic
def note_save(note, lines, drivers, *, user=None) -> DispatchNote:
    """Save a new or changed note written in the form with its lines and drivers, and send it (status 0 draft or
    20 send). A new note gets its number now when it comes from a prefix of ours (allocated in this transaction:
    a rollback gives it back) and always a localReferenceId."""
    if note.requested_status not in SENDABLE_STATUSES:
        raise DispatchError(_("A dispatch note is saved as a draft or sent at once."), field="requested_status")
    if note.pk:
        current = DispatchNote.objects.select_for_update().get(pk=note.pk)
        refusal = edit_refusal(current)
        if refusal:
            raise DispatchError(refusal)
        # The number, the numbering and the platform's id never change once given.
        note.despatch_number, note.numbering, note.prefix = current.despatch_number, current.numbering, current.prefix
        # A new update: only its own attempts count (record_push asks the platform first from the second one).
        note.remote_id, note.remote_status = current.remote_id, current.remote_status
        note.attempts = 0 if current.remote_id else current.attempts
        note.local_reference_id = note.local_reference_id or current.local_reference_id
    else:
        note.created_by = user if user is not None and user.is_authenticated else None
        note.source = Source.FORM
        if note.numbering == Numbering.SERIES:
            note.despatch_number = _next_free_number(note)
        elif note.numbering == Numbering.PLATFORM:
            note.despatch_number = ""
    if not lines:
        raise DispatchError(_("Add at least one line."))
    note.local_reference_id = note.local_reference_id or DispatchNote.new_reference()
    _check_reference(note)
    if note.has_carrier:
        drivers = []
    elif not drivers:
        raise DispatchError(_("Give the carrier company, or at least one driver."))
    apply_totals(note, lines)
    note.sync_state, note.last_error, note.last_error_source = SyncState.LOCAL, "", ""
    try:
        with transaction.atomic():
            note.save()
    except IntegrityError:
        raise DispatchError(_("Another dispatch note already has this number."),
                            field="despatch_number" if note.numbering == Numbering.MANUAL else "prefix") from None
    note.lines.exclude(pk__in=[line.pk for line in lines if line.pk]).delete()
    for position, line in enumerate(lines, start=1):
        line.note, line.position = note, position
        line.save()
    note.drivers.all().delete()
    DispatchDriver.objects.bulk_create([DispatchDriver(note=note, position=position, name=d.name, surname=d.surname,
                                                       tckn=d.tckn) for position, d in enumerate(drivers, start=1)])
    sync.record_queue(note)
    return note


def _next_free_number(note) -> str:
    """The series' next number that no note typed by hand has taken (the platform's series skips those too)."""
    while True:
        number = DocumentSeries.allocate(company=note.company, kind=SERIES_KIND, prefix=note.prefix,
                                         year=note.issue_date.year)
        if not DispatchNote.objects.filter(company=note.company, despatch_number=number).exists():
            return number


def ubl_upload(*, company, user, name, data, requested_status, numbering, prefix="", target_alias="",
               local_reference_id="", xslt_code="") -> list[DispatchNote]:
    """Notes uploaded as UBL-TR XML (or a ZIP of several): every file is checked first (ubl.check_upload), and
    nothing is saved unless every one passes. Each becomes a note sent zipped as despatchAdviceZip."""
    if requested_status not in SENDABLE_STATUSES:
        raise DispatchError(_("A dispatch note is saved as a draft or sent at once."), field="requested_status")
    manual = numbering == Numbering.MANUAL
    despatches = ubl.check_upload(name, data, manual_number=manual)
    if any(not despatch.ok for despatch in despatches):
        raise UblRefused(despatches)
    if local_reference_id and len(despatches) > 1:
        raise DispatchError(_("An ERP reference names one note: leave it empty for a ZIP of several notes."),
                            field="local_reference_id")
    ids = [despatch.uuid.lower() for despatch in despatches]
    repeated = {value for value in ids if ids.count(value) > 1} | set(DispatchNote.objects.filter(
        company=company, remote_id__in=ids).values_list("remote_id", flat=True))
    if repeated:  # the platform takes cbc:UUID as the note's id, once per customer
        raise DispatchError(_("A note's cbc:UUID is used once; these are used already: %(ids)s") % {
            "ids": ", ".join(sorted(repeated))}, field="file")
    notes = []
    with transaction.atomic():
        for despatch in despatches:
            alias = _alias_for(despatch.receiver_identifier, target_alias)
            note = DispatchNote(
                company=company, created_by=user if user is not None and user.is_authenticated else None,
                source=Source.UBL, numbering=numbering, requested_status=requested_status, xslt_code=xslt_code,
                prefix=(prefix or "").upper(), local_reference_id=local_reference_id or DispatchNote.new_reference(),
                target_alias=alias)
            _take_despatch(note, despatch)
            _check_reference(note)
            try:
                with transaction.atomic():
                    note.save()
            except IntegrityError:
                raise DispatchError(_("Another dispatch note already has the number %(number)s (%(file)s).") % {
                    "number": despatch.number, "file": despatch.name}) from None
            # named by us: the ERP's reference is any text (a "/" in it would make a folder)
            note.ubl_file.save(f"note-{note.pk}.xml", ContentFile(despatch.xml), save=True)
            _despatch_children(note, despatch)
            sync.record_queue(note)
            notes.append(note)
    return notes


def replace_refusal(note) -> str:
    """Why this note cannot take a corrected UBL file now ("" when it can)."""
    if note.source != Source.UBL:
        return _("Only a note uploaded as a UBL file is corrected by its file.")
    if note.is_busy:
        return _("This note is on its way to the platform; wait until it is there.")
    if note.remote_id and note.remote_status not in EDITABLE_STATUSES:
        return _("Only a draft or a note in error can be changed; this one is “%(status)s”.") % {
            "status": note.get_remote_status_display() or note.remote_status}
    if not note.remote_id and note.sync_state not in (SyncState.LOCAL, SyncState.FAILED):
        return _("This note is on its way to the platform; wait until it is there.")
    return ""


def ubl_replace(note, *, name, data, requested_status) -> DispatchNote:
    """A UBL note that failed or is a draft or in error, corrected by its file (document 3, 4.5 Put (UBL)): checked
    like an upload, keeping the note's id (cbc:UUID) once the platform has it and a number typed in the file; then
    sent again (an update when the platform has the note)."""
    if requested_status not in SENDABLE_STATUSES:
        raise DispatchError(_("A dispatch note is saved as a draft or sent at once."), field="requested_status")
    with transaction.atomic():
        note = DispatchNote.objects.select_for_update().get(pk=note.pk)
        refusal = replace_refusal(note)
        if refusal:
            raise DispatchError(refusal)
        despatches = ubl.check_upload(name, data, manual_number=note.numbering == Numbering.MANUAL)
        if len(despatches) != 1:
            raise DispatchError(_("Give the one corrected XML file of this note."), field="file")
        despatch = despatches[0]
        if not despatch.ok:
            raise UblRefused(despatches)
        if note.remote_id and despatch.uuid.lower() != note.remote_id.lower():
            raise DispatchError(_("The corrected file keeps the note's cbc:UUID %(uuid)s.") % {"uuid": note.remote_id},
                                field="file")
        if note.numbering == Numbering.MANUAL and note.remote_id and despatch.number != note.despatch_number:
            raise DispatchError(_("The corrected file keeps the note's number %(number)s.") % {
                "number": note.despatch_number}, field="file")
        if not note.remote_id and DispatchNote.objects.filter(company=note.company, remote_id=despatch.uuid.lower()
                                                              ).exclude(pk=note.pk).exists():
            raise DispatchError(_("A note's cbc:UUID is used once; these are used already: %(ids)s") % {
                "ids": despatch.uuid}, field="file")
        _take_despatch(note, despatch)
        note.requested_status = requested_status
        note.sync_state, note.last_error, note.last_error_source = SyncState.LOCAL, "", ""
        if note.remote_id:
            note.attempts = 0  # a new update: only its own attempts count
        try:
            with transaction.atomic():
                note.save()
        except IntegrityError:
            raise DispatchError(_("Another dispatch note already has this number."), field="file") from None
        note.ubl_file.save(f"note-{note.pk}.xml", ContentFile(despatch.xml), save=True)
        note.lines.all().delete()
        note.drivers.all().delete()
        _despatch_children(note, despatch)
        sync.record_queue(note)
    return note


def _take_despatch(note, despatch) -> None:
    """What the list and the note's page show of a UBL file."""
    if note.numbering == Numbering.MANUAL:
        note.despatch_number, note.prefix = despatch.number, despatch.number[:3]
    note.profile = despatch.profile if despatch.profile in Profile.values else Profile.TEMELIRSALIYE
    note.issue_date = despatch.issue_date
    note.receiver_identifier, note.receiver_name = despatch.receiver_identifier[:11], despatch.receiver_name[:500]
    note.receiver_city, note.receiver_district = despatch.receiver_city[:100], despatch.receiver_district[:100]
    note.delivery_city, note.delivery_district = despatch.delivery_city[:100], despatch.delivery_district[:100]
    note.delivery_country = despatch.delivery_country[:100]
    note.carrier_title, note.carrier_vkn_tckn = despatch.carrier_title[:250], despatch.carrier_identifier[:11]
    note.plate_number, note.line_count, note.ubl_name = despatch.plate[:20], despatch.line_count, despatch.name[:255]


def _despatch_children(note, despatch) -> None:
    DispatchLine.objects.bulk_create([
        DispatchLine(note=note, position=position, product_name=str(line.get("name") or "")[:250],
                     quantity=line.get("quantity") or 0, unit_code=str(line.get("unit") or "")[:10])
        for position, line in enumerate(despatch.lines, start=1)])
    DispatchDriver.objects.bulk_create([
        DispatchDriver(note=note, position=position, name=first[:100], surname=family[:100], tckn=tckn[:11])
        for position, (first, family, tckn) in enumerate(despatch.drivers, start=1)])


class UblRefused(DispatchError):
    """The upload's files broke the schema or a rule: nothing was saved; `despatches` say what and where."""

    def __init__(self, despatches):
        super().__init__(_("The file does not pass the UBL-TR check; nothing was saved or sent."), field="file")
        self.despatches = despatches


def _alias_for(identifier, typed="") -> str:
    """The mailbox typed when it is one of the receiver's (the generic alias for a non-user), else the receiver's
    only mailbox or the generic alias; refused when it has several and none was typed (document 3, 2.9)."""
    boxes = taxpayers.mailboxes(identifier)
    if typed:
        if (boxes and typed not in boxes) or (not boxes and taxpayers.directory_loaded() and typed != taxpayers.generic_alias()):
            raise DispatchError(_("%(alias)s is not a dispatch mailbox of the receiver %(identifier)s.") % {
                "alias": typed, "identifier": identifier}, field="target_alias")
        return typed
    if len(boxes) == 1:
        return boxes[0]
    if not boxes and taxpayers.directory_loaded():
        return taxpayers.generic_alias()
    if boxes:
        raise DispatchError(_("The receiver %(identifier)s has several dispatch mailboxes: choose one (%(boxes)s).")
                            % {"identifier": identifier, "boxes": ", ".join(boxes)}, field="target_alias")
    raise DispatchError(_("The dispatch-note users' list is not loaded yet: give the mailbox, or load the list "
                          "under Dispatch-note users."), field="target_alias")


# --- the bodies (document 3, 2.9; inner fields from the facts file) ---------------------------------------
def _party(identifier, name, surname, city, district, country) -> dict | None:
    values = {"identificationNumber": identifier, "name": name, "personSurName": surname, "city": city,
              "district": district, "countryName": country}
    return {key: value for key, value in values.items() if value} if identifier or name else None


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
    buyer = _party(note.buyer_identifier, note.buyer_name, note.buyer_surname, note.buyer_city, note.buyer_district,
                   note.buyer_country)
    seller = _party(note.seller_identifier, note.seller_name, note.seller_surname, note.seller_city,
                    note.seller_district, note.seller_country)
    if buyer:
        body["despatchBuyerCustomerInfo"] = buyer
    if seller:
        body["sellerSupplierInfo"] = seller
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


# --- what the platform says back ---------------------------------------------------------------------------
def answer_fields(answer, note=None) -> dict:
    """Model fields from a create, update, status or list answer (envelope fields only when given)."""
    values = {"remote_id": answer.get("id") or (note.remote_id if note else "")}
    if answer.get("despatchAdviceNumber"):
        values["despatch_number"] = answer["despatchAdviceNumber"][:16]
    status = to_int(answer.get("status"))
    if isinstance(status, int):
        values["remote_status"] = status
    if "message" in answer:
        values["status_message"] = str(answer.get("message") or "")
    if "envelopeId" in answer:
        values["envelope_id"] = str(answer.get("envelopeId") or "")[:64]
    if "envelopeStatus" in answer:  # a code, kept as text (never shown as a number: 1000, not 1.000)
        values["envelope_status"] = str(answer.get("envelopeStatus") or "")[:20]
    if "envelopeMessage" in answer:
        values["envelope_message"] = str(answer.get("envelopeMessage") or "")
    return values


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
    status = to_int(answer.get("status"))
    # Only an update that asked to send (20) moves the note out of 0 / 40 by itself.
    if note.requested_status == DispatchStatus.QUEUED and isinstance(status, int) and status not in EDITABLE_STATUSES:
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


def poll_soon(company_id, **options):
    from .mirror import poll_soon as soon  # mirror.py builds on this module

    return soon(company_id, **options)


_series_lane = sync.series_lane("despatch_number", gettext_lazy(
    "Waiting for dispatch note %(previous)s to reach the platform first (its numbers go in order)."))


def note_waits_for(note) -> str:
    """One lane per prefix across jobs for the notes our series numbers (document 3, 2.9; the facts file: a
    series' counter runs on consecutively): N+1 never reaches the platform before N, even when N's push answered
    503 and waits for its retry. A number typed by hand, or given by the platform, waits for nothing."""
    return _series_lane(note) if note.numbering == Numbering.SERIES else ""


def note_push(pk) -> str:
    message = sync.record_push(DispatchNote, pk, send=note_send, reconcile=note_reconcile, waits_for=note_waits_for)
    note = DispatchNote.objects.filter(pk=pk).only("company_id", "remote_status", "sync_state").first()
    if note and note.sync_state == SyncState.SYNCED and note.remote_status in WORKING_STATUSES:
        poll_soon(note.company_id)
    return message


# --- status changes (document 3, 3.3: 0 -> 20 and 40 -> 0, one or many), declared for core.actions -----------
def _poll_after(records):
    poll_soon(records[0].company_id)


def _envelope_gone(records):
    """Back to draft: the envelope of the failed send is history; a new send makes a new one."""
    DispatchNote.objects.filter(pk__in=[record.pk for record in records], remote_status=DispatchStatus.DRAFT).update(
        envelope_id="", envelope_status="", envelope_message="")


def _status_change(name, label, button, source, target, **options):
    return actions.RecordAction(
        name, label, button=button, sources=(source,), leads_to=target, sets_requested=True,
        call=lambda client, note_ids: client.update_status(note_ids, target),
        refused=gettext_lazy("Only notes in status “%(source)s” can be changed to “%(target)s”; these cannot: "
                             "%(numbers)s"),
        done=lambda count: ngettext("%(count)s dispatch note changed to “%(status)s”.",
                                    "%(count)s dispatch notes changed to “%(status)s”.", count) % {
            "count": count, "status": DispatchStatus(target).label}, **options)


NOTE_ACTIONS = actions.ActionSet(
    client=lambda company, model: dispatch_client(company), number="despatch_number", error=DispatchError,
    empty=gettext_lazy("Select at least one dispatch note."),
    busy=gettext_lazy("Another action on these notes is still running; wait for it to finish."),
    status_label=lambda status: DispatchStatus(status).label,
    status_operation=lambda model: "dispatch.outbox_status",
    actions=[
        _status_change("send", gettext_lazy("Send (draft → queued)"), gettext_lazy("Send"), DispatchStatus.DRAFT,
                       DispatchStatus.QUEUED, after=_poll_after, icon="send",
                       # once sent the platform moves it on: any of these shows the change took effect
                       # (40 too: a draft reaches it only through 20)
                       reached=tuple(status for status in DispatchStatus.values if status != DispatchStatus.DRAFT),
                       confirm=gettext_lazy("The selected drafts will be sent: a dispatch note is legally binding "
                                            "once it reaches the tax authority.")),
        _status_change("draft", gettext_lazy("Back to draft (error → draft)"), gettext_lazy("Back to draft"),
                       DispatchStatus.ERROR, DispatchStatus.DRAFT, style="secondary", icon="arrow-counterclockwise",
                       after=_envelope_gone,
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
             "identifier": note.receiver_identifier, "mailbox": note.target_alias or "—", "total": note.payable_amount or Decimal(0),
             "currency": note.currency_code or "TRY"} for note in notes]
