"""Every operation of the platform (documents 1 to 3) in one table: name -> service, method, path.

source says where the method and path come from:
  "document": written in documents 1 to 3;
  "public":   4-facts-from-public-sources.md (public client code, not checked against the live service);
  "default":  our REST-style choice where nothing is known; to be confirmed with the provider.
Every entry can be overridden from settings.PLATFORM_ENDPOINTS = {name: (method, path)}, which
backoffice.core.platform passes to the transport (remote/ reads no Django settings itself).
Path parameters are written in {braces} and filled (URL-quoted) by fill_path().
"""

import re
from dataclasses import dataclass, replace
from urllib.parse import quote

SERVICES = ("auth", "ticket", "invoice", "accounting", "ledger", "dispatch", "crm")
# Services that take only an API key, whatever the company's method (document 1, section 5, rule 2).
API_KEY_ONLY = ("crm",)
# Operations that need a permission beyond the product (document 1, section 5, rule 5): operation -> permission.
LISTING = "e-ticket listing"
PERMISSIONS = {"event_ticket.report": LISTING, "passenger_ticket.report": LISTING, "passenger_list.report": LISTING}
SOURCES = ("document", "public", "default")
IDEMPOTENT_METHODS = frozenset({"GET", "PUT", "DELETE", "HEAD"})
# PUTs that are not idempotent in effect: sent again after a 5xx that had applied them, the platform refuses
# ("only draft tickets..."). They are never repeated by the transport; the action machinery asks the
# platform's statuses first (core.actions).
STATE_CHANGES = frozenset({"event_ticket.update_status", "passenger_ticket.update_status",
                           "dispatch.outbox_update_status", "dispatch.reply_update_status",
                           # an update whose body says 20 sends the note: a second one is refused (not 0 / 40)
                           "dispatch.outbox_put_json", "dispatch.outbox_put_ubl", "dispatch.reply_put",
                           # answers sent again are queued: a second try finds them out of error and is refused
                           "invoice.response_retry",
                           # a GET that sends the certificates to the tax authority
                           "ledger.send_certificates"})


@dataclass(frozen=True)
class Endpoint:
    name: str
    service: str
    method: str
    path: str
    source: str

    @property
    def idempotent(self) -> bool:
        return self.method in IDEMPOTENT_METHODS and self.name not in STATE_CHANGES

    @property
    def path_params(self) -> list[str]:
        return _PARAM.findall(self.path)


_PARAM = re.compile(r"{([A-Za-z_][A-Za-z0-9_]*)}")
_TABLE: dict[str, Endpoint] = {}


def _add(name, service, method, path, source):
    assert name not in _TABLE, name
    assert service in SERVICES and source in SOURCES, name
    _TABLE[name] = Endpoint(name, service, method, path, source)


D, P, X = "document", "public", "default"

# --- document 1: token issuer and company management ---------------------------------------------
_add("auth.token", "auth", "POST", "/v1/token", D)
_add("crm.usage_report", "crm", "GET", "/v1/sharedpoolusage/report", D)
_add("crm.create_company", "crm", "POST", "/v1/crm/customers", X)
_add("crm.add_credit", "crm", "POST", "/v1/crm/customers/{customerUniqueId}/addapplicationcredit", D)
_add("crm.add_credit_batch", "crm", "POST", "/v1/crm/addbatchapplicationcredit", D)
_add("crm.add_products", "crm", "POST", "/v1/crm/customers/{customerUniqueId}/products", X)
_add("crm.add_products_batch", "crm", "POST", "/v1/crm/addbatchproducts", X)
_add("crm.cancel_credit", "crm", "DELETE",
     "/v1/crm/customers/{customerUniqueId}/applicationcredits/{applicationCreditId}", X)

# --- document 2: tickets ---------------------------------------------------------------------------
for _kind, _base, _report in (
    ("event_ticket", "/v1/event-ticket", "/v1/eventticketreport/partsbydate/{reportDate}"),
    ("passenger_ticket", "/v1/passenger-ticket", "/v1/passengerticketreport/partsbydate/{reportDate}"),
):
    _add(f"{_kind}.create", "ticket", "POST", _base, P)
    _add(f"{_kind}.update", "ticket", "PUT", _base + "/{id}", P)
    _add(f"{_kind}.get", "ticket", "GET", _base + "/{id}", P)
    _add(f"{_kind}.list", "ticket", "GET", _base, P)
    _add(f"{_kind}.cancel", "ticket", "POST", _base + "/cancel", P)
    _add(f"{_kind}.html", "ticket", "GET", _base + "/{id}/html/{isStandartXslt}", P)
    _add(f"{_kind}.status", "ticket", "POST", _base + "/status", P)
    _add(f"{_kind}.update_status", "ticket", "PUT", _base + "/updatestatuslist", P)
    _add(f"{_kind}.export", "ticket", "POST", _base + "/export", X)
    _add(f"{_kind}.export_history", "ticket", "GET", _base + "/export/history", X)
    _add(f"{_kind}.export_download", "ticket", "GET", _base + "/export/{exportId}/download", X)
    _add(f"{_kind}.report", "ticket", "GET", _report, D)

