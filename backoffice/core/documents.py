"""Documents the platform makes of a record (a PDF, HTML, UBL or ZIP of an invoice, a dispatch note, a reply), fetched
once and kept: a second view makes no call (rate limits), and a copy older than the record's status or its last push
is fetched again. Declared once:

    class InvoiceDocument(KeptDocument):          # models.py: the record's key, the kinds, the folder
        invoice = models.ForeignKey(Invoice, on_delete=models.CASCADE, related_name="documents")
        kind = models.CharField(_("kind"), max_length=4, choices=DocumentKind.choices)
        file = models.FileField(_("file"), upload_to="invoices/%Y/%m/")
        standard = None                           # one layout: no column

    INVOICE_DOCUMENTS = KeptDocuments(InvoiceDocument, owner="invoice", kinds=tuple(DocumentKind.values),
                                      fetch=lambda invoice, kind, standard, client: ..., name=...,
                                      unsent=gettext_lazy("This invoice is not on the platform yet."))
    INVOICE_DOCUMENTS.get(invoice, "pdf")         # the kept copy, else one call whose answer is kept

and core.generic.documents.register_document_view(Invoice, INVOICE_DOCUMENTS, ...) gives the page.

The platform's answer is not trusted: its size is bounded (PLATFORM_DOCUMENT_MAX_BYTES, a tunable), and the file's
name is made here from the record's number (letters, digits, '-' and '_' only), never a path the platform gave.
"""

import re
from collections.abc import Callable
from dataclasses import dataclass

from django.core.files.base import ContentFile
from django.db import IntegrityError, models, transaction
from django.db.models import F, Q
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from backoffice.remote.errors import PLATFORM, RemoteError

from .conf import tunable

EXTENSIONS = {"pdf": "pdf", "html": "html", "ubl": "xml", "zip": "zip"}
# One layout whatever is asked: the UBL is the document itself (a ZIP takes isStandartXslt: document 3, 4.5).
LAYOUT_FREE = ("ubl",)
DEFAULT_MAX_BYTES = 50 * 1024 * 1024
NAME_LENGTH = 60  # of the file's stem: the FileField's 100 characters hold the folder too


class DocumentTooLarge(RemoteError):
    """The platform's answer is larger than we keep: permanent (the same answer would come again), shown as the
    platform's failure; nothing is stored."""

    def __init__(self, size: int, limit: int):
        super().__init__(gettext("The platform's document is larger than %(megabytes)s MB; it is not kept.")
                         % {"megabytes": f"{limit / 1024 ** 2:g}"}, permanent=True, source=PLATFORM)
        self.size, self.limit = size, limit


class NotOnPlatform(Exception):
    """The record has no platform id yet, so the platform has no document of it; the message is for the user."""


def max_bytes() -> int:
    return int(tunable("PLATFORM_DOCUMENT_MAX_BYTES", DEFAULT_MAX_BYTES))


class KeptDocument(models.Model):
    """A document of a record as the platform made it at the record's `status`. A concrete model adds its foreign
    key to the record, its `kind` choices and its folder (`file`), and a unique constraint on (record, kind,
    standard); `standard = None` when its platform offers one layout."""

    kind = models.CharField(_("kind"), max_length=4)
    standard = models.BooleanField(_("standard layout"), default=True)
    # Of the record's status when fetched: a document fetched before the record moved on is fetched again.
    status = models.IntegerField(null=True, blank=True)
    file = models.FileField(_("file"), upload_to="documents/%Y/%m/")
    content_type = models.CharField(max_length=100)
    fetched_at = models.DateTimeField(_("fetched"), auto_now=True)

    class Meta:
        abstract = True


def file_name(stem, kind) -> str:
    """The name a kept document is stored under: the record's number (or platform id) with the kind's extension,
    anything but letters, digits, '-' and '_' dropped (no folder, no '..', whatever the platform sent)."""
    stem = re.sub(r"[^A-Za-z0-9_-]+", "-", str(stem or "")).strip("-_")[:NAME_LENGTH] or "document"
    return f"{stem}.{EXTENSIONS.get(kind, 'bin')}"


