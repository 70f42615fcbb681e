"""Incoming dispatch notes (document 3, 4.5) and our replies to them: the notes another company sent us, as the
incoming list gives them, their lines read from their UBL, our replies (ReceiptAdvice, "İrsaliye Yanıtı") with their
lines, the documents fetched for both, the Excel exports of incoming notes and where the company's lists stand.

The tables are those the dispatch app made when it held the receiving side too (db_table): the models moved here
in state only (migrations/0001_initial.py).
"""

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from backoffice.core import codes, domains
from backoffice.core.exports import PlatformExport, export_rules
from backoffice.core.fields import MONEY
from backoffice.core.models import RemoteRecord, made_by, record_indexes
from backoffice.core.search import FoldedSearchField
from backoffice.core.documents import KeptDocument

from .choices import REPLY_EDITABLE_STATUSES, Answer, DispatchStatus, DocumentKind, ReplyStatus, ReplyWay

dispatch_api = domains.api("dispatch")


class IncomingNote(RemoteRecord):
    """A dispatch note another company sent us, as the incoming list gives it; its lines are read from its UBL the
    first time someone opens it (the list carries none). remote_status: 70 while it waits for our answer."""

    remote_id = models.CharField(_("platform id"), max_length=64)
    remote_status = models.IntegerField(_("status"), null=True, blank=True, choices=DispatchStatus.choices)
    despatch_number = models.CharField(_("dispatch note number"), max_length=16, blank=True)
    sender_identifier = models.CharField(_("sender's tax or national id"), max_length=11, blank=True)
    sender_title = models.CharField(_("sender"), max_length=500, blank=True)
    profile = models.CharField(_("profile"), max_length=20, blank=True)
    issue_date = models.DateField(_("dispatch note date"), null=True, blank=True)
    issue_time = models.TimeField(_("dispatch note time"), null=True, blank=True)
    received_at = models.DateTimeField(_("received"), null=True, blank=True)  # the platform's createdDate
    line_count = models.PositiveIntegerField(_("lines"), null=True, blank=True)
    payable_amount = models.DecimalField(_("total"), null=True, blank=True, **MONEY)
    currency_code = models.CharField(_("currency"), max_length=3, blank=True)
    # The reply the platform names for the note (written here or elsewhere, e.g. on its portal).
    receipt_id = models.CharField(_("reply id"), max_length=64, blank=True)
    receipt_number = models.CharField(_("reply number"), max_length=16, blank=True)
    lines_read_at = models.DateTimeField(_("lines read"), null=True, blank=True)
    # The day the daily check marked the note's 7 days to answer as running out (dispatch_inbox.watch).
    deadline_marked_on = models.DateField(_("marked as running out on"), null=True, blank=True)
    # What the list's search looks in, folded the Turkish way (core.search).
    search_text = FoldedSearchField(sources=("despatch_number", "sender_title", "sender_identifier", "receipt_number"))

    class Meta(RemoteRecord.Meta):
        db_table = "dispatch_incomingnote"
        ordering = ["-received_at", "-id"]
        verbose_name = _("incoming dispatch note")
        verbose_name_plural = _("incoming dispatch notes")
        constraints = [models.UniqueConstraint(fields=["company", "remote_id"], name="dispatch_incoming_unique_id")]
        indexes = [*record_indexes("dispatch_incoming"),
                   models.Index(fields=["company", "-received_at", "-id"], name="dispatch_incoming_co_received"),
                   models.Index(fields=["company", "remote_status", "received_at"], name="dispatch_incoming_co_status"),
                   models.Index(fields=["company", "sender_identifier"], name="dispatch_incoming_co_sender"),
                   models.Index(fields=["company", "despatch_number"], name="dispatch_incoming_co_number"),
                   # the list refreshes itself while an answer is on its way: found without reading every note
                   models.Index(fields=["company"], condition=~models.Q(pending_action=""),
                                name="dispatch_incoming_pending")]

    def __str__(self):
        return self.despatch_number or self.remote_id

    @property
    def status_color(self) -> str:
        return DispatchStatus.color(self.remote_status)


class IncomingLine(models.Model):
    note = models.ForeignKey(IncomingNote, on_delete=models.CASCADE, related_name="lines")
    position = models.PositiveIntegerField(_("line"), default=0)
    line_id = models.CharField(_("line id"), max_length=50)  # the UBL's DespatchLine/cbc:ID, which replies name
    product_name = models.CharField(_("product"), max_length=500, blank=True)
    product_code = models.CharField(_("product code"), max_length=100, blank=True)
    quantity = models.DecimalField(_("delivered quantity"), **dispatch_api.QUANTITY)
    unit_code = models.CharField(_("unit"), max_length=10, blank=True)

    class Meta:
        db_table = "dispatch_incomingline"
        ordering = ["position", "id"]
        verbose_name = _("incoming dispatch note line")
        verbose_name_plural = _("incoming dispatch note lines")

    @property
    def unit_label(self) -> str:
        return codes.label(codes.UNIT_CODES, self.unit_code)


