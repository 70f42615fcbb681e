"""The receiving side read back from the platform (document 3, 4.5): incoming notes from their paged list (new ones
since the last run, and the recent past walked again once a day, since an answer may be given elsewhere, e.g. on
the platform's portal), their lines read from their UBL, their documents and our replies' documents; the replies
receivers sent to our outgoing notes (the receipt list), each linked to its note with its lines; and the status
polling of our replies and of the notes they answer."""

import logging
from datetime import datetime, time, timedelta
from decimal import Decimal, InvalidOperation

from django.core.files.base import ContentFile
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime, parse_time
from django.utils.translation import gettext as _

from backoffice.core import resources, sync
from backoffice.core.choices import SyncState
from backoffice.core.platform import client_for
from backoffice.remote.common import to_int, walk_pages
from backoffice.remote.dispatch_inbox import DATE_FORMAT, DispatchInboxClient, InboxExportClient
from backoffice.remote.errors import RateLimited, RemoteError

from . import receipt
from .choices import (ANSWERING_STATUSES, AWAITING_ANSWER, REPLY_WORKING_STATUSES, Answer, DocumentKind, ReplyStatus,
                      ReplyWay)
from .models import (
    DispatchNote,
    DispatchReply,
    InboxSync,
    IncomingDocument,
    IncomingLine,
    IncomingNote,
    ReceivedReply,
    ReceivedReplyLine,
)
from .services import DispatchError, setting

logger = logging.getLogger(__name__)
PAGE_SIZE = 500  # document 3, 8: at most 500 records a call


def inbox_client(company, *, interactive=False) -> DispatchInboxClient:
    return client_for(company, DispatchInboxClient, interactive=interactive)


def inbox_export_client(company, kind=None) -> InboxExportClient:
    return client_for(company, InboxExportClient)


def platform_time(moment) -> str:
    """A query date as the platform writes it (yyyy-MM-dd HH:mm:ss, Turkish time)."""
    return timezone.localtime(moment).strftime(DATE_FORMAT)


def list_end():
    """endDate of a list query: never later than now (document 3, 4.5), with a margin for a platform clock a
    little behind ours; what the margin leaves out is read by the next run's overlap."""
    return timezone.now() - timedelta(seconds=setting("DISPATCH_CLOCK_MARGIN_SECONDS"))


def _moment(value):
    """An aware datetime from the platform's ISO or "yyyy-MM-dd HH:mm:ss" text (naive: Turkish time)."""
    if not value:
        return None
    text = str(value).strip().replace(" ", "T", 1)
    try:
        moment = parse_datetime(text)
        if moment is None:
            day = parse_date(text[:10])
            moment = datetime.combine(day, time.min) if day else None
    except ValueError:
        return None
    if moment is None:
        return None
    return timezone.make_aware(moment) if timezone.is_naive(moment) else moment


def _decimal(value):
    try:
        return Decimal(str(value)) if value not in (None, "") else None
    except InvalidOperation:
        return None


def _time(value):
    try:
        return parse_time(str(value)[:8]) if value else None
    except ValueError:
        return None


def incoming_fields(item) -> tuple[str, dict]:
    """(id, model fields) of an item of the incoming list."""
    status = to_int(item.get("status"))
    fields = {"remote_status": status if isinstance(status, int) else None,
              "despatch_number": item["despatchNumber"][:16], "sender_identifier": item["senderVknTckn"][:11],
              "sender_title": item["senderTitle"][:500], "profile": item["profile"][:20],
              "received_at": _moment(item.get("createdDate")), "issue_date": parse_date(str(item.get("issueDate") or
                                                                                            "")[:10]) or None,
              "issue_time": _time(item.get("issueTime")),
              "line_count": item["lineCount"] if isinstance(item.get("lineCount"), int) else None,
              "payable_amount": _decimal(item.get("payableAmount")), "currency_code": item["currencyCode"][:3]}
    if item["receiptAdviceId"]:  # only when named: a list that never names it does not erase ours
        fields["receipt_id"] = item["receiptAdviceId"][:64]
    if item["receiptNumber"]:
        fields["receipt_number"] = item["receiptNumber"][:16]
    return item["id"].lower(), fields


