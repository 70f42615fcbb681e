import django_tables2 as tables
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext_lazy as _

from backoffice.core.choices import SyncState
from backoffice.core.generic import ChoiceBadgeColumn, DateTimeColumn, LinkedColumn
from backoffice.core.generic.tables import MoneyColumn, OrderedTable, RemoteStatusColumn

from .answers import answer_days_left
from .choices import Answer, InvoiceStatus, MatchState, PostingStatus, RecordType
from .models import Invoice, PdfBundle, Taxpayer


class AnswerColumn(tables.Column):
    """An incoming commercial invoice: our answer, the platform's automatic acceptance, or the days left of its 8."""

    def __init__(self, *args, **kwargs):
        kwargs.update(empty_values=(), orderable=False, verbose_name=_("Answer"))
        super().__init__(*args, **kwargs)

    def render(self, record):
        if record.is_send:
            return ""
        if record.response_answer:
            return format_html('<span class="badge text-bg-{}" data-answer="{}">{}</span>',
                               Answer.color(record.response_answer), record.response_answer,
                               record.get_response_answer_display())
        if record.remote_status == InvoiceStatus.AUTO_APPROVED:
            return format_html('<span class="badge text-bg-success" data-answer="automatic">{}</span>',
                               InvoiceStatus.AUTO_APPROVED.label)
        left = answer_days_left(record)
        if left is None:
            return ""
        return render_to_string("core/dashboard/days_left.html", {"days": left, "late": max(0, -left)})

    def value(self, record):
        return record.response_answer or answer_days_left(record)


class InvoiceTable(OrderedTable):
    invoice_number = LinkedColumn(attrs={"td": {"class": "font-monospace"}})
    is_send = tables.BooleanColumn(verbose_name=_("Direction"), yesno=(_("Outgoing"), _("Incoming")))
    record_type = ChoiceBadgeColumn(RecordType)
    target_vkn_tckn = tables.Column(attrs={"td": {"class": "font-monospace"}})
    payable_amount = MoneyColumn()
    remote_status = RemoteStatusColumn(InvoiceStatus, verbose_name=_("Status"))
    record_status = ChoiceBadgeColumn(PostingStatus)
    sync_state = ChoiceBadgeColumn(SyncState)
    answer = AnswerColumn()
    match_state = ChoiceBadgeColumn(MatchState, verbose_name=_("Against the goods"))
    # The PDF in the browser's viewer, in a new tab, which prints it (only once the platform has the invoice).
    print_pdf = tables.Column(verbose_name=_("Print"), accessor="remote_id", orderable=False, empty_values=(),
                              exclude_from_export=True, attrs={"td": {"class": "text-center"}})

    # On a phone: the number, the amount and the status.
    secondary_columns = ("issue_date", "record_type", "target_title", "record_status")
    tertiary_columns = ("is_send", "target_vkn_tckn", "currency_code", "invoice_type", "sync_state", "answer",
                        "match_state")

    class Meta(OrderedTable.Meta):
        model = Invoice
        fields = ("invoice_number", "issue_date", "is_send", "record_type", "invoice_type", "target_title",
                  "target_vkn_tckn", "payable_amount", "currency_code", "remote_status", "record_status", "sync_state",
                  "answer", "match_state")
        sequence = (*fields, "print_pdf")
        order_by = ("-issue_date", "-id")
        empty_text = _("No invoices yet. Write one with New invoice, or read the ones the platform has.")

    def render_print_pdf(self, value, record):
        if not value:
            return ""
        label = _("Print %(invoice)s") % {"invoice": record}
        return format_html('<a href="{}" target="_blank" rel="noopener" class="btn btn-sm btn-link py-0" title="{}" '
                           'aria-label="{}" data-print="{}"><i class="bi bi-printer"></i></a>',
                           reverse("invoices:invoice_document", kwargs={"pk": record.pk, "kind": "pdf"}), label,
                           label, record.pk)


class PdfBundleTable(OrderedTable):
    created_at = DateTimeColumn()
    progress = tables.Column(verbose_name=_("Fetched"), accessor="fetched", orderable=False)
    file = tables.Column(verbose_name=_("ZIP"), orderable=False, empty_values=())

    class Meta(OrderedTable.Meta):
        model = PdfBundle
        fields = ("created_at", "total", "progress", "file")
        sequence = fields
        order_by = ("-created_at",)
        empty_text = _("No PDF downloads yet. Select invoices in the list and choose “Download the PDFs as one ZIP”.")

    def render_progress(self, value, record):
        return f"{value} / {record.total}"

    def render_file(self, value, record):
        left_out = format_html_join("", '<div class="small text-danger">{}: {}</div>',
                                    ((entry["invoice"], entry["error"]) for entry in record.skipped))
        if record.file:
            return format_html('<a href="{}"><i class="bi bi-download me-1"></i>{}</a>{}',
                               reverse("invoices:pdfbundle_download", args=[record.pk]), _("Download"), left_out)
        if record.finished_at:
            return format_html('<span class="text-danger">{}</span>{}', _("no PDF could be fetched"), left_out)
        return format_html('<span class="text-body-secondary">{}</span>{}', _("being fetched"), left_out)


class TaxpayerTable(OrderedTable):
    identifier = tables.Column(attrs={"td": {"class": "font-monospace"}})
    alias = tables.Column(attrs={"td": {"class": "font-monospace"}})

    class Meta(OrderedTable.Meta):
        model = Taxpayer
        fields = ("identifier", "title", "alias", "app_type", "registered_at")
        sequence = fields
        order_by = ("identifier",)
        empty_text = _("The list of registered users is not loaded yet. It is read once a day; an administrator "
                       "can read it now.")
