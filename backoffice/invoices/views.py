"""Invoice pages: the list (filters, totals of the filtered set, Excel export, bulk posting and PDF ZIP), the
outgoing invoice form with its lines and live totals, one page per invoice with its actions and documents,
the PDF bundles and the registered-users directory.

Views validate, call one service and redirect; every queryset is the active company's (another company's
invoice is a 404). A page never waits for the platform on a GET but the documents view (a PDF asked for now); the
invoice page has its stale copy read in the background, and "Read again" reads it as the user waits.
"""

from django.contrib import messages
from django.db.models import Count, Sum
from django.http import FileResponse, Http404, QueryDict
from django.shortcuts import get_object_or_404, redirect
from django.utils.http import urlencode
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from backoffice.core import actions, domains
from backoffice.core.generic.directory import register_directory_pages
from backoffice.core.generic.documents import register_document_view
from backoffice.core.generic.reading import register_read_view
from backoffice.core.generic.registry import model_url, register_model_view, register_model_views
from backoffice.core.generic.views import (BaseObjectView, BulkAction, BulkActionView, ObjectDeleteView,
                                           ObjectDetailView, ObjectEditView, ObjectListView, totals_by_currency)
from backoffice.core.jobs import runs_of
from backoffice.core.resources import ResourceError
from backoffice.core.roles import EDITORS, EVERYONE, has_role
from backoffice.remote.errors import RemoteError

from . import answers, documents, filters, from_dispatch, matching, mirror, services, tables, taxpayers, totals
from .choices import RESPONSE_WORKING, WORKING_STATUSES, DocumentKind, InvoiceStatus, RecordType
from .forms import AUTOMATIC, InvoiceForm, LineFormSet
from .models import Invoice, PdfBundle, Taxpayer

accounts_api = domains.api("current_accounts")


class InvoiceListView(ObjectListView):
    model = Invoice
    table = tables.InvoiceTable
    filterset = filters.InvoiceFilterSet
    refresh_interval = 3

    def base_queryset(self):
        return super().base_queryset().select_related("company")

    def render(self, context, status=200):
        context["totals_url"] = model_url(Invoice, "totals") + (
            "?" + self.request.GET.urlencode() if self.request.GET else "")
        return super().render(context, status)


@register_model_view(Invoice, "totals", path="totals/")
class InvoiceTotalsView(BaseObjectView):
    """The totals of the filtered set, per currency (amounts in different currencies are never added), loaded
    after the list so that the list stays fast on a million invoices."""

    model = Invoice
    required_roles = EVERYONE

    def get(self, request):
        queryset = filters.InvoiceFilterSet(request.GET or None, queryset=self.get_queryset(), request=request).qs
        rows = list(queryset.order_by().values("currency_code").annotate(
            count=Count("pk"), payable=Sum("payable_amount"), tax_exclusive=Sum("tax_exclusive_amount"),
            taxes=Sum("tax_total")).order_by("currency_code"))
        return self.render({"rows": rows, "count": sum(row["count"] for row in rows)})

    def get_template_names(self):
        return ["invoices/includes/totals.html"]


def customer_details(account) -> dict:
    """What the form shows beside the customer as it is typed: the invoice kind the taxpayer list gives, the
    mailboxes, and the default-address warning."""
    boxes = taxpayers.mailboxes(account.identifier) if account else []
    return {"boxes": boxes, "kind": RecordType.EINVOICE if boxes else RecordType.EARCHIVE,
            "directory_loaded": taxpayers.directory_loaded(), "automatic": AUTOMATIC,
            "address_warning": accounts_api.address_warning(account) if account else ""}


class InvoiceEditView(ObjectEditView):
    model = Invoice
    form = InvoiceForm
    form_company = True
    formsets = {"lines": LineFormSet}
    saves = staticmethod(services.invoice_save)
    lookups = {"customer": accounts_api.account_lookup(template="invoices/includes/customer.html",
                                                       details=customer_details)}
    refused = services.InvoiceError
    invalid_status = 400
    tab = "new"

    def get_queryset(self):
        # The form shows the draft's current account: read with it, not by a query of its own.
        return super().get_queryset().filter(is_send=True).select_related("current_account")

    def locked_message(self, invoice):
        return services.edit_refusal(invoice)

    def form_context(self, invoice, formsets):
        return {"empty_lines": [formsets["lines"].empty_form], "totals_rules": totals.rules()}

    def success_message(self, invoice, is_new):
        return _("Draft saved; it is not sent. Check it, then send it to GİB from its page.")