# --- the incoming list ---------------------------------------------------------------------------------------
def inbox_mirror(*, company, walk=False) -> str:
    """New incoming notes since the last run (with an overlap), or the last DISPATCH_INBOX_WALK_DAYS again once a
    day: statuses change on the platform too (an answer given on its portal, a reply that failed). Then the replies
    received to our outgoing notes."""
    client = inbox_client(company)
    state, _created = InboxSync.objects.get_or_create(company=company)
    now, end = timezone.now(), list_end()
    walk = walk or state.inbox_walked_at is None or (
        now - state.inbox_walked_at).total_seconds() >= setting("DISPATCH_INBOX_WALK_SECONDS")
    if walk or state.inbox_until is None:
        start = now - timedelta(days=setting("DISPATCH_INBOX_WALK_DAYS"))
    else:
        start = state.inbox_until - timedelta(seconds=setting("DISPATCH_INBOX_OVERLAP_SECONDS"))
    pages = walk_pages(lambda index: client.inbox_list(index, PAGE_SIZE, startDate=platform_time(start),
                                                       endDate=platform_time(end), isDesc=False))
    new = read = 0
    newest = state.inbox_until
    for page in sync.pages_with_progress(pages):
        items = [item for item in page["items"] if item["id"]]
        new += resources.mirror_store(IncomingNote, items, company=company, fields_of=incoming_fields)
        read += len(items)
        replies_adopt(company, items)
        for item in items:
            moment = _moment(item.get("createdDate"))
            if moment and (newest is None or moment > newest):
                newest = moment
    InboxSync.objects.filter(pk=state.pk).update(inbox_until=newest or end,
                                                 **({"inbox_walked_at": now} if walk else {}))
    received = receipts_mirror(company=company, client=client)
    return _("%(count)s incoming dispatch note(s) read, %(new)s new; %(received)s new reply(ies) to our notes.") % {
        "count": read, "new": new, "received": received}


ANSWER_OF_STATUS = {60: Answer.ACCEPT, 61: Answer.ACCEPT, 62: Answer.ACCEPT, 65: Answer.ACCEPT, 80: Answer.REJECT,
                    81: Answer.REJECT, 82: Answer.REJECT, 90: Answer.PARTIAL, 91: Answer.PARTIAL, 92: Answer.PARTIAL}


UNSETTLED = (SyncState.LOCAL, SyncState.QUEUED, SyncState.SENDING, SyncState.FAILED)


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
            DispatchReply.objects.create(
                company=company, note=note, way=ReplyWay.PLATFORM, remote_id=reply_id,
                receipt_number=item["receiptNumber"][:16], answer=ANSWER_OF_STATUS.get(note.remote_status,
                                                                                       Answer.ACCEPT),
                # its own status is read by the next poll
                remote_status=ReplyStatus.QUEUED, sync_state=SyncState.SYNCED, synced_at=timezone.now())


# --- lines and documents of an incoming note ----------------------------------------------------------------
def lines_load(note, *, client=None) -> list:
    """The note's lines from its UBL (the list has none), read once: a reply names them by their ids."""
    if note.lines_read_at is not None:
        return list(note.lines.all())
    client = client or inbox_client(note.company, interactive=True)
    content, content_type = client.inbox_ubl(note.remote_id)
    try:
        despatch = receipt.read_despatch(content)
        line_ids = [str(line["line_id"]) for line in despatch.lines]
        if any(not line_id for line_id in line_ids) or len(set(line_ids)) != len(line_ids):
            raise ValueError(_("its lines are not numbered one by one (cbc:ID missing or repeated), so they cannot be "
                               "answered line by line; accept or reject the note as a whole."))
        if any(not fits(line["quantity"]) for line in despatch.lines):
            raise ValueError(_("a delivered quantity is not a number this back office can keep."))
    except ValueError as exc:
        raise DispatchError(_("The note's UBL from the platform cannot be read: %(error)s") % {"error": exc}) from None
    with transaction.atomic():
        locked = IncomingNote.objects.select_for_update().get(pk=note.pk)
        if locked.lines_read_at is None:
            IncomingLine.objects.bulk_create([IncomingLine(
                note=locked, position=index, line_id=str(line["line_id"])[:50], product_name=(line["name"] or "")[:500],
                product_code=(line.get("seller_item_id") or "")[:100], quantity=line["quantity"] or 0,
                unit_code=(line["unit_code"] or "")[:10]) for index, line in enumerate(despatch.lines, start=1)])
            IncomingNote.objects.filter(pk=note.pk).update(lines_read_at=timezone.now(), line_count=len(despatch.lines))
            # the UBL may have been fetched already from the page's document button: that row is kept up to date
            document = IncomingDocument.objects.filter(note=locked, kind=DocumentKind.UBL, standard=True).first()
            if document is None:
                document = IncomingDocument(note=locked, kind=DocumentKind.UBL, standard=True)
            elif document.file:
                document.file.delete(save=False)
            document.status = locked.remote_status
            _keep(document, f"{locked.despatch_number or locked.remote_id}.xml", content,
                  content_type or "application/xml")
    note.refresh_from_db()
    return list(note.lines.all())


