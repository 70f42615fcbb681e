"""The lines of an incoming note, read once from its UBL (the list carries none; a reply names them by their ids),
and the documents of an incoming note and of our replies (PDF, HTML, UBL, ZIP), each kept once fetched at the
record's status (core.documents)."""

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from backoffice.core import domains
from backoffice.core.documents import KeptDocuments, keep

from .choices import DispatchError, DocumentKind
from .mirror import inbox_client
from .models import IncomingDocument, IncomingLine, IncomingNote

dispatch_api = domains.api("dispatch")


def lines_load(note, *, client=None) -> list:
    """The note's lines from its UBL (the list has none), read once: a reply names them by their ids."""
    if note.lines_read_at is not None:
        return list(note.lines.all())
    client = client or inbox_client(note.company, interactive=True)
    content, content_type = client.inbox_ubl(note.remote_id)
    try:
        despatch = dispatch_api.read_despatch(content)
        line_ids = [str(line["line_id"]) for line in despatch.lines]
        if any(not line_id for line_id in line_ids) or len(set(line_ids)) != len(line_ids):
            raise ValueError(_("its lines are not numbered one by one (cbc:ID missing or repeated), so they cannot be "
                               "answered line by line; accept or reject the note as a whole."))
        if any(not dispatch_api.fits(line["quantity"]) for line in despatch.lines):
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
            # kept as the note's UBL document too (unless the page's document button kept a copy still good)
            keep(locked, DocumentKind.UBL, lambda: (content, content_type or "application/xml"), model=IncomingDocument,
                 owner="note", name=locked.despatch_number or locked.remote_id, standard=True)
    note.refresh_from_db()
    return list(note.lines.all())


def document_call(ubl: str, **layouts):
    """The fetch of a record's documents (core.documents): the client's call `ubl`, or the call of the kind in
    `layouts`, which takes the layout asked for."""
    def fetch(record, kind, standard, client):
        client = client or inbox_client(record.company, interactive=True)
        if kind == DocumentKind.UBL:
            return getattr(client, ubl)(record.remote_id)
        return getattr(client, layouts[kind])(record.remote_id, standard=standard)
    return fetch


NOTE_DOCUMENTS = KeptDocuments(IncomingDocument, owner="note",
                               kinds=(DocumentKind.PDF, DocumentKind.HTML, DocumentKind.UBL),
                               fetch=document_call("inbox_ubl", pdf="inbox_pdf", html="inbox_html"),
                               name=lambda note: note.despatch_number or note.remote_id,
                               unsent=gettext_lazy("The platform does not have this note yet."))
REPLY_DOCUMENTS = KeptDocuments(IncomingDocument, owner="reply", kinds=tuple(DocumentKind.values),
                                fetch=document_call("reply_ubl", pdf="reply_pdf", html="reply_html", zip="reply_zip"),
                                name=lambda reply: reply.receipt_number or reply.remote_id,
                                unsent=gettext_lazy("The platform does not have this reply yet."))