_add("passenger_list.save", "ticket", "POST", "/v1/passenger-list", X)
_add("passenger_list.query", "ticket", "GET", "/v1/passenger-list", X)
_add("passenger_list.export", "ticket", "POST", "/v1/passenger-list/export", X)
_add("passenger_list.export_history", "ticket", "GET", "/v1/passenger-list/export/history", X)
_add("passenger_list.export_download", "ticket", "GET", "/v1/passenger-list/export/{exportId}/download", X)
_add("passenger_list.report", "ticket", "GET", "/v1/passengerticketlistreport/partsbydate/{reportDate}", D)
_add("city.list", "ticket", "GET", "/v1/city/list", P)

# --- document 1, section 8: invoice status and document operations (the rate-limited paths) -------
_add("invoice.outbox_status", "invoice", "GET", "/v2/outboxinvoice/{id}/status", D)
_add("invoice.outbox_status_list", "invoice", "POST", "/v2/outboxinvoice/status", D)
_add("invoice.inbox_status", "invoice", "GET", "/v2/inboxinvoice/{id}/status", D)
_add("invoice.earchive_status", "invoice", "GET", "/v2/earchive/{id}/status", D)
_add("invoice.earchive_status_list", "invoice", "GET", "/v2/earchive/status", D)
_add("invoice.inbox_list", "invoice", "GET", "/v1/inboxinvoice/list", D)
_add("invoice.outbox_pdf", "invoice", "GET", "/v2/outboxinvoice/{id}/pdf/{isStandartXslt}", D)
_add("invoice.outbox_pdf_default", "invoice", "GET", "/v2/outboxinvoice/{id}/pdf", D)
_add("invoice.outbox_pdf_generate", "invoice", "POST", "/v2/outboxinvoice/{id}/pdf/{isStandartXslt}", D)
_add("invoice.inbox_pdf", "invoice", "GET", "/v2/inboxinvoice/{id}/pdf/{isStandartXslt}", D)
_add("invoice.inbox_pdf_default", "invoice", "GET", "/v2/inboxinvoice/{id}/pdf", D)
_add("invoice.inbox_pdf_generate", "invoice", "POST", "/v2/inboxinvoice/{id}/pdf/{isStandartXslt}", D)
_add("invoice.earchive_pdf", "invoice", "GET", "/v2/earchive/{id}/pdf/{isStandartXslt}", D)
_add("invoice.inbox_ubl", "invoice", "GET", "/v2/inboxinvoice/{id}/ubl", D)
_add("invoice.earchive_ubl", "invoice", "GET", "/v2/earchive/{id}/ubl", D)
# The provider's client (facts file): the documents of one invoice that section 8 does not rate-limit, and the
# tax authority's list of registered users (its path as the provider's client has it, which the facts file says to
# default to where public clients disagree; another client reads /v2/gibuser/recipient/zip).
_add("invoice.outbox_ubl", "invoice", "GET", "/v2/outboxinvoice/{id}/ubl", P)
_add("invoice.outbox_html", "invoice", "GET", "/v2/outboxinvoice/{id}/html/{isStandartXslt}", P)
_add("invoice.inbox_html", "invoice", "GET", "/v2/inboxinvoice/{id}/html/{isStandartXslt}", P)
_add("invoice.earchive_html", "invoice", "GET", "/v2/earchive/{id}/html/{isStandartXslt}", P)
_add("invoice.taxpayer_list", "invoice", "GET", "/v1/gibuser/receiverboxalias/zip", P)
# Answers to incoming commercial invoices and the e-archive cancellation (the facts file; the provider's client).
# Rate-limit class: none, like the rows just above: section 8 lists no rule for these paths (its rules cover status,
# listing, PDF and UBL paths only), so remote/ratelimit.py has no pattern for them and they wait for no slot.
_add("invoice.response_get", "invoice", "GET", "/v1/invoiceresponse/getbyinvoiceid/{id}", P)
_add("invoice.response_send", "invoice", "POST", "/v1/invoiceresponse", P)
_add("invoice.response_retry", "invoice", "PUT", "/v1/invoiceresponse/retryinvoiceresponselist", P)
# Body: a JSON array of ids. Sent again after it applied it changes nothing (cancelled ones count as done).
_add("invoice.earchive_cancel", "invoice", "PUT", "/v1/earchive/cancelinvoice", P)