def still_good(document, record) -> bool:
    """Whether a kept copy shows the record as it is: fetched at its current status, and after its last push."""
    if document is None or not document.file or document.status != record.remote_status:
        return False
    pushed = getattr(record, "synced_at", None)
    return pushed is None or document.fetched_at >= pushed


def keep(record, kind, fetch, *, model, owner, name, standard=None):
    """The kept `kind` document of `record` while it is still good, else the answer of fetch() (called once:
    (bytes, content type)) kept in its place. `model` is the KeptDocument subclass, `owner` its key to the record,
    `name` the file's stem; `standard` the layout when the model has one. Raises DocumentTooLarge (nothing kept)
    for an answer over PLATFORM_DOCUMENT_MAX_BYTES."""
    lookup = {owner: record, "kind": kind, **({} if standard is None else {"standard": standard})}
    document = model.objects.filter(**lookup).first()
    if still_good(document, record):
        return document
    content, content_type = fetch()
    limit = max_bytes()
    if len(content) > limit:
        raise DocumentTooLarge(len(content), limit)
    document = document or model(**lookup)
    old = document.file.name if document.file else ""
    document.status, document.content_type = record.remote_status, content_type or "application/octet-stream"
    try:
        with transaction.atomic():
            document.file.save(file_name(name, kind), ContentFile(content), save=False)
            document.save()
    except IntegrityError:  # fetched at the same moment elsewhere (another tab): that copy is kept
        document.file.delete(save=False)
        return model.objects.get(**lookup)
    if old:  # the row points at the new file only once committed: the old one goes then
        storage = document.file.storage
        transaction.on_commit(lambda: storage.delete(old))
    return document


@dataclass(frozen=True)
class KeptDocuments:
    """The documents a record of one model has on the platform and how one is fetched.

    fetch(record, kind, standard, client) -> (bytes, content type): one call of the platform (client: a client to
    reuse, e.g. a background run's, else None); name(record) -> the file's stem (its number, else its platform
    id); unsent: the refusal when the record has no platform id yet."""

    model: type
    owner: str
    kinds: tuple
    fetch: Callable
    name: Callable
    unsent: str

    @property
    def layouts(self) -> bool:
        """Whether the model keeps a copy per layout (the standard one and the company's)."""
        return any(field.name == "standard" for field in self.model._meta.concrete_fields)

    def get(self, record, kind, *, standard=True, client=None):
        """The record's `kind` document: the kept copy, else one call whose answer is kept."""
        if kind not in self.kinds:
            raise ValueError(f"{self.model.__name__} has no {kind!r} documents")
        layout = (standard or kind in LAYOUT_FREE) if self.layouts else None

        def fetch():
            if not record.remote_id:
                raise NotOnPlatform(str(self.unsent))
            return self.fetch(record, kind, True if layout is None else layout, client)

        return keep(record, kind, fetch, model=self.model, owner=self.owner, name=self.name(record), standard=layout)

    def kept_for(self, records, kind, *, standard=True) -> set:
        """The pks of the records among these whose `kind` copy is still good (still_good for many, one query)."""
        status = Q(status=F(f"{self.owner}__remote_status")) | Q(status__isnull=True,
                                                                  **{f"{self.owner}__remote_status__isnull": True})
        pushed = Q(**{f"{self.owner}__synced_at__isnull": True}) | Q(fetched_at__gte=F(f"{self.owner}__synced_at"))
        layout = {"standard": standard or kind in LAYOUT_FREE} if self.layouts else {}
        return set(self.model.objects.filter(status, pushed, kind=kind, **layout,
                                             **{f"{self.owner}__in": [record.pk for record in records]})
                   .exclude(file="").values_list(f"{self.owner}_id", flat=True))
