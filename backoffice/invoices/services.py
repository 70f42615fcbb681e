"""Invoices: every rule of document 3 (2.6, 3.1, 4.2) that needs the database or the record's state, the
pushes (core.resources: save, update, delete), posting and its reversal (core.actions), the mirror of the
platform's two lists, the status polling and documents of the invoice service (document 1, section 8), the
PDF bundles and the tax authority's taxpayer list. Field rules are on the forms (forms.py).
"""

import io
import logging
import time
import zipfile
from datetime import date, timedelta
from datetime import timezone as dt_timezone
from decimal import Decimal, InvalidOperation

import ijson
from django.conf import settings
from django.core.files.base import ContentFile
from django.db import transaction
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from backoffice.chart_of_accounts.choices import currency_ids
from backoffice.core import actions, jobs, resources, sync
from backoffice.core.choices import SyncState
from backoffice.core.conf import tunable
from backoffice.core.models import Company
from backoffice.core.platform import client_for
from backoffice.core.resources import Resource, ResourceError
from backoffice.remote import endpoints, ratelimit
from backoffice.remote.accounting_invoices import AccountingInvoiceClient, target
from backoffice.remote.common import field, to_int
from backoffice.remote.errors import RateLimited
from backoffice.remote.invoices import InvoicesClient

from . import codes, totals
from .choices import (CANCELLED_STATUSES, EDITABLE_STATUSES, PROFILE_NUMBERS, TYPE_NUMBERS, WORKING_STATUSES,
                      DocumentKind, PostingStatus, Profile, RecordType, profile_name, type_name)
from .models import Invoice, InvoiceDocument, ListSync, PdfBundle, Taxpayer

logger = logging.getLogger("backoffice.invoices")

DEFAULTS = {
    "INVOICE_SYNC_OVERLAP_SECONDS": 300,  # the incremental mirror asks again from a little before where it stopped
    "INVOICE_FULL_SYNC_SECONDS": 86400,  # a walk of the whole lists, to learn of deletions
    "INVOICE_POLL_SHARE": 0.6,  # of the status-query limit the background polling may use
    "INVOICE_POLL_INTERVAL": 300,  # seconds between two polls of a company (the cron's interval)
    "INVOICE_POLL_IDS": 100,  # ids per multi-id status call
    "INVOICE_POLL_FOLLOW_SECONDS": 5,  # a poll after a send follows it this often while it settles
    "INVOICE_POLL_FOLLOW_MINUTES": 15,  # ... for invoices sent this recently
    "INVOICE_DETAIL_FRESH_SECONDS": 300,  # an opened invoice is read in full again after this
    "INVOICE_BUNDLE_MAX": 1000,  # invoices in one PDF bundle
    "INVOICE_BUNDLE_SLEEP_SECONDS": 5,  # a bundle waits in the worker for a slot this close; longer: re-enqueued
}
# AppType of the taxpayer list's entries that are e-invoice mailboxes (facts file: {Identifier, Title, Alias,
# AppType}; the values are not documented: 1 is what public clients use for e-invoice).
DEFAULT_TAXPAYER_APP_TYPES = ("1",)


def setting(name):
    return tunable(name, DEFAULTS)


class InvoiceError(ResourceError):
    """A change refused by a rule of document 3 (2.6, 3.1, 4.2); `field` is the form field it belongs to."""


class InvoiceActionRefused(actions.ActionRefused):
    pass


def accounting(company) -> AccountingInvoiceClient:
    return client_for(company, AccountingInvoiceClient)


def service(company, *, interactive=False) -> InvoicesClient:
    return client_for(company, InvoicesClient, interactive=interactive)


# --- totals and bodies ------------------------------------------------------------------------------------
def line_input(line) -> totals.Line:
    taxes = ()
    if line.other_tax_code and line.other_tax_rate:
        taxes = (totals.Tax(line.other_tax_code, Decimal(line.other_tax_rate)),)
    return totals.Line(quantity=Decimal(line.quantity), unit_price=Decimal(line.unit_price),
                       vat_rate=Decimal(line.vat_rate), discount_rate=Decimal(line.discount_rate or 0),
                       discount_amount=Decimal(line.discount_amount or 0), withholding_code=line.withholding_code,
                       taxes=taxes)


def invoice_totals(lines) -> totals.Totals:
    return totals.document_totals([line_input(line) for line in lines])