# --- document 3, 4.1: current accounts and their mappings, addresses, banks, contacts --------------
_add("current_account.list", "accounting", "GET", "/v1/currentaccount", X)
_add("current_account.get", "accounting", "GET", "/v1/currentaccount/{id}", X)
_add("current_account.create", "accounting", "POST", "/v1/currentaccount", X)
_add("current_account.update", "accounting", "PUT", "/v1/currentaccount", X)
for _part in ("mapping", "address", "bank", "contact"):
    _add(f"current_account_{_part}.list", "accounting", "GET", f"/v1/currentaccount/{_part}", X)
    _add(f"current_account_{_part}.create", "accounting", "POST", f"/v1/currentaccount/{_part}", X)
    _add(f"current_account_{_part}.update", "accounting", "PUT", f"/v1/currentaccount/{_part}", X)
    _add(f"current_account_{_part}.delete", "accounting", "DELETE", f"/v1/currentaccount/{_part}/{{id}}", X)

# --- document 3, 4.2 and 4.3: accounting invoices, chart of accounts ------------------------------
_add("accounting_invoice.list_incoming", "accounting", "GET", "/v1/invoice/incoming/list", X)
_add("accounting_invoice.list_outgoing", "accounting", "GET", "/v1/invoice/outgoing/list", X)
_add("accounting_invoice.get", "accounting", "GET", "/v1/invoice/{guid}", X)
_add("accounting_invoice.save", "accounting", "POST", "/v1/invoice", X)
_add("accounting_invoice.update", "accounting", "PUT", "/v1/invoice", X)
_add("accounting_invoice.delete", "accounting", "DELETE", "/v1/invoice/{ettn}", X)
_add("accounting_invoice.post", "accounting", "POST", "/v1/invoice/post", X)
_add("accounting_invoice.reverse", "accounting", "POST", "/v1/invoice/reverse", X)
_add("chart_of_accounts.list", "accounting", "GET", "/v1/chartofaccount", X)
_add("chart_of_accounts.create", "accounting", "POST", "/v1/chartofaccount", X)
_add("chart_of_accounts.update", "accounting", "PUT", "/v1/chartofaccount", X)

# --- document 3, 4.4: electronic ledger ------------------------------------------------------------
_add("ledger.list_periods", "ledger", "GET", "/v1/period/getperiodlist", P)
_add("ledger.list_parts", "ledger", "GET", "/v1/period/getpartlist", X)
_add("ledger.book_entries", "ledger", "GET", "/v1/period/getbookentries", X)
_add("ledger.preview", "ledger", "GET", "/v1/period/preview", X)
_add("ledger.send_certificates", "ledger", "GET", "/v1/sendletterpattentstogib", P)
_add("ledger.upload", "ledger", "POST", "/v1/period", P)

