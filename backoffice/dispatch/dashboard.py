"""The outgoing dispatch notes' block of the dashboard, one query (the first rows and the counts of the whole set
together, by window functions), days counted in Istanbul dates: our sent notes within their 7-day invoicing window
(an invoice is issued within 7 days of the goods' dispatch), or past it for up to 30 days (index
dispatch_note_co_issued: company, issue date).

Whether a note is invoiced is decided in one place, not_invoiced(): no link between a note and an invoice exists
yet (issue 33 builds it), so every sent note counts as not invoiced until then.
"""

from datetime import timedelta

from django.db.models import Q

from backoffice.core.dashboard import counted, register_block
from backoffice.core.generic.registry import model_url

from .choices import DispatchStatus
from .models import DispatchNote

INVOICING_DAYS = 7
OVERDUE_SHOWN_DAYS = 30  # a window that ran out longer ago is not on the dashboard any more
# Delivered to the tax authority and not rejected by the receiver: goods that went and are to be invoiced.
SENT_STATUSES = (DispatchStatus.DELIVERED, DispatchStatus.APPROVED, DispatchStatus.APPROVING,
                 DispatchStatus.APPROVAL_ERROR, DispatchStatus.AUTO_APPROVED, DispatchStatus.AWAITING_APPROVAL,
                 DispatchStatus.REJECTION_ERROR, DispatchStatus.PARTIALLY_ACCEPTED,
                 DispatchStatus.PARTIALLY_ACCEPTING, DispatchStatus.PARTIAL_ACCEPTANCE_ERROR)


# --- our notes to be invoiced ----------------------------------------------------------------------------------
def not_invoiced(notes):
    """The notes of `notes` no invoice covers yet. Today none is linked to an invoice (issue 33 adds the link and
    changes only this function), so all of them."""
    return notes


def invoicing_window(notes, today):
    """Sent notes (not rejected) whose invoicing window is open, or ran out in the last OVERDUE_SHOWN_DAYS, not
    invoiced yet; the fewest days left first. The window counts from the note's date."""
    oldest = today - timedelta(days=INVOICING_DAYS + OVERDUE_SHOWN_DAYS)
    return not_invoiced(notes.filter(remote_status__in=SENT_STATUSES, issue_date__gte=oldest)).order_by(
        "issue_date", "pk")


def invoicing_days_left(issue_date, today) -> int:
    return (issue_date + timedelta(days=INVOICING_DAYS) - today).days


def to_invoice(company, *, today, user=None) -> dict:
    notes = counted(invoicing_window(DispatchNote.objects.filter(company=company), today)
                    .only("pk", "despatch_number", "local_reference_id", "receiver_name", "issue_date",
                          "payable_amount", "currency_code", "remote_status"),
                    Q(issue_date__lt=today - timedelta(days=INVOICING_DAYS)))
    list_url = model_url(DispatchNote, "list")
    rows = [{"number": str(note), "party": note.receiver_name, "issue_date": note.issue_date,
             "amount": note.payable_amount, "currency": note.currency_code,
             "days_left": invoicing_days_left(note.issue_date, today), "url": model_url(note, "detail")}
            for note in notes]
    for row in rows:
        row["days_late"] = max(0, -row["days_left"])
    return {"rows": rows, "total": notes[0].total if notes else 0,
            "overdue": (notes[0].overdue_total or 0) if notes else 0, "days": INVOICING_DAYS,
            "url": f"{list_url}?view=to_invoice" if list_url else None}


register_block("dispatch_invoicing", template="core/dashboard/dispatch_invoicing.html", build=to_invoice, order=30)
