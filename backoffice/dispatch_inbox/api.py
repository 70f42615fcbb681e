"""What invoices may use of the receiving side (issue 33, point 3): the incoming notes a supplier's invoice bills, each
with its lines and the quantity we accepted of each on our answer. Nothing else of this app is imported from outside
it."""

from datetime import timedelta
from decimal import Decimal

from django.db.models import Q

from .choices import DispatchError, DispatchStatus, ReplyStatus, ReplyWay
from .documents import lines_load
from .models import DispatchReply, IncomingNote

__all__ = ["DispatchError", "accepted_goods", "billed_notes"]

ACCEPTED_IN_FULL = (DispatchStatus.APPROVED, DispatchStatus.AUTO_APPROVED, DispatchStatus.APPROVING)
REJECTED = (DispatchStatus.REJECTED, DispatchStatus.REJECTING)
TAKEN = (ReplyStatus.QUEUED, ReplyStatus.DELIVERED, ReplyStatus.APPROVED)
NOTE_WINDOW_DAYS = 7  # an invoice is issued within 7 days of the goods' dispatch: the supplier's notes before it


def billed_notes(company, *, supplier: str, numbers=(), invoice_date=None) -> tuple[list, str]:
    """(the incoming notes an invoice bills, how they were found): by the numbers it names ("reference"), else the
    supplier's notes of the 7 days up to the invoice's date ("supplier")."""
    notes = IncomingNote.objects.filter(company=company)
    if numbers:  # the supplier's own numbers: another supplier may use the same prefix
        if supplier:
            notes = notes.filter(sender_identifier=supplier)
        found = list(notes.filter(despatch_number__in=list(numbers)).order_by("issue_date", "pk"))
        return found, "reference"
    if not supplier or invoice_date is None:
        return [], ""
    window = Q(issue_date__gte=invoice_date - timedelta(days=NOTE_WINDOW_DAYS), issue_date__lte=invoice_date)
    return list(notes.filter(window, sender_identifier=supplier).order_by("issue_date", "pk")), "supplier"


def accepted_goods(note, *, client=None) -> list[dict]:
    """The note's lines, each with the quantity we accepted on our answer: the reply's line when we answered line
    by line, the whole delivery when we approved it (or it was approved automatically), 0 when we rejected it,
    None while it awaits our answer. Its lines are read from its UBL first when they are not (a platform call)."""
    lines = lines_load(note, client=client)
    # our newest line-by-line answer the platform took (a draft or one in error accepted nothing)
    reply = (DispatchReply.objects.filter(note=note, remote_status__in=TAKEN).exclude(way=ReplyWay.APPROVE_REJECT)
             .prefetch_related("lines").order_by("-created_at", "-pk").first())
    answered = {line.line_id: line for line in reply.lines.all()} if reply is not None else {}
    goods = []
    for line in lines:
        if line.line_id in answered:
            accepted = answered[line.line_id].accepted
        elif note.remote_status in ACCEPTED_IN_FULL:
            accepted = line.quantity
        elif note.remote_status in REJECTED:
            accepted = Decimal(0)
        else:
            accepted = None
        goods.append({"line_id": line.line_id, "name": line.product_name, "code": line.product_code,
                      "unit": line.unit_code, "delivered": line.quantity, "accepted": accepted})
    return goods
