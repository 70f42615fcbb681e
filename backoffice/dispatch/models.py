"""Outgoing dispatch notes (e-İrsaliye) as the platform knows them (document 3, 2.9, 3.3, 4.5), their lines and
drivers, the documents fetched for them, the Excel exports, the dispatch taxpayer directory and the replies the
receivers sent to our notes.

A DispatchNote is mirrored (RemoteRecord): remote_id is the platform's id (a Guid), remote_status its status
(0 to 92). A note written here always carries a localReferenceId (the user's ERP id, or ours), so a create whose
answer was lost is found again by it and never created twice.
"""

import uuid

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from backoffice.core import codes
from backoffice.core.exports import PlatformExport, export_rules
from backoffice.core.fields import MONEY
from backoffice.core.generic.registry import model_url
from backoffice.core.models import RemoteRecord, made_by, record_indexes
from backoffice.core.search import FoldedSearchField
from backoffice.core.documents import KeptDocument

from .choices import (EDITABLE_STATUSES, SENT_STATUSES, Answer, DispatchStatus, DocumentKind, Numbering, Profile,
                      ReplyStatus, Source)

QUANTITY = {"max_digits": 18, "decimal_places": 6}


class DispatchNote(RemoteRecord):
    remote_id = models.CharField(_("platform id"), max_length=64, blank=True)
    remote_status = models.IntegerField(_("status"), null=True, blank=True, choices=DispatchStatus.choices)
    # What the create or update body asks for: 0 saves a draft, 20 saves and sends at once.
    requested_status = models.IntegerField(_("requested status"), choices=DispatchStatus.choices,
                                           default=DispatchStatus.DRAFT)
    status_message = models.TextField(_("platform message"), blank=True)
    # What the create or update answer warned of (document 3, 2.9: an undefined prefix, "no prefix found").
    platform_warning = models.TextField(_("platform's warning"), blank=True)
    source = models.CharField(_("written as"), max_length=10, choices=Source.choices, default=Source.FORM)
    numbering = models.CharField(_("numbering"), max_length=10, choices=Numbering.choices, default=Numbering.SERIES)
    despatch_number = models.CharField(_("dispatch note number"), max_length=16, blank=True)
    prefix = models.CharField(_("prefix"), max_length=3, blank=True)
    local_reference_id = models.CharField(_("ERP reference"), max_length=100, blank=True)
    xslt_code = models.CharField(_("layout code"), max_length=100, blank=True,
                                 help_text=_("The company's own layout on the platform; empty: the standard one."))
    # The platform's isNew: true until our listing has read the note and said so (mirror.outbox_mirror).
    is_new = models.BooleanField(_("new on the platform"), default=True)
    profile = models.CharField(_("profile"), max_length=20, choices=Profile.choices, default=Profile.TEMELIRSALIYE)
    issue_date = models.DateField(_("dispatch note date"), null=True, blank=True)
    issue_time = models.TimeField(_("dispatch note time"), null=True, blank=True)
    currency_code = models.CharField(_("currency"), max_length=3, default="TRY")
    # The receiver (addressBook): a current account, at a mailbox of the dispatch taxpayer directory.
    current_account = models.ForeignKey("current_accounts.CurrentAccount", on_delete=models.SET_NULL, null=True,
                                        blank=True, related_name="dispatch_notes",
                                        verbose_name=_("current account"))
    receiver_identifier = models.CharField(_("receiver's tax or national id"), max_length=11, blank=True)
    receiver_name = models.CharField(_("receiver"), max_length=500, blank=True)  # the legal title, as it is
    # The current account's code (document 3, 2.1): it tells accounts sharing an id apart here; the JSON model
    # has no member for it, so it is not sent, and never added to the title.
    receiver_code = models.CharField(_("current account code"), max_length=50, blank=True)
    target_alias = models.CharField(_("mailbox"), max_length=250, blank=True)
    receiver_city = models.CharField(_("receiver's city"), max_length=100, blank=True)
    receiver_district = models.CharField(_("receiver's district"), max_length=100, blank=True)
    receiver_country = models.CharField(_("receiver's country"), max_length=100, blank=True, default="Türkiye")
    # deliveryAddressInfo: where the goods go.
    delivery_district = models.CharField(_("delivery district"), max_length=100, blank=True)
    delivery_city = models.CharField(_("delivery city"), max_length=100, blank=True)
    delivery_zip_code = models.CharField(_("delivery postal code"), max_length=20, blank=True)
    delivery_country = models.CharField(_("delivery country"), max_length=100, blank=True, default="Türkiye")
    # despatchShipmentInfo: a carrier company, or the drivers (DispatchDriver); the plate either way.
    carrier_title = models.CharField(_("carrier company"), max_length=250, blank=True)
    carrier_vkn_tckn = models.CharField(_("carrier's tax or national id"), max_length=11, blank=True)
    plate_number = models.CharField(_("vehicle plate"), max_length=20, blank=True)
    shipment_date = models.DateTimeField(_("actual dispatch time"), null=True, blank=True)
    # despatchBuyerCustomerInfo (the actual recipient) and sellerSupplierInfo (the actual owner), when others.
    buyer_identifier = models.CharField(_("buyer's tax or national id"), max_length=11, blank=True)
    buyer_name = models.CharField(_("buyer's name or title"), max_length=250, blank=True)
    buyer_surname = models.CharField(_("buyer's surname"), max_length=100, blank=True)
    buyer_city = models.CharField(_("buyer's city"), max_length=100, blank=True)
    buyer_district = models.CharField(_("buyer's district"), max_length=100, blank=True)
    buyer_country = models.CharField(_("buyer's country"), max_length=100, blank=True)
    seller_identifier = models.CharField(_("seller's tax or national id"), max_length=11, blank=True)
    seller_name = models.CharField(_("seller's name or title"), max_length=250, blank=True)
    seller_surname = models.CharField(_("seller's surname"), max_length=100, blank=True)
    seller_city = models.CharField(_("seller's city"), max_length=100, blank=True)
    seller_district = models.CharField(_("seller's district"), max_length=100, blank=True)
    seller_country = models.CharField(_("seller's country"), max_length=100, blank=True)
    notes = models.TextField(_("notes"), blank=True, help_text=_("One note a line."))
    line_count = models.PositiveIntegerField(_("lines"), default=0)
    total_amount = models.DecimalField(_("amount before taxes"), default=0, **MONEY)
    tax_total = models.DecimalField(_("VAT"), default=0, **MONEY)
    payable_amount = models.DecimalField(_("total"), default=0, **MONEY)
    # The envelope to the tax authority (status answer; missing for some statuses).
    envelope_id = models.CharField(_("envelope"), max_length=64, blank=True)
    envelope_status = models.CharField(_("envelope status"), max_length=20, blank=True)
    envelope_message = models.TextField(_("envelope message"), blank=True)
    # The UBL way: the file as uploaded (checked before it was saved) and its original name.
    ubl_file = models.FileField(_("UBL file"), upload_to="dispatch/ubl/%Y/%m/", blank=True)
    ubl_name = models.CharField(_("file name"), max_length=255, blank=True)
    # The invoice that bills the note (issue 33), as the invoices domain keeps it (dispatch.invoicing.set_invoiced):
    # its number (or its draft's name) and where it is (core's record target, "invoices.invoice:<pk>"). Empty: not
    # invoiced, and counted by the 7-day watch while the note is sent (index dispatch_note_to_invoice).
    invoiced_as = models.CharField(_("invoice"), max_length=64, blank=True)
    invoiced_target = models.CharField(max_length=64, blank=True, editable=False)
    # The day the daily check marked the note's 7 days as running out (dispatch.invoicing.deadlines_mark).
    deadline_marked_on = models.DateField(_("marked as running out on"), null=True, blank=True)
    created_by = made_by()
    # What the list's search looks in, folded the Turkish way (core.search).
    search_text = FoldedSearchField(sources=("despatch_number", "receiver_name", "receiver_identifier",
                                             "local_reference_id", "plate_number"))

    class Meta(RemoteRecord.Meta):
        ordering = ["-created_at", "-id"]
        verbose_name = _("dispatch note")
        verbose_name_plural = _("dispatch notes")
        constraints = [
            models.UniqueConstraint(fields=["company", "remote_id"], condition=~Q(remote_id=""),
                                    name="dispatch_note_unique_id"),
            # The ERP's id matches one note: the duplicate check of the form, kept by the database too.
            models.UniqueConstraint(fields=["company", "local_reference_id"], condition=~Q(local_reference_id=""),
                                    name="dispatch_note_unique_reference"),
            models.UniqueConstraint(fields=["company", "despatch_number"], condition=~Q(despatch_number=""),
                                    name="dispatch_note_unique_number"),
        ]
        indexes = [*record_indexes("dispatch_note"),
                   models.Index(fields=["company", "-issue_date", "-id"], name="dispatch_note_co_issued"),
                   models.Index(fields=["company", "remote_status", "-created_at"], name="dispatch_note_co_status"),
                   models.Index(fields=["company", "receiver_identifier"], name="dispatch_note_co_receiver"),
                   # the 7-day watch: sent, not invoiced, by date (a few rows of a million); by status too, for the
                   # list's "still moving?" look-up among them (a scan of the watch's rows otherwise)
                   models.Index(fields=["company", "issue_date"], name="dispatch_note_to_invoice",
                                condition=Q(invoiced_as="", remote_status__in=SENT_STATUSES)),
                   models.Index(fields=["company", "remote_status", "issue_date"], name="dispatch_note_to_invoice_st",
                                condition=Q(invoiced_as="", remote_status__in=SENT_STATUSES))]

    def __str__(self):
        return self.despatch_number or str(_("Dispatch note %(reference)s") % {"reference": self.local_reference_id
                                                                               or self.pk or ""})

    @property
    def status_color(self) -> str:
        return DispatchStatus.color(self.remote_status)

    @property
    def is_editable(self) -> bool:
        """Document 3, 3.3: an update only as a draft or after an error (or while the platform has nothing)."""
        return not self.is_busy and (not self.remote_id or self.remote_status in EDITABLE_STATUSES)

    @property
    def has_carrier(self) -> bool:
        return bool(self.carrier_title or self.carrier_vkn_tckn)

    def note_list(self) -> list[str]:
        return [line.strip() for line in self.notes.splitlines() if line.strip()]

    @staticmethod
    def new_reference() -> str:
        """Our localReferenceId when the user gives none: how a lost create is found again."""
        return f"BO-{uuid.uuid4().hex[:20].upper()}"


