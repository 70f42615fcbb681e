import django_tables2 as tables
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from backoffice.core.choices import SyncState
from backoffice.core.generic import ChoiceBadgeColumn, DateTimeColumn, LinkedColumn
from backoffice.core.generic.tables import MoneyColumn, OrderedTable, RemoteStatusColumn

from .choices import Answer, DispatchStatus, ReplyStatus
from .mirror import days_left
from .models import DispatchReply, IncomingNote


class DaysLeftColumn(tables.Column):
    """Days left to answer a note awaiting an answer (DISPATCH_ANSWER_DAYS from its arrival): red when none."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("empty_values", ())
        kwargs.setdefault("orderable", False)
        kwargs.setdefault("verbose_name", _("Days left to answer"))
        super().__init__(*args, **kwargs)

    def render(self, record):
        left = days_left(record)
        if left is None:
            return "—"
        if left < 0:
            return format_html('<span class="badge text-bg-danger" data-days-left="{}">{}</span>', left,
                               ngettext("%(days)s day late", "%(days)s days late", -left) % {"days": -left})
        color = "danger" if left <= 1 else "warning" if left <= 3 else "secondary"
        badge = format_html('<span class="badge text-bg-{}" data-days-left="{}">{}</span>', color, left,
                            ngettext("%(days)s day", "%(days)s days", left) % {"days": left})
        if record.deadline_marked_on and left <= 1:  # the daily check's mark: its days run out by tomorrow
            return format_html('{} <i class="bi bi-flag-fill text-danger" data-deadline-marked title="{}"></i>', badge,
                               _("The daily check marked this note: its days to answer run out by tomorrow."))
        return badge

    def value(self, record):
        return days_left(record)


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
    receipt_number = LinkedColumn(attrs={"td": {"class": "font-monospace text-nowrap"}},
                                  placeholder=_("(number pending)"))
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
