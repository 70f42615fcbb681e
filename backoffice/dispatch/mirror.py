"""What the platform says of outgoing notes, read back: the status polling until a note settles (core.polling),
its documents (PDF, HTML, UBL, ZIP, kept once fetched) and the listing of new notes (isNew)."""

from datetime import timedelta

from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy, ngettext

from backoffice.core import polling, schedule
from backoffice.core.choices import SyncState
from backoffice.core.documents import KeptDocuments
from backoffice.core.jobs import enqueue_per_company, job
from backoffice.core.models import Company
from backoffice.core.payloads import day
from backoffice.core.polling import StatusPoll

from .choices import WORKING_STATUSES, DispatchStatus, DocumentKind, Numbering, Source
from .models import DispatchDocument, DispatchNote, OutboxSync
from .services import answer_fields, dispatch_client, setting

# Those the platform still works on; a note awaiting the receiver's answer (70) is asked about less often.
BUSY_STATUSES = [status for status in WORKING_STATUSES if status != DispatchStatus.AWAITING_APPROVAL]


# --- status polling ----------------------------------------------------------------------------------------
def _moving():
    """Notes the platform still works on; those awaiting the receiver (70) only once an hour."""
    awaiting_since = timezone.now() - timedelta(seconds=setting("DISPATCH_AWAITING_POLL_SECONDS"))
    return DispatchNote.objects.filter(Q(remote_status__in=BUSY_STATUSES) | Q(
        remote_status=DispatchStatus.AWAITING_APPROVAL, updated_at__lt=awaiting_since))


NOTES_POLL = StatusPoll(
    name="dispatch_notes_poll", label=gettext_lazy("Ask dispatch note statuses"), model=DispatchNote,
    select=_moving,
    fetch=lambda company, notes: polling.ask_each(notes, dispatch_client(company).status, "dispatch note"),
    settle=lambda note, answer: polling.changed_fields(note, answer_fields(answer, note)),
    batch=lambda company: int(setting("DISPATCH_POLL_BATCH")),
    # a send is followed every few seconds for a while, then by the cron's minute
    follow_seconds=lambda: setting("DISPATCH_POLL_FOLLOW_SECONDS"),
    follow_delay=lambda: setting("DISPATCH_POLL_DELAY_SECONDS"))


# --- documents (a download the user waits for: one call, kept at the note's status: core.documents) -----------
def note_document_call(note, kind, standard, client):
    client = client or dispatch_client(note.company, interactive=True)
    if kind == DocumentKind.UBL:
        return client.ubl(note.remote_id)
    call = {DocumentKind.PDF: client.pdf, DocumentKind.HTML: client.html, DocumentKind.ZIP: client.zip}[kind]
    return call(note.remote_id, standard=standard)


NOTE_DOCUMENTS = KeptDocuments(DispatchDocument, owner="note", kinds=tuple(DocumentKind.values),
                               fetch=note_document_call, name=lambda note: note.despatch_number or note.remote_id,
                               unsent=gettext_lazy("The platform does not have this note yet."))


# --- the listing of new notes (isNew) -------------------------------------------------------------------------
@job(gettext_lazy("Read new dispatch notes from the platform"), name="dispatch_outbox_mirror")
def outbox_mirror(company_id) -> str:
    """Read the notes the platform lists as new (written here, or elsewhere such as its portal), keep what it
    says of each, then tell it they were read (isNew false): a later listing does not return them again."""
    company = Company.objects.get(pk=company_id)
    client = dispatch_client(company)
    new = 0
    for _page in range(int(setting("DISPATCH_LIST_PAGES"))):
        page = client.list(1, 500, isNew=True)
        items = [item for item in page["items"] if item["id"]]
        if not items:
            break
        new += _listed_store(company, items)
        client.mark_read([item["id"] for item in items])
    OutboxSync.objects.update_or_create(company=company, defaults={"listed_at": timezone.now()})
    return ngettext("%(count)s new dispatch note read.", "%(count)s new dispatch notes read.", new) % {"count": new}


def _listed_store(company, items) -> int:
    """One page of the listing kept: a note written here is matched by its id or ERP reference (one on its way is
    its push's to settle); any other is a new note read from the platform. Returns how many were new."""
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
            if note.sync_state == SyncState.SYNCED:
                DispatchNote.objects.filter(pk=note.pk).update(**fields, is_new=False, updated_at=timezone.now())
            continue
        created.append(DispatchNote(
            company=company, source=Source.PLATFORM, sync_state=SyncState.SYNCED, synced_at=timezone.now(),
            local_reference_id=item["localReferenceId"][:100], is_new=False,
            receiver_identifier=str(item.get("targetVknTckn") or "")[:11],
            receiver_name=str(item.get("targetTitle") or "")[:500], issue_date=day(item.get("issueDate")),
            numbering=Numbering.PLATFORM, **fields))
    DispatchNote.objects.bulk_create(created, ignore_conflicts=True)
    return len(created)


def outbox_mirror_all():
    """Cron: the listing of new notes of every active company."""
    return enqueue_per_company(outbox_mirror, name=outbox_mirror.job_name)


# --- what core runs for this domain (read when the app is ready: core.domains) --------------------------------------
# Notes the platform still works on: a poll per company that has some, every minute.
polling.register(NOTES_POLL, every=60, job_timeout=300)
# Notes the platform lists as new (written on its portal, say): read, then marked read (isNew).
schedule.register(func=outbox_mirror_all, interval=3600, name="dispatch_outbox_mirror", job_timeout=600)
