import django_tables2 as tables
from django.template.loader import render_to_string
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from backoffice.core.choices import SyncState
from backoffice.core.generic import ChoiceBadgeColumn, DateTimeColumn, LinkedColumn
from backoffice.core.generic.registry import target_label
from backoffice.core.generic.tables import MoneyColumn, OrderedTable, RemoteStatusColumn

from . import invoicing

from .choices import Answer, DispatchStatus, ReplyStatus
from .models import DispatchNote, DispatchTaxpayer, ReceivedReply


class InvoicingColumn(tables.Column):
    """The invoice that bills the note (a link), else the days left of its 7 to be invoiced (dispatch.invoicing),
    flagged when the daily check marked it as running out; "—" for a note the watch does not count."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("empty_values", ())
        kwargs.setdefault("orderable", False)
        kwargs.setdefault("verbose_name", _("Invoice"))
        super().__init__(*args, **kwargs)

    def render(self, record):
        if record.invoiced_as:
            _label, url = target_label(record.invoiced_target) if record.invoiced_target else (None, None)
            label = invoicing.invoiced_label(record)
            if url:
                return format_html('<a class="font-monospace" href="{}" data-invoiced>{}</a>', url, label)
            return format_html('<span class="small text-body-secondary" data-invoiced>{}</span>', label)
        left = invoicing.days_left(record)
        if left is None:
            return "—"
        return render_to_string("dispatch/includes/invoicing_days.html", {
            "days": left, "late": max(0, -left), "marked": invoicing.marked(record)})

    def value(self, record):
        return invoicing.invoiced_label(record) or invoicing.days_left(record)


class DispatchNoteTable(OrderedTable):
    despatch_number = LinkedColumn(attrs={"td": {"class": "font-monospace text-nowrap"}},
                                   placeholder=_("(number pending)"))
    receiver_identifier = tables.Column(attrs={"td": {"class": "font-monospace"}})
    payable_amount = MoneyColumn(verbose_name=_("Total (VAT included)"))
    shipment_date = DateTimeColumn()
    remote_status = RemoteStatusColumn(DispatchStatus, verbose_name=_("Status"))
    sync_state = ChoiceBadgeColumn(SyncState)
    invoicing = InvoicingColumn()

    # On a phone: the number, the receiver and the status (the days left to invoice do not fit beside them: the
    # "Faturalama" filter's "last day" narrows the list to what is due instead).
    secondary_columns = ("issue_date", "shipment_date", "plate_number", "payable_amount", "invoicing")
    tertiary_columns = ("receiver_identifier", "local_reference_id", "sync_state")

    class Meta(OrderedTable.Meta):
        model = DispatchNote
        fields = ("despatch_number", "issue_date", "receiver_name", "receiver_identifier", "shipment_date",
                  "plate_number", "local_reference_id", "payable_amount", "remote_status", "invoicing", "sync_state")
        sequence = fields
        order_by = ("-created_at", "-id")
        empty_text = _("No dispatch notes yet. Write one with New dispatch note, upload a UBL file, or read the new "
                       "ones from the platform.")

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