class DispatchLine(models.Model):
    note = models.ForeignKey(DispatchNote, on_delete=models.CASCADE, related_name="lines")
    position = models.PositiveIntegerField(_("line"), default=0)
    product_name = models.CharField(_("product"), max_length=250)
    product_code = models.CharField(_("product code"), max_length=100, blank=True)
    quantity = models.DecimalField(_("quantity"), **QUANTITY)
    unit_code = models.CharField(_("unit"), max_length=10, default="C62")
    unit_price = models.DecimalField(_("unit price"), default=0, **QUANTITY)
    vat_rate = models.DecimalField(_("VAT %"), max_digits=5, decimal_places=2, default=0)
    line_amount = models.DecimalField(_("amount"), default=0, **MONEY)
    vat_amount = models.DecimalField(_("VAT"), default=0, **MONEY)

    class Meta:
        ordering = ["position", "id"]
        verbose_name = _("dispatch note line")
        verbose_name_plural = _("dispatch note lines")

    @property
    def unit_label(self) -> str:
        return codes.label(codes.UNIT_CODES, self.unit_code)


class DispatchDriver(models.Model):
    note = models.ForeignKey(DispatchNote, on_delete=models.CASCADE, related_name="drivers")
    position = models.PositiveIntegerField(default=0)
    name = models.CharField(_("driver's name"), max_length=100)
    surname = models.CharField(_("driver's surname"), max_length=100)
    tckn = models.CharField(_("driver's national id"), max_length=11)

    class Meta:
        ordering = ["position", "id"]
        verbose_name = _("driver")
        verbose_name_plural = _("drivers")

    def __str__(self):
        return f"{self.name} {self.surname}"


