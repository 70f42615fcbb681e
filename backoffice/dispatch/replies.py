"""Answers to incoming notes (document 3, 2.9, 3.3, 4.5): every rule that needs the note's state, the three ways
of answering and how each reaches the platform exactly once.

- Approve or reject, several notes at once: a record action of the notes (core.actions, NOTE_ANSWERS) whose
  call carries the prefix, the reason and the delivery date; a call that may have gone (5xx, timeout) is settled by
  the notes' statuses first: a note no longer awaiting an answer (70) was answered.
- Partial acceptance: a DispatchReply pushed once (sync.record_push); a lost answer is found the same way, by the
  note's status.
- A ReceiptAdvice UBL of the user's: a DispatchReply whose id is the file's UUID, so a lost create is found by
  asking that reply's status.
Status changes of replies (40 -> 0, 0 -> 20) are record actions too (REPLY_ACTIONS).
"""

import re
import uuid
from datetime import timedelta
from decimal import Decimal

from django.core.files.base import ContentFile
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from backoffice.core import actions, sync
from backoffice.core.choices import SyncState
from backoffice.remote.common import to_int
from backoffice.remote.errors import LOCAL, RemoteError

from . import receipt
from .choices import (ANSWER_ERROR_STATUSES, AWAITING_ANSWER, Answer, DispatchStatus, DocumentKind, ReplyStatus,
                      ReplyWay)
from .inbox import answer_of, inbox_client, lines_load
from .models import DispatchReply, IncomingNote, ReplyLine
from .services import DispatchError, poll_soon

PREFIX_RE = re.compile(r"^[A-Z0-9]{3}$")
# The note's status while an answer of each kind is on its way, once it is through, and when it failed.
ANSWERING = {Answer.ACCEPT: DispatchStatus.APPROVING, Answer.REJECT: DispatchStatus.REJECTING,
             Answer.PARTIAL: DispatchStatus.PARTIALLY_ACCEPTING}
# A note in one of these was answered this way (on its way, through, or failed on the tax authority's side). A note
# found answered another way was answered elsewhere: that is no success of an approval or rejection of ours.
APPROVED_STATUSES = (DispatchStatus.APPROVED, DispatchStatus.APPROVING, DispatchStatus.APPROVAL_ERROR,
                     DispatchStatus.AUTO_APPROVED)
REJECTED_STATUSES = (DispatchStatus.REJECTED, DispatchStatus.REJECTING, DispatchStatus.REJECTION_ERROR)


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


def check_delivery_time(moment, note, field="delivered_at"):
    """The goods' actual delivery: not in the future, not before the note was issued."""
    if moment is None:
        raise DispatchError(_("Enter when the goods were delivered."), field=field)
    if moment > timezone.now() + timedelta(minutes=1):
        raise DispatchError(_("The delivery time cannot be in the future."), field=field)
    if note.issue_date and timezone.localtime(moment).date() < note.issue_date:
        raise DispatchError(_("The goods cannot have been delivered before the note was issued (%(date)s).") % {
            "date": note.issue_date.strftime("%d.%m.%Y")}, field=field)
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
                                       "(%(delivered)s).") % {"total": _number(accepted + rejected),
                                                              "delivered": _number(line.quantity)}
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
            return receipt.read_despatch(handle.read()).receiver.identifier
    except (OSError, ValueError):
        return ""


def _number(value) -> str:
    from django.utils.formats import number_format

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
            answer=answer_of((row.accepted, row.rejected) for row in rows),
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
    found = receipt.check_receipt(name, data, manual_number=manual_number)
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
            answer=answer_of((line["received"], line["rejected"]) for line in found.lines),
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


# --- the push (sync.record_push: claimed, reconciled before any resend) -------------------------------------------
def reply_fields(answer, reply=None) -> dict:
    values = {"remote_id": (answer.get("id") or (reply.remote_id if reply else "")).lower()}
    if answer.get("receiptAdviceNumber"):
        values["receipt_number"] = answer["receiptAdviceNumber"][:16]
    status = to_int(answer.get("status"))
    if isinstance(status, int):
        values["remote_status"] = status
    if "message" in answer:
        values["status_message"] = str(answer.get("message") or "")
    for name, field in (("envelopeId", "envelope_id"), ("envelopeStatus", "envelope_status"),
                        ("envelopeMessage", "envelope_message")):
        if name in answer:
            values[field] = str(answer.get(name) or "")[:64 if field != "envelope_message" else None]
    return values


