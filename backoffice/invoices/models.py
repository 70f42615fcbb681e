"""Invoices as the accounting service keeps them (document 3, 2.6), with what the invoice service adds
(document 1, section 8): the status, the PDF, HTML and UBL.

An Invoice is mirrored (RemoteRecord): outgoing ones are written here and pushed (core.resources), both
directions come back from the platform's two lists. remote_status is the invoice's status (invoiceStatus,
polled on the invoice service); record_status is whether it is posted to accounting (the post and reverse
actions). We give an invoice made here its ettn before the first send, so a save whose answer was lost is
found again by that ettn and never saved twice.
"""

import uuid

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from backoffice.core import codes
from backoffice.core.fields import MONEY
from backoffice.core.models import Company, RemoteRecord, made_by, record_indexes
from backoffice.core.search import FoldedSearchField
from backoffice.core.documents import KeptDocument

from .choices import (Answer, DocumentKind, InvoiceStatus, InvoiceType, MatchState, PostingStatus, Profile, RecordType,
                      ResponseStatus, status_label)

RATE = {"max_digits": 18, "decimal_places": 6}  # exchange rates and quantities


class Invoice(RemoteRecord):
    remote_id = models.CharField(_("ETTN"), max_length=64, blank=True)
    # Ours for an invoice written here (sent as generalInfoModel.ettn), the platform's for a mirrored one.
    ettn = models.CharField(_("ETTN"), max_length=64, default="", blank=True)
    is_send = models.BooleanField(_("outgoing"), default=True)
    record_type = models.PositiveSmallIntegerField(_("invoice kind"), choices=RecordType.choices,
                                                   default=RecordType.EARCHIVE)
    profile = models.CharField(_("profile"), max_length=30, blank=True, choices=Profile.choices)
    invoice_type = models.CharField(_("invoice type"), max_length=30, blank=True, choices=InvoiceType.choices,
                                    default=InvoiceType.SATIS)
    prefix = models.CharField(_("number prefix"), max_length=3, blank=True)
    invoice_number = models.CharField(_("invoice number"), max_length=20, blank=True)
    # invoiceStatus (the invoice service's codes: labels in lists and filters; an unknown code shows as it is).
    remote_status = models.IntegerField(_("status"), null=True, blank=True, choices=InvoiceStatus.choices)
    record_status = models.PositiveSmallIntegerField(_("posting"), choices=PostingStatus.choices,
                                                     default=PostingStatus.NOT_POSTED)
    status_message = models.TextField(_("platform message"), blank=True)
    invoice_process_status = models.IntegerField(_("processing status"), null=True, blank=True)
    branch_id = models.BigIntegerField(_("branch id"), null=True, blank=True)
    issue_date = models.DateField(_("issue date"), null=True, blank=True)
    description = models.CharField(_("description"), max_length=500, blank=True)
    # The customer (outgoing) or the supplier (incoming), as the platform names it.
    current_account = models.ForeignKey("current_accounts.CurrentAccount", on_delete=models.SET_NULL, null=True,
                                        blank=True, related_name="invoices", verbose_name=_("current account"))
    current_account_code = models.CharField(_("account code"), max_length=50, blank=True)
    target_alias = models.CharField(_("mailbox"), max_length=250, blank=True)
    target_title = models.CharField(_("title"), max_length=500, blank=True)
    target_vkn_tckn = models.CharField(_("tax or national id"), max_length=11, blank=True)
    line_count = models.PositiveIntegerField(_("lines"), default=0)
    currency_code = models.CharField(_("currency"), max_length=3, default="TRY")
    currency_id = models.IntegerField(_("currency id"), null=True, blank=True)
    exchange_rate = models.DecimalField(_("exchange rate"), null=True, blank=True, **RATE)
    exchange_rate_source = models.CharField(_("exchange rate source"), max_length=100, blank=True)
    exchange_rate_comment = models.CharField(_("exchange rate comment"), max_length=250, blank=True)
    tax_exclusive_amount = models.DecimalField(_("amount before taxes"), null=True, blank=True, **MONEY)
    tax_total = models.DecimalField(_("taxes"), null=True, blank=True, **MONEY)
    total_amount = models.DecimalField(_("total"), null=True, blank=True, **MONEY)
    payable_amount = models.DecimalField(_("payable"), null=True, blank=True, **MONEY)
    withholding_total = models.DecimalField(_("withholding"), null=True, blank=True, **MONEY)
    allowance_total = models.DecimalField(_("discounts"), null=True, blank=True, **MONEY)
    # Of an invoice written here only, as computed when saved (totals.py); the platform's lists do not carry them.
    vat_total = models.DecimalField(_("VAT"), null=True, blank=True, **MONEY)
    added_taxes_total = models.DecimalField(_("Other taxes added"), null=True, blank=True, **MONEY)
    deducted_taxes_total = models.DecimalField(_("Stopaj deducted"), null=True, blank=True, **MONEY)
    created_on_platform = models.DateTimeField(_("created on the platform"), null=True, blank=True)
    updated_on_platform = models.DateTimeField(_("changed on the platform"), null=True, blank=True, db_index=True)
    return_invoice_number = models.CharField(_("returned invoice number"), max_length=20, blank=True)
    return_invoice_date = models.DateField(_("returned invoice date"), null=True, blank=True)
    notes = models.TextField(_("notes"), blank=True, help_text=_("One note a line."))
    # paymentMeansModel
    payment_means_code = models.CharField(_("payment means"), max_length=10, blank=True)
    payment_due_date = models.DateField(_("payment due date"), null=True, blank=True)
    payment_channel_code = models.CharField(_("payment channel"), max_length=50, blank=True)
    instruction_note = models.CharField(_("payment instruction"), max_length=250, blank=True)
    payee_financial_account_id = models.CharField(_("payee IBAN"), max_length=34, blank=True)
    # archiveInfoModel (e-archive)
    is_internet_sale = models.BooleanField(_("internet sale"), default=False)
    website_url = models.CharField(_("website"), max_length=250, blank=True)
    shipment_sender_tckn_vkn = models.CharField(_("carrier's tax or national id"), max_length=11, blank=True)
    shipment_send_type = models.CharField(_("delivery"), max_length=20, blank=True)
    shipment_sender_name = models.CharField(_("carrier's name"), max_length=250, blank=True)
    shipment_sender_surname = models.CharField(_("carrier's surname"), max_length=250, blank=True)
    shipment_date = models.DateField(_("shipment date"), null=True, blank=True)
    hide_despatch_message = models.BooleanField(_("hide the dispatch note text"), default=False)
    subscription_type = models.CharField(_("subscription type"), max_length=20, blank=True)
    subscription_type_number = models.CharField(_("subscription number"), max_length=50, blank=True)
    # Our answer to an incoming commercial invoice (answers.py): what we answered, why, and its life on the platform.
    response_answer = models.CharField(_("our answer"), max_length=10, choices=Answer.choices, blank=True)
    response_reason = models.CharField(_("reason for rejection"), max_length=500, blank=True)
    response_id = models.CharField(_("answer id"), max_length=64, blank=True)
    response_status = models.IntegerField(_("answer status"), null=True, blank=True, choices=ResponseStatus.choices)
    response_message = models.TextField(_("answer's platform message"), blank=True)
    responded_at = models.DateTimeField(_("answered at"), null=True, blank=True)
    # An e-archive invoice cancelled from here (answers.py): why (the platform's call takes ids only) and when.
    cancel_reason = models.CharField(_("reason for cancellation"), max_length=500, blank=True)
    cancelled_at = models.DateTimeField(_("cancelled at"), null=True, blank=True)
    # An incoming invoice held against the dispatch notes it bills (matching.py); "" not checked yet.
    match_state = models.CharField(_("against the goods"), max_length=12, choices=MatchState.choices, blank=True)
    # The platform's whole record (get invoice), read when the invoice is opened.
    detail = models.JSONField(_("platform record"), null=True, blank=True)
    detail_read_at = models.DateTimeField(_("read in full at"), null=True, blank=True)
    created_by = made_by()
    # What the list's search looks in, folded the Turkish way (core.search).
    search_text = FoldedSearchField(sources=("invoice_number", "target_title", "target_vkn_tckn", "description"))

    class Meta(RemoteRecord.Meta):
        ordering = ["-issue_date", "-id"]
        verbose_name = _("invoice")
        verbose_name_plural = _("invoices")
        constraints = [
            models.UniqueConstraint(fields=["company", "is_send", "remote_id"], condition=~Q(remote_id=""),
                                    name="invoices_unique_ettn"),
            # Ours before the platform confirmed it: the mirror, meeting it in a list while its save's answer is
            # lost, skips it (bulk_create ignores the conflict) instead of making a second row.
            models.UniqueConstraint(fields=["company", "is_send", "ettn"], condition=~Q(ettn=""),
                                    name="invoices_unique_own_ettn"),
        ]
        indexes = [*record_indexes("invoices"),
                   models.Index(fields=["company", "-issue_date", "-id"], name="invoices_co_issued"),
                   models.Index(fields=["company", "is_send", "-issue_date", "-id"], name="invoices_co_dir"),
                   models.Index(fields=["company", "target_vkn_tckn"], name="invoices_co_vkn"),
                   models.Index(fields=["company", "invoice_number"], name="invoices_co_number"),
                   models.Index(fields=["company", "remote_status", "status_read_at"], name="invoices_co_status"),
                   # the incoming list's filters of issue 33: invoices to answer (by arrival), those that differ
                   models.Index(fields=["company", "created_on_platform"], name="invoices_to_answer",
                                condition=Q(is_send=False, remote_status=InvoiceStatus.AWAITING_APPROVAL,
                                            profile=Profile.TICARIFATURA)),
                   models.Index(fields=["company", "match_state", "-issue_date"], name="invoices_co_match",
                                condition=Q(is_send=False) & ~Q(match_state=""))]

    def __str__(self):
        return self.invoice_number or str(_("Invoice %(ettn)s") % {"ettn": (self.ettn or self.remote_id)[:8]})

    @property
    def is_einvoice(self) -> bool:
        return self.record_type == RecordType.EINVOICE

    @property
    def is_posted(self) -> bool:
        return self.record_status == PostingStatus.POSTED

    @property
    def status_label(self) -> str:
        return "" if self.remote_status is None else status_label(self.remote_status)

    @property
    def status_color(self) -> str:
        return InvoiceStatus.color(self.remote_status)

    @property
    def service_kind(self) -> str:
        """The invoice service's path family: inbox (incoming), earchive or outbox (outgoing e-invoice)."""
        if not self.is_send:
            return "inbox"
        return "outbox" if self.is_einvoice else "earchive"

    def note_list(self) -> list[str]:
        return [line.strip() for line in self.notes.splitlines() if line.strip()]

    def new_ettn(self) -> str:
        self.ettn = str(uuid.uuid4())
        return self.ettn


