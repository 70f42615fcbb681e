"""Answers to incoming notes (document 3, 2.9, 3.3, 4.5): every rule that needs the note's state, and the two
answers saved here before they go (replies.py sends them exactly once): a partial acceptance, line by line, and a
ReceiptAdvice UBL of the user's, checked against the note. Several notes approved or rejected at once are a record
action of the notes (replies.NOTE_ANSWERS), checked here too.
"""

import re
from datetime import timedelta
from decimal import Decimal

from django.core.files.base import ContentFile
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.formats import number_format
from django.utils.translation import gettext as _

from backoffice.core import domains, sync
from backoffice.core.choices import SyncState
from backoffice.remote.errors import LOCAL

from .choices import AWAITING_ANSWER, Answer, DispatchError, DispatchStatus, DocumentKind, ReplyStatus, ReplyWay
from .documents import lines_load
from .models import DispatchReply, IncomingNote, ReplyLine

dispatch_api = domains.api("dispatch")

PREFIX_RE = re.compile(r"^[A-Z0-9]{3}$")


class UblReplyRefused(DispatchError):
    """The ReceiptAdvice file did not pass the check; `receipt` holds the findings."""

    def __init__(self, message, receipt_found=None):
        super().__init__(message, field="file")
        self.receipt = receipt_found


# --- rules ---------------------------------------------------------------------------------------------------
def answer_refusal(note) -> str:
    """Why this note cannot be answered now, or "" (document 3, 3.3: a reply answers a note awaiting one)."""
    if note.pending_action:
        return _("An approval or rejection of this note is on its way to the platform.")
    active = note.replies.filter(Q(sync_state__in=[SyncState.LOCAL, SyncState.QUEUED, SyncState.SENDING])
                                 | Q(sync_state=SyncState.SYNCED, remote_status__in=[
                                     ReplyStatus.DRAFT, ReplyStatus.QUEUED, ReplyStatus.DELIVERED])).first()
    if active is not None:
        return _("A reply to this note is already on its way (%(reply)s); wait for it, or change that reply.") % {
            "reply": active.receipt_number or active.get_answer_display()}
    # Failed here rather than refused by the platform: its call may have gone through. Sent again, the platform
    # is asked first; a second answer meanwhile could be a second answer to the sender.
    if note.replies.filter(sync_state=SyncState.FAILED, last_error_source=LOCAL).exists():
        return _("A reply to this note failed after it may have reached the platform; send that reply again (the "
                 "platform is asked first whether it arrived) instead of answering anew.")
    if note.remote_status != AWAITING_ANSWER:
        status = DispatchStatus(note.remote_status).label if note.remote_status in DispatchStatus.values else \
            note.remote_status
        return _("This note is not awaiting an answer (its status is “%(status)s”).") % {"status": status}
    return ""


def check_prefix(prefix) -> str:
    prefix = (prefix or "").strip().upper()
    if not PREFIX_RE.match(prefix):
        raise DispatchError(_("The prefix of the reply number is three capital letters or digits, e.g. IRY."),
                            field="prefix")
    return prefix


def delivery_refusal(moment, notes) -> str:
    """Why the goods cannot have been delivered then ("" when they can): not in the future, not before a note was
    issued."""
    if moment > timezone.now() + timedelta(minutes=1):
        return _("The delivery time cannot be in the future.")
    for note in notes:
        if note.issue_date and timezone.localtime(moment).date() < note.issue_date:
            return _("The goods cannot have been delivered before the note was issued (%(date)s).") % {
                "date": note.issue_date.strftime("%d.%m.%Y")}
    return ""


def check_delivery_time(moment, note, field="delivered_at"):
    """The goods' actual delivery: given, not in the future, not before the note was issued."""
    if moment is None:
        raise DispatchError(_("Enter when the goods were delivered."), field=field)
    if refusal := delivery_refusal(moment, [note]):
        raise DispatchError(refusal, field=field)
    return moment


