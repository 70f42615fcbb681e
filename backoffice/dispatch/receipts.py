"""The replies receivers sent to our outgoing notes (document 3, 4.5, the receipt list): each kept, linked to our
note by its id (else its number), its lines read from its UBL; our note's status is read again, since a rejection
or a partial acceptance moves it (80, 90). The receipt list is read together with the incoming list (the receiving
side's mirror, which keeps where both lists stand)."""

import logging
from decimal import Decimal

from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _

from backoffice.core.choices import SyncState
from backoffice.core.payloads import integer, moment
from backoffice.core.platform import client_for
from backoffice.remote.common import walk_pages
from backoffice.remote.dispatch_inbox import DispatchInboxClient
from backoffice.remote.errors import RateLimited, RemoteError

from . import receipt
from .choices import Answer
from .models import DispatchNote, ReceivedReply, ReceivedReplyLine
from .services import answer_fields, dispatch_client, list_end, platform_time, setting

logger = logging.getLogger(__name__)
PAGE_SIZE = 500  # document 3, 8: at most 500 records a call
MAX_QUANTITY = Decimal(10) ** 12  # the quantity columns: 18 digits, 6 after the point


def fits(value) -> bool:
    """A quantity from a counterparty's UBL that the quantity columns can keep (None: none given, kept as 0)."""
    return value is None or (value.is_finite() and abs(value) < MAX_QUANTITY)


def receipts_mirror(*, company, start, until=None, client=None) -> tuple[int, object]:
    """The receipt list from `start` (its read so far reached `until`): each reply kept and linked, its lines read.
    Returns (how many were new, where the list is read up to now)."""
    client = client or client_for(company, DispatchInboxClient)
    end = list_end()
    pages = walk_pages(lambda index: client.receipt_list(index, PAGE_SIZE, startDate=platform_time(start),
                                                         endDate=platform_time(end), isDesc=False))
    new, newest = [], until
    for page in pages:
        items = [item for item in page["items"] if item["id"]]
        known = set(ReceivedReply.objects.filter(company=company, remote_id__in=[i["id"].lower() for i in items])
                    .values_list("remote_id", flat=True))
        for item in items:
            received_at = moment(item.get("createdDate"))
            newest = received_at if received_at and (newest is None or received_at > newest) else newest
            fields = {"receipt_number": item["receiptNumber"][:16], "despatch_id": item["despatchId"].lower()[:64],
                      "despatch_number": item["despatchNumber"][:16], "received_at": received_at,
                      "sender_identifier": item["senderVknTckn"][:11], "sender_title": item["senderTitle"][:500],
                      "remote_status": integer(item["status"])}
            if item["id"].lower() in known:
                ReceivedReply.objects.filter(company=company, remote_id=item["id"].lower()).update(**fields)
            else:
                new.append(ReceivedReply(company=company, remote_id=item["id"].lower(), **fields))
    ReceivedReply.objects.bulk_create(new, ignore_conflicts=True)
    _link_receipts(company)
    receipt_lines_load(company=company, client=client)
    return len(new), newest or end


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
    client = client or client_for(company, DispatchInboxClient)
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
                answer=Answer.of((line["received"], line["rejected"]) for line in advice.lines),
                receipt_number=reply.receipt_number or advice.number[:16])
        _note_status_read(reply.note)
    return len(pending)


def _note_status_read(note) -> None:
    """Our note's status moves with the receiver's answer (80, 90): read once now, as the note is no longer
    polled (60 is where polling stops)."""
    try:
        fields = answer_fields(dispatch_client(note.company).status(note.remote_id), note)
    except RateLimited:
        raise
    except RemoteError as exc:
        logger.warning("status of dispatch note %s not read after its reply: %s", note.remote_id, exc)
        return
    fields.pop("remote_id", None)
    DispatchNote.objects.filter(pk=note.pk, sync_state=SyncState.SYNCED).update(**fields, status_read_at=timezone.now())


def answered_lines(note):
    """The note's lines, each with the receiver's answer to it when a reply came (the newest reply): the UBL numbers
    a note's lines 1, 2, ... in their order, which is how the reply names them."""
    lines = list(note.lines.all())
    receipt = note.receipts.order_by("-received_at", "-pk").prefetch_related("lines").first()
    if receipt is None:
        return lines, None, False
    by_id = {line.line_id: line for line in receipt.lines.all()}
    for index, line in enumerate(lines, start=1):
        line.answer = by_id.get(str(index))
    return lines, receipt, bool(by_id)
