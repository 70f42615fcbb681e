"""What the copy, return and print buttons of an invoice need (templates/invoices/includes/copy_actions.html): their
URLs when the user may use them, why one cannot be used now, and a one-time key per button (core.submissions)."""

from django import template

from backoffice.core.generic.registry import model_url, user_may
from backoffice.core.submissions import SubmissionGuard

from .. import copies
from ..choices import InvoiceType
from ..models import Invoice

register = template.Library()


@register.simple_tag(takes_context=True)
def invoice_copy_actions(context, invoice):
    request = context["request"]
    found = {"print_url": model_url(invoice, "document", kind="pdf") if invoice.remote_id else ""}
    if not invoice.is_send or not user_may(request.user, Invoice, "copy"):
        return found
    found.update(copy_url=model_url(invoice, "copy"), copy_refusal=copies.copy_refusal(invoice),
                 copy_guard=SubmissionGuard(request).fields())
    if invoice.invoice_type == InvoiceType.SATIS:  # a return is offered on a sale only
        found.update(return_url=model_url(invoice, "return"), return_refusal=copies.return_refusal(invoice),
                     return_guard=SubmissionGuard(request).fields())
    return found