class InvoiceDetailView(ObjectDetailView):
    model = Invoice
    fields = ("invoice_number", "is_send", "record_type", "profile", "invoice_type", "issue_date", "target_title",
              "target_vkn_tckn", "current_account", "target_alias", "description", "currency_code",
              "exchange_rate_source", "exchange_rate_comment", "remote_id", "record_status", "sync_state",
              "synced_at", "detail_read_at")

    def get_extra_context(self, invoice):
        user = self.request.user
        may_edit = has_role(user, *EDITORS)
        lines = list(invoice.lines.all())
        platform_lines = (invoice.detail or {}).get("invoiceLines") or [] if invoice.detail else []
        reading = mirror.read_soon(invoice)  # a stale copy is read in the background; the page follows it
        references = list(invoice.dispatch_references.select_related("note"))
        for reference in references:
            reference.url = model_url(reference.note, "detail") if reference.note_id else None
        may_answer = may_edit and not answers.answer_refusal(invoice)
        return {
            "answer": {"days": answers.answer_days_left(invoice), "deadline": answers.answer_deadline(invoice),
                       "automatic": not invoice.is_send and invoice.remote_status == InvoiceStatus.AUTO_APPROVED,
                       "url": f"{model_url(Invoice, 'answer')}?pk={invoice.pk}" if may_answer else None},
            "cancel_url": f"{model_url(Invoice, 'cancel')}?pk={invoice.pk}"
            if may_edit and not answers.cancel_refusal(invoice) else None,
            "check": matching.shown([invoice]).get(invoice.pk),
            "check_url": model_url(invoice, "match") if may_edit and not invoice.is_send and invoice.remote_id
            else None,
            "dispatch_references": references,
            "frees_notes": invoice.remote_status in from_dispatch.FREEING_STATUSES,
            "lines": lines, "platform_lines": platform_lines if not lines else [],
            "actions": actions.buttons(invoice, user),
            "is_draft": services.is_draft(invoice),
            "send_url": model_url(Invoice, "bulk", action="send") + "?" + urlencode(
                {"pk": invoice.pk, "return_url": self.request.path})
            if may_edit and not services.send_refusal(invoice) else None,
            "edit_url": model_url(invoice, "edit") if may_edit and not services.edit_refusal(invoice) else None,
            "delete_url": model_url(invoice, "delete") if may_edit and invoice.is_send or (
                may_edit and not invoice.remote_id) else None,
            "delete_refusal": services.delete_refusal(invoice),
            "address_warning": accounts_api.address_warning(invoice.current_account) if invoice.current_account else "",
            "runs": runs_of(invoice),
            "read_url": model_url(invoice, "read"),
            "documents": [(kind, label, model_url(invoice, "document", kind=kind))
                          for kind, label in DocumentKind.choices] if invoice.remote_id else [],
            "refresh_interval": 3 if invoice.is_busy or invoice.remote_status in WORKING_STATUSES or reading
            or invoice.response_status in RESPONSE_WORKING
            else None,
        }


@register_model_view(Invoice, "read", path="<id:pk>/read/")
class InvoiceReadView(BaseObjectView):
    """"Read again": the platform's full record now, whatever the kept copy's age."""

    model = Invoice
    required_roles = EVERYONE

    def post(self, request, pk):
        invoice = get_object_or_404(self.get_queryset(), pk=pk)
        try:
            mirror.invoice_read(invoice, force=True)
        except RemoteError as exc:
            messages.error(request, exc.user_message())
        except mirror.InvoiceNotFound as exc:
            messages.warning(request, str(exc))
        else:
            messages.success(request, _("Read again from the platform."))
        return redirect(model_url(invoice, "detail"))


@register_model_view(Invoice, "match", path="<id:pk>/match/")
class InvoiceMatchView(BaseObjectView):
    """"Check now": the invoice held against the goods in the background (its UBL and the notes' are read there)."""

    model = Invoice
    required_roles = EDITORS

    def post(self, request, pk):
        invoice = get_object_or_404(self.get_queryset().filter(is_send=False), pk=pk)
        matching.match_request(invoice.company, [invoice.pk])
        messages.info(request, _("The invoice is being checked against the goods; the page shows the result."))
        return redirect(model_url(invoice, "detail"))


class InvoiceDeleteView(ObjectDeleteView):
    model = Invoice

    def get(self, request, pk):
        invoice = get_object_or_404(self.get_queryset(), pk=pk)
        return self.render({"object": invoice, "refusal": services.delete_refusal(invoice),
                            "detail_url": model_url(invoice, "detail")})

    def post(self, request, pk):
        invoice = get_object_or_404(self.get_queryset(), pk=pk)
        try:
            gone = services.invoice_delete(invoice)
        except ResourceError as exc:  # the rules of 3.1, or a change that got there first
            messages.error(request, str(exc))
            return redirect(model_url(invoice, "detail"))
        if gone:
            messages.success(request, _("Invoice deleted."))
            return redirect(model_url(Invoice, "list"))
        messages.info(request, _("The platform is asked to delete the invoice; the page shows when it has."))
        return redirect(model_url(invoice, "detail"))