def apply_totals(invoice, lines) -> totals.Totals:
    """Our computation (the platform's: 2 decimals, line then document) on the invoice and its lines."""
    result = invoice_totals(lines)
    for line, figures in zip(lines, result.lines):
        line.line_extension_amount, line.vat_amount = figures.net, figures.vat
    invoice.line_count = len(lines)
    invoice.tax_exclusive_amount = result.tax_exclusive
    invoice.tax_total = result.vat_total + result.added_taxes_total
    invoice.total_amount = result.tax_inclusive
    invoice.payable_amount = result.payable
    invoice.withholding_total = result.withholding_total
    invoice.allowance_total = result.allowance_total
    return result


def _line_body(line, figures) -> dict:
    body = {"inventoryServiceCode": line.inventory_service_code, "amount": line.quantity, "unitPrice": line.unit_price,
            "unitCode": line.unit_code, "vatRate": line.vat_rate, "vatAmount": figures.vat,
            "lineExtensionAmount": figures.net}
    if line.warehouse_code:
        body["warehouseCode"] = line.warehouse_code
    if line.discount_rate:
        body["discountRate"] = line.discount_rate
    if line.discount_amount:
        body["discountAmount"] = line.discount_amount
    if line.vat_exemption_reason_code:
        body["vatExemptionReasonCode"] = line.vat_exemption_reason_code
    taxes = []
    if line.withholding_code:
        rate = codes.withholding_rate(line.withholding_code) or Decimal(0)
        name = codes.label(codes.WITHHOLDING, line.withholding_code)
        taxes.append({"taxTypeCode": line.withholding_code, "taxName": name, "withHoldingName": name,
                      "taxRate": rate * 100, "taxAmount": figures.withholding, "isWithHolding": True})
    for code, rate, amount, deducted in figures.taxes:
        taxes.append({"taxTypeCode": code, "taxName": codes.label(codes.TAX_TYPES, code), "taxRate": rate,
                      "taxAmount": amount, "isWithHolding": False, "isNegative": deducted})
    if taxes:
        body["taxes"] = taxes
    return body


def invoice_body(invoice) -> dict:
    """The save / update body of document 3, 2.6 for an invoice written here (outgoing)."""
    lines = list(invoice.lines.all())
    figures = invoice_totals(lines)
    general = {"ettn": invoice.ettn, "prefix": invoice.prefix, "type": TYPE_NUMBERS.get(invoice.invoice_type, 1),
               "currencyCode": invoice.currency_code, "issueDate": invoice.issue_date}
    if invoice.profile:
        general["invoiceProfileType"] = PROFILE_NUMBERS[Profile(invoice.profile)]
    if invoice.currency_code != "TRY":
        general.update(exchangeRate=invoice.exchange_rate, exchangeRateSource=invoice.exchange_rate_source,
                       exchangeRateComment=invoice.exchange_rate_comment)
    if invoice.return_invoice_number:
        general.update(returnInvoiceNumber=invoice.return_invoice_number, returnInvoiceDate=invoice.return_invoice_date)
    body = {"description": invoice.description, "currentAccountIdentifier": invoice.target_vkn_tckn,
            "isSend": True, "recordType": invoice.record_type, "generalInfoModel": general,
            "invoiceLines": [_line_body(line, line_figures) for line, line_figures in zip(lines, figures.lines)]}
    if invoice.current_account_code:
        body["currentAccountCode"] = invoice.current_account_code
    if invoice.is_einvoice:
        body["currentAccountAlias"] = invoice.target_alias
    if invoice.note_list():
        body["notes"] = [{"note": note} for note in invoice.note_list()]
    if invoice.payment_means_code:
        body["paymentMeansModel"] = {key: value for key, value in {
            "paymentMeansCode": invoice.payment_means_code, "paymentDueDate": invoice.payment_due_date,
            "paymentChannelCode": invoice.payment_channel_code, "instructionNote": invoice.instruction_note,
            "payeeFinancialAccountId": invoice.payee_financial_account_id}.items() if value not in (None, "")}
    if not invoice.is_einvoice:
        body["archiveInfoModel"] = {key: value for key, value in {
            "isInternetSale": invoice.is_internet_sale, "websiteUrl": invoice.website_url,
            "shipmentSenderTcknVkn": invoice.shipment_sender_tckn_vkn, "shipmentSendType": invoice.shipment_send_type,
            "shipmentSenderName": invoice.shipment_sender_name,
            "shipmentSenderSurname": invoice.shipment_sender_surname, "shipmentDate": invoice.shipment_date,
            "hideDespatchMessage": invoice.hide_despatch_message, "subscriptionType": invoice.subscription_type,
            "subscriptionTypeNumber": invoice.subscription_type_number}.items() if value not in (None, "")}
    return body