def _ubl_body(reply) -> str:
    with reply.ubl_file.open("rb") as handle:
        return receipt.receipt_zip_base64(f"{reply.uuid}.xml", handle.read())


def reply_send(reply, *, client=None) -> dict:
    client = client or inbox_client(reply.company)
    if reply.way == ReplyWay.UBL:
        options = {"prefix": reply.prefix, "manual_number": reply.manual_number, "status": reply.requested_status}
        answer = (client.reply_update(reply.remote_id, _ubl_body(reply), **options) if reply.remote_id
                  else client.reply_create(_ubl_body(reply), **options))
    elif reply.way == ReplyWay.PARTIAL:
        items = [{"lineId": line.line_id, "acceptedQuantity": line.accepted, "rejectedQuantity": line.rejected,
                  "rejectReason": line.reason or None} for line in reply.lines.all()]
        answer = client.partial_accept(despatch_id=reply.note.remote_id,
                                       delivered_at=platform_moment(reply.delivered_at),
                                       contact=reply.delivery_contact, prefix=reply.prefix, items=items)
    else:
        raise RemoteError(_("This reply is not sent from here."), permanent=True)
    fields = reply_fields(answer, reply)
    fields.setdefault("remote_status", int(reply.requested_status))
    fields.update(status_message="", envelope_id="", envelope_status="", envelope_message="")
    return _took_over(reply, fields)


def _took_over(reply, fields) -> dict:
    """The platform's id for our reply: a row the incoming list made of the same reply before ours had its id (as
    given on the platform) is ours, and goes, so the note shows one answer and the id stays unique."""
    if fields.get("remote_id"):
        DispatchReply.objects.filter(company=reply.company, remote_id=fields["remote_id"],
                                     way=ReplyWay.PLATFORM).exclude(pk=reply.pk).delete()
    return fields


def reply_reconcile(reply, *, client=None) -> dict | None:
    """Before sending again: did an earlier attempt arrive? A UBL reply is asked for by its UUID (its id); a partial
    acceptance by the note's status (no longer 70: answered) and the reply id the list names for it."""
    client = client or inbox_client(reply.company)
    if reply.way == ReplyWay.UBL:
        try:
            answer = client.reply_status(reply.remote_id or reply.uuid)
        except RemoteError as exc:
            if exc.status == 404:
                return None
            raise
        status = to_int(answer.get("status"))
        if reply.remote_id and not (reply.requested_status == ReplyStatus.QUEUED and isinstance(status, int)
                                    and status not in (ReplyStatus.DRAFT, ReplyStatus.ERROR)):
            return None  # an update sent again is harmless unless it already queued the reply
        return _took_over(reply, reply_fields(answer, reply))
    note = client.inbox_status(reply.note.remote_id)
    if to_int(note.get("status")) == AWAITING_ANSWER:
        return None
    listed = _listed_reply(client, reply.note)
    fields = {"remote_status": ReplyStatus.QUEUED}
    if listed:  # else the id is read from the note's reply UBL (inbox.reply_ids_read)
        fields.update(remote_id=listed["receiptAdviceId"].lower(), receipt_number=listed["receiptNumber"][:16])
    return _took_over(reply, fields)


def _listed_reply(client, note) -> dict | None:
    from .inbox import list_end, platform_time

    start = (note.received_at or timezone.now()) - timedelta(days=1)
    page = client.inbox_list(1, 10, despatchNumber=note.despatch_number, startDate=platform_time(start),
                             endDate=platform_time(list_end()))
    return next((item for item in page["items"] if item["id"].lower() == note.remote_id.lower()
                 and item["receiptAdviceId"]), None)


def reply_push(pk) -> str:
    message = sync.record_push(DispatchReply, pk, send=reply_send, reconcile=reply_reconcile)
    reply = DispatchReply.objects.filter(pk=pk).select_related("note").first()
    if reply and reply.sync_state == SyncState.SYNCED:
        _note_follows(reply)
        poll_soon(reply.company_id)
    return message