MAX_QUANTITY = Decimal(10) ** 12  # the quantity columns: 18 digits, 6 after the point


def fits(value) -> bool:
    """A quantity from a counterparty's UBL that the quantity columns can keep (None: none given, kept as 0)."""
    return value is None or (value.is_finite() and abs(value) < MAX_QUANTITY)


EXTENSIONS = {DocumentKind.PDF: "pdf", DocumentKind.HTML: "html", DocumentKind.UBL: "xml", DocumentKind.ZIP: "zip"}


def _keep(document, name, content, content_type):
    document.content_type = content_type or "application/octet-stream"
    document.file.save(name, ContentFile(content), save=False)
    document.save()
    return document


def _document(owner, record, kind, standard, fetch, name) -> IncomingDocument:
    standard = standard or kind == DocumentKind.UBL  # layout-free (a ZIP takes isStandartXslt: document 3, 4.5)
    document = IncomingDocument.objects.filter(**{owner: record}, kind=kind, standard=standard).first()
    if document and document.status == record.remote_status and document.file:
        return document
    if not record.remote_id:
        raise DispatchError(_("The platform does not have this reply yet."))
    content, content_type = fetch(kind, standard)
    if document is None:
        document = IncomingDocument(**{owner: record}, kind=kind, standard=standard)
    elif document.file:
        document.file.delete(save=False)
    document.status = record.remote_status
    try:
        with transaction.atomic():
            return _keep(document, f"{name}.{EXTENSIONS[DocumentKind(kind)]}", content, content_type)
    except IntegrityError:  # fetched at the same moment in another tab: that one is kept
        document.file.delete(save=False)
        return IncomingDocument.objects.get(**{owner: record}, kind=kind, standard=standard)


def note_document(note, kind, *, standard=True, client=None) -> IncomingDocument:
    """The incoming note's PDF, HTML or UBL, kept once fetched at its status."""
    if kind not in (DocumentKind.PDF, DocumentKind.HTML, DocumentKind.UBL):
        raise DispatchError(_("An incoming note has no %(kind)s document.") % {"kind": kind.upper()})

    def fetch(kind, standard):
        api = client or inbox_client(note.company, interactive=True)
        return {DocumentKind.PDF: lambda: api.inbox_pdf(note.remote_id, standard=standard),
                DocumentKind.HTML: lambda: api.inbox_html(note.remote_id, standard=standard),
                DocumentKind.UBL: lambda: api.inbox_ubl(note.remote_id)}[kind]()

    return _document("note", note, kind, standard, fetch, note.despatch_number or note.remote_id)


def reply_document(reply, kind, *, standard=True, client=None) -> IncomingDocument:
    """Our reply's UBL, PDF, HTML or ZIP, kept once fetched at its status."""

    def fetch(kind, standard):
        api = client or inbox_client(reply.company, interactive=True)
        return {DocumentKind.PDF: lambda: api.reply_pdf(reply.remote_id, standard=standard),
                DocumentKind.HTML: lambda: api.reply_html(reply.remote_id, standard=standard),
                DocumentKind.UBL: lambda: api.reply_ubl(reply.remote_id),
                DocumentKind.ZIP: lambda: api.reply_zip(reply.remote_id, standard=standard)}[kind]()

    return _document("reply", reply, kind, standard, fetch, reply.receipt_number or reply.remote_id)


# --- replies received to our outgoing notes ---------------------------------------------------------------------
def receipts_mirror(*, company, client=None) -> int:
    """The receipt list since the last run: each reply kept, linked to our note (by its id, else its number), its
    lines read from its UBL; the note's status is asked again (a rejection or partial acceptance moves it)."""
    client = client or inbox_client(company)
    state, _created = InboxSync.objects.get_or_create(company=company)
    start = (state.receipts_until - timedelta(seconds=setting("DISPATCH_INBOX_OVERLAP_SECONDS"))
             if state.receipts_until else timezone.now() - timedelta(days=setting("DISPATCH_INBOX_WALK_DAYS")))
    end = list_end()
    pages = walk_pages(lambda index: client.receipt_list(index, PAGE_SIZE, startDate=platform_time(start),
                                                         endDate=platform_time(end), isDesc=False))
    new, newest = [], state.receipts_until
    for page in pages:
        items = [item for item in page["items"] if item["id"]]
        known = set(ReceivedReply.objects.filter(company=company, remote_id__in=[i["id"].lower() for i in items])
                    .values_list("remote_id", flat=True))
        for item in items:
            moment = _moment(item.get("createdDate"))
            newest = moment if moment and (newest is None or moment > newest) else newest
            fields = {"receipt_number": item["receiptNumber"][:16], "despatch_id": item["despatchId"].lower()[:64],
                      "despatch_number": item["despatchNumber"][:16], "received_at": moment,
                      "sender_identifier": item["senderVknTckn"][:11], "sender_title": item["senderTitle"][:500],
                      "remote_status": item["status"] if isinstance(item["status"], int) else None}
            if item["id"].lower() in known:
                ReceivedReply.objects.filter(company=company, remote_id=item["id"].lower()).update(**fields)
            else:
                new.append(ReceivedReply(company=company, remote_id=item["id"].lower(), **fields))
    ReceivedReply.objects.bulk_create(new, ignore_conflicts=True)
    InboxSync.objects.filter(pk=state.pk).update(receipts_until=newest or end)
    _link_receipts(company)
    receipt_lines_load(company=company, client=client)
    return len(new)


