import django_tables2 as tables
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from backoffice.core.choices import SyncState
from backoffice.core.generic import ChoiceBadgeColumn, DateTimeColumn, LinkedColumn
from backoffice.core.generic.tables import MoneyColumn, OrderedTable, RemoteStatusColumn

from . import inbox
from .choices import Answer, DispatchStatus, ReplyStatus
from .models import DispatchNote, DispatchReply, DispatchTaxpayer, IncomingNote, ReceivedReply


class DispatchNoteTable(OrderedTable):
    despatch_number = LinkedColumn(attrs={"td": {"class": "font-monospace text-nowrap"}})
    receiver_identifier = tables.Column(attrs={"td": {"class": "font-monospace"}})
    payable_amount = MoneyColumn(verbose_name=_("Total (VAT included)"))
    shipment_date = DateTimeColumn()
    remote_status = RemoteStatusColumn(DispatchStatus, verbose_name=_("Status"))
    sync_state = ChoiceBadgeColumn(SyncState)

    # On a phone: the number, the receiver and the status.
    secondary_columns = ("issue_date", "shipment_date", "plate_number", "payable_amount")
    tertiary_columns = ("receiver_identifier", "local_reference_id", "sync_state")

    class Meta(OrderedTable.Meta):
        model = DispatchNote
        fields = ("despatch_number", "issue_date", "receiver_name", "receiver_identifier", "shipment_date",
                  "plate_number", "local_reference_id", "payable_amount", "remote_status", "sync_state")
        sequence = fields
        order_by = ("-created_at", "-id")
        empty_text = _("No dispatch notes yet. Write one with New dispatch note, upload a UBL file, or read the new "
                       "ones from the platform.")

    def render_despatch_number(self, value, record):
        return value or _("(number pending)")


class DispatchTaxpayerTable(OrderedTable):
    identifier = tables.Column(attrs={"td": {"class": "font-monospace"}})
    alias = tables.Column(attrs={"td": {"class": "font-monospace"}})

    class Meta(OrderedTable.Meta):
        model = DispatchTaxpayer
        fields = ("identifier", "title", "alias", "app_type")
        sequence = fields
        order_by = ("identifier",)
        empty_text = _("The dispatch-note users' list is not loaded yet. It is read once a day; an administrator can "
                       "read it now.")


class DaysLeftColumn(tables.Column):
    """Days left to answer a note awaiting an answer (DISPATCH_ANSWER_DAYS from its arrival): red when none."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("empty_values", ())
        kwargs.setdefault("orderable", False)
        kwargs.setdefault("verbose_name", _("Days left to answer"))
        super().__init__(*args, **kwargs)

    def render(self, record):
        left = inbox.days_left(record)
        if left is None:
            return "—"
        if left < 0:
            return format_html('<span class="badge text-bg-danger" data-days-left="{}">{}</span>', left,
                               ngettext("%(days)s day late", "%(days)s days late", -left) % {"days": -left})
        color = "danger" if left <= 1 else "warning" if left <= 3 else "secondary"
        return format_html('<span class="badge text-bg-{}" data-days-left="{}">{}</span>', color, left,
                           ngettext("%(days)s day", "%(days)s days", left) % {"days": left})

    def value(self, record):
        return inbox.days_left(record)


class IncomingNoteTable(OrderedTable):
    despatch_number = LinkedColumn(attrs={"td": {"class": "font-monospace text-nowrap"}})
    sender_identifier = tables.Column(attrs={"td": {"class": "font-monospace"}})
    received_at = DateTimeColumn()
    payable_amount = MoneyColumn(verbose_name=_("Total (VAT included)"))
    remote_status = RemoteStatusColumn(DispatchStatus, verbose_name=_("Status"))
    days_left = DaysLeftColumn()

    secondary_columns = ("issue_date", "received_at", "payable_amount")
    tertiary_columns = ("sender_identifier", "receipt_number")

    class Meta(OrderedTable.Meta):
        model = IncomingNote
        fields = ("despatch_number", "issue_date", "sender_title", "sender_identifier", "received_at",
                  "payable_amount", "remote_status", "days_left", "receipt_number")
        sequence = fields
        order_by = ("-received_at", "-id")
        empty_text = _("No incoming dispatch notes. They are read from the platform every few minutes; read them now "
                       "with the button above.")


class DispatchReplyTable(OrderedTable):
    receipt_number = LinkedColumn(attrs={"td": {"class": "font-monospace text-nowrap"}})
    note = tables.Column(verbose_name=_("Dispatch note"), linkify=True, order_by=("note__despatch_number",))
    answer = ChoiceBadgeColumn(Answer)
    remote_status = RemoteStatusColumn(ReplyStatus, verbose_name=_("Status"))
    sync_state = ChoiceBadgeColumn(SyncState)
    created_at = DateTimeColumn(verbose_name=_("Written"))

    secondary_columns = ("way", "created_at")
    tertiary_columns = ("sync_state",)

    class Meta(OrderedTable.Meta):
        model = DispatchReply
        fields = ("receipt_number", "note", "answer", "way", "created_at", "remote_status", "sync_state")
        sequence = fields
        order_by = ("-created_at", "-id")
        empty_text = _("No replies yet. Answer an incoming note from its page.")

    def render_receipt_number(self, value, record):
        return value or _("(number pending)")


class ReceivedReplyTable(OrderedTable):
    receipt_number = tables.Column(attrs={"td": {"class": "font-monospace text-nowrap"}})
    note = tables.Column(verbose_name=_("Our dispatch note"), linkify=True, order_by=("despatch_number",))
    answer = ChoiceBadgeColumn(Answer)
    remote_status = RemoteStatusColumn(ReplyStatus, verbose_name=_("Status"))
    received_at = DateTimeColumn()

    # On a phone: the number, our note and the answer.
    secondary_columns = ("sender_title", "received_at", "remote_status")
    tertiary_columns = ("sender_identifier",)

    class Meta(OrderedTable.Meta):
        model = ReceivedReply
        fields = ("receipt_number", "note", "sender_title", "sender_identifier", "answer", "received_at",
                  "remote_status")
        sequence = fields
        order_by = ("-received_at", "-id")
        empty_text = _("No replies to our dispatch notes yet. Receivers' answers are read every few minutes.")

    def render_note(self, value, record):
        return value or record.despatch_number
