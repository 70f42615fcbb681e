"""The status polls of the receiving side (core.polling): our replies the platform works on (20, 50), and the
incoming notes being answered (61, 81, 91 until 60, 80, 90 or 62, 82, 92). A reply of ours that has no id yet (an
approval or rejection, whose call answers none, or one found after a lost answer when the list names none) is given
its id by the second poll, from the note's reply UBL, before the notes' statuses are asked."""

import logging

from django.db import transaction
from django.db.models import BooleanField, Exists, ExpressionWrapper, OuterRef, Q
from django.utils import timezone
from django.utils.translation import gettext_lazy

from backoffice.core.choices import SyncState
from backoffice.core.payloads import integer
from backoffice.core import domains, polling
from backoffice.core.polling import StatusPoll
from backoffice.remote.errors import RateLimited, RemoteError

from .choices import ANSWERING_STATUSES, AWAITING_ANSWER, REPLY_WORKING_STATUSES, ReplyStatus, ReplyWay
from .mirror import inbox_client, reply_fields
from .models import DispatchReply, IncomingNote

dispatch_api = domains.api("dispatch")

logger = logging.getLogger(__name__)
PACE = {"batch": lambda company: int(dispatch_api.setting("DISPATCH_POLL_BATCH")),
        # an answer is followed every few seconds for a while, then by the cron's minute
        "follow_seconds": lambda: dispatch_api.setting("DISPATCH_POLL_FOLLOW_SECONDS"),
        "follow_delay": lambda: dispatch_api.setting("DISPATCH_POLL_DELAY_SECONDS")}

REPLIES_POLL = StatusPoll(
    name="dispatch_replies_poll", label=gettext_lazy("Ask dispatch note reply statuses"), model=DispatchReply,
    select=lambda: DispatchReply.objects.filter(remote_status__in=REPLY_WORKING_STATUSES),
    fetch=lambda company, replies: polling.ask_each(replies, inbox_client(company).reply_status, "reply"),
    settle=lambda reply, answer: polling.changed_fields(reply, reply_fields(answer, reply)), **PACE)


def _answered_notes():
    """Notes the platform is answering (`answering`), and notes whose reply of ours waits for its id. One held at
    61 by a draft reply of ours (document 3, 3.3) waits for that draft to be sent, not for the platform: its
    status is not asked meanwhile."""
    replies = DispatchReply.objects.filter(note=OuterRef("pk"), sync_state=SyncState.SYNCED)
    answering = Q(remote_status__in=ANSWERING_STATUSES) & ~Q(Exists(replies.filter(remote_status=ReplyStatus.DRAFT)))
    return IncomingNote.objects.annotate(answering=ExpressionWrapper(answering, output_field=BooleanField())).filter(
        answering | (Q(Exists(replies.filter(remote_id=""))) & ~Q(remote_status=AWAITING_ANSWER)))


def _note_statuses(company, notes) -> dict:
    client = inbox_client(company)
    reply_ids_read(company=company, client=client, notes=notes)
    return polling.ask_each([note for note in notes if note.answering], client.inbox_status, "incoming note")


def _note_settled(note, answer):
    status = integer(answer.get("status"))
    return {"remote_status": status} if status is not None and status != note.remote_status else None


ANSWERS_POLL = StatusPoll(
    name="dispatch_answers_poll", label=gettext_lazy("Ask incoming dispatch note statuses"), model=IncomingNote,
    select=_answered_notes, fetch=_note_statuses, settle=_note_settled, **PACE)


def reply_ids_read(*, company, client, notes) -> int:
    """Our replies to these notes that have no id yet: the note's reply UBL ("Get UBL by inbox despatch") gives
    the reply's UUID, its id, and number (the incoming list's items are not shown in document 3 and may name no
    reply). One not read is asked again on a later poll. Returns how many got theirs."""
    waiting = (DispatchReply.objects.filter(note__in=notes, sync_state=SyncState.SYNCED, remote_id="")
               .exclude(note__remote_status=AWAITING_ANSWER).select_related("note").order_by("pk"))
    found = 0
    for reply in waiting:
        try:
            advice = dispatch_api.read_receipt(client.reply_ubl_by_inbox(reply.note.remote_id)[0])
        except RateLimited:
            raise
        except (RemoteError, ValueError) as exc:
            logger.warning("reply of incoming note %s not read: %s", reply.note.remote_id, exc)
            continue
        reply_id = advice.uuid.strip().lower()[:64]
        if not reply_id:
            continue
        with transaction.atomic():
            # a row the list made of the same reply meanwhile is this one
            DispatchReply.objects.filter(company=company, remote_id=reply_id, way=ReplyWay.PLATFORM).exclude(
                pk=reply.pk).delete()
            if DispatchReply.objects.filter(company=company, remote_id=reply_id).exclude(pk=reply.pk).exists():
                continue  # another reply of ours already has it: not this one's
            found += DispatchReply.objects.filter(pk=reply.pk, remote_id="").update(
                remote_id=reply_id, receipt_number=reply.receipt_number or advice.number[:16],
                updated_at=timezone.now())
    return found


def polls_soon(company_id) -> None:
    """After an answer or a reply went: both polls shortly, following the company's records for a while."""
    for poll in (REPLIES_POLL, ANSWERS_POLL):
        polling.poll_soon(poll, company_id)


# Our replies the platform works on, and the notes they answer: polled every minute while they move.
polling.register(REPLIES_POLL, every=60, job_timeout=300)
polling.register(ANSWERS_POLL, every=60, job_timeout=300)
