"""Copy and return (iade) of an outgoing invoice (issue 29, section 5): a new local draft (sync_state LOCAL, nothing
sent) with the same customer and lines, dated today (Istanbul), with a new ettn and no number, so that the platform
numbers it when it is sent. Nothing the platform gave the original (its ettn, number, statuses, totals) is copied:
the draft is kept as any draft is, its figures computed from its lines (services.draft_store).

A return is a copy of type IADE that refers to an approved sale invoice (document 3, 2.6: returnInvoiceNumber and
returnInvoiceDate); a return e-invoice is TEMELFATURA (the tax authority's schematron, the sandbox's _type_rules).
"""

from datetime import timedelta

from django.contrib import messages
from django.db import transaction
from django.shortcuts import get_object_or_404, redirect
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from backoffice.core.choices import SyncState
from backoffice.core.generic.registry import model_url, register_model_view
from backoffice.core.generic.guarded import SubmissionGuardMixin
from backoffice.core.generic.views import BaseObjectView
from backoffice.core.roles import EDITORS
from backoffice.core.submissions import replay_message, submitted_object

from . import services
from .choices import APPROVED_STATUSES, InvoiceType, Profile, RecordType
from .models import Invoice, InvoiceLine

# What the user wrote on the original and a copy keeps; everything else is the platform's or starts anew.
COPIED_FIELDS = (
    "record_type", "profile", "invoice_type", "prefix", "description", "current_account", "current_account_code",
    "target_alias", "target_title", "target_vkn_tckn", "currency_code", "currency_id", "exchange_rate",
    "exchange_rate_source", "exchange_rate_comment", "return_invoice_number", "return_invoice_date", "notes",
    "payment_means_code", "payment_channel_code", "instruction_note", "payee_financial_account_id",
    "is_internet_sale", "website_url", "shipment_sender_tckn_vkn", "shipment_send_type", "shipment_sender_name",
    "shipment_sender_surname", "hide_despatch_message", "subscription_type", "subscription_type_number",
)
LINE_FIELDS = (
    "inventory_service_code", "warehouse_code", "quantity", "unit_code", "unit_price", "discount_rate",
    "discount_amount", "vat_rate", "vat_exemption_reason_code", "withholding_code", "other_tax_code",
    "other_tax_rate",
)


class CopyRefused(services.InvoiceError):
    pass


def copy_refusal(invoice) -> str:
    """Why this invoice cannot be copied ("" when it can)."""
    if not invoice.is_send:
        return _("An incoming invoice is the supplier's: it cannot be copied as an invoice of ours.")
    if not invoice.lines.exists():
        return _("This invoice was read from the platform and its lines are not kept here, so it cannot be copied. "
                 "Copy it where it was written, or write a new invoice.")
    return ""


def return_refusal(invoice) -> str:
    """Why no return invoice can be written for this invoice ("" when it can): only an approved outgoing sale."""
    if not invoice.is_send:
        return _("An incoming invoice is returned by a return invoice written to its supplier, not from here.")
    if invoice.invoice_type != InvoiceType.SATIS:
        return _("Only a sale invoice (SATIS) can be returned; this one is “%(type)s”.") % {
            "type": invoice.get_invoice_type_display() or invoice.invoice_type}
    if invoice.remote_status not in APPROVED_STATUSES or not invoice.invoice_number:
        return _("Only an approved invoice can be returned; this one is “%(status)s”.") % {
            "status": invoice.status_label or _("not on the platform")}
    return copy_refusal(invoice)


def _draft_of(original, *, user) -> tuple[Invoice, list[InvoiceLine]]:
    today = timezone.localdate()  # TIME_ZONE is Europe/Istanbul
    draft = Invoice(company=original.company, is_send=True, created_by=user, issue_date=today,
                    sync_state=SyncState.LOCAL, **{name: getattr(original, name) for name in COPIED_FIELDS})
    # The same payment term from the new date (a due date before the invoice's date would make no sense).
    if original.payment_due_date and original.issue_date:
        draft.payment_due_date = today + max(original.payment_due_date - original.issue_date, timedelta(0))
    draft.new_ettn()
    lines = [InvoiceLine(**{name: getattr(line, name) for name in LINE_FIELDS}) for line in original.lines.all()]
    return draft, lines


