"""Invoices: every rule of document 3 (2.6, 3.1, 4.2) that needs the database or the record's state, the drafts
(their figures computed once as they are saved: totals.py), the bodies, the pushes (core.resources: save, update,
delete), posting and its reversal (core.actions). Field rules are on the forms (forms.py); what the platform says
back is read by mirror.py (lists, full records, statuses), documents.py (PDF, HTML, UBL, ZIPs) and taxpayers.py
(the taxpayer list).
"""

from datetime import timedelta
from decimal import Decimal

from django.db import transaction
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from backoffice.core import actions, codes, domains, polling, resources, sync
from backoffice.core.choices import SyncState
from backoffice.core.conf import tunable
from backoffice.core.jobs import job
from backoffice.core.payloads import amount, day, decimal, integer, moment, money, text
from backoffice.core.platform import client_for
from backoffice.core.registry import registry
from backoffice.core.resources import Resource, ResourceError
from backoffice.remote.accounting_invoices import AccountingInvoiceClient, target
from backoffice.remote.common import field
from backoffice.remote.errors import PLATFORM, RemoteError
from backoffice.remote.invoices import InvoicesClient

from . import totals
from .choices import (CANCELLED_STATUSES, EDITABLE_STATUSES, PROFILE_NUMBERS, TYPE_NUMBERS, WORKING_STATUSES,
                      PostingStatus, Profile, RecordType, profile_name, type_name)
from .models import Invoice

chart_api = domains.api("chart_of_accounts")
accounts_api = domains.api("current_accounts")

DEFAULTS = {
    "INVOICE_SYNC_OVERLAP_SECONDS": 300,  # the incremental mirror asks again from a little before where it stopped
    "INVOICE_FULL_SYNC_SECONDS": 86400,  # a walk of the whole lists, to learn of deletions
    "INVOICE_PRUNE_CHECKS": 500,  # invoices a whole walk did not list, asked one by one before they are dropped
    "INVOICE_POLL_SHARE": 0.6,  # of the status-query limit the background polling may use
    "INVOICE_POLL_INTERVAL": 300,  # seconds between two polls of a company (the cron's interval)
    "INVOICE_POLL_IDS": 100,  # ids per multi-id status call
    "INVOICE_POLL_CALLS": 10,  # status calls a poll may make where the documents give no limit
    "INVOICE_POLL_FOLLOW_SECONDS": 5,  # a poll after a send follows it this often while it settles
    "INVOICE_POLL_FOLLOW_MINUTES": 15,  # ... for invoices sent this recently
    "INVOICE_DETAIL_FRESH_SECONDS": 300,  # an opened invoice is read in full again after this
    "INVOICE_BUNDLE_MAX": 1000,  # invoices in one PDF bundle
    "INVOICE_BUNDLE_SLEEP_SECONDS": 5,  # a bundle waits in the worker for a slot this close; longer: re-enqueued
}


POLL = "invoices_poll"  # the name of the status poll (mirror.INVOICES_POLL)


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


# --- bodies: what was saved, as document 3, 2.6 names it ------------------------------------------------------
def _line_body(line) -> dict:
    """A line with the figures kept when it was saved (nothing is computed again on the way out)."""
    body = {"inventoryServiceCode": line.inventory_service_code, "amount": line.quantity, "unitPrice": line.unit_price,
            "unitCode": line.unit_code, "vatRate": line.vat_rate, "vatAmount": line.vat_amount,
            "lineExtensionAmount": line.line_extension_amount}
    for name, key in (("warehouse_code", "warehouseCode"), ("discount_rate", "discountRate"),
                      ("discount_amount", "discountAmount"), ("vat_exemption_reason_code", "vatExemptionReasonCode")):
        if getattr(line, name):  # sent only when given
            body[key] = getattr(line, name)
    taxes = []
    if line.withholding_code:
        rate = Decimal(totals.rules()["withholdingRates"].get(line.withholding_code, 0))
        name = codes.label(codes.WITHHOLDING, line.withholding_code)
        taxes.append({"taxTypeCode": line.withholding_code, "taxName": name, "withHoldingName": name,
                      "taxRate": rate * 100, "taxAmount": line.withholding_amount, "isWithHolding": True})
    if line.other_tax_code and line.other_tax_rate:
        code = line.other_tax_code
        taxes.append({"taxTypeCode": code, "taxName": codes.label(codes.TAX_TYPES, code),
                      "taxRate": Decimal(line.other_tax_rate), "taxAmount": line.other_tax_amount,
                      "isWithHolding": False, "isNegative": code in totals.rules()["deductedTaxCodes"]})
    if taxes:
        body["taxes"] = taxes
    return body