class InvoiceLine(models.Model):
    """A line as written here (the platform's lines of a mirrored invoice stay in Invoice.detail)."""

    invoice = models.ForeignKey(Invoice, on_delete=models.CASCADE, related_name="lines")
    position = models.PositiveIntegerField(_("line"), default=0)
    inventory_service_code = models.CharField(_("product or service code"), max_length=100)
    warehouse_code = models.CharField(_("warehouse code"), max_length=50, blank=True)
    quantity = models.DecimalField(_("quantity"), **RATE)
    unit_code = models.CharField(_("unit"), max_length=10, default="C62")
    unit_price = models.DecimalField(_("unit price"), **RATE)
    discount_rate = models.DecimalField(_("discount %"), max_digits=5, decimal_places=2, null=True, blank=True)
    discount_amount = models.DecimalField(_("discount"), null=True, blank=True, **MONEY)
    vat_rate = models.DecimalField(_("VAT %"), max_digits=5, decimal_places=2)
    vat_exemption_reason_code = models.CharField(_("VAT exemption reason"), max_length=10, blank=True)
    withholding_code = models.CharField(_("VAT withholding"), max_length=10, blank=True)
    other_tax_code = models.CharField(_("other tax"), max_length=10, blank=True)
    other_tax_rate = models.DecimalField(_("other tax %"), max_digits=5, decimal_places=2, null=True, blank=True)
    # Made from a dispatch note's line (from_dispatch.py): "<note number> · <line>", the quantity the note carried
    # and the quantity the receiver accepted (None: it answered nothing for the line); shown beside the line.
    despatch_source = models.CharField(_("dispatch note line"), max_length=40, blank=True)
    despatched_quantity = models.DecimalField(_("dispatched quantity"), null=True, blank=True, **RATE)
    accepted_quantity = models.DecimalField(_("accepted quantity"), null=True, blank=True, **RATE)
    # As computed when saved (totals.py), the figures the platform computes the same way.
    line_extension_amount = models.DecimalField(_("net amount"), default=0, **MONEY)
    vat_amount = models.DecimalField(_("VAT"), default=0, **MONEY)
    withholding_amount = models.DecimalField(_("withholding"), default=0, **MONEY)
    other_tax_amount = models.DecimalField(_("other tax"), default=0, **MONEY)

    @property
    def unit_label(self) -> str:
        return codes.label(codes.UNIT_CODES, self.unit_code)

    class Meta:
        ordering = ["position", "id"]
        verbose_name = _("invoice line")
        verbose_name_plural = _("invoice lines")