def _link_receipts(company) -> None:
    unlinked = list(ReceivedReply.objects.filter(company=company, note__isnull=True)[:1000])
    if not unlinked:
        return
    notes = DispatchNote.objects.filter(company=company).filter(
        Q(remote_id__in=[r.despatch_id for r in unlinked if r.despatch_id])
        | Q(despatch_number__in=[r.despatch_number for r in unlinked if r.despatch_number])).only(
        "pk", "remote_id", "despatch_number")
    by_id = {note.remote_id.lower(): note for note in notes if note.remote_id}
    by_number = {note.despatch_number: note for note in notes if note.despatch_number}
    for reply in unlinked:
        note = by_id.get(reply.despatch_id) or by_number.get(reply.despatch_number)
        if note is not None:
            ReceivedReply.objects.filter(pk=reply.pk).update(note=note, despatch_id=reply.despatch_id or
                                                             note.remote_id.lower())


def receipt_lines_load(*, company, client=None, limit=None) -> int:
    """The lines of received replies not read yet (one UBL each, by our note's id); a reply whose UBL cannot be
    read keeps the reason and is shown without lines."""
    client = client or inbox_client(company)
    pending = list(ReceivedReply.objects.filter(company=company, lines_read_at__isnull=True, note__isnull=False)
                   .select_related("note").order_by("pk")[:limit or int(setting("DISPATCH_POLL_BATCH"))])
    for reply in pending:
        try:
            content, _type = client.receipt_ubl(reply.note.remote_id)
            advice = receipt.read_receipt(content)
            if any(not fits(line["received"]) or not fits(line["rejected"]) for line in advice.lines):
                raise ValueError(_("A quantity of the reply is not a number this back office can keep."))
        except RateLimited:
            raise
        except RemoteError as exc:
            logger.warning("receipt %s of note %s not read: %s", reply.remote_id, reply.note.remote_id, exc)
            continue
        except ValueError as exc:
            ReceivedReply.objects.filter(pk=reply.pk).update(read_error=str(exc)[:2000], lines_read_at=timezone.now())
            continue
        with transaction.atomic():
            ReceivedReplyLine.objects.filter(reply=reply).delete()
            ReceivedReplyLine.objects.bulk_create([ReceivedReplyLine(
                reply=reply, line_id=str(line["line_id"])[:50], product_name=(line["name"] or "")[:500],
                unit_code=(line["unit_code"] or "")[:10], accepted=line["received"] or 0,
                rejected=line["rejected"] or 0, reason=(line["reason"] or "")[:500]) for line in advice.lines])
            ReceivedReply.objects.filter(pk=reply.pk).update(
                lines_read_at=timezone.now(), read_error="",
                answer=answer_of((line["received"], line["rejected"]) for line in advice.lines),
                receipt_number=reply.receipt_number or advice.number[:16])
        _note_status_read(reply.note)
    return len(pending)


def _note_status_read(note) -> None:
    """Our note's status moves with the receiver's answer (80, 90): read once now, as the note is no longer
    polled (60 is where polling stops)."""
    from .services import answer_fields, dispatch_client

    try:
        fields = answer_fields(dispatch_client(note.company).status(note.remote_id), note)
    except RateLimited:
        raise
    except RemoteError as exc:
        logger.warning("status of dispatch note %s not read after its reply: %s", note.remote_id, exc)
        return
    fields.pop("remote_id", None)
    DispatchNote.objects.filter(pk=note.pk, sync_state=SyncState.SYNCED).update(**fields, status_read_at=timezone.now())