def _note_follows(reply) -> None:
    """The note's status as the platform sets it for the reply just sent (document 3, 3.3: a draft reply makes it
    61), until the poll reads the platform's own."""
    status = DispatchStatus.APPROVING if reply.remote_status == ReplyStatus.DRAFT else ANSWERING[Answer(reply.answer)]
    IncomingNote.objects.filter(pk=reply.note_id, remote_status__in=[AWAITING_ANSWER, *ANSWER_ERROR_STATUSES,
                                                                     DispatchStatus.APPROVING]).update(
        remote_status=status, updated_at=timezone.now())


# --- approve or reject several notes at once (core.actions on IncomingNote) -------------------------------------
class NoteCalls:
    """What the record actions of incoming notes call: the approval or rejection, and the notes' statuses."""

    def __init__(self, client):
        self.client = client

    def statuses(self, note_ids):
        return [self.client.inbox_status(note_id) for note_id in note_ids]

    def answer(self, note_ids, *, approve, prefix, reason="", delivered_at=None, user=None):
        self.client.approve_reject(note_ids, approve=approve, prefix=prefix, reason=reason,
                                   delivered_at=platform_moment(delivered_at))


def _answered(records, *, approve=True, prefix="", reason="", delivered_at=None, user=None):
    """After the call: a reply per note answered (its id and number come with the list, or from the note's reply
    UBL: inbox.reply_ids_read), then a poll. A reply the incoming list named before this ran (kept as given on the
    platform) is this one: it takes what the user chose rather than a second row being made."""
    reached = APPROVED_STATUSES if approve else REJECTED_STATUSES
    answered = [note for note in records if note.remote_status in reached]
    moment = parse_datetime(delivered_at) if delivered_at else None
    with transaction.atomic():
        for note in answered:
            if note.replies.filter(way=ReplyWay.APPROVE_REJECT).exists():
                continue  # a job run again after this ran
            mine = {"way": ReplyWay.APPROVE_REJECT, "answer": Answer.ACCEPT if approve else Answer.REJECT,
                    "prefix": prefix, "reason": "" if approve else reason, "delivered_at": moment,
                    "created_by_id": user}
            if note.replies.filter(way=ReplyWay.PLATFORM).update(**mine, updated_at=timezone.now()):
                continue
            DispatchReply.objects.create(
                company=note.company, note=note, way=ReplyWay.APPROVE_REJECT,
                answer=Answer.ACCEPT if approve else Answer.REJECT, requested_status=ReplyStatus.QUEUED,
                remote_status=ReplyStatus.QUEUED, sync_state=SyncState.SYNCED, synced_at=timezone.now(),
                remote_id=note.receipt_id, receipt_number=note.receipt_number, prefix=prefix,
                reason="" if approve else reason, delivered_at=moment, created_by_id=user)
    if records:
        poll_soon(records[0].company_id)


def _answer_action(name, approve, label, leads_to, **options):
    return actions.RecordAction(
        name, label, sources=(AWAITING_ANSWER,), leads_to=leads_to, takes_params=True,
        call=lambda client, note_ids, **params: client.answer(note_ids, approve=approve, **params),
        # answered this way (whatever came of it since): the call took effect
        reached=APPROVED_STATUSES if approve else REJECTED_STATUSES,
        refused=gettext_lazy("Only notes awaiting an answer can be answered; these cannot: %(numbers)s"),
        after=lambda records, **params: _answered(records, approve=approve, **params), **options)


NOTE_ANSWERS = actions.ActionSet(
    client=lambda company, model: NoteCalls(inbox_client(company)), number="despatch_number", error=DispatchError,
    empty=gettext_lazy("Select at least one incoming note."),
    busy=gettext_lazy("An answer to these notes is already on its way; wait for it to finish."),
    status_label=lambda status: DispatchStatus(status).label,
    status_operation=lambda model: "dispatch.inbox_status",
    actions=[
        _answer_action("approve", True, gettext_lazy("Accept"), DispatchStatus.APPROVING, done=lambda count: ngettext(
            "%(count)s incoming note accepted.", "%(count)s incoming notes accepted.", count) % {"count": count}),
        _answer_action("reject", False, gettext_lazy("Reject"), DispatchStatus.REJECTING, done=lambda count: ngettext(
            "%(count)s incoming note rejected.", "%(count)s incoming notes rejected.", count) % {"count": count}),
    ])