# --- the platform's answers as model fields ----------------------------------------------------------------
def _decimal(value):
    if value in (None, ""):
        return None
    try:
        return Decimal(str(value)).quantize(Decimal("0.01"))
    except InvalidOperation:
        return None


def _rate(value):
    if value in (None, ""):
        return None
    try:
        return Decimal(str(value)).quantize(Decimal("0.000001"))
    except InvalidOperation:
        return None


def _date(value):
    if not value:
        return None
    if isinstance(value, date):
        return value
    return parse_date(str(value)[:10])


def _moment(value):
    if not value:
        return None
    moment = parse_datetime(str(value))
    if moment is not None and timezone.is_naive(moment):  # the lists' *Utc fields
        moment = moment.replace(tzinfo=dt_timezone.utc)
    return moment


def _int(value):
    value = to_int(value)
    return value if isinstance(value, int) else None


def _currency_code(currency_id) -> str:
    by_id = {number: code for code, number in currency_ids().items()}
    return by_id.get(_int(currency_id), "")


def item_fields(item) -> tuple[str, dict]:
    """(ettn, model fields) of a list item (document 3, 2.6: every field of the incoming and outgoing items)."""
    ettn = str(field(item, "ettn") or "")
    values = {
        "ettn": ettn, "invoice_number": str(field(item, "invoiceNumber") or ""),
        "profile": profile_name(field(item, "profile")), "invoice_type": type_name(field(item, "type")),
        "record_type": _int(field(item, "recordType")) or 0, "record_status": _int(field(item, "recordStatus")) or 0,
        "remote_status": _int(field(item, "invoiceStatus")), "invoice_process_status":
            _int(field(item, "invoiceProcessStatus")),
        "branch_id": _int(field(item, "branchId")), "issue_date": _date(field(item, "issueDate")),
        "line_count": _int(field(item, "lineCount")) or 0,
        "target_alias": str(field(item, "targetAlias") or "")[:250],
        "target_title": str(field(item, "targetTitle") or "")[:500],
        "target_vkn_tckn": str(field(item, "targetVknTckn") or "")[:11],
        "currency_id": _int(field(item, "currencyId")),
        "currency_code": _currency_code(field(item, "currencyId")) or "TRY",
        "exchange_rate": _rate(field(item, "exchangeRate")),
        "exchange_rate_comment": str(field(item, "exchangeRateComment") or "")[:250],
        "exchange_rate_source": str(field(item, "exchangeRateSource") or "")[:100],
        "payable_amount": _decimal(field(item, "payableAmount")),
        "tax_exclusive_amount": _decimal(field(item, "taxExclusiveAmount")),
        "tax_total": _decimal(field(item, "taxTotal")), "total_amount": _decimal(field(item, "totalAmount")),
        "created_on_platform": _moment(field(item, "createDateUtc")),
        "updated_on_platform": _moment(field(item, "updateDateUtc")),
    }
    return ettn, values


def full_fields(answer) -> dict:
    """Model fields from a get / save / update answer (the invoice in full)."""
    general = field(answer, "generalInfoModel") or {}
    invoice_totals_model = field(answer, "invoiceTotalsModel") or {}
    values = {
        "remote_id": str(field(general, "ettn") or field(answer, "ettn") or ""),
        "invoice_number": str(field(general, "invoiceNumber") or ""),
        "record_status": _int(field(answer, "recordStatus")) or 0,
        "remote_status": _int(field(answer, "invoiceStatus")),
        "invoice_process_status": _int(field(answer, "invoiceProcessStatus")),
    }
    if field(general, "invoiceProfileType") not in (None, ""):
        values["profile"] = profile_name(field(general, "invoiceProfileType"))
    for name, source in (("payable_amount", "payableAmount"), ("tax_exclusive_amount", "taxExclusiveAmount"),
                         ("total_amount", "taxInclusiveAmount"), ("allowance_total", "allowanceTotalAmount")):
        if field(invoice_totals_model, source) is not None:
            values[name] = _decimal(field(invoice_totals_model, source))
    return {name: value for name, value in values.items() if value not in (None, "") or name == "remote_status"}


# --- rules of state (document 3, 3.1) ----------------------------------------------------------------------
def edit_refusal(invoice) -> str:
    """Why this invoice cannot be changed here now ("" when it can)."""
    if not invoice.is_send:
        return _("Incoming invoices are the supplier's: they cannot be changed.")
    if invoice.is_busy:
        return _("This invoice is on its way to the platform; wait until it is there.")
    if invoice.is_posted:
        return _("This invoice is posted to accounting: reverse the posting before changing it.")
    if invoice.remote_id and invoice.remote_status not in (*EDITABLE_STATUSES, None):
        return _("This invoice has been issued (%(status)s): an issued invoice is corrected with a return invoice, "
                 "not changed.") % {"status": invoice.status_label}
    return ""


