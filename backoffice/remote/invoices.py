"""Invoice service: the status and document operations of document 1, section 8 (all rate-limited); the answers to
incoming commercial invoices and the e-archive cancellation (the facts file's paths, not rate-limited).

Documents come back as (file bytes, content type), unwrapped from the platform's Response object.

The answer's body is the provider's .NET client's ApproveRejectInvoiceModel, spelled as it sends it: {InvoiceId,
Status, Reason}. Status is the invoice status the answer asks for: 60 (Approved, KABUL) or 80 (Declined, RED), the
values of that client's InvoiceStatus enum (it names no others for the field; to be confirmed with the provider).
"""

from functools import partialmethod

from .accounting import raise_refusal, unless_gone
from .common import Client, check_page_size, ids

ACCEPT, REJECT = 60, 80  # Status of an answer: the provider's InvoiceStatus Approved and Declined


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

    # --- answers to incoming commercial invoices (TICARIFATURA, 8 days) and e-archive cancellation -----------------
    def response_of(self, invoice_id) -> dict | None:
        """The answer to an incoming invoice: {id, invoiceId, status (60 / 80), responseStatus (20, 50, 60, 40),
        reason, message, envelopeId, createdDate, updatedDate}; None when it has none (404), also when the platform
        accepted it itself after 8 days (its status, 65, says so)."""
        answer = unless_gone(self._call, "response_get", path_params={"id": str(invoice_id)})
        raise_refusal(answer, self.prefix + "response_get")
        return answer if isinstance(answer, dict) else None

    def send_response(self, invoice_id, *, accept: bool, reason: str = "") -> dict:
        """Accept or reject (with a reason) an incoming commercial invoice: the answer, queued. A POST: after a lost
        answer, ask response_of() before sending it again (a second answer is refused)."""
        if not accept and not (reason or "").strip():
            raise ValueError("a rejection needs its reason")
        body = {"InvoiceId": str(invoice_id), "Status": ACCEPT if accept else REJECT}
        if (reason or "").strip():
            body["Reason"] = reason.strip()
        answer = self._call("response_send", json=body)
        raise_refusal(answer, self.prefix + "response_send")
        return answer or {}

    def retry_responses(self, invoice_ids) -> None:
        """Send again the answers in error (40) of these incoming invoices, all or none."""
        raise_refusal(self._call("response_retry", json=ids(invoice_ids, "invoice id")),
                      self.prefix + "response_retry")

    def earchive_cancel(self, invoice_ids) -> None:
        """Cancel approved e-archive invoices (status 100), all or none; cancelled ones already count as done."""
        raise_refusal(self._call("earchive_cancel", json=ids(invoice_ids, "invoice id")),
                      self.prefix + "earchive_cancel")