def answer_request(notes, *, approve, prefix, reason="", delivered_at=None, user=None):
    """Approve or reject these notes (one call to the platform): the rules, then the record action's job."""
    notes = list(notes)
    prefix = check_prefix(prefix)
    reason = (reason or "").strip()
    if not approve and not reason:
        raise DispatchError(_("Give the reason for the rejection: the sender sees it."), field="reason")
    for note in notes:
        if delivered_at is not None:
            check_delivery_time(delivered_at, note)
    params = {"prefix": prefix, "reason": reason, "user": user.pk if user else None,
              "delivered_at": delivered_at.isoformat() if delivered_at else None}
    with transaction.atomic():
        # The notes locked while they are checked and claimed: a partial acceptance or a file saved at the same
        # moment (another tab) waits here and is then refused, and the other way round; never both answers.
        locked = list(IncomingNote.objects.select_for_update().filter(pk__in=[note.pk for note in notes])
                      .order_by("pk"))
        for note in locked:
            refusal = answer_refusal(note)
            if refusal:
                raise DispatchError(f"{note.despatch_number}: {refusal}")
        return actions.action_request(IncomingNote, "approve" if approve else "reject", locked, params=params)


# --- status changes of replies (document 3, 3.3: 40 -> 0, 0 -> 20) ------------------------------------------------
class ReplyCalls:
    def __init__(self, client):
        self.client = client

    def statuses(self, reply_ids):
        return [self.client.reply_status(reply_id) for reply_id in reply_ids]

    def update_status(self, reply_ids, status):
        self.client.reply_update_status(reply_ids, status)


def _reply_sent(records):
    for reply in records:
        _note_follows(reply)
    poll_soon(records[0].company_id)


def _reply_drafted(records):
    """Back to draft: the failed envelope is history; the note is being answered again (61)."""
    pks = [record.pk for record in records]
    DispatchReply.objects.filter(pk__in=pks, remote_status=ReplyStatus.DRAFT).update(
        envelope_id="", envelope_status="", envelope_message="")
    IncomingNote.objects.filter(replies__pk__in=pks, remote_status__in=ANSWER_ERROR_STATUSES).update(
        remote_status=DispatchStatus.APPROVING)


def _reply_change(name, label, button, source, target, **options):
    return actions.RecordAction(
        name, label, button=button, sources=(source,), leads_to=target, sets_requested=True,
        call=lambda client, reply_ids: client.update_status(reply_ids, target),
        refused=gettext_lazy("Only replies in status “%(source)s” can be changed to “%(target)s”; these cannot: "
                             "%(numbers)s"),
        done=lambda count: ngettext("%(count)s reply changed to “%(status)s”.",
                                    "%(count)s replies changed to “%(status)s”.", count) % {
            "count": count, "status": ReplyStatus(target).label}, **options)


REPLY_ACTIONS = actions.ActionSet(
    client=lambda company, model: ReplyCalls(inbox_client(company)), number="receipt_number", error=DispatchError,
    empty=gettext_lazy("Select at least one reply."),
    busy=gettext_lazy("Another action on these replies is still running; wait for it to finish."),
    status_label=lambda status: ReplyStatus(status).label,
    status_operation=lambda model: "dispatch.reply_status",
    actions=[
        _reply_change("reply_send", gettext_lazy("Send the reply (draft → queued)"), gettext_lazy("Send the reply"),
                      ReplyStatus.DRAFT, ReplyStatus.QUEUED, after=_reply_sent, icon="send",
                      reached=tuple(status for status in ReplyStatus.values if status != ReplyStatus.DRAFT),
                      confirm=gettext_lazy("The reply will be sent to the note's sender through the tax authority; "
                                           "it cannot be taken back.")),
        _reply_change("reply_draft", gettext_lazy("Back to draft (error → draft)"), gettext_lazy("Back to draft"),
                      ReplyStatus.ERROR, ReplyStatus.DRAFT, style="secondary", icon="arrow-counterclockwise",
                      after=_reply_drafted,
                      confirm=gettext_lazy("The reply in error becomes a draft; send it again when it is right.")),
    ])


def new_uuid() -> str:
    return str(uuid.uuid4())