def answer_of(quantities) -> str:
    """Acceptance, rejection or partial acceptance, decided by the lines' (received, rejected) quantities."""
    quantities = [(Decimal(received or 0), Decimal(rejected or 0)) for received, rejected in quantities]
    if not any(rejected for _received, rejected in quantities):
        return Answer.ACCEPT
    if not any(received for received, _rejected in quantities):
        return Answer.REJECT
    return Answer.PARTIAL


# --- polling our replies and the notes they answer ---------------------------------------------------------------
def replies_poll(*, company) -> int:
    """One batch of our replies the platform works on (20, 50) and of incoming notes being answered (61, 81, 91):
    their status asked one by one. Returns how many changed."""
    client = inbox_client(company)

    def fetch_replies(records):
        return _each(records, client.reply_status, "reply")

    def settle_reply(record, answer):
        from .replies import reply_fields

        fields = reply_fields(answer, record)
        fields.pop("remote_id", None)
        return {name: value for name, value in fields.items() if getattr(record, name) != value} or None

    reply_ids_read(company=company, client=client)
    changed = sync.records_poll(DispatchReply, company=company,
                                select=Q(remote_status__in=REPLY_WORKING_STATUSES) & ~Q(remote_id=""),
                                fetch_statuses=fetch_replies, settle=settle_reply,
                                batch_size=int(setting("DISPATCH_POLL_BATCH")))

    def fetch_notes(records):
        return _each(records, client.inbox_status, "incoming note")

    def settle_note(record, answer):
        status = to_int(answer.get("status"))
        return {"remote_status": status} if isinstance(status, int) and status != record.remote_status else None

    changed += sync.records_poll(IncomingNote, company=company, select=_answering(), fetch_statuses=fetch_notes,
                                 settle=settle_note, batch_size=int(setting("DISPATCH_POLL_BATCH")))
    return changed


def _each(records, ask, what) -> dict:
    answers = {}
    for record in records:
        try:
            answers[record.remote_id] = ask(record.remote_id)
        except RateLimited:
            raise
        except RemoteError as exc:  # this one goes to the back of the line; the others are still asked
            logger.warning("status of %s %s not read: %s", what, record.remote_id, exc)
    return answers


def _answering() -> Q:
    """Notes the platform is answering. One held at 61 by a draft reply of ours (document 3, 3.3) waits for that
    draft to be sent, not for the platform: not asked about meanwhile."""
    drafts = DispatchReply.objects.filter(note=OuterRef("pk"), sync_state=SyncState.SYNCED,
                                          remote_status=ReplyStatus.DRAFT)
    return Q(remote_status__in=ANSWERING_STATUSES) & ~Q(Exists(drafts))


def reply_ids_read(*, company, client, limit=None) -> int:
    """Our replies that have no id yet: an approval or rejection (its call answers nothing) or a partial acceptance
    found on the platform after a lost answer, when the incoming list names no reply (its item shape is not shown in
    document 3). The note's reply UBL ("Get UBL by inbox despatch") gives the reply's UUID, its id, and number.
    Returns how many got theirs."""
    waiting = list(DispatchReply.objects.filter(company=company, sync_state=SyncState.SYNCED, remote_id="")
                   .exclude(note__remote_status=AWAITING_ANSWER).select_related("note")
                   .order_by("updated_at", "pk")[:limit or int(setting("DISPATCH_POLL_BATCH"))])
    found = 0
    for reply in waiting:
        try:
            content, _type = client.reply_ubl_by_inbox(reply.note.remote_id)
            advice = receipt.read_receipt(content)
        except RateLimited:
            raise
        except (RemoteError, ValueError) as exc:  # asked again on a later poll, after the others
            logger.warning("reply of incoming note %s not read: %s", reply.note.remote_id, exc)
            DispatchReply.objects.filter(pk=reply.pk).update(updated_at=timezone.now())
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


def replies_moving(*, company) -> bool:
    return (DispatchReply.objects.filter(company=company, sync_state=SyncState.SYNCED,
                                         remote_status__in=REPLY_WORKING_STATUSES).exists()
            or IncomingNote.objects.filter(_answering(), company=company, sync_state=SyncState.SYNCED).exists())


def days_left(note, today=None):
    """Days left to answer a note awaiting an answer (DISPATCH_ANSWER_DAYS from its arrival), or None."""
    if note.remote_status != 70 or note.received_at is None:
        return None
    today = today or timezone.localdate()
    due = timezone.localtime(note.received_at).date() + timedelta(days=int(setting("DISPATCH_ANSWER_DAYS")))
    return (due - today).days


__all__ = ["ReplyStatus", "days_left", "inbox_mirror", "lines_load", "note_document", "receipts_mirror",
           "replies_poll", "reply_document"]
