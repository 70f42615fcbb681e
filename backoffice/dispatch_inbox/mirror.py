"""The receiving side read back from the platform (document 3, 4.5): incoming notes from their paged list (new ones
since the last run, and the recent past walked again once a day, since an answer may be given elsewhere, e.g. on
the platform's portal), the replies the list names for them, and with them the replies receivers sent to our
outgoing notes (the receipt list, kept by dispatch: api.receipts_mirror). Where both lists stand is InboxSync."""

from datetime import timedelta

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from backoffice.core import domains, resources, schedule, sync
from backoffice.core.choices import SyncState
from backoffice.core.jobs import enqueue_per_company, job
from backoffice.core.models import Company
from backoffice.core.payloads import amount, clock, count, day, integer, moment
from backoffice.core.platform import client_for
from backoffice.remote.common import walk_pages
from backoffice.remote.dispatch_inbox import DispatchInboxClient, InboxExportClient

from .choices import AWAITING_ANSWER, Answer, ReplyStatus, ReplyWay
from .conf import setting
from .models import DispatchReply, InboxSync, IncomingNote

dispatch_api = domains.api("dispatch")

PAGE_SIZE = 500  # document 3, 8: at most 500 records a call
# The answer of a reply read from the platform, by the note's status (answered, being answered, failed).
ANSWER_OF_STATUS = {60: Answer.ACCEPT, 61: Answer.ACCEPT, 62: Answer.ACCEPT, 65: Answer.ACCEPT, 80: Answer.REJECT,
                    81: Answer.REJECT, 82: Answer.REJECT, 90: Answer.PARTIAL, 91: Answer.PARTIAL, 92: Answer.PARTIAL}
UNSETTLED = (SyncState.LOCAL, SyncState.QUEUED, SyncState.SENDING, SyncState.FAILED)


def inbox_client(company, *, interactive=False) -> DispatchInboxClient:
    return client_for(company, DispatchInboxClient, interactive=interactive)


def inbox_export_client(company, kind=None) -> InboxExportClient:
    return client_for(company, InboxExportClient)


def incoming_fields(item) -> tuple[str, dict]:
    """(id, model fields) of an item of the incoming list."""
    fields = {"remote_status": integer(item.get("status")), "despatch_number": item["despatchNumber"][:16],
              "sender_identifier": item["senderVknTckn"][:11], "sender_title": item["senderTitle"][:500],
              "profile": item["profile"][:20], "received_at": moment(item.get("createdDate")),
              "issue_date": day(item.get("issueDate")), "issue_time": clock(item.get("issueTime")),
              "line_count": count(item.get("lineCount")), "payable_amount": amount(item.get("payableAmount")),
              "currency_code": item["currencyCode"][:3]}
    if item["receiptAdviceId"]:  # only when named: a list that never names it does not erase ours
        fields["receipt_id"] = item["receiptAdviceId"][:64]
    if item["receiptNumber"]:
        fields["receipt_number"] = item["receiptNumber"][:16]
    return item["id"].lower(), fields


def reply_fields(answer, reply=None) -> dict:
    """Model fields from a reply's create, partial-accept or status answer (its id in small letters: the platform
    may write a GUID in capitals)."""
    fields = dispatch_api.answer_fields(answer, reply, number=("receiptAdviceNumber", "receipt_number"))
    fields["remote_id"] = fields["remote_id"].lower()
    return fields


# --- the incoming list ---------------------------------------------------------------------------------------
@job(gettext_lazy("Read incoming dispatch notes and replies from the platform"), name="dispatch_inbox_mirror")
def inbox_mirror(company_id, walk=False) -> str:
    """New incoming notes since the last run (with an overlap), or the last DISPATCH_INBOX_WALK_DAYS again once a
    day: statuses change on the platform too (an answer given on its portal, a reply that failed). Then the replies
    received to our outgoing notes."""
    company = Company.objects.get(pk=company_id)
    client = inbox_client(company)
    state, _created = InboxSync.objects.get_or_create(company=company)
    now, end = timezone.now(), dispatch_api.list_end()
    walk = walk or state.inbox_walked_at is None or (
        now - state.inbox_walked_at).total_seconds() >= setting("DISPATCH_INBOX_WALK_SECONDS")
    start = _start(state.inbox_until, now, again=walk)
    pages = walk_pages(lambda index: client.inbox_list(index, PAGE_SIZE, startDate=dispatch_api.platform_time(start),
                                                       endDate=dispatch_api.platform_time(end), isDesc=False))
    new = read = 0
    newest = state.inbox_until
    for page in sync.pages_with_progress(pages):
        items = [item for item in page["items"] if item["id"]]
        new += resources.mirror_store(IncomingNote, items, company=company, fields_of=incoming_fields)
        read += len(items)
        replies_adopt(company, items)
        for item in items:
            created = moment(item.get("createdDate"))
            if created and (newest is None or created > newest):
                newest = created
    InboxSync.objects.filter(pk=state.pk).update(inbox_until=newest or end,
                                                 **({"inbox_walked_at": now} if walk else {}))
    received, until = dispatch_api.receipts_mirror(company=company, start=_start(state.receipts_until, now),
                                      until=state.receipts_until, client=client)
    InboxSync.objects.filter(pk=state.pk).update(receipts_until=until)
    return _("%(count)s incoming dispatch note(s) read, %(new)s new; %(received)s new reply(ies) to our notes.") % {
        "count": read, "new": new, "received": received}