class DispatchDocument(KeptDocument):
    """A PDF, HTML, UBL or ZIP of a note, kept once fetched at the note's status (core.documents)."""

    note = models.ForeignKey(DispatchNote, on_delete=models.CASCADE, related_name="documents")
    kind = models.CharField(_("kind"), max_length=4, choices=DocumentKind.choices)
    file = models.FileField(_("file"), upload_to="dispatch/documents/%Y/%m/")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["note", "kind", "standard"], name="dispatch_document_unique")]
        verbose_name = _("dispatch note document")
        verbose_name_plural = _("dispatch note documents")


class DispatchExport(PlatformExport):
    """An Excel export of outgoing notes (document 3, 4.5), fetched within its 24 hours and kept here."""

    file = models.FileField(_("file"), upload_to="dispatch-exports/%Y/%m/", blank=True)
    file_prefix = "dispatch-notes"

    class Meta(PlatformExport.Meta):
        constraints, indexes = export_rules("dispatch_export_unique_id", "dispatch_export_co_new")
        verbose_name = _("dispatch note export")
        verbose_name_plural = _("dispatch note exports")


class OutboxSync(models.Model):
    """Where the listing of the company's outgoing notes stands (notes written elsewhere, e.g. on the portal)."""

    company = models.OneToOneField("core.Company", on_delete=models.CASCADE, related_name="+")
    listed_at = models.DateTimeField(null=True, blank=True)


