"""Outgoing dispatch notes: every rule of document 3 (2.9, 3.3, 4.5) that needs the database or the note's state
when a note is written (the form, UBL files, a corrected file), the dispatch service's clients and tunables, and what
the platform's answers say of a note. Field rules are on the forms (forms.py); the UBL file's check is ubl.py; the
bodies, the push (exactly once) and the status changes are push.py; what the platform says back (statuses,
documents, the listing of new notes) is read by mirror.py; the users' directory is taxpayers.py.
"""

from datetime import timedelta
from decimal import Decimal

from django.conf import settings
from django.core.files.base import ContentFile
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from backoffice.core import actions, sync
from backoffice.core.choices import SyncState
from backoffice.core.conf import tunable
from backoffice.core.models import DocumentSeries
from backoffice.core.payloads import integer, money
from backoffice.core.platform import client_for
from backoffice.remote.dispatch import DATE_FORMAT, DispatchClient, OutboxExportClient

from . import taxpayers, ubl
from .choices import EDITABLE_STATUSES, SENDABLE_STATUSES, Numbering, Profile, Source
from .models import DispatchDriver, DispatchLine, DispatchNote

DEFAULTS = {
    "DISPATCH_POLL_DELAY_SECONDS": 5,  # the first status poll after a send; then again while notes still move
    "DISPATCH_POLL_FOLLOW_SECONDS": 120,  # a send's polls follow it this long; after that the cron's minute
    "DISPATCH_POLL_BATCH": 50,  # records a poll asks about (one status call each: the service has no bulk call)
    "DISPATCH_AWAITING_POLL_SECONDS": 3600,  # a note awaiting the receiver's answer (70) is asked about this often
    "DISPATCH_EXPORT_POLL_SECONDS": 30,
    "DISPATCH_LIST_PAGES": 20,  # pages of new notes one listing run reads (500 a page)
    "DISPATCH_CLOCK_MARGIN_SECONDS": 2,  # a list's endDate this much before now: the platform refuses a later one
}
SERIES_KIND = "dispatch_note"


def setting(name):
    return tunable(name, DEFAULTS)


def number_field() -> str:
    """Where the note's number goes in the JSON model: document 3 says despatchAdviceNumber, a public client
    despatchNumber (facts file)."""
    return getattr(settings, "DISPATCH_NUMBER_FIELD", "despatchAdviceNumber")


class DispatchError(actions.ActionRefused):
    """A change a rule of document 3 or the note's state refuses; `field` is the form field it belongs to."""


def dispatch_client(company, *, interactive=False) -> DispatchClient:
    client = client_for(company, DispatchClient, interactive=interactive)
    client.number_field = number_field()
    return client


def export_client(company, kind=None) -> OutboxExportClient:
    return client_for(company, OutboxExportClient)


def platform_time(moment) -> str:
    """A list query's date as the platform writes it (yyyy-MM-dd HH:mm:ss, Turkish time)."""
    return timezone.localtime(moment).strftime(DATE_FORMAT)


def list_end():
    """endDate of a list query: never later than now (document 3, 4.5), with a margin for a platform clock a
    little behind ours; what the margin leaves out is read by the next run's overlap."""
    return timezone.now() - timedelta(seconds=setting("DISPATCH_CLOCK_MARGIN_SECONDS"))


# --- amounts -----------------------------------------------------------------------------------------------
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
    return _state_refusal(note)


def _state_refusal(note) -> str:
    """Why the note's state refuses a change, by the form or by a corrected file ("" when it allows one)."""
    if note.is_busy:
        return _("This note is on its way to the platform; wait until it is there.")
    if note.remote_id and note.remote_status not in EDITABLE_STATUSES:
        return _("Only a draft or a note in error can be changed; this one is “%(status)s”.") % {
            "status": note.get_remote_status_display() or note.remote_status}
    return ""


def _check_sendable(requested_status) -> None:
    if requested_status not in SENDABLE_STATUSES:
        raise DispatchError(_("A dispatch note is saved as a draft or sent at once."), field="requested_status")