# The invoice's PDF (shown by the browser), HTML (in a sandboxed frame) or UBL, fetched once and kept.
register_document_view(Invoice, documents.INVOICE_DOCUMENTS, attachment_kinds=(DocumentKind.UBL,),
                       refused=(services.InvoiceError,), back_label=gettext_lazy("Back to the invoice"),
                       record_label=gettext_lazy("Invoice"))


@register_model_view(Invoice, "pdfs", path="pdfs/")
class InvoiceFilteredPdfView(BaseObjectView):
    """"Download the PDFs of these invoices": every invoice the list's filters select (up to the bundle's
    limit), not only the ticked rows of one page."""

    model = Invoice
    required_roles = EVERYONE

    def post(self, request):
        query = QueryDict(request.POST.get("query", ""))
        selected = filters.InvoiceFilterSet(query or None, queryset=self.get_queryset(), request=request).qs
        count = pdf_zip(request, selected.exclude(remote_id="").order_by("pk")[:int(services.setting(
            "INVOICE_BUNDLE_MAX")) + 1])
        return redirect(model_url(PdfBundle, "list") if count else model_url(Invoice, "list") + (
            f"?{query.urlencode()}" if query else ""))


def pdf_zip(request, queryset):
    try:
        bundle = documents.pdf_bundle_request(request.company, request.user, list(queryset))
    except services.InvoiceError as exc:
        messages.error(request, str(exc))
        return 0
    messages.info(request, _("The PDFs are being fetched; the ZIP is under PDF downloads when it is ready."))
    return bundle.total


class InvoiceBulkView(BulkActionView):
    required_roles = EVERYONE


def send_runner(request, queryset):
    try:
        return services.invoice_send(list(queryset.order_by("pk")))
    except services.AlreadySent as exc:
        messages.info(request, str(exc))
    except ResourceError as exc:
        messages.error(request, str(exc))
    return 0


def send_details(request, queryset):
    """The send confirmation's rows (recipient, mailbox, payable), totals per currency and the refused."""
    rows = services.send_rows(queryset.order_by("pk")[:InvoiceBulkView.max_listed])
    refused = [f"{invoice}: {reason}" for invoice in queryset.order_by("pk")
               if (reason := services.send_refusal(invoice))]
    return {"rows": rows, "currency_totals": totals_by_currency(services.send_rows(queryset.order_by("pk"))),
            "refused": refused}


SEND = BulkAction(gettext_lazy("Send to GİB"), send_runner, required_roles=EDITORS, template="generic/send_confirm.html",
                  details=send_details, confirm=gettext_lazy("The platform issues each invoice and delivers it: an "
                                                             "e-invoice to the customer's mailbox, an e-archive "
                                                             "invoice to the tax authority's report."),
                  check=gettext_lazy("I checked the recipient and the total."))


def _bulk_actions():
    found = {"send": SEND, **actions.bulk_actions(Invoice)}
    found["pdf_zip"] = BulkAction(gettext_lazy("Download the PDFs as one ZIP"), pdf_zip, style="secondary", ask=False)
    return found


register_model_views(Invoice, prefix="", list=InvoiceListView, detail=InvoiceDetailView, edit=InvoiceEditView,
                     delete=InvoiceDeleteView, bulk=type("InvoiceBulk", (InvoiceBulkView,), {"actions": _bulk_actions()}))


register_read_view(Invoice, mirror.mirror_request, name="mirror", whole=True, roles=EDITORS,
                   message=gettext_lazy("Reading invoices from the platform."),
                   running=gettext_lazy("Invoices are already being read from the platform."))


# --- PDF bundles -----------------------------------------------------------------------------------------
class PdfBundleListView(ObjectListView):
    model = PdfBundle
    refresh_interval = 3

    def needs_refresh(self, queryset):
        return queryset.filter(finished_at__isnull=True).exists()

    table = tables.PdfBundleTable


@register_model_view(PdfBundle, "download", path="<id:pk>/download/")
class PdfBundleDownloadView(BaseObjectView):
    model = PdfBundle
    required_roles = EVERYONE

    def get(self, request, pk):
        bundle = get_object_or_404(self.get_queryset(), pk=pk)
        if not bundle.file:
            raise Http404
        return FileResponse(bundle.file.open("rb"), as_attachment=True, filename=f"invoices-{bundle.pk}.zip")


register_model_views(PdfBundle, prefix="bundles", list=PdfBundleListView)


# --- the registered-users directory -----------------------------------------------------------------------
register_directory_pages(
    Taxpayer, prefix="taxpayers", section="invoices", tab="taxpayers",
    title=gettext_lazy("Registered e-invoice users"), table=tables.TaxpayerTable, filterset=filters.TaxpayerFilterSet,
    request_refresh=taxpayers.taxpayers_request,
    started=gettext_lazy("The list of registered users is being read; it holds a million entries and more, so this "
                         "takes a few minutes."),
    running=gettext_lazy("The list of registered users is already being read."))