def line_problems(note_lines, answers) -> dict:
    """{line_id: message} of the answered lines (accepted, rejected, reason) against the delivered quantities."""
    problems = {}
    delivered = {line.line_id: line for line in note_lines}
    for answer in answers:
        line = delivered.get(answer["line_id"])
        accepted, rejected = Decimal(answer.get("accepted") or 0), Decimal(answer.get("rejected") or 0)
        if line is None:
            problems[answer["line_id"]] = _("The note has no line %(line)s.") % {"line": answer["line_id"]}
        elif accepted < 0 or rejected < 0:
            problems[line.line_id] = _("Quantities cannot be negative.")
        elif accepted + rejected > line.quantity:
            problems[line.line_id] = _("Accepted and rejected together (%(total)s) exceed the delivered quantity "
                                       "(%(delivered)s).") % {"total": quantity_shown(accepted + rejected),
                                                              "delivered": quantity_shown(line.quantity)}
        elif rejected > 0 and not (answer.get("reason") or "").strip():
            problems[line.line_id] = _("Give the reason for the rejected quantity.")
    return problems


def platform_moment(moment) -> str | None:
    """A delivery time as both answers send it: Turkish time with its offset, to the second (a platform that
    drops the offset still reads the time the user gave)."""
    if isinstance(moment, str):
        moment = parse_datetime(moment)
    return timezone.localtime(moment).isoformat(timespec="seconds") if moment else None


def party_problems(note, found) -> list[str]:
    """A reply file answers this note from its receiver: the note's sender, the receiver (as the note's UBL names
    it, once read) and the note's date as the note has them. A file written for another note or company is refused."""
    problems = []
    sender = found.supplier.identifier
    if note.sender_identifier and sender and sender != note.sender_identifier:
        problems.append(_("The file names %(file)s as the note's sender (DespatchSupplierParty), but the note came "
                          "from %(note)s.") % {"file": sender, "note": note.sender_identifier})
    receiver = _note_receiver(note)
    if receiver and found.customer.identifier and found.customer.identifier != receiver:
        problems.append(_("The file answers in the name of %(file)s (DeliveryCustomerParty), but the note was sent "
                          "to %(note)s.") % {"file": found.customer.identifier, "note": receiver})
    if note.issue_date and found.despatch_issue_date and found.despatch_issue_date != note.issue_date:
        problems.append(_("The file dates the note %(file)s (DespatchDocumentReference/IssueDate), but the note is "
                          "dated %(note)s.") % {"file": found.despatch_issue_date.strftime("%d.%m.%Y"),
                                                "note": note.issue_date.strftime("%d.%m.%Y")})
    return problems


def _note_receiver(note) -> str:
    """The receiver's VKN or TCKN as the note's own UBL (kept when its lines were read) names it, or ""."""
    document = note.documents.filter(kind=DocumentKind.UBL).exclude(file="").first()
    if document is None:
        return ""
    try:
        with document.file.open("rb") as handle:
            return dispatch_api.read_despatch(handle.read()).receiver.identifier
    except (OSError, ValueError):
        return ""


def quantity_shown(value) -> str:
    """A quantity as a message shows it: in the reader's format, without trailing zeros."""
    return number_format(Decimal(value).normalize(), use_l10n=True, force_grouping=True)


def _locked_note(note) -> IncomingNote:
    """The note, locked for the rest of the transaction: two answers at once (a second tab, Back and resubmit)
    meet here and the second is refused."""
    locked = IncomingNote.objects.select_for_update().get(pk=note.pk)
    refusal = answer_refusal(locked)
    if refusal:
        raise DispatchError(refusal)
    return locked