def invoice_body(invoice) -> dict:
    """The save / update body of document 3, 2.6 for an invoice written here (outgoing)."""
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
            "invoiceLines": [_line_body(line) for line in invoice.lines.all()]}
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


# --- the platform's answers as model fields (read through core.payloads) --------------------------------------
def _currency_code(currency_id) -> str:
    by_id = {number: code for code, number in chart_api.currency_ids().items()}
    return by_id.get(integer(currency_id), "")


def item_fields(item) -> tuple[str, dict]:
    """(ettn, model fields) of a list item (document 3, 2.6: every field of the incoming and outgoing items)."""
    ettn = text(field(item, "ettn"))
    values = {
        "ettn": ettn, "invoice_number": text(field(item, "invoiceNumber")),
        "profile": profile_name(field(item, "profile")), "invoice_type": type_name(field(item, "type")),
        "record_type": integer(field(item, "recordType")) or 0,
        "record_status": integer(field(item, "recordStatus")) or 0,
        "remote_status": integer(field(item, "invoiceStatus")),
        "invoice_process_status": integer(field(item, "invoiceProcessStatus")),
        "branch_id": integer(field(item, "branchId")), "issue_date": day(field(item, "issueDate")),
        "line_count": integer(field(item, "lineCount")) or 0,
        "target_alias": text(field(item, "targetAlias"))[:250], "target_title": text(field(item, "targetTitle"))[:500],
        "target_vkn_tckn": text(field(item, "targetVknTckn"))[:11],
        "currency_id": integer(field(item, "currencyId")),
        "currency_code": _currency_code(field(item, "currencyId")) or "TRY",
        "exchange_rate": decimal(field(item, "exchangeRate"), 6),
        "exchange_rate_comment": text(field(item, "exchangeRateComment"))[:250],
        "exchange_rate_source": text(field(item, "exchangeRateSource"))[:100],
        "payable_amount": amount(field(item, "payableAmount")),
        "tax_exclusive_amount": amount(field(item, "taxExclusiveAmount")),
        "tax_total": amount(field(item, "taxTotal")), "total_amount": amount(field(item, "totalAmount")),
        "created_on_platform": moment(field(item, "createDateUtc"), naive_utc=True),
        "updated_on_platform": moment(field(item, "updateDateUtc"), naive_utc=True),
    }
    return ettn, values


def full_fields(answer) -> dict:
    """Model fields from a get / save / update answer (the invoice in full). Its totals are the platform's: they
    replace the figures kept when the invoice was saved (the same, computed the platform's way)."""
    general = field(answer, "generalInfoModel") or {}
    invoice_totals_model = field(answer, "invoiceTotalsModel") or {}
    values = {
        "remote_id": text(field(general, "ettn") or field(answer, "ettn")),
        "invoice_number": text(field(general, "invoiceNumber")),
        "record_status": integer(field(answer, "recordStatus")) or 0,
        "remote_status": integer(field(answer, "invoiceStatus")),
        "invoice_process_status": integer(field(answer, "invoiceProcessStatus")),
    }
    if field(general, "invoiceProfileType") not in (None, ""):
        values["profile"] = profile_name(field(general, "invoiceProfileType"))
    for name, source in (("payable_amount", "payableAmount"), ("tax_exclusive_amount", "taxExclusiveAmount"),
                         ("total_amount", "taxInclusiveAmount"), ("allowance_total", "allowanceTotalAmount")):
        if field(invoice_totals_model, source) is not None:
            values[name] = amount(field(invoice_totals_model, source))
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
    if invoice.remote_id and not invoice.lines.exists():
        # Read from the platform's list: an update here would replace its lines with none.
        return _("This invoice was written outside this back office: change it where it was written.")
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
    """Save a new or changed outgoing invoice with its lines as a local draft: nothing is sent. The platform's
    save queues an invoice at once (document 3, 2.6: it keeps no drafts), so sending is its own step
    (invoice_send, after the user's confirmation). The totals are ours, computed as the platform computes them;
    a new invoice gets its ettn now, so a lost answer is found again by it."""
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
    return draft_store(invoice, lines)