class DispatchReply(RemoteRecord):
    """Our answer to an incoming note (a ReceiptAdvice, "İrsaliye Yanıtı"), mirrored: remote_id the reply's id on
    the platform, remote_status its status (0, 20, 40, 50, 60). A UBL reply carries our own UUID, so a create whose
    answer was lost is found by it; an approval, rejection or partial acceptance is found by the note's status."""

    remote_status = models.IntegerField(_("status"), null=True, blank=True, choices=ReplyStatus.choices)
    note = models.ForeignKey(IncomingNote, on_delete=models.PROTECT, related_name="replies",
                             verbose_name=_("incoming dispatch note"))
    way = models.CharField(_("sent as"), max_length=20, choices=ReplyWay.choices)
    answer = models.CharField(_("answer"), max_length=10, choices=Answer.choices)
    requested_status = models.IntegerField(_("requested status"), choices=ReplyStatus.choices,
                                           default=ReplyStatus.QUEUED)
    uuid = models.CharField(_("UUID"), max_length=36, blank=True)  # of our UBL, which becomes the reply's id
    receipt_number = models.CharField(_("reply number"), max_length=16, blank=True)
    manual_number = models.BooleanField(_("number in the file"), default=False)
    prefix = models.CharField(_("prefix"), max_length=3, blank=True)
    reason = models.TextField(_("reason for rejection"), blank=True)
    delivered_at = models.DateTimeField(_("actual delivery time"), null=True, blank=True)
    delivery_contact = models.CharField(_("received by"), max_length=250, blank=True)
    # Several notes approved or rejected in one call share it: they go to the platform together.
    batch = models.CharField(max_length=32, blank=True, db_index=True)
    status_message = models.TextField(_("platform message"), blank=True)
    envelope_id = models.CharField(_("envelope"), max_length=64, blank=True)
    envelope_status = models.CharField(_("envelope status"), max_length=20, blank=True)
    envelope_message = models.TextField(_("envelope message"), blank=True)
    ubl_file = models.FileField(_("UBL file"), upload_to="dispatch/replies/%Y/%m/", blank=True)
    ubl_name = models.CharField(_("file name"), max_length=255, blank=True)
    created_by = made_by()

    class Meta(RemoteRecord.Meta):
        db_table = "dispatch_dispatchreply"
        ordering = ["-created_at", "-id"]
        verbose_name = _("dispatch note reply")
        verbose_name_plural = _("dispatch note replies")
        constraints = [models.UniqueConstraint(fields=["company", "remote_id"], condition=~Q(remote_id=""),
                                               name="dispatch_reply_unique_id")]
        indexes = [*record_indexes("dispatch_reply"),
                   models.Index(fields=["company", "remote_status"], name="dispatch_reply_co_status"),
                   models.Index(fields=["company"], condition=~models.Q(pending_action=""),
                                name="dispatch_reply_pending")]

    def __str__(self):
        return self.receipt_number or str(_("Reply to %(number)s") % {"number": self.note.despatch_number})

    @property
    def status_color(self) -> str:
        return ReplyStatus.color(self.remote_status)

    @property
    def is_editable(self) -> bool:
        return not self.is_busy and self.remote_status in REPLY_EDITABLE_STATUSES


class ReplyLine(models.Model):
    reply = models.ForeignKey(DispatchReply, on_delete=models.CASCADE, related_name="lines")
    line_id = models.CharField(_("line id"), max_length=50)
    product_name = models.CharField(_("product"), max_length=500, blank=True)
    unit_code = models.CharField(_("unit"), max_length=10, blank=True)
    delivered = models.DecimalField(_("delivered"), null=True, blank=True, **dispatch_api.QUANTITY)
    accepted = models.DecimalField(_("accepted"), **dispatch_api.QUANTITY)
    rejected = models.DecimalField(_("rejected"), default=0, **dispatch_api.QUANTITY)
    reason = models.CharField(_("reason"), max_length=500, blank=True)

    class Meta:
        db_table = "dispatch_replyline"
        ordering = ["id"]
        verbose_name = _("reply line")
        verbose_name_plural = _("reply lines")


class IncomingDocument(KeptDocument):
    """A PDF, HTML or UBL of an incoming note or of a reply, kept once fetched at the record's status."""

    note = models.ForeignKey(IncomingNote, on_delete=models.CASCADE, null=True, blank=True, related_name="documents")
    reply = models.ForeignKey(DispatchReply, on_delete=models.CASCADE, null=True, blank=True,
                              related_name="documents")
    kind = models.CharField(_("kind"), max_length=4, choices=DocumentKind.choices)
    file = models.FileField(_("file"), upload_to="dispatch/incoming/%Y/%m/")

    class Meta:
        db_table = "dispatch_incomingdocument"
        constraints = [
            models.UniqueConstraint(fields=["note", "kind", "standard"], condition=Q(note__isnull=False),
                                    name="dispatch_indocument_unique"),
            models.UniqueConstraint(fields=["reply", "kind", "standard"], condition=Q(reply__isnull=False),
                                    name="dispatch_replydocument_unique")]


class IncomingExport(PlatformExport):
    """An Excel export of incoming notes (document 3, 4.5), fetched within its 24 hours and kept here."""

    file = models.FileField(_("file"), upload_to="dispatch-incoming-exports/%Y/%m/", blank=True)
    file_prefix = "incoming-dispatch-notes"

    class Meta(PlatformExport.Meta):
        db_table = "dispatch_incomingexport"
        constraints, indexes = export_rules("dispatch_inexport_unique_id", "dispatch_inexport_co_new")
        verbose_name = _("incoming dispatch note export")
        verbose_name_plural = _("incoming dispatch note exports")


class InboxSync(models.Model):
    """Where the company's incoming list and receipt list stand: the newest creation time read of each, and when
    the recent past was last walked again (statuses changed elsewhere, e.g. an answer given on the portal)."""

    company = models.OneToOneField("core.Company", on_delete=models.CASCADE, related_name="+")
    inbox_until = models.DateTimeField(null=True, blank=True)
    inbox_walked_at = models.DateTimeField(null=True, blank=True)
    receipts_until = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "dispatch_inboxsync"
