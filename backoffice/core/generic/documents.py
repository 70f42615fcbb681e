"""A record's document fetched from the platform while the user waits (a PDF, HTML, UBL or ZIP of an invoice, a
dispatch note, ...): the one place a view calls the client. The domain declares its documents once
(core.documents.KeptDocuments: the kept copy, else one call) and registers this view with one line:

    register_document_view(Invoice, INVOICE_DOCUMENTS, attachment_kinds=(DocumentKind.UBL,),
                           back_label=gettext_lazy("Back to the invoice"), record_label=gettext_lazy("Invoice"))

It shows a PDF in the browser, HTML in a sandboxed frame (srcdoc: the platform's page runs no script and gets no
origin of ours), and hands the rest over as downloads; a refusal, a rate limit or a timeout is a page that says what
to do."""

from django.conf import settings
from django.http import FileResponse, Http404, HttpResponse
from django.shortcuts import get_object_or_404
from django.utils.http import content_disposition_header
from django.utils.translation import gettext as _

from backoffice.remote.errors import NoAnswer, RateLimited, RemoteError

from ..documents import NotOnPlatform
from ..roles import EVERYONE
from .registry import model_url, register_model_view
from .views import BaseObjectView

# What a document of the platform may do in the browser, opened or downloaded: show itself with its own styles,
# nothing else (no script, no origin of ours).
HTML_POLICY = "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:"
PDF = "application/pdf"


def is_pdf(head: bytes) -> bool:
    """A PDF by its bytes (its header lies in the first 1,024 bytes), whatever the record says it is."""
    return b"%PDF-" in head[:1024]


def document_response(content, *, filename, content_type, download):
    """The one way a platform document leaves us (bytes or an open binary file). Only a PDF checked by its bytes is
    shown by the browser without the sandbox (its viewer needs scripts), as a PDF whatever the record says; anything
    else, HTML, XML or a record that says PDF over other bytes, carries the sandbox policy, opened or downloaded, and
    never has its type guessed (nosniff)."""
    if isinstance(content, (bytes, bytearray)):
        head = bytes(content[:1024])
        response = HttpResponse(content, content_type=content_type or "application/octet-stream")
        response["Content-Disposition"] = content_disposition_header(download, filename)
    else:
        head = content.read(1024)
        content.seek(0)
        response = FileResponse(content, as_attachment=download, filename=filename,
                                content_type=content_type or "application/octet-stream")
    if is_pdf(head):  # the bytes decide, not the label: a PDF viewer never runs the file as a page
        response["Content-Type"] = PDF
    else:
        response["Content-Security-Policy"] = HTML_POLICY
    response["X-Content-Type-Options"] = "nosniff"
    return response


class PlatformDocumentView(BaseObjectView):
    documents = None  # the model's KeptDocuments (core.documents)
    kinds: tuple = ()  # the document kinds (values) the URL's <kind> may name; empty: the declaration's
    html_kind = "html"
    attachment_kinds: tuple = ()  # downloaded unless ?view=1 (UBL, ZIP)
    refused: tuple = ()  # the domain's refusals (not on the platform yet, ...): shown with status 409
    back_label = ""  # "Back to the invoice"
    record_label = ""  # "Invoice": the frame's title

    def get_template_names(self):
        return ["generic/platform_document.html"]

    def fetch(self, record, kind, *, standard: bool):
        """The kept document (a model with .file and .content_type), fetched now when not kept."""
        return self.documents.get(record, kind, standard=standard)

    def fetched(self, record, kind, standard):
        """(the document, "", 200), or (None, what to tell the user, the status) when it could not be fetched."""
        try:
            return self.fetch(record, kind, standard=standard), "", 200
        except RateLimited as exc:
            return None, _("The platform allows only so many %(kind)s documents a minute; try again in %(seconds)s "
                           "seconds.") % {"kind": kind.upper(), "seconds": max(1, round(exc.wait))}, 429
        except NoAnswer:
            return None, _("The platform did not answer within %(seconds)s seconds. It may be busy: try again in "
                           "a moment.") % {"seconds": f"{settings.PLATFORM_INTERACTIVE_READ_TIMEOUT:g}"}, 504
        except RemoteError as exc:
            return None, exc.user_message(), 502
        except (NotOnPlatform, *self.refused) as exc:
            return None, str(exc), 409

    def get(self, request, pk, kind):
        record = get_object_or_404(self.get_queryset(), pk=pk)
        if kind not in (self.kinds or self.documents.kinds):
            raise Http404
        standard = request.GET.get("layout") != "company"
        document, error, status = self.fetched(record, kind, standard)
        context = {"object": record, "kind": kind, "standard": standard, "detail_url": model_url(record, "detail"),
                   "back_label": self.back_label, "record_label": self.record_label}
        if error:
            return self.render({**context, "error": error}, status=status)
        name = document.file.name.rsplit("/", 1)[-1]
        if kind == self.html_kind and not request.GET.get("download"):
            with document.file.open("rb") as handle:
                html = handle.read().decode("utf-8", errors="replace")
            response = self.render({**context, "html": html})
            response._csp_update = {"style-src": ["'unsafe-inline'"]}  # the frame's own styles; still no script
            return response
        download = bool(request.GET.get("download")) or kind in self.attachment_kinds and not request.GET.get("view")
        content_type = "application/xml" if kind == "ubl" else document.content_type
        return document_response(document.file.open("rb"), filename=name, content_type=content_type,
                                 download=download)


def register_document_view(model, documents, *mixins, required_roles=EVERYONE, **attributes):
    """The documents page of a model (URL name "<model>_document", /<pk>/document/<kind>/): `mixins` first (its
    section), then PlatformDocumentView with `documents` and `attributes` (attachment_kinds, back_label,
    record_label, refused, ...)."""
    view = type(f"{model.__name__}DocumentView", (*mixins, PlatformDocumentView), {
        "__module__": model.__module__, "model": model, "documents": documents, "required_roles": required_roles,
        **attributes})
    return register_model_view(model, "document", path="<id:pk>/document/<str:kind>/")(view)