class DispatchReference(models.Model):
    """A dispatch note an outgoing invoice bills (from_dispatch.py): while the invoice stands (not deleted, not
    declined, returned or cancelled) the note is invoiced. Its number and date are kept as the invoice wrote them."""

    invoice = models.ForeignKey(Invoice, on_delete=models.CASCADE, related_name="dispatch_references")
    note = models.ForeignKey("dispatch.DispatchNote", on_delete=models.SET_NULL, null=True, blank=True,
                             related_name="+", verbose_name=_("dispatch note"))
    despatch_number = models.CharField(_("dispatch note number"), max_length=16, blank=True)
    issue_date = models.DateField(_("dispatch note date"), null=True, blank=True)

    class Meta:
        ordering = ["issue_date", "despatch_number", "id"]
        constraints = [models.UniqueConstraint(fields=["invoice", "note"], name="invoices_dispatch_ref_unique")]
        verbose_name = _("dispatch note invoiced")
        verbose_name_plural = _("dispatch notes invoiced")

    def __str__(self):
        return self.despatch_number


class InvoiceMatch(models.Model):
    """What an incoming invoice's lines were held against (matching.py): the dispatch notes it bills and, per
    invoice line, the quantity and price invoiced beside the quantity we accepted on our answer."""

    invoice = models.OneToOneField(Invoice, on_delete=models.CASCADE, related_name="match")
    checked_at = models.DateTimeField(_("checked at"), auto_now=True)
    # [{"number", "date", "pk", "found_by"}]: "reference" (the UBL names it), "note" (a note line names it) or
    # "supplier" (the supplier's notes of the days before the invoice)
    notes = models.JSONField(default=list, blank=True)
    # [{"line_id", "name", "unit", "invoiced", "price", "accepted", "dispatched", "note_price", "problem"}]
    lines = models.JSONField(default=list, blank=True)
    error = models.TextField(_("reading error"), blank=True)

    class Meta:
        verbose_name = _("check against the goods")
        verbose_name_plural = _("checks against the goods")


