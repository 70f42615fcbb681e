"""Invoice service: the status and document operations of document 1, section 8 (all rate-limited).

Documents come back as (file bytes, content type), unwrapped from the platform's Response object.
"""

from .common import check_page_size
from .documents import unwrap


def _doc_params(invoice_id, is_standart_xslt):
    return {"id": invoice_id, "isStandartXslt": is_standart_xslt}


class InvoicesClient:
    def __init__(self, transport):
        self.transport = transport

    def _document(self, operation, **kwargs):
        return unwrap(*self.transport.call(operation, raw=True, **kwargs))

    # Status query rule (100 per 180 minutes at T1).
    def outbox_status(self, invoice_id):
        return self.transport.call("invoice.outbox_status", path_params={"id": invoice_id})

    def outbox_status_list(self, invoice_ids):
        """Statuses of several outgoing invoices in one call (body: array of ids)."""
        return self.transport.call("invoice.outbox_status_list", json=[str(i) for i in invoice_ids])

    def inbox_status(self, invoice_id):
        return self.transport.call("invoice.inbox_status", path_params={"id": invoice_id})

    def earchive_status(self, invoice_id):
        return self.transport.call("invoice.earchive_status", path_params={"id": invoice_id})

    def earchive_status_list(self, **params):
        return self.transport.call("invoice.earchive_status_list", params=check_page_size(params) or None)

    # Incoming invoice listing rule (6 per 15 minutes).
    def inbox_list(self, **params):
        """Incoming invoices; params are passed as the query (pageIndex, pageSize at most 500, ...)."""
        return self.transport.call("invoice.inbox_list", params=check_page_size(params) or None)

    # PDF generation rule.
    def outbox_pdf(self, invoice_id, is_standart_xslt=True):
        return self._document("invoice.outbox_pdf", path_params=_doc_params(invoice_id, is_standart_xslt))

    def inbox_pdf(self, invoice_id, is_standart_xslt=True):
        return self._document("invoice.inbox_pdf", path_params=_doc_params(invoice_id, is_standart_xslt))

    def earchive_pdf(self, invoice_id, is_standart_xslt=True):
        return self._document("invoice.earchive_pdf", path_params=_doc_params(invoice_id, is_standart_xslt))

    # UBL viewing rule.
    def inbox_ubl(self, invoice_id):
        return self._document("invoice.inbox_ubl", path_params={"id": invoice_id})

    def earchive_ubl(self, invoice_id):
        return self._document("invoice.earchive_ubl", path_params={"id": invoice_id})

    def outbox_pdf_default(self, invoice_id):
        """PDF with the platform's default layout choice (the path without isStandartXslt)."""
        return self._document("invoice.outbox_pdf_default", path_params={"id": invoice_id})

    def inbox_pdf_default(self, invoice_id):
        return self._document("invoice.inbox_pdf_default", path_params={"id": invoice_id})

    def outbox_pdf_generate(self, invoice_id, is_standart_xslt=True, body=None):
        """The POST form of PDF generation (body not shown in the documents: passed as given)."""
        return self._document("invoice.outbox_pdf_generate", json=body,
                              path_params=_doc_params(invoice_id, is_standart_xslt))

    def inbox_pdf_generate(self, invoice_id, is_standart_xslt=True, body=None):
        return self._document("invoice.inbox_pdf_generate", json=body,
                              path_params=_doc_params(invoice_id, is_standart_xslt))

    # Not rate-limited by section 8 (the provider's client's paths).
    def outbox_ubl(self, invoice_id):
        return self._document("invoice.outbox_ubl", path_params={"id": invoice_id})

    def html(self, kind: str, invoice_id, is_standart_xslt=True):
        """The platform's rendering of an invoice; kind is outbox, inbox or earchive."""
        return self._document(f"invoice.{kind}_html", path_params=_doc_params(invoice_id, is_standart_xslt))

    def pdf(self, kind: str, invoice_id, is_standart_xslt=True):
        return self._document(f"invoice.{kind}_pdf", path_params=_doc_params(invoice_id, is_standart_xslt))

    def ubl(self, kind: str, invoice_id):
        return self._document(f"invoice.{kind}_ubl", path_params={"id": invoice_id})

    def status(self, kind: str, invoice_id) -> dict:
        """{id, status, message} of one invoice on its own path (an e-archive asked on the outbox path is a 404)."""
        return self.transport.call(f"invoice.{kind}_status", path_params={"id": invoice_id}) or {}

    def taxpayer_list(self) -> bytes:
        """The tax authority's list of registered users: a ZIP holding one JSON file (facts file)."""
        content, _type = self.transport.call("invoice.taxpayer_list", raw=True)
        return content