def _check_reference(note) -> None:
    if note.local_reference_id and DispatchNote.objects.filter(
            company=note.company, local_reference_id=note.local_reference_id).exclude(pk=note.pk).exists():
        raise DispatchError(_("Another dispatch note already has this ERP reference."), field="local_reference_id")


@transaction.atomic
def note_save(note, lines, drivers, *, user=None) -> DispatchNote:
    """Save a new or changed note written in the form with its lines and drivers, and send it (status 0 draft or
    20 send). A new note gets its number now when it comes from a prefix of ours (allocated in this transaction:
    a rollback gives it back) and always a localReferenceId."""
    _check_sendable(note.requested_status)
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
    _check_sendable(requested_status)
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
            _despatch_save(note, despatch, DispatchError(_(
                "Another dispatch note already has the number %(number)s (%(file)s).") % {
                "number": despatch.number, "file": despatch.name}))
            notes.append(note)
    return notes


def replace_refusal(note) -> str:
    """Why this note cannot take a corrected UBL file now ("" when it can)."""
    if note.source != Source.UBL:
        return _("Only a note uploaded as a UBL file is corrected by its file.")
    if refusal := _state_refusal(note):
        return refusal
    if not note.remote_id and note.sync_state not in (SyncState.LOCAL, SyncState.FAILED):
        return _("This note is on its way to the platform; wait until it is there.")
    return ""


def ubl_replace(note, *, name, data, requested_status) -> DispatchNote:
    """A UBL note that failed or is a draft or in error, corrected by its file (document 3, 4.5 Put (UBL)): checked
    like an upload, keeping the note's id (cbc:UUID) once the platform has it and a number typed in the file; then
    sent again (an update when the platform has the note)."""
    _check_sendable(requested_status)
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
        _despatch_save(note, despatch, DispatchError(_("Another dispatch note already has this number."),
                                                     field="file"))
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


def _despatch_save(note, despatch, taken: DispatchError) -> None:
    """The note of a UBL file saved with the file, its lines and drivers (in place of any it had), and queued;
    `taken` is raised when another note has its number."""
    try:
        with transaction.atomic():
            note.save()
    except IntegrityError:
        raise taken from None
    # named by us: the ERP's reference is any text (a "/" in it would make a folder)
    note.ubl_file.save(f"note-{note.pk}.xml", ContentFile(despatch.xml), save=True)
    note.lines.all().delete()
    note.drivers.all().delete()
    DispatchLine.objects.bulk_create([
        DispatchLine(note=note, position=position, product_name=str(line.get("name") or "")[:250],
                     quantity=line.get("quantity") or 0, unit_code=str(line.get("unit") or "")[:10])
        for position, line in enumerate(despatch.lines, start=1)])
    DispatchDriver.objects.bulk_create([
        DispatchDriver(note=note, position=position, name=first[:100], surname=family[:100], tckn=tckn[:11])
        for position, (first, family, tckn) in enumerate(despatch.drivers, start=1)])
    sync.record_queue(note)


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
        if (boxes and typed not in boxes) or (
                not boxes and taxpayers.directory_loaded() and typed != taxpayers.generic_alias()):
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


# --- what the platform says back ---------------------------------------------------------------------------
def answer_fields(answer, record=None, *, number=("despatchAdviceNumber", "despatch_number")) -> dict:
    """Model fields from a create, update, status or list answer of a note, or of a reply (number: the answer's
    member of the number and the field it goes to); envelope fields only when given."""
    values = {"remote_id": answer.get("id") or (record.remote_id if record else "")}
    if answer.get(number[0]):
        values[number[1]] = answer[number[0]][:16]
    status = integer(answer.get("status"))
    if status is not None:
        values["remote_status"] = status
    # envelopeStatus is a code, kept as text (never shown as a number: 1000, not 1.000)
    for member, name, length in (("message", "status_message", None), ("envelopeId", "envelope_id", 64),
                                 ("envelopeStatus", "envelope_status", 20),
                                 ("envelopeMessage", "envelope_message", None)):
        if member in answer:
            values[name] = str(answer.get(member) or "")[:length]
    return values