def draft_store(invoice, lines) -> Invoice:
    """Keep a draft with its lines and the figures computed now, the one time they are (totals.apply_totals): pages
    and the push read them. A local change, not asked to be sent: the mirror leaves it alone until it is."""
    if invoice.record_type == RecordType.EARCHIVE:
        invoice.profile = Profile.EARSIVFATURA
    totals.apply_totals(invoice, lines)
    invoice.sync_state, invoice.last_error, invoice.last_error_source = SyncState.LOCAL, "", ""
    invoice.save()
    invoice.lines.exclude(pk__in=[line.pk for line in lines if line.pk]).delete()
    for position, line in enumerate(lines, start=1):
        line.invoice, line.position = invoice, position
        line.save()
    return invoice


class AlreadySent(InvoiceError):
    """The invoice is on its way or there already (a second POST of the same confirmation): nothing to do."""


SENDABLE_STATES = (SyncState.LOCAL, SyncState.FAILED)


def is_draft(invoice) -> bool:
    """A change saved here and not sent yet (a new invoice, an edit, or a send the platform refused)."""
    return invoice.is_send and invoice.sync_state in SENDABLE_STATES and not invoice.pending_action


def send_refusal(invoice) -> str:
    """Why this invoice cannot be sent now ("" when it can)."""
    if not invoice.is_send:
        return _("Incoming invoices are the supplier's: they cannot be sent.")
    if invoice.pending_action or invoice.sync_state in (SyncState.QUEUED, SyncState.SENDING):
        return _("This invoice is on its way to the platform already.")
    if invoice.sync_state not in SENDABLE_STATES:
        return _("Only a draft (saved, not sent) is sent; this invoice has no change to send.")
    if not invoice.line_count and not invoice.lines.exists():
        return _("Add at least one line.")
    if not invoice.prefix:  # 4.2 save rule 4; a draft made from dispatch notes may have none yet
        return _("Give the number prefix: edit the draft first.")
    return ""


def invoice_send(invoices) -> int:
    """Send drafts to the platform (its save or update: the tax authority gets them; it cannot be undone), the
    step after the user confirmed recipient, mailbox and total. All or none: one that is not a draft refuses the
    lot by name. Under a row lock, so a second POST of the same confirmation (Back, a double click) finds them
    on their way and raises AlreadySent instead of sending twice. Returns how many were queued."""
    with transaction.atomic():
        locked = list(Invoice.objects.select_for_update().filter(pk__in=[invoice.pk for invoice in invoices])
                      .order_by("pk"))
        if not locked:
            raise InvoiceError(_("Select at least one invoice."))
        refused = [(invoice, send_refusal(invoice)) for invoice in locked]
        refused = [(invoice, reason) for invoice, reason in refused if reason]
        on_the_way = (SyncState.QUEUED, SyncState.SENDING, SyncState.SYNCED)
        if refused and all(invoice.is_send and invoice.sync_state in on_the_way for invoice, _reason in refused) \
                and len(refused) == len(locked):
            raise AlreadySent(_("Already sent: %(numbers)s. Nothing was sent again.")
                              % {"numbers": ", ".join(str(invoice) for invoice in locked)})
        if refused:
            raise InvoiceError(_("Only drafts are sent; nothing was sent. Not drafts: %(numbers)s")
                               % {"numbers": "; ".join(f"{invoice} ({reason})" for invoice, reason in refused)})
        for invoice in locked:
            resources.queue_change(invoice)
        return len(locked)


def send_rows(invoices) -> list[dict]:
    """What the send confirmation shows of each invoice: the recipient, its mailbox (or e-Archive), the payable."""
    return [{"pk": invoice.pk, "number": str(invoice), "recipient": invoice.target_title,
             "identifier": invoice.target_vkn_tckn,
             "mailbox": invoice.target_alias if invoice.is_einvoice else _("e-Archive (no mailbox)"),
             "total": invoice.payable_amount or Decimal(0), "currency": invoice.currency_code}
            for invoice in invoices]