def delete_refusal(invoice) -> str:
    if invoice.is_busy:
        return _("This invoice is on its way to the platform; wait until it is there.")
    if invoice.is_posted:
        return _("A posted invoice cannot be deleted: reverse the posting first.")
    if invoice.is_einvoice and invoice.remote_id:
        return _("An e-invoice cannot be deleted (document 3: any e-invoice); issue a return invoice instead.")
    return ""


@transaction.atomic
def invoice_save(invoice, lines, *, user=None) -> Invoice:
    """Save a new or changed outgoing invoice with its lines and send it. The totals are ours, computed as the
    platform computes them; a new invoice gets its ettn now, so a lost answer is found again by it."""
    if invoice.pk:
        refusal = edit_refusal(Invoice.objects.select_for_update().get(pk=invoice.pk))
        if refusal:
            raise InvoiceError(refusal)
    else:
        invoice.created_by = user
        invoice.is_send = True
        invoice.new_ettn()
    if not lines:
        raise InvoiceError(_("Add at least one line."))
    if invoice.record_type == RecordType.EARCHIVE:
        invoice.profile = Profile.EARSIVFATURA
    apply_totals(invoice, lines)
    invoice.save()
    invoice.lines.exclude(pk__in=[line.pk for line in lines if line.pk]).delete()
    for position, line in enumerate(lines, start=1):
        line.invoice, line.position = invoice, position
        line.save()
    resources.queue_change(invoice)
    return invoice


def invoice_delete(invoice) -> bool:
    """Delete an invoice (document 3, 3.1: never a posted one, never an e-invoice). True when it is gone."""
    refusal = delete_refusal(invoice)
    if refusal:
        raise InvoiceError(refusal)
    return resources.request_delete(invoice)


# --- pushes ------------------------------------------------------------------------------------------------
def _create(invoice) -> dict:
    answer = accounting(invoice.company).save(invoice_body(invoice))
    fields = full_fields(answer)
    fields.setdefault("remote_id", invoice.ettn)
    fields["remote_id"] = fields["remote_id"] or invoice.ettn
    fields["ettn"] = fields["remote_id"]
    return fields


def _update(invoice) -> dict:
    return full_fields(accounting(invoice.company).update(invoice_body(invoice)))


def _find(invoice) -> dict | None:
    known = set(Invoice.objects.filter(company=invoice.company, is_send=True).exclude(remote_id="")
                .values_list("remote_id", flat=True))
    found = accounting(invoice.company).find(ettn=invoice.ettn, is_send=True, identifier=invoice.target_vkn_tckn,
                                             issue_date=invoice.issue_date, exclude=known)
    if found is None:
        return None
    fields = full_fields(found)
    fields["remote_id"] = fields.get("remote_id") or invoice.ettn
    fields["ettn"] = fields["remote_id"]
    return fields


def _delete(invoice) -> None:
    accounting(invoice.company).delete(invoice.remote_id, invoice.is_send)


def _exists(invoice) -> bool:
    return accounting(invoice.company).invoice(invoice.remote_id, invoice.is_send) is not None


def _after(invoice) -> None:
    if invoice.remote_status in WORKING_STATUSES:
        poll_soon(invoice.company_id)


INVOICES = Resource(Invoice, create=_create, update=_update, find=_find, delete=_delete, exists=_exists, after=_after)


def invoice_push(pk) -> str:
    return resources.push(INVOICES, pk)


# --- posting to accounting (document 3, 3.1 rules 2 and 3), through core.actions ----------------------------
def _post_allowed(invoice) -> bool:
    return invoice.line_count > 0 and invoice.remote_status not in CANCELLED_STATUSES


