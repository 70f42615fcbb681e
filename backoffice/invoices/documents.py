"""The documents of an invoice on the invoice service (document 1, section 8): its PDF, HTML and UBL, kept once
fetched so that a second view makes no call; and the PDFs of many invoices in one ZIP, fetched in the background
at the full rate the PDF rule allows."""

import io
import time
import zipfile

from django.core.files.base import ContentFile
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from backoffice.core import jobs
from backoffice.core.documents import KeptDocuments
from backoffice.remote.errors import RateLimited, RemoteError

from .choices import DocumentKind
from .models import InvoiceDocument, PdfBundle
from .services import InvoiceError, service, setting


# --- documents: PDF, HTML, UBL (kept once fetched: core.documents) -----------------------------------------
def invoice_document_call(invoice, kind, standard, client):
    """One call of the invoice service (rate-limited: RateLimited when the limiter says wait)."""
    client = client or service(invoice.company, interactive=True)
    if kind == DocumentKind.PDF:
        return client.pdf(invoice.service_kind, invoice.remote_id)
    if kind == DocumentKind.HTML:
        return client.html(invoice.service_kind, invoice.remote_id)
    if invoice.service_kind == "outbox":
        return client.outbox_ubl(invoice.remote_id)
    return client.ubl(invoice.service_kind, invoice.remote_id)


INVOICE_DOCUMENTS = KeptDocuments(InvoiceDocument, owner="invoice", kinds=tuple(DocumentKind.values),
                                  fetch=invoice_document_call,
                                  name=lambda invoice: invoice.invoice_number or invoice.remote_id,
                                  unsent=gettext_lazy("This invoice is not on the platform yet."))


# --- PDF bundles --------------------------------------------------------------------------------------------
def pdf_bundle_request(company, user, invoices) -> PdfBundle:
    invoices = [invoice for invoice in invoices if invoice.remote_id]
    if not invoices:
        raise InvoiceError(_("None of the selected invoices is on the platform yet."))
    limit = int(setting("INVOICE_BUNDLE_MAX"))
    if len(invoices) > limit:
        raise InvoiceError(_("At most %(limit)s invoices go into one ZIP; narrow the selection.") % {"limit": limit})
    with transaction.atomic():
        bundle = PdfBundle.objects.create(company=company, created_by=user, total=len(invoices))
        bundle.invoices.set(invoices)
        jobs.enqueue(pdf_bundle_run, company=company, target=f"invoices.pdfbundle:{bundle.pk}",
                     args=[bundle.pk])
    return bundle


@jobs.job(gettext_lazy("Download invoice PDFs as one ZIP"), name="pdf_bundle")
def pdf_bundle_run(pk) -> str:
    """Fetch the PDFs not kept yet at the full rate the PDF rule allows (a short wait for the next slot is
    waited here; a long one hands the job back to the queue for then), then write the ZIP."""
    bundle = PdfBundle.objects.select_related("company").get(pk=pk)
    if bundle.done:
        return _("Already done.")
    client = service(bundle.company)
    invoices = list(bundle.invoices.order_by("pk"))
    # one query: a run that resumes after a wait for the limit starts at once
    kept = INVOICE_DOCUMENTS.kept_for(invoices, DocumentKind.PDF)
    skipped = {entry["pk"] for entry in bundle.skipped}
    missing = [invoice for invoice in invoices if invoice.pk not in kept and invoice.pk not in skipped]
    done = len(invoices) - len(missing)
    for invoice in missing:
        while True:
            try:
                INVOICE_DOCUMENTS.get(invoice, DocumentKind.PDF, client=client)
                break
            except RateLimited as exc:
                if not exc.local or exc.wait > setting("INVOICE_BUNDLE_SLEEP_SECONDS"):
                    PdfBundle.objects.filter(pk=pk).update(fetched=done)
                    raise jobs.TryLater(max(exc.wait, 1), _("Waiting for the PDF rate limit: %(done)s of %(total)s "
                                                           "fetched.") % {"done": done, "total": len(invoices)})
                time.sleep(exc.wait)
            except RemoteError as exc:
                if not exc.permanent:
                    raise  # the runner tries again; what is kept stays kept
                bundle.skipped.append({"pk": invoice.pk, "invoice": str(invoice), "error": exc.user_message()})
                PdfBundle.objects.filter(pk=pk).update(skipped=bundle.skipped)
                break
        done += 1
        if done % 10 == 0 or done == len(invoices):
            PdfBundle.objects.filter(pk=pk).update(fetched=done)
            jobs.set_progress(int(done * 100 / len(invoices)), _("%(done)s of %(total)s PDFs fetched.")
                              % {"done": done, "total": len(invoices)})
    skipped = {entry["pk"] for entry in bundle.skipped}
    _write_bundle(bundle, [invoice for invoice in invoices if invoice.pk not in skipped])
    if skipped:
        return _("%(count)s PDFs in one ZIP; %(skipped)s left out (the platform refused them).") % {
            "count": len(invoices) - len(skipped), "skipped": len(skipped)}
    return _("%(count)s PDFs in one ZIP.") % {"count": len(invoices)}


def _write_bundle(bundle, invoices) -> None:
    """The ZIP of the kept PDFs (none when every one was refused: the bundle is finished with its reasons)."""
    bundle.finished_at = timezone.now()
    if not invoices:
        bundle.save(update_fields=["finished_at"])
        return
    buffer = io.BytesIO()
    names = set()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for invoice in invoices:
            document = invoice.documents.get(kind=DocumentKind.PDF)
            name = f"{invoice.invoice_number or invoice.remote_id}.pdf"
            if name in names:
                name = f"{invoice.remote_id}.pdf"
            names.add(name)
            with document.file.open("rb") as handle:
                archive.writestr(name, handle.read())
    bundle.fetched = len(invoices)
    bundle.file.save(f"invoices-{bundle.pk}.zip", ContentFile(buffer.getvalue()), save=False)
    bundle.save(update_fields=["file", "fetched", "finished_at"])