class DispatchTaxpayer(models.Model):
    """The dispatch-note users and their mailboxes (the platform's taxpayer list, the same for every company):
    who gets an e-dispatch note at which alias. Someone not listed gets one at the generic recipient alias."""

    identifier = models.CharField(_("tax or national id"), max_length=11)
    alias = models.CharField(_("mailbox"), max_length=250)
    title = models.CharField(_("title"), max_length=500, blank=True)
    app_type = models.CharField(_("type"), max_length=10, blank=True)
    seen_at = models.DateTimeField()  # the refresh that last listed it: older ones are gone from the list
    search_text = FoldedSearchField(sources=("identifier", "title", "alias"))

    class Meta:
        ordering = ["identifier", "alias"]
        constraints = [models.UniqueConstraint(fields=["identifier", "alias", "app_type"],
                                               name="dispatch_taxpayer_unique")]
        indexes = [models.Index(fields=["title"], name="dispatch_taxpayer_title"),
                   models.Index(fields=["seen_at"], name="dispatch_taxpayer_seen")]
        verbose_name = _("dispatch-note user")
        verbose_name_plural = _("dispatch-note users")

    def __str__(self):
        return f"{self.identifier} {self.alias}"


# --- the replies receivers sent to our notes ---------------------------------------------------------------------
class ReceivedReply(models.Model):
    """A reply a receiver sent to one of our outgoing notes (the receipt list), with its lines read from its UBL:
    the outgoing note shows them."""

    company = models.ForeignKey("core.Company", on_delete=models.PROTECT, related_name="+")
    remote_id = models.CharField(_("platform id"), max_length=64)
    receipt_number = models.CharField(_("reply number"), max_length=16, blank=True)
    remote_status = models.IntegerField(_("status"), null=True, blank=True, choices=ReplyStatus.choices)
    received_at = models.DateTimeField(_("received"), null=True, blank=True)
    despatch_id = models.CharField(_("dispatch note id"), max_length=64, blank=True)
    despatch_number = models.CharField(_("dispatch note number"), max_length=16, blank=True)
    note = models.ForeignKey(DispatchNote, on_delete=models.SET_NULL, null=True, blank=True, related_name="receipts",
                             verbose_name=_("dispatch note"))
    sender_identifier = models.CharField(_("answered by (tax id)"), max_length=11, blank=True)
    sender_title = models.CharField(_("answered by"), max_length=500, blank=True)
    answer = models.CharField(_("answer"), max_length=10, choices=Answer.choices, blank=True)
    lines_read_at = models.DateTimeField(_("lines read"), null=True, blank=True)
    read_error = models.TextField(_("reading error"), blank=True)
    # What the list's search looks in, folded the Turkish way (core.search).
    search_text = FoldedSearchField(sources=("receipt_number", "despatch_number", "sender_title", "sender_identifier"))

    class Meta:
        ordering = ["-received_at", "-id"]
        verbose_name = _("reply received")
        verbose_name_plural = _("replies received")
        constraints = [models.UniqueConstraint(fields=["company", "remote_id"], name="dispatch_received_unique_id")]
        indexes = [models.Index(fields=["company", "-received_at", "-id"], name="dispatch_received_co_new"),
                   models.Index(fields=["company", "despatch_id"], name="dispatch_received_co_note")]

    def __str__(self):
        return self.receipt_number or self.remote_id

    def get_absolute_url(self):
        return model_url(self.note, "detail") if self.note_id else model_url(ReceivedReply, "list")


class ReceivedReplyLine(models.Model):
    reply = models.ForeignKey(ReceivedReply, on_delete=models.CASCADE, related_name="lines")
    line_id = models.CharField(_("line id"), max_length=50)
    product_name = models.CharField(_("product"), max_length=500, blank=True)
    unit_code = models.CharField(_("unit"), max_length=10, blank=True)
    accepted = models.DecimalField(_("accepted"), **QUANTITY)
    rejected = models.DecimalField(_("rejected"), default=0, **QUANTITY)
    reason = models.CharField(_("reason"), max_length=500, blank=True)

    class Meta:
        ordering = ["id"]