POSTING_ACTIONS = actions.ActionSet(
    client=lambda company, model: accounting(company), number="invoice_number", error=InvoiceActionRefused,
    empty=gettext_lazy("Select at least one invoice."), state_field="record_status",
    target=lambda invoice: target(invoice.remote_id, invoice.is_send),
    status_label=lambda status: PostingStatus(status).label,
    actions=[
        actions.RecordAction(
            "post", gettext_lazy("Post to accounting"), call=lambda client, targets: client.post(targets),
            sources=(PostingStatus.NOT_POSTED,), leads_to=PostingStatus.POSTED, icon="journal-check",
            refused=gettext_lazy("Only invoices not posted yet can be posted: %(numbers)s"),
            done=lambda count: _("%(count)s invoice(s) posted to accounting.") % {"count": count}),
        actions.RecordAction(
            "reverse", gettext_lazy("Reverse the posting"), call=lambda client, targets: client.reverse(targets),
            sources=(PostingStatus.POSTED,), leads_to=PostingStatus.NOT_POSTED, icon="arrow-counterclockwise",
            style="warning", confirm=gettext_lazy("Reverse the posting of the selected invoices?"),
            refused=gettext_lazy("Only posted invoices can have their posting reversed: %(numbers)s"),
            done=lambda count: _("The posting of %(count)s invoice(s) was reversed.") % {"count": count}),
    ])


def posting_request(name, invoices):
    """Post or reverse: the rules of 3.1 first (lines, not cancelled), then core.actions."""
    invoices = list(invoices)
    if name == "post":
        refused = [str(invoice) for invoice in invoices if not _post_allowed(invoice)]
        if refused:
            raise InvoiceActionRefused(_("Posting needs an invoice that has lines and is not cancelled: "
                                         "%(numbers)s") % {"numbers": ", ".join(refused)})
    return actions.action_request(Invoice, name, invoices)


# --- the mirror of the platform's two lists ------------------------------------------------------------------
def _store(company, is_send, items) -> int:
    return resources.mirror_store(Invoice, items, company=company, fields_of=item_fields, is_send=is_send)


def invoices_mirror(company_id, *, full=False) -> str:
    """Both lists of one company: from where the last run stopped (updateDateUtc), or whole once a day (and
    the synced invoices the platform no longer lists are dropped then)."""
    company = Company.objects.get(pk=company_id)
    client = accounting(company)
    new = changed = 0
    for is_send in (True, False):
        state, _created = ListSync.objects.get_or_create(company=company, is_send=is_send)
        whole = full or state.full_at is None or (
            timezone.now() - state.full_at).total_seconds() >= setting("INVOICE_FULL_SYNC_SECONDS")
        since = None
        if not whole and state.changed_until:
            since = (state.changed_until - timedelta(seconds=setting("INVOICE_SYNC_OVERLAP_SECONDS"))).isoformat()
        started, seen, newest = timezone.now(), set(), state.changed_until
        for page in sync.pages_with_progress(client.changed_since(is_send, since)):
            new += _store(company, is_send, page["items"])
            changed += len(page["items"])
            for item in page["items"]:
                seen.add(str(field(item, "ettn") or ""))
                moment = _moment(field(item, "updateDateUtc"))
                if moment and (newest is None or moment > newest):
                    newest = moment
        if whole:
            # Only records that were synced before this walk began: a new one may have landed meanwhile.
            resources.prune_missing(Invoice, company=company, keep=seen, is_send=is_send, synced_at__lt=started)
        ListSync.objects.filter(pk=state.pk).update(changed_until=newest, **({"full_at": started} if whole else {}))
    return _("%(count)s invoice(s) read, %(new)s new.") % {"count": changed, "new": new}


def mirror_request(company):
    from . import jobs as invoice_jobs

    return jobs.enqueue(invoice_jobs.invoices_mirror, company=company, args=[company.pk])


def invoices_mirror_all() -> str:
    from . import jobs as invoice_jobs

    count = jobs.enqueue_per_company(invoice_jobs.invoices_mirror, name="invoices_mirror")
    return _("%(count)s compan(ies) asked.") % {"count": count}


def invoice_read(invoice, *, force=False) -> Invoice | None:
    """The invoice in full from the platform (get invoice), kept in detail; None when the platform no longer
    has it (a synced mirror copy is then dropped). Fresh enough copies are not read again."""
    if not invoice.remote_id:
        return invoice
    fresh = invoice.detail_read_at and (
        timezone.now() - invoice.detail_read_at).total_seconds() < setting("INVOICE_DETAIL_FRESH_SECONDS")
    if fresh and not force:
        return invoice
    answer = client_for(invoice.company, AccountingInvoiceClient, interactive=True).invoice(
        invoice.remote_id, invoice.is_send)
    if answer is None:
        if invoice.sync_state == SyncState.SYNCED and not invoice.pending_action:
            Invoice.objects.filter(pk=invoice.pk, sync_state=SyncState.SYNCED, pending_action="").delete()
            return None
        return invoice
    fields = full_fields(answer)
    fields.pop("remote_id", None)
    now = timezone.now()
    if invoice.sync_state == SyncState.SYNCED and not invoice.pending_action:
        Invoice.objects.filter(pk=invoice.pk).update(detail=answer, detail_read_at=now, status_read_at=now, **fields)
    else:
        Invoice.objects.filter(pk=invoice.pk).update(detail=answer, detail_read_at=now)
    invoice.refresh_from_db()
    return invoice


