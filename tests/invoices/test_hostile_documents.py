"""Issue 28, documents served inline: only a PDF checked by its bytes is shown without the sandbox; a record that
says PDF over HTML, a UBL opened in the browser or HTML however labelled gets the sandboxing policy and nosniff
(core.generic.documents.document_response, the one way a platform document leaves us)."""

import pytest
from django.core.files.base import ContentFile
from django.urls import reverse

from backoffice.core.choices import SyncState
from backoffice.core.generic.documents import HTML_POLICY, document_response
from backoffice.invoices.choices import DocumentKind, InvoiceStatus, RecordType
from backoffice.invoices.models import Invoice, InvoiceDocument
from tests.tickets.conftest import login

pytestmark = pytest.mark.django_db

SCRIPT = b"<html><body><script>alert(document.cookie)</script></body></html>"
PDF = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"


@pytest.fixture
def web(client, accountant, company):
    return login(client, accountant, company)


@pytest.fixture
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def kept(company, kind, content, content_type):
    invoice = Invoice.objects.create(
        company=company, remote_id="e7d3c3a0-0000-4000-8000-000000000001",
        ettn="e7d3c3a0-0000-4000-8000-000000000001", invoice_number="ABC2026000000001",
        sync_state=SyncState.SYNCED, line_count=1, remote_status=InvoiceStatus.APPROVED,
        record_type=RecordType.EARCHIVE)
    document = InvoiceDocument(invoice=invoice, kind=kind, status=invoice.remote_status, content_type=content_type)
    document.file.save(f"x.{kind}", ContentFile(content), save=True)
    return invoice


def served(web, invoice, kind, query=""):
    response = web.get(reverse("invoices:invoice_document", args=[invoice.pk, kind]) + query)
    assert response.status_code == 200
    return response


@pytest.mark.parametrize("content_type", ["application/pdf", "text/html; charset=utf-8"])
def test_a_record_that_says_pdf_over_html_is_sandboxed_a_real_pdf_is_not(web, company, media, content_type):
    invoice = kept(company, DocumentKind.PDF, SCRIPT, content_type)
    response = served(web, invoice, "pdf")
    assert response["Content-Security-Policy"] == HTML_POLICY
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Content-Disposition"].startswith("inline")
    document = invoice.documents.get()
    document.file.save("x.pdf", ContentFile(PDF), save=True)  # the same record over a real PDF: the browser shows it
    response = served(web, invoice, "pdf")
    assert response["Content-Type"] == "application/pdf"
    assert "sandbox" not in response.get("Content-Security-Policy", "")


def test_a_ubl_opened_in_the_browser_is_sandboxed_as_a_downloaded_html_is(web, company, media):
    ubl = b'<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><script>alert(1)</script></html>'
    invoice = kept(company, DocumentKind.UBL, ubl, "application/xml")
    response = served(web, invoice, "ubl", "?view=1")
    assert response["Content-Disposition"].startswith("inline")
    assert response["Content-Security-Policy"] == HTML_POLICY
    html = InvoiceDocument(invoice=invoice, kind=DocumentKind.HTML, status=invoice.remote_status,
                           content_type="text/html")
    html.file.save("x.html", ContentFile(SCRIPT), save=True)
    response = served(web, invoice, "html", "?download=1")
    assert response["Content-Disposition"].startswith("attachment")
    assert response["Content-Security-Policy"] == HTML_POLICY


@pytest.mark.parametrize("content,content_type,sandboxed", [
    (SCRIPT, "application/pdf", True), (PDF, "application/pdf", False), (PDF, "text/html", False),
    (SCRIPT, "text/html", True)])
def test_bytes_served_inline_as_the_ledgers_previews_are(content, content_type, sandboxed):
    """The part previews (ledger) hand the platform's bytes to the same function."""
    response = document_response(content, filename="preview.pdf", content_type=content_type, download=False)
    assert response["Content-Disposition"] == 'inline; filename="preview.pdf"'
    assert (response.get("Content-Security-Policy") == HTML_POLICY) is sandboxed
    assert response["X-Content-Type-Options"] == "nosniff"