# --- document 3, 4.5: dispatch notes ---------------------------------------------------------------
# Outgoing notes. A PUT is its POST's path plus /{id}.
_add("dispatch.outbox_post_json", "dispatch", "POST", "/v1/outboxdespatch/create", P)
_add("dispatch.outbox_put_json", "dispatch", "PUT", "/v1/outboxdespatch/create/{id}", X)
_add("dispatch.outbox_post_ubl", "dispatch", "POST", "/v1/outboxdespatch", P)
_add("dispatch.outbox_put_ubl", "dispatch", "PUT", "/v1/outboxdespatch/{id}", X)
_add("dispatch.outbox_update_status", "dispatch", "PUT", "/v2/outboxdespatch/updatestatuslist", P)
_add("dispatch.outbox_status", "dispatch", "GET", "/v2/outboxdespatch/{id}/status", P)
_add("dispatch.outbox_ubl", "dispatch", "GET", "/v2/outboxdespatch/{id}/ubl", P)
_add("dispatch.outbox_pdf", "dispatch", "GET", "/v2/outboxdespatch/{id}/pdf/{isStandartXslt}", P)
_add("dispatch.outbox_html", "dispatch", "GET", "/v2/outboxdespatch/{id}/html/{isStandartXslt}", P)
# Document 3 (4.5): Get ZIP takes isStandartXslt, as PDF and HTML do (the invoice service's .../zip/{bool} of the
# facts file; its dispatch row shows .../zip, which the document overrules).
_add("dispatch.outbox_zip", "dispatch", "GET", "/v2/outboxdespatch/{id}/zip/{isStandartXslt}", P)
# Document 3 names a listing (isNew: "after listing, setting it to false stops the note from being returned
# again") but shows no path: ours, after the incoming list and the invoice service's updateisnew.
_add("dispatch.outbox_list", "dispatch", "GET", "/v1/outboxdespatch/list", X)
_add("dispatch.outbox_update_is_new", "dispatch", "PUT", "/v1/outboxdespatch/updateisnew", X)
_add("dispatch.outbox_export", "dispatch", "POST", "/v1/outboxdespatch/export", X)
_add("dispatch.outbox_export_download", "dispatch", "GET", "/v1/outboxdespatch/export/{exportId}/download", X)
_add("dispatch.outbox_export_history", "dispatch", "GET", "/v1/outboxdespatch/export/history", X)
# Replies received to outgoing notes (receipt advices); {id} is the outgoing note's id.
_add("dispatch.receipt_list", "dispatch", "GET", "/v1/outboxdespatch/receiptadvice/list", X)
_add("dispatch.receipt_ubl", "dispatch", "GET", "/v2/outboxdespatch/{id}/receiptadvice/ubl", X)
_add("dispatch.receipt_pdf", "dispatch", "GET", "/v2/outboxdespatch/{id}/receiptadvice/pdf/{isStandartXslt}", X)
_add("dispatch.receipt_html", "dispatch", "GET", "/v2/outboxdespatch/{id}/receiptadvice/html/{isStandartXslt}", X)
# Incoming notes.
_add("dispatch.inbox_status", "dispatch", "GET", "/v2/inboxdespatch/{id}/status", X)
_add("dispatch.inbox_list", "dispatch", "GET", "/v1/inboxdespatch/list", P)
_add("dispatch.inbox_ubl", "dispatch", "GET", "/v2/inboxdespatch/{id}/ubl", X)
_add("dispatch.inbox_pdf", "dispatch", "GET", "/v2/inboxdespatch/{id}/pdf/{isStandartXslt}", X)
_add("dispatch.inbox_html", "dispatch", "GET", "/v2/inboxdespatch/{id}/html/{isStandartXslt}", X)
_add("dispatch.inbox_export", "dispatch", "POST", "/v1/inboxdespatch/export", X)
_add("dispatch.inbox_export_download", "dispatch", "GET", "/v1/inboxdespatch/export/{exportId}/download", X)
_add("dispatch.inbox_export_history", "dispatch", "GET", "/v1/inboxdespatch/export/history", X)
# Our replies to incoming notes (outgoing receipt advices).
_add("dispatch.reply_post", "dispatch", "POST", "/v1/outboxreceiptadvice", X)
_add("dispatch.reply_put", "dispatch", "PUT", "/v1/outboxreceiptadvice/{id}", X)
_add("dispatch.reply_update_status", "dispatch", "PUT", "/v2/outboxreceiptadvice/updatestatuslist", X)
_add("dispatch.reply_partial_accept", "dispatch", "POST", "/v1/outboxreceiptadvice/partialaccept", X)
_add("dispatch.reply_status", "dispatch", "GET", "/v2/outboxreceiptadvice/{id}/status", X)
_add("dispatch.reply_approve_reject", "dispatch", "POST", "/v1/outboxreceiptadvice/approvereject", X)
_add("dispatch.reply_ubl", "dispatch", "GET", "/v2/outboxreceiptadvice/{id}/ubl", X)
_add("dispatch.reply_ubl_by_inbox", "dispatch", "GET", "/v2/inboxdespatch/{id}/receiptadvice/ubl", X)
_add("dispatch.reply_pdf", "dispatch", "GET", "/v2/outboxreceiptadvice/{id}/pdf/{isStandartXslt}", X)
_add("dispatch.reply_html", "dispatch", "GET", "/v2/outboxreceiptadvice/{id}/html/{isStandartXslt}", X)
_add("dispatch.reply_zip", "dispatch", "GET", "/v2/outboxreceiptadvice/{id}/zip/{isStandartXslt}", X)
_add("dispatch.taxpayer_list", "dispatch", "GET", "/v1/gibuser/recipient/zip", P)

del D, P, X

ENDPOINTS: dict[str, Endpoint] = dict(_TABLE)


def resolve(name: str, overrides: dict | None = None) -> Endpoint:
    """The endpoint of an operation, with an override (method, path) from settings applied."""
    try:
        endpoint = ENDPOINTS[name]
    except KeyError:
        raise KeyError(f"unknown platform operation {name!r}") from None
    override = (overrides or {}).get(name)
    if override:
        method, path = override
        endpoint = replace(endpoint, method=method.upper(), path=path, source="settings")
    return endpoint


def table(overrides: dict | None = None) -> list[Endpoint]:
    """Every endpoint, overrides applied, in table order (for the README and the UI)."""
    return [resolve(name, overrides) for name in ENDPOINTS]


def fill_path(path: str, params: dict | None = None) -> str:
    """Fill {name} placeholders with URL-quoted values; each value stays one path segment."""
    params = params or {}

    def value(match):
        name = match.group(1)
        if name not in params or params[name] is None:
            raise ValueError(f"path parameter {name!r} missing for {path}")
        raw = params[name]
        if isinstance(raw, bool):  # isStandartXslt: the platform's spelling of booleans
            raw = "true" if raw else "false"
        return quote(str(raw), safe="")

    return _PARAM.sub(value, path)