class InvoiceDocument(KeptDocument):
    """A PDF, HTML or UBL of an invoice, kept once fetched (core.documents); the invoice service has one layout."""

    invoice = models.ForeignKey(Invoice, on_delete=models.CASCADE, related_name="documents")
    kind = models.CharField(_("kind"), max_length=4, choices=DocumentKind.choices)
    file = models.FileField(_("file"), upload_to="invoices/%Y/%m/")
    standard = None

    class Meta:
        constraints = [models.UniqueConstraint(fields=["invoice", "kind"], name="invoices_document_unique")]
        verbose_name = _("invoice document")
        verbose_name_plural = _("invoice documents")


class PdfBundle(models.Model):
    """The PDFs of many invoices in one ZIP, fetched in the background at the full allowed rate."""

    company = models.ForeignKey(Company, on_delete=models.CASCADE, related_name="+")
    created_by = made_by(None)
    invoices = models.ManyToManyField(Invoice, related_name="+")
    total = models.PositiveIntegerField(default=0)
    fetched = models.PositiveIntegerField(default=0)
    file = models.FileField(_("file"), upload_to="invoices/bundles/%Y/%m/", blank=True)
    # Invoices whose PDF the platform refused (a 404, a document it cannot make): left out, each with why.
    skipped = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = _("PDF bundle")
        verbose_name_plural = _("PDF bundles")

    def __str__(self):
        return str(_("PDFs of %(count)s invoices") % {"count": self.total})

    @property
    def done(self) -> bool:
        return self.finished_at is not None


class ListSync(models.Model):
    """Where the incremental mirror of one of the platform's two lists stands for a company."""

    company = models.ForeignKey(Company, on_delete=models.CASCADE, related_name="+")
    is_send = models.BooleanField()
    # The newest updateDateUtc stored: the next run asks from there (with an overlap).
    changed_until = models.DateTimeField(null=True, blank=True)
    full_at = models.DateTimeField(null=True, blank=True)  # the last walk of the whole list

    class Meta:
        constraints = [models.UniqueConstraint(fields=["company", "is_send"], name="invoices_listsync_unique")]


class Taxpayer(models.Model):
    """The tax authority's registered users (its public taxpayer list; one for every company): who gets an
    e-invoice, at which mailbox (alias). Someone not listed gets an e-archive invoice."""

    identifier = models.CharField(_("tax or national id"), max_length=11)
    alias = models.CharField(_("mailbox"), max_length=250)
    title = models.CharField(_("title"), max_length=500, blank=True)
    app_type = models.CharField(_("application"), max_length=10, blank=True)
    registered_at = models.DateTimeField(_("registered on"), null=True, blank=True)
    seen_at = models.DateTimeField()  # the refresh that last listed it: older ones are gone from the list
    search_text = FoldedSearchField(sources=("identifier", "title", "alias"))

    class Meta:
        ordering = ["identifier", "alias"]
        constraints = [models.UniqueConstraint(fields=["identifier", "alias", "app_type"],
                                               name="invoices_taxpayer_unique")]
        indexes = [models.Index(fields=["title"], name="invoices_taxpayer_title")]
        verbose_name = _("registered e-invoice user")
        verbose_name_plural = _("registered e-invoice users")

    def __str__(self):
        return f"{self.identifier} {self.alias}"