# --- partial acceptance ------------------------------------------------------------------------------------------
def partial_save(note, *, answers, delivered_at, contact, prefix, user=None) -> DispatchReply:
    """answers: [{line_id, accepted, rejected, reason}] for the note's lines (a line not named is accepted whole).
    Checked, saved with its lines and queued in one transaction: nothing half-saved."""
    prefix = check_prefix(prefix)
    contact = (contact or "").strip()
    if not contact:
        raise DispatchError(_("Enter who received the goods."), field="delivery_contact")
    check_delivery_time(delivered_at, note)
    note_lines = lines_load(note)
    problems = line_problems(note_lines, answers)
    if problems:
        error = DispatchError(_("Check the lines: %(problems)s") % {"problems": "; ".join(
            f"{line_id}: {message}" for line_id, message in problems.items())}, field="lines")
        error.lines = problems
        raise error
    given = {answer["line_id"]: answer for answer in answers}
    rows = []
    for line in note_lines:
        answer = given.get(line.line_id)
        accepted = Decimal(answer.get("accepted") or 0) if answer else line.quantity
        rejected = Decimal(answer.get("rejected") or 0) if answer else Decimal(0)
        rows.append(ReplyLine(line_id=line.line_id, product_name=line.product_name, unit_code=line.unit_code,
                              delivered=line.quantity, accepted=accepted, rejected=rejected,
                              reason=((answer or {}).get("reason") or "").strip()[:500] if rejected else ""))
    with transaction.atomic():
        locked = _locked_note(note)
        reply = DispatchReply.objects.create(
            company=locked.company, note=locked, way=ReplyWay.PARTIAL,
            answer=Answer.of((row.accepted, row.rejected) for row in rows),
            requested_status=ReplyStatus.QUEUED, prefix=prefix, delivered_at=delivered_at, delivery_contact=contact,
            created_by=user)
        for row in rows:
            row.reply = reply
        ReplyLine.objects.bulk_create(rows)
        sync.record_queue(reply)
    return reply


# --- a ReceiptAdvice file ---------------------------------------------------------------------------------------
def ubl_reply(note, *, name, data, requested_status, manual_number, prefix="", user=None) -> DispatchReply:
    """The user's own ReceiptAdvice: checked (schema, UBL-TR rules, and against the note: its number, its lines,
    the delivered quantities) before anything is saved."""
    if int(requested_status) not in (ReplyStatus.DRAFT, ReplyStatus.QUEUED):
        raise DispatchError(_("A reply is saved as a draft or sent at once."), field="requested_status")
    if not manual_number:
        prefix = check_prefix(prefix)
    found = dispatch_api.check_receipt(name, data, manual_number=manual_number)
    if not found.ok:
        raise UblReplyRefused(_("The file did not pass the check; nothing was saved."), found)
    if found.despatch_number not in (note.despatch_number, note.remote_id) and \
            found.despatch_number.lower() != note.remote_id.lower():
        raise DispatchError(_("The file answers note %(file)s, not this one (%(note)s).") % {
            "file": found.despatch_number or "?", "note": note.despatch_number}, field="file")
    parties = party_problems(note, found)
    if parties:
        raise DispatchError(" ".join(parties), field="file")
    problems = line_problems(lines_load(note), [{"line_id": line["line_id"], "accepted": line["received"],
                                                 "rejected": line["rejected"], "reason": line["reason"]}
                                                for line in found.lines])
    if problems:
        raise DispatchError(_("The file's lines do not fit the note: %(problems)s") % {"problems": "; ".join(
            f"{line_id}: {message}" for line_id, message in problems.items())}, field="file")
    if DispatchReply.objects.filter(company=note.company, uuid__iexact=found.uuid).exists():
        raise DispatchError(_("A reply with this file's UUID (%(uuid)s) was already sent; a new reply needs a new "
                              "UUID.") % {"uuid": found.uuid}, field="file")
    delivered = {line.line_id: line for line in note.lines.all()}
    with transaction.atomic():
        locked = _locked_note(note)
        reply = DispatchReply(
            company=locked.company, note=locked, way=ReplyWay.UBL,
            answer=Answer.of((line["received"], line["rejected"]) for line in found.lines),
            requested_status=int(requested_status), uuid=found.uuid.lower(), manual_number=bool(manual_number),
            receipt_number=found.number if manual_number else "", prefix="" if manual_number else prefix,
            ubl_name=name[:255], created_by=user)
        reply.ubl_file.save(f"{found.uuid.lower()}.xml", ContentFile(found.xml), save=False)
        reply.save()
        ReplyLine.objects.bulk_create([ReplyLine(
            reply=reply, line_id=line["line_id"], unit_code=(line["unit_code"] or "")[:10],
            product_name=getattr(delivered.get(line["line_id"]), "product_name", ""),
            delivered=getattr(delivered.get(line["line_id"]), "quantity", None), accepted=line["received"] or 0,
            rejected=line["rejected"] or 0, reason=(line["reason"] or "")[:500]) for line in found.lines])
        sync.record_queue(reply)
    return reply