def invoice_delete(invoice) -> bool:
    """Delete an invoice (document 3, 3.1: never a posted one, never an e-invoice). True when it is gone."""
    refusal = delete_refusal(invoice)
    if refusal:
        raise InvoiceError(refusal)
    return resources.request_delete(invoice)


# --- pushes ------------------------------------------------------------------------------------------------
def _ours(invoice, answer) -> dict:
    """The fields of our own invoice as the platform answers it: its ettn is ours when the answer has none."""
    fields = full_fields(answer)
    fields["remote_id"] = fields.get("remote_id") or invoice.ettn
    fields["ettn"] = fields["remote_id"]
    return fields


def _create(invoice) -> dict:
    return _ours(invoice, accounting(invoice.company).save(invoice_body(invoice)))


def _update(invoice) -> dict:
    return full_fields(accounting(invoice.company).update(invoice_body(invoice)))


def _find(invoice) -> dict | None:
    known = set(Invoice.objects.filter(company=invoice.company, is_send=True).exclude(remote_id="")
                .values_list("remote_id", flat=True))
    found = accounting(invoice.company).find(
        ettn=invoice.ettn, is_send=True, identifier=invoice.target_vkn_tckn, issue_date=invoice.issue_date,
        payable=invoice.payable_amount, description=invoice.description, exclude=known,
        created_after=invoice.created_at - timedelta(minutes=1))  # the platform's clock may be a little behind
    if found is None:
        return None
    differ = _differences(invoice, found)
    if differ:
        # Found by our ettn but not ours (issue 28): never shown as sent under another invoice's content.
        raise RemoteError(_("The platform already holds another invoice under this invoice's ettn %(ettn)s "
                            "(%(fields)s differ), so this one was not sent and is not taken for it. Check that "
                            "invoice on the platform; to send this one, enter it again as a new invoice (a new "
                            "ettn).") % {"ettn": invoice.ettn, "fields": ", ".join(differ)},
                          permanent=True, source=PLATFORM)
    return _ours(invoice, found)


def _differences(invoice, found) -> list[str]:
    """The platform names of what identifies an invoice (customer, issue date, description, payable amount to the
    cent) where the invoice found differs from ours; only what its answer carries is compared."""
    general = field(found, "generalInfoModel") or {}
    payable = field(field(found, "invoiceTotalsModel") or {}, "payableAmount")
    theirs = {"currentAccountIdentifier": field(found, "currentAccountIdentifier"),
              "issueDate": str(field(general, "issueDate") or "")[:10] or None,
              "description": field(found, "description"),
              "payableAmount": None if payable is None else money(payable)}
    ours = {"currentAccountIdentifier": invoice.target_vkn_tckn, "issueDate": str(invoice.issue_date),
            "description": invoice.description, "payableAmount": money(invoice.payable_amount)}
    return [name for name, value in theirs.items() if value is not None and str(value) != str(ours[name] or "")]


def _delete(invoice) -> None:
    accounting(invoice.company).delete(invoice.remote_id, invoice.is_send)


def _exists(invoice) -> bool:
    return accounting(invoice.company).invoice(invoice.remote_id, invoice.is_send) is not None


# What follows an invoice that landed on the platform, declared by the modules that build on this one (the dispatch
# notes it bills learn its number: from_dispatch.py).
landed_hooks: list = []


def _after(invoice) -> None:
    """A send the platform still works on is followed (mirror.INVOICES_POLL, found by its name: mirror.py builds on
    this module); what builds on an invoice's landing is told."""
    if invoice.remote_status in WORKING_STATUSES:
        polling.poll_soon(registry["polls"][POLL], invoice.company_id)
    for hook in landed_hooks:
        hook(invoice)


INVOICES = Resource(Invoice, create=_create, update=_update, find=_find, delete=_delete, exists=_exists, after=_after)


@job(gettext_lazy("Send invoice"))
def invoice_push(pk) -> str:
    return resources.push(INVOICES, pk)


