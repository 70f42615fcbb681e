"""Our replies on their way to the platform (document 3, 2.9, 3.3, 4.5), each exactly once:

- Approve or reject, several notes at once: a record action of the notes (core.actions, NOTE_ANSWERS) whose
  call carries the prefix, the reason and the delivery date; a call that may have gone (5xx, timeout) is settled by
  the notes' statuses first: a note no longer awaiting an answer (70) was answered.
- Partial acceptance: a DispatchReply pushed once (sync.record_push); a lost answer is found the same way, by the
  note's status.
- A ReceiptAdvice UBL of the user's: a DispatchReply whose id is the file's UUID, so a lost create is found by
  asking that reply's status.
Status changes of replies (40 -> 0, 0 -> 20) are record actions too (REPLY_ACTIONS). The rules are answers.py's.
"""

from datetime import timedelta

from django.db import transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from backoffice.core import actions, domains, sync
from backoffice.core.choices import SyncState
from backoffice.core.jobs import job
from backoffice.core.payloads import integer
from backoffice.remote.errors import RemoteError

from .answers import answer_refusal, check_delivery_time, check_prefix, platform_moment
from .choices import (
    ANSWER_ERROR_STATUSES,
    AWAITING_ANSWER,
    Answer,
    DispatchError,
    DispatchStatus,
    ReplyStatus,
    ReplyWay,
)
from .mirror import inbox_client, reply_fields
from .models import DispatchReply, IncomingNote
from .polls import polls_soon

dispatch_api = domains.api("dispatch")

# The note's status while an answer of each kind is on its way, once it is through, and when it failed.
ANSWERING = {Answer.ACCEPT: DispatchStatus.APPROVING, Answer.REJECT: DispatchStatus.REJECTING,
             Answer.PARTIAL: DispatchStatus.PARTIALLY_ACCEPTING}
# A note in one of these was answered this way (on its way, through, or failed on the tax authority's side). A note
# found answered another way was answered elsewhere: that is no success of an approval or rejection of ours.
APPROVED_STATUSES = (DispatchStatus.APPROVED, DispatchStatus.APPROVING, DispatchStatus.APPROVAL_ERROR,
                     DispatchStatus.AUTO_APPROVED)
REJECTED_STATUSES = (DispatchStatus.REJECTED, DispatchStatus.REJECTING, DispatchStatus.REJECTION_ERROR)


# --- the push (sync.record_push: claimed, reconciled before any resend) -------------------------------------------
def _ubl_body(reply) -> str:
    with reply.ubl_file.open("rb") as handle:
        return dispatch_api.receipt_zip_base64(f"{reply.uuid}.xml", handle.read())


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
        status = integer(answer.get("status"))
        if reply.remote_id and not (reply.requested_status == ReplyStatus.QUEUED and status is not None
                                    and status not in (ReplyStatus.DRAFT, ReplyStatus.ERROR)):
            return None  # an update sent again is harmless unless it already queued the reply
        return _took_over(reply, reply_fields(answer, reply))
    note = client.inbox_status(reply.note.remote_id)
    if integer(note.get("status")) == AWAITING_ANSWER:
        return None
    listed = _listed_reply(client, reply.note)
    fields = {"remote_status": ReplyStatus.QUEUED}
    if listed:  # else the id is read from the note's reply UBL (polls.reply_ids_read)
        fields.update(remote_id=listed["receiptAdviceId"].lower(), receipt_number=listed["receiptNumber"][:16])
    return _took_over(reply, fields)


def _listed_reply(client, note) -> dict | None:
    start = (note.received_at or timezone.now()) - timedelta(days=1)
    page = client.inbox_list(1, 10, despatchNumber=note.despatch_number, startDate=dispatch_api.platform_time(start),
                             endDate=dispatch_api.platform_time(dispatch_api.list_end()))
    return next((item for item in page["items"] if item["id"].lower() == note.remote_id.lower()
                 and item["receiptAdviceId"]), None)


@job(gettext_lazy("Send dispatch note reply"), name="dispatch_reply_push")
def reply_push(pk) -> str:
    message = sync.record_push(DispatchReply, pk, send=reply_send, reconcile=reply_reconcile)
    reply = DispatchReply.objects.filter(pk=pk).select_related("note").first()
    if reply and reply.sync_state == SyncState.SYNCED:
        _note_follows(reply)
        polls_soon(reply.company_id)
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
    UBL: polls.reply_ids_read), then a poll. A reply the incoming list named before this ran (kept as given on the
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
                company=note.company, note=note, **mine, requested_status=ReplyStatus.QUEUED,
                remote_status=ReplyStatus.QUEUED, sync_state=SyncState.SYNCED, synced_at=timezone.now(),
                remote_id=note.receipt_id, receipt_number=note.receipt_number)
    if records:
        polls_soon(records[0].company_id)


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
    polls_soon(records[0].company_id)


def _reply_drafted(records):
    """Back to draft: the failed envelope is history; the note is being answered again (61)."""
    pks = [record.pk for record in records]
    DispatchReply.objects.filter(pk__in=pks, remote_status=ReplyStatus.DRAFT).update(
        envelope_id="", envelope_status="", envelope_message="")
    IncomingNote.objects.filter(replies__pk__in=pks, remote_status__in=ANSWER_ERROR_STATUSES).update(
        remote_status=DispatchStatus.APPROVING)


REPLY_CHANGE = {
    "refused": gettext_lazy("Only replies in status “%(source)s” can be changed to “%(target)s”; these cannot: "
                            "%(numbers)s"),
    "done": lambda count: ngettext("%(count)s reply changed to “%(status)s”.",
                                   "%(count)s replies changed to “%(status)s”.", count)}


REPLY_ACTIONS = actions.ActionSet(
    client=lambda company, model: ReplyCalls(inbox_client(company)), number="receipt_number", error=DispatchError,
    empty=gettext_lazy("Select at least one reply."),
    busy=gettext_lazy("Another action on these replies is still running; wait for it to finish."),
    status_label=lambda status: ReplyStatus(status).label,
    status_operation=lambda model: "dispatch.reply_status",
    actions=[
        dispatch_api.status_change(
            "reply_send", gettext_lazy("Send the reply (draft → queued)"), gettext_lazy("Send the reply"),
            ReplyStatus.DRAFT, ReplyStatus.QUEUED, **REPLY_CHANGE, after=_reply_sent, icon="send",
            reached=tuple(status for status in ReplyStatus.values if status != ReplyStatus.DRAFT),
            confirm=gettext_lazy("The reply will be sent to the note's sender through the tax authority; "
                                 "it cannot be taken back.")),
        dispatch_api.status_change(
            "reply_draft", gettext_lazy("Back to draft (error → draft)"), gettext_lazy("Back to draft"),
            ReplyStatus.ERROR, ReplyStatus.DRAFT, **REPLY_CHANGE, style="secondary",
            icon="arrow-counterclockwise", after=_reply_drafted,
            confirm=gettext_lazy("The reply in error becomes a draft; send it again when it is right.")),
    ])


# --- what core runs for this domain (read when the app is ready: core.domains) --------------------------------------
sync.register_pushable(DispatchReply, reply_push)
actions.register_actions(IncomingNote, NOTE_ANSWERS)
actions.register_actions(DispatchReply, REPLY_ACTIONS)
