"""The outgoing dispatch notes' block of the dashboard, one query (the first rows and the counts of the whole set
together, by window functions), days counted in Istanbul dates: our sent notes not invoiced within their 7-day
invoicing window, or past it for up to 30 days (dispatch.invoicing; index dispatch_note_to_invoice).
"""

from datetime import timedelta

from django.db.models import Q

from backoffice.core.dashboard import counted, register_block
from backoffice.core.generic.registry import model_url

from .invoicing import INVOICING_DAYS, invoicing_days_left, invoicing_window
from .models import DispatchNote


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
