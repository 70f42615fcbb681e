"""Invoice service: the status and document operations of document 1, section 8 (all rate-limited).

Documents come back as (file bytes, content type), unwrapped from the platform's Response object.
"""

from functools import partialmethod

from .common import Client, check_page_size


class InvoicesClient(Client):
    prefix = "invoice."

    def _status(self, kind: str, invoice_id):
        return self._call(f"{kind}_status", path_params={"id": invoice_id})

    def _query(self, operation: str, **params):
        """params are passed as the query (pageIndex, pageSize at most 500, ...)."""
        return self._call(operation, params=check_page_size(params) or None)

    # Status query rule (100 per 180 minutes at T1).
    outbox_status = partialmethod(_status, "outbox")
    inbox_status = partialmethod(_status, "inbox")
    earchive_status = partialmethod(_status, "earchive")
    earchive_status_list = partialmethod(_query, "earchive_status_list")

    def outbox_status_list(self, invoice_ids):
        """Statuses of several outgoing invoices in one call (body: array of ids)."""
        return self._call("outbox_status_list", json=[str(i) for i in invoice_ids])

    # Incoming invoice listing rule (6 per 15 minutes).
    inbox_list = partialmethod(_query, "inbox_list")

    # The documents of one invoice, kind "outbox", "inbox" or "earchive" (PDF generation and UBL viewing rules;
    # the outbox UBL and every HTML are not rate-limited by section 8: the provider's client's paths).
    def html(self, kind: str, invoice_id, is_standart_xslt=True):
        """The platform's rendering of an invoice."""
        return self._document(f"{kind}_html", path_params={"id": invoice_id, "isStandartXslt": is_standart_xslt})

    def pdf(self, kind: str, invoice_id, is_standart_xslt=True):
        return self._document(f"{kind}_pdf", path_params={"id": invoice_id, "isStandartXslt": is_standart_xslt})

    def ubl(self, kind: str, invoice_id):
        return self._document(f"{kind}_ubl", path_params={"id": invoice_id})

    outbox_pdf = partialmethod(pdf, "outbox")
    inbox_pdf = partialmethod(pdf, "inbox")
    earchive_pdf = partialmethod(pdf, "earchive")
    outbox_ubl = partialmethod(ubl, "outbox")
    inbox_ubl = partialmethod(ubl, "inbox")
    earchive_ubl = partialmethod(ubl, "earchive")

    def status(self, kind: str, invoice_id) -> dict:
        """{id, status, message} of one invoice on its own path (an e-archive asked on the outbox path is a 404)."""
        return self._status(kind, invoice_id) or {}

    def taxpayer_list(self) -> bytes:
        """The tax authority's list of registered users: a ZIP holding one JSON file (facts file)."""
        content, _type = self._call("taxpayer_list", raw=True)
        return content