# --- statuses on the invoice service, within the status-query budget ------------------------------------------
def _status_rule():
    endpoint = endpoints.resolve("invoice.outbox_status_list", getattr(settings, "PLATFORM_ENDPOINTS", {}) or {})
    return ratelimit.rule_for(endpoint.method, endpoint.path)


def poll_budget(company) -> int:
    """Status calls one poll may make: a share of the tier's status-query limit over one poll interval (100 per
    180 minutes at T1 gives one call every five minutes; the lists' own invoiceStatus keeps the rest current)."""
    rule = _status_rule()
    if rule is None:
        return 10
    limit, minutes = rule.limit(company.tier)
    per_run = limit * setting("INVOICE_POLL_INTERVAL") / (minutes * 60) * setting("INVOICE_POLL_SHARE")
    return max(1, int(per_run))


def _settle(invoice, answer) -> dict | None:
    status = _int(field(answer, "status"))
    if status is None:
        return None
    message = str(field(answer, "message") or "")
    if status == invoice.remote_status and message == invoice.status_message:
        return None
    return {"remote_status": status, "status_message": message, "status_read_at": timezone.now()}


def invoices_poll(company_id, *, follow=False) -> str:
    """Ask the invoice service the statuses of invoices it still works on, oldest read first: the outgoing
    e-invoices many at once (POST /v2/outboxinvoice/status), e-archive and incoming ones one by one on their own
    paths. Stops at the budget or when the limiter says wait; what is left waits for the next run."""
    company = Company.objects.get(pk=company_id)
    client = service(company)
    budget = poll_budget(company)
    working = Invoice.objects.filter(company=company, sync_state=SyncState.SYNCED, remote_status__in=WORKING_STATUSES,
                                     pending_action="").exclude(remote_id="").order_by(
        "status_read_at", "pk")
    changed = calls = 0
    try:
        batch = list(working.filter(is_send=True, record_type=RecordType.EINVOICE)[:int(setting("INVOICE_POLL_IDS"))])
        if batch and calls < budget:
            calls += 1
            answers = {str(field(a, "id")): a for a in client.outbox_status_list([i.remote_id for i in batch]) or []}
            changed += _keep_statuses(batch, answers)
        for invoice in working.exclude(is_send=True, record_type=RecordType.EINVOICE)[:max(0, budget - calls)]:
            calls += 1
            changed += _keep_statuses([invoice], {invoice.remote_id: client.status(invoice.service_kind,
                                                                                  invoice.remote_id)})
    except RateLimited as exc:
        logger.info("invoice status polling of company %s stopped by the rate limit: %s", company_id, exc)
    if follow and _recently_sent_working(company):
        poll_soon(company_id, delay=setting("INVOICE_POLL_FOLLOW_SECONDS"))
    return _("%(calls)s status call(s), %(changed)s invoice(s) changed.") % {"calls": calls, "changed": changed}


def _keep_statuses(invoices, answers) -> int:
    """The platform's status and message on each invoice; every one asked is marked read (the oldest go first)."""
    now, changed = timezone.now(), 0
    for invoice in invoices:
        answer = answers.get(invoice.remote_id)
        fields = _settle(invoice, answer) if answer else None
        if fields:
            changed += Invoice.objects.filter(pk=invoice.pk, sync_state=SyncState.SYNCED).update(**fields)
        else:
            Invoice.objects.filter(pk=invoice.pk).update(status_read_at=now)
    return changed


def _recently_sent_working(company) -> bool:
    since = timezone.now() - timedelta(minutes=setting("INVOICE_POLL_FOLLOW_MINUTES"))
    return Invoice.objects.filter(company=company, sync_state=SyncState.SYNCED, remote_status__in=WORKING_STATUSES,
                                  synced_at__gte=since).exists()


def poll_soon(company_id, delay=None):
    from . import jobs as invoice_jobs

    return jobs.enqueue(invoice_jobs.invoices_poll, company=company_id, args=[company_id], kwargs={"follow": True},
                        delay=setting("INVOICE_POLL_FOLLOW_SECONDS") if delay is None else delay,
                        join_running=False)