def _start(until, now, *, again=False):
    """Where a list's read starts: a little before where the last one stopped, or DISPATCH_INBOX_WALK_DAYS back
    (the first read, or the daily walk again)."""
    if again or until is None:
        return now - timedelta(days=setting("DISPATCH_INBOX_WALK_DAYS"))
    return until - timedelta(seconds=setting("DISPATCH_INBOX_OVERLAP_SECONDS"))


def inbox_mirror_all():
    """Cron: the incoming list and the receipt list of every active company."""
    return enqueue_per_company(inbox_mirror, name=inbox_mirror.job_name)


def replies_adopt(company, items) -> None:
    """The reply the list names for a note: ours waiting for its id (an approval, whose answer has none) takes it;
    one given elsewhere (the platform's portal) is kept as read from the platform. A note with a reply of ours not
    settled yet (queued, being sent, failed: its answer may have been lost) gets nothing here: that reply's own
    push asks the platform before anything is sent again and takes the id then; a second row now would be a
    second answer shown, and a clash when ours takes its id."""
    named = {item["receiptAdviceId"].lower(): item for item in items if item["receiptAdviceId"]}
    if not named:
        return
    known = set(DispatchReply.objects.filter(company=company, remote_id__in=list(named))
                .values_list("remote_id", flat=True))
    missing = {reply_id: item for reply_id, item in named.items() if reply_id not in known}
    if not missing:
        return
    notes = {note.remote_id: note for note in IncomingNote.objects.filter(
        company=company, remote_id__in=[item["id"].lower() for item in missing.values()])}
    for reply_id, item in missing.items():
        note = notes.get(item["id"].lower())
        if note is None:
            continue
        if note.replies.filter(Q(sync_state__in=UNSETTLED) | Q(uuid=reply_id)).exists():
            continue
        waiting = note.replies.filter(remote_id="", sync_state=SyncState.SYNCED).order_by("-pk").first()
        if waiting is not None:
            DispatchReply.objects.filter(pk=waiting.pk).update(remote_id=reply_id,
                                                               receipt_number=item["receiptNumber"][:16])
        else:
            try:
                with transaction.atomic():
                    DispatchReply.objects.create(
                        company=company, note=note, way=ReplyWay.PLATFORM, remote_id=reply_id,
                        receipt_number=item["receiptNumber"][:16], answer=ANSWER_OF_STATUS.get(note.remote_status,
                                                                                               Answer.ACCEPT),
                        # its own status is read by the next poll
                        remote_status=ReplyStatus.QUEUED, sync_state=SyncState.SYNCED, synced_at=timezone.now())
            except IntegrityError:
                # Taken meanwhile by our own reply (its push, or the answers poll reading an approval's id, in
                # another worker since `known` was read): that reply is the one the list names; nothing to add.
                continue


def days_left(note, today=None):
    """Days left to answer a note awaiting an answer (DISPATCH_ANSWER_DAYS from its arrival), or None."""
    if note.remote_status != AWAITING_ANSWER or note.received_at is None:
        return None
    today = today or timezone.localdate()
    due = timezone.localtime(note.received_at).date() + timedelta(days=int(setting("DISPATCH_ANSWER_DAYS")))
    return (due - today).days


# --- what core runs for this domain (read when the app is ready: core.domains) --------------------------------------
# Incoming notes and the replies to ours: read every few minutes (the recent past again once a day).
schedule.register(func=inbox_mirror_all, interval=int(setting("DISPATCH_INBOX_SECONDS")), name="dispatch_inbox",
                  job_timeout=900)