@transaction.atomic
def invoice_copy(original, *, user=None) -> Invoice:
    """A new local draft with the original's customer and lines, dated today, a new ettn and no number."""
    refusal = copy_refusal(original)
    if refusal:
        raise CopyRefused(refusal)
    return services.draft_store(*_draft_of(original, user=user))


@transaction.atomic
def invoice_return(original, *, user=None) -> Invoice:
    """A new local draft of type IADE referring to an approved sale invoice (returnInvoiceNumber and
    returnInvoiceDate, document 3, 2.6), with its customer and lines; a return e-invoice is TEMELFATURA."""
    refusal = return_refusal(original)
    if refusal:
        raise CopyRefused(refusal)
    draft, lines = _draft_of(original, user=user)
    draft.invoice_type = InvoiceType.IADE
    draft.return_invoice_number, draft.return_invoice_date = original.invoice_number, original.issue_date
    if draft.record_type == RecordType.EINVOICE:
        draft.profile = Profile.TEMELFATURA
    # The platform requires a description: the original's, else one that names the invoice returned.
    draft.description = original.description or _("Return of invoice %(number)s") % {"number": original.invoice_number}
    return services.draft_store(draft, lines)


# --- views -------------------------------------------------------------------------------------------------
class _InvoiceCopyBase(SubmissionGuardMixin, BaseObjectView):
    """GET: a small confirmation page (nothing changes); POST: the new draft, then its edit page."""

    model = Invoice
    action = "copy"
    required_roles = EDITORS
    make = None  # the service
    refusal = None
    title = explanation = button = done = ""  # done: the message once made, of %(invoice)s

    def get(self, request, pk):
        invoice = get_object_or_404(self.get_queryset(), pk=pk)
        return self.render({"object": invoice, "refusal": type(self).refusal(invoice), "title": self.title,
                            "explanation": self.explanation, "button": self.button,
                            "detail_url": model_url(invoice, "detail")})

    def guarded(self, invoice):  # the invoice's own refusal comes before the key's
        return not type(self).refusal(invoice)

    def replayed(self, submission):
        """A second click opens the draft the first made, to be edited like a new one."""
        made = submitted_object(submission) if submission.user_id == self.request.user.pk else None
        messages.info(self.request, replay_message(submission, made))
        return redirect(model_url(made, "edit") if made is not None else model_url(Invoice, "list"))

    def post(self, request, pk):
        invoice = get_object_or_404(self.get_queryset(), pk=pk)
        draft, answered = self.guarded_submit(
            self.guard_for(invoice), None, lambda: type(self).make(invoice, user=request.user), valid=lambda: True,
            refused=services.InvoiceError, invalid=lambda: redirect(model_url(invoice, "detail")))
        if answered is not None:
            return answered
        messages.success(request, self.done % {"invoice": invoice})
        return redirect(model_url(draft, "edit"))


@register_model_view(Invoice, "copy", path="<id:pk>/copy/")
class InvoiceCopyView(_InvoiceCopyBase):
    make, refusal = invoice_copy, copy_refusal
    title = gettext_lazy("Copy the invoice")
    explanation = gettext_lazy("A new draft with the same customer and lines, dated today. It gets its number from the "
                               "platform when it is sent; nothing is sent now.")
    button = gettext_lazy("Copy as a new draft")
    done = gettext_lazy("A copy of %(invoice)s was saved as a draft dated today; nothing was sent. Check it and save.")


@register_model_view(Invoice, "return", path="<id:pk>/return/")
class InvoiceReturnView(_InvoiceCopyBase):
    make, refusal = invoice_return, return_refusal
    title = gettext_lazy("Write a return invoice")
    explanation = gettext_lazy("A new return (İADE) invoice draft referring to this invoice, with its customer and "
                               "lines, dated today. Remove the lines or quantities not returned; nothing is sent now.")
    button = gettext_lazy("Write the return invoice")
    done = gettext_lazy("A return invoice referring to %(invoice)s was saved as a draft; nothing was sent. Keep only "
                        "what is returned, then save.")