def invoices_poll_all() -> str:
    from . import jobs as invoice_jobs

    companies = Invoice.objects.filter(sync_state=SyncState.SYNCED, remote_status__in=WORKING_STATUSES).values_list(
        "company_id", flat=True).distinct()
    count = 0
    for company_id in companies:
        count += jobs.enqueue(invoice_jobs.invoices_poll, company=company_id, args=[company_id]).is_new
    return _("%(count)s compan(ies) polled.") % {"count": count}


# --- documents: PDF, HTML, UBL (kept once fetched) ---------------------------------------------------------
EXTENSIONS = {DocumentKind.PDF: "pdf", DocumentKind.HTML: "html", DocumentKind.UBL: "xml"}


def cached_document(invoice, kind) -> InvoiceDocument | None:
    """The kept copy, when it still shows the invoice as it is (fetched at its current status)."""
    document = invoice.documents.filter(kind=kind).first()
    if document and document.status == invoice.remote_status and document.file:
        return document
    return None


def document_fetch(invoice, kind, *, interactive=True, client=None) -> InvoiceDocument:
    """The invoice's PDF, HTML or UBL: the kept copy, else one call of the invoice service (rate-limited:
    RateLimited when the limiter says wait) whose answer is kept."""
    document = cached_document(invoice, kind)
    if document is not None:
        return document
    if not invoice.remote_id:
        raise InvoiceError(_("This invoice is not on the platform yet."))
    client = client or service(invoice.company, interactive=interactive)
    if kind == DocumentKind.PDF:
        content, content_type = client.pdf(invoice.service_kind, invoice.remote_id)
    elif kind == DocumentKind.HTML:
        content, content_type = client.html(invoice.service_kind, invoice.remote_id)
    elif invoice.service_kind == "outbox":
        content, content_type = client.outbox_ubl(invoice.remote_id)
    else:
        content, content_type = client.ubl(invoice.service_kind, invoice.remote_id)
    name = f"{invoice.invoice_number or invoice.remote_id}.{EXTENSIONS[kind]}"
    document, _created = InvoiceDocument.objects.get_or_create(invoice=invoice, kind=kind, defaults={
        "content_type": content_type or "application/octet-stream", "status": invoice.remote_status})
    if document.file:
        document.file.delete(save=False)
    document.content_type, document.status = content_type or "application/octet-stream", invoice.remote_status
    document.file.save(name, ContentFile(content), save=True)
    return document


# --- PDF bundles --------------------------------------------------------------------------------------------
def pdf_bundle_request(company, user, invoices) -> PdfBundle:
    invoices = [invoice for invoice in invoices if invoice.remote_id]
    if not invoices:
        raise InvoiceError(_("None of the selected invoices is on the platform yet."))
    limit = int(setting("INVOICE_BUNDLE_MAX"))
    if len(invoices) > limit:
        raise InvoiceError(_("At most %(limit)s invoices go into one ZIP; narrow the selection.") % {"limit": limit})
    from . import jobs as invoice_jobs

    with transaction.atomic():
        bundle = PdfBundle.objects.create(company=company, created_by=user, total=len(invoices))
        bundle.invoices.set(invoices)
        jobs.enqueue(invoice_jobs.pdf_bundle, company=company, target=f"invoices.pdfbundle:{bundle.pk}",
                     args=[bundle.pk])
    return bundle


def pdf_bundle_run(pk) -> str:
    """Fetch the PDFs not kept yet at the full rate the PDF rule allows (a short wait for the next slot is
    waited here; a long one hands the job back to the queue for then), then write the ZIP."""
    bundle = PdfBundle.objects.select_related("company").get(pk=pk)
    if bundle.done:
        return _("Already done.")
    client = service(bundle.company)
    invoices = list(bundle.invoices.order_by("pk"))
    missing = [invoice for invoice in invoices if cached_document(invoice, DocumentKind.PDF) is None]
    fetched = len(invoices) - len(missing)
    for invoice in missing:
        while True:
            try:
                document_fetch(invoice, DocumentKind.PDF, client=client)
                break
            except RateLimited as exc:
                if not exc.local or exc.wait > setting("INVOICE_BUNDLE_SLEEP_SECONDS"):
                    PdfBundle.objects.filter(pk=pk).update(fetched=fetched)
                    raise jobs.TryLater(max(exc.wait, 1), _("Waiting for the PDF rate limit: %(done)s of %(total)s "
                                                           "fetched.") % {"done": fetched, "total": len(invoices)})
                time.sleep(exc.wait)
        fetched += 1
        if fetched % 10 == 0 or fetched == len(invoices):
            PdfBundle.objects.filter(pk=pk).update(fetched=fetched)
            jobs.set_progress(int(fetched * 100 / len(invoices)), _("%(done)s of %(total)s PDFs fetched.")
                              % {"done": fetched, "total": len(invoices)})
    _write_bundle(bundle, invoices)
    return _("%(count)s PDFs in one ZIP.") % {"count": len(invoices)}