# --- posting to accounting (document 3, 3.1 rules 2 and 3), through core.actions ----------------------------
def _post_allowed(invoice) -> bool:
    return invoice.line_count > 0 and invoice.remote_status not in CANCELLED_STATUSES


def posting_check(name, invoices):
    """Post or reverse: the rules of 3.1 (lines, not cancelled), before core.actions checks the statuses."""
    busy = [str(invoice) for invoice in invoices if invoice.is_busy]
    if busy:  # a change still on its way would be refused once the invoice is posted (4.2, update rule 5)
        raise InvoiceActionRefused(_("Wait until these invoices are on the platform: %(numbers)s")
                                   % {"numbers": ", ".join(busy)})
    if name == "post":
        refused = [str(invoice) for invoice in invoices if not _post_allowed(invoice)]
        if refused:
            raise InvoiceActionRefused(_("Posting needs an invoice that has lines and is not cancelled: "
                                         "%(numbers)s") % {"numbers": ", ".join(refused)})
        unmapped = _unmapped_customers(invoices)
        if unmapped:
            raise InvoiceActionRefused(_unmapped_message(unmapped))


POSTING_ACTIONS = actions.ActionSet(
    client=lambda company, model: accounting(company), number="invoice_number", error=InvoiceActionRefused,
    empty=gettext_lazy("Select at least one invoice."), state_field="record_status",
    target=lambda invoice: target(invoice.remote_id, invoice.is_send),
    status_label=lambda status: PostingStatus(status).label, check=posting_check,
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
    """Post or reverse (posting_check's rules, then core.actions)."""
    return actions.action_request(Invoice, name, invoices)


def _unmapped_customers(invoices) -> list:
    """[(customer label, its current account or None, invoice numbers)] of the customers whose current account
    has no account mapping on the platform (2.6: "its account mapping must then be done in the accounting
    interface, otherwise the posting step fails"), read from the mirror: a request never calls the platform.
    A mapping made elsewhere reaches the mirror when the account is read again (its page offers it)."""
    if not invoices:
        return []
    company = invoices[0].company
    looked_up = accounts_api.invoice_accounts(company, [(invoice.target_vkn_tckn, invoice.current_account_code)
                                                        for invoice in invoices if invoice.current_account_id is None])
    accounts = {invoice.pk: invoice.current_account if invoice.current_account_id else
                looked_up[(invoice.target_vkn_tckn, invoice.current_account_code)] for invoice in invoices}
    mapped = accounts_api.mapped_account_ids([account for account in accounts.values() if account is not None])
    missing = {}
    for invoice in invoices:
        account = accounts[invoice.pk]
        if account is not None and account.pk in mapped:
            continue
        key = account.pk if account is not None else (invoice.target_vkn_tckn, invoice.current_account_code)
        label = (f"{account} ({account.identifier})" if account is not None else
                 " · ".join(filter(None, (invoice.target_title or invoice.target_vkn_tckn,
                                          invoice.current_account_code))))
        missing.setdefault(key, (label, account, []))[2].append(str(invoice))
    return list(missing.values())


def _unmapped_message(unmapped):
    """Which mapping is missing, for which invoices, and a link to where it is made (the account's Mappings tab,
    or the current accounts when the customer's account is not in the mirror)."""
    def where(account):
        if account is None:
            return format_html('<a href="{}">{}</a>', reverse("current_accounts:currentaccount_list"),
                               _("read the current accounts from the platform, then map it"))
        return format_html('<a href="{}?tab=mapping">{}</a>', reverse("current_accounts:currentaccount_detail",
                                                                      kwargs={"pk": account.pk}), _("map it here"))

    items = format_html_join("; ", "{} — {}: {} ({})", (
        (label, _("no account mapping to a sub-account"), ", ".join(numbers), where(account))
        for label, account, numbers in unmapped))
    return format_html("{} {}", _("Posting needs the invoice's current account (the customer or supplier) mapped to "
                                  "a sub-account of the chart of accounts; nothing was posted."), items)


# --- what core runs for this domain (read when the app is ready: core.domains) --------------------------------------
sync.register_pushable(Invoice, invoice_push)
actions.register_actions(Invoice, POSTING_ACTIONS)
