"""What the platform says of outgoing notes, read back: the status polling until a note settles, its documents
(PDF, HTML, UBL, ZIP, kept once fetched) and the listing of new notes (isNew)."""

import logging
from datetime import timedelta

from django.core.files.base import ContentFile
from django.db.models import Q
from django.utils import timezone
from django.utils.dateparse import parse_date
from django.utils.translation import gettext as _

from backoffice.core import jobs, sync
from backoffice.core.choices import SyncState
from backoffice.remote.errors import RateLimited, RemoteError

from .choices import WORKING_STATUSES, DispatchStatus, DocumentKind, Numbering, Source
from .models import DispatchDocument, DispatchNote, OutboxSync
from .services import DispatchError, answer_fields, dispatch_client, setting

logger = logging.getLogger(__name__)


# --- status polling ----------------------------------------------------------------------------------------
def _follow_key(company_id) -> str:
    return f"dispatch:poll-follow:{company_id}"


def poll_soon(company_id, *, delay=None, follow=True):
    """One poll of the company's moving notes (deduplicated); follow: it asks again shortly while notes move,
    for DISPATCH_POLL_FOLLOW_SECONDS (kept in Redis: every worker process sees it)."""
    from .jobs import notes_poll as poll_job

    if follow:
        jobs.flag_set(_follow_key(company_id), setting("DISPATCH_POLL_FOLLOW_SECONDS"))
    delay = setting("DISPATCH_POLL_DELAY_SECONDS") if delay is None else delay
    return jobs.enqueue(poll_job, company=company_id, args=[company_id, follow], delay=delay, join_running=False)


def poll_following(company_id) -> bool:
    return jobs.flag_is_set(_follow_key(company_id))


def _moving(company) -> Q:
    """Notes the platform still works on; those awaiting the receiver (70) only once an hour."""
    awaiting_since = timezone.now() - timedelta(seconds=setting("DISPATCH_AWAITING_POLL_SECONDS"))
    busy = [status for status in WORKING_STATUSES if status != DispatchStatus.AWAITING_APPROVAL]
    return Q(remote_status__in=busy) | Q(remote_status=DispatchStatus.AWAITING_APPROVAL, updated_at__lt=awaiting_since)


def notes_poll(*, company) -> int:
    """Ask the status of one batch of moving notes and keep what the platform says (status, message,
    envelope). Returns how many changed."""
    client = dispatch_client(company)

    def fetch(records):
        answers = {}
        for record in records:
            try:
                answers[record.remote_id] = client.status(record.remote_id)
            except RateLimited:
                raise
            except RemoteError as exc:  # this note goes to the back of the line; the others are still asked
                logger.warning("status of dispatch note %s not read: %s", record.remote_id, exc)
        return answers

    def settle(record, answer):
        fields = answer_fields(answer, record)
        fields.pop("remote_id", None)
        changed = {name: value for name, value in fields.items() if getattr(record, name) != value}
        return changed or None

    return sync.records_poll(DispatchNote, company=company, select=_moving(company), fetch_statuses=fetch,
                             settle=settle, batch_size=int(setting("DISPATCH_POLL_BATCH")))


def notes_waiting(*, company) -> bool:
    """Whether a poll has anything to ask now (the cron's question)."""
    return DispatchNote.objects.filter(_moving(company), company=company, sync_state=SyncState.SYNCED).exists()


def notes_moving(*, company) -> bool:
    busy = [status for status in WORKING_STATUSES if status != DispatchStatus.AWAITING_APPROVAL]
    return DispatchNote.objects.filter(company=company, sync_state=SyncState.SYNCED, remote_status__in=busy).exists()


# --- documents (a download the user waits for: one call, kept at the note's status) --------------------------
EXTENSIONS = {DocumentKind.PDF: "pdf", DocumentKind.HTML: "html", DocumentKind.UBL: "xml", DocumentKind.ZIP: "zip"}


def document_fetch(note, kind, *, standard=True, client=None) -> DispatchDocument:
    standard = standard or kind == DocumentKind.UBL  # layout-free (a ZIP takes isStandartXslt: document 3, 4.5)
    document = note.documents.filter(kind=kind, standard=standard).first()
    if document and document.status == note.remote_status and document.file and (
            note.synced_at is None or document.fetched_at >= note.synced_at):  # not after a later update
        return document
    if not note.remote_id:
        raise DispatchError(_("The platform does not have this note yet."))
    client = client or dispatch_client(note.company, interactive=True)
    if kind == DocumentKind.PDF:
        content, content_type = client.pdf(note.remote_id, standard=standard)
    elif kind == DocumentKind.HTML:
        content, content_type = client.html(note.remote_id, standard=standard)
    elif kind == DocumentKind.UBL:
        content, content_type = client.ubl(note.remote_id)
    else:
        content, content_type = client.zip(note.remote_id, standard=standard)
    name = f"{note.despatch_number or note.remote_id}.{EXTENSIONS[DocumentKind(kind)]}"
    document, _created = DispatchDocument.objects.get_or_create(
        note=note, kind=kind, standard=standard,
        defaults={"content_type": content_type or "application/octet-stream", "status": note.remote_status})
    if document.file:
        document.file.delete(save=False)
    document.content_type, document.status = content_type or "application/octet-stream", note.remote_status
    document.file.save(name, ContentFile(content), save=True)
    return document


# --- the listing of new notes (isNew) -------------------------------------------------------------------------
def _date(value):
    return parse_date(str(value)[:10]) if value else None


def outbox_mirror(*, company) -> int:
    """Read the notes the platform lists as new (written here, or elsewhere such as its portal), keep what it
    says of each, then tell it they were read (isNew false): a later listing does not return them again.
    Returns how many notes were new here."""
    client = dispatch_client(company)
    new = 0
    for _page in range(int(setting("DISPATCH_LIST_PAGES"))):
        page = client.list(1, 500, isNew=True)
        items = [item for item in page["items"] if item["id"]]
        if not items:
            break
        known = {note.remote_id: note for note in DispatchNote.objects.filter(
            company=company, remote_id__in=[item["id"] for item in items])}
        by_reference = {note.local_reference_id: note for note in DispatchNote.objects.filter(
            company=company, remote_id="", local_reference_id__in=[item["localReferenceId"] for item in items
                                                                  if item["localReferenceId"]])}
        created = []
        for item in items:
            fields = answer_fields(item)
            note = known.get(item["id"]) or by_reference.get(item["localReferenceId"])
            if note is not None:
                if note.sync_state == SyncState.SYNCED:  # one on its way is its push's to settle
                    DispatchNote.objects.filter(pk=note.pk).update(**fields, is_new=False,
                                                                   updated_at=timezone.now())
                continue
            created.append(DispatchNote(
                company=company, source=Source.PLATFORM, sync_state=SyncState.SYNCED, synced_at=timezone.now(),
                local_reference_id=item["localReferenceId"][:100], is_new=False,
                receiver_identifier=str(item.get("targetVknTckn") or "")[:11],
                receiver_name=str(item.get("targetTitle") or "")[:500], issue_date=_date(item.get("issueDate")),
                numbering=Numbering.PLATFORM, **fields))
        DispatchNote.objects.bulk_create(created, ignore_conflicts=True)
        new += len(created)
        client.mark_read([item["id"] for item in items])
    OutboxSync.objects.update_or_create(company=company, defaults={"listed_at": timezone.now()})
    return new