def _write_bundle(bundle, invoices) -> None:
    buffer = io.BytesIO()
    names = set()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for invoice in invoices:
            document = cached_document(invoice, DocumentKind.PDF)
            name = f"{invoice.invoice_number or invoice.remote_id}.pdf"
            if name in names:
                name = f"{invoice.remote_id}.pdf"
            names.add(name)
            with document.file.open("rb") as handle:
                archive.writestr(name, handle.read())
    bundle.fetched = len(invoices)
    bundle.finished_at = timezone.now()
    bundle.file.save(f"invoices-{bundle.pk}.zip", ContentFile(buffer.getvalue()), save=False)
    bundle.save(update_fields=["file", "fetched", "finished_at"])


# --- the tax authority's registered users (taxpayer list) ------------------------------------------------------
def taxpayer_app_types() -> tuple:
    return tuple(str(value) for value in getattr(settings, "INVOICE_TAXPAYER_APP_TYPES", DEFAULT_TAXPAYER_APP_TYPES))


def mailboxes(identifier) -> list[Taxpayer]:
    """The e-invoice mailboxes of a VKN / TCKN; none: not a registered user (an e-archive customer)."""
    return list(Taxpayer.objects.filter(identifier=identifier, app_type__in=taxpayer_app_types()).order_by("alias"))


def directory_loaded() -> bool:
    return Taxpayer.objects.exists()


class _SkipBom(io.RawIOBase):
    """A byte stream without a leading UTF-8 byte-order mark (the list's JSON may start with one)."""

    def __init__(self, stream):
        self.stream, self.first = stream, True

    def readable(self):
        return True

    def readinto(self, buffer):
        data = self.stream.read(len(buffer))
        if self.first:
            self.first = False
            if data.startswith(b"\xef\xbb\xbf"):
                data = data[3:] + self.stream.read(3)
        buffer[:len(data)] = data
        return len(data)


def taxpayers_store(archive_bytes: bytes, *, chunk=5000) -> int:
    """Read the list's ZIP item by item (it holds a million users and more) and upsert them in chunks; users
    no longer listed are dropped. Returns how many were listed."""
    started = timezone.now()
    count = 0
    with zipfile.ZipFile(io.BytesIO(archive_bytes)) as archive:
        member = next((name for name in archive.namelist() if name.lower().endswith(".json")), None)
        if member is None:
            raise ValueError("the taxpayer list ZIP holds no JSON file")
        with archive.open(member) as raw:
            rows = []
            for item in ijson.items(io.BufferedReader(_SkipBom(raw)), "item"):
                identifier = str(field(item, "Identifier") or "").strip()
                alias = str(field(item, "Alias") or "").strip()
                if not identifier or not alias:
                    continue
                rows.append(Taxpayer(identifier=identifier[:11], alias=alias[:250],
                                     title=str(field(item, "Title") or "")[:500],
                                     app_type=str(field(item, "AppType") or "")[:10],
                                     registered_at=_moment(field(item, "AliasCreationTime", "FirstCreationTime")),
                                     seen_at=started))
                if len(rows) >= chunk:
                    count += _upsert(rows)
                    rows = []
            count += _upsert(rows)
    if count:
        Taxpayer.objects.filter(seen_at__lt=started).delete()
    return count


def _upsert(rows) -> int:
    if rows:
        Taxpayer.objects.bulk_create(rows, update_conflicts=True, unique_fields=["identifier", "alias", "app_type"],
                                     update_fields=["title", "registered_at", "seen_at"])
    return len(rows)


def taxpayers_refresh() -> str:
    """The daily refresh, with the credentials of the company settings.INVOICE_TAXPAYER_COMPANY names (else the
    first active company): the list is the tax authority's, the same for everyone."""
    company_id = getattr(settings, "INVOICE_TAXPAYER_COMPANY", None)
    companies = Company.objects.filter(is_active=True).order_by("pk")
    company = companies.filter(pk=company_id).first() if company_id else companies.first()
    if company is None:
        return _("No company to read the list with.")
    count = taxpayers_store(service(company).taxpayer_list())
    return _("%(count)s registered mailbox(es) read.") % {"count": count}


def taxpayers_request():
    from . import jobs as invoice_jobs

    return jobs.enqueue(invoice_jobs.taxpayers_refresh)


