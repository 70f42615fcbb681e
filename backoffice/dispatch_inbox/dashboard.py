"""The receiving side's block of the dashboard, one query (the first rows and the counts of the whole set together,
core's counted()): incoming notes waiting for our answer, with the days left of the DISPATCH_ANSWER_DAYS (7)
from their arrival, counted in Istanbul dates (index dispatch_incoming_co_status: company, status, received_at)."""

from datetime import datetime, time, timedelta

from django.db.models import Q

from backoffice.core.dashboard import ISTANBUL, counted, register_block
from backoffice.core.generic.registry import model_url

from .choices import AWAITING_ANSWER
from .conf import setting
from .mirror import days_left
from .models import IncomingNote

def answer_days() -> int:
    return int(setting("DISPATCH_ANSWER_DAYS"))


def awaiting_answer(company, *, today, user=None) -> dict:
    # overdue: received before the start (Istanbul) of the day answer_days() before today
    late_before = datetime.combine(today - timedelta(days=answer_days()), time.min, tzinfo=ISTANBUL)
    notes = counted(IncomingNote.objects.filter(company=company, remote_status=AWAITING_ANSWER)
                    .order_by("received_at", "pk")
                    .only("pk", "despatch_number", "remote_id", "sender_title", "received_at", "payable_amount",
                          "currency_code", "remote_status"),
                    Q(received_at__lt=late_before))
    list_url = model_url(IncomingNote, "list")
    rows = [{"number": note.despatch_number or note.remote_id, "party": note.sender_title,
             "received_at": note.received_at, "amount": note.payable_amount, "currency": note.currency_code,
             "days_left": days_left(note, today),
             "url": model_url(note, "detail")} for note in notes]
    for row in rows:
        row["days_late"] = max(0, -(row["days_left"] or 0))
    return {"rows": rows, "total": notes[0].total if notes else 0,
            "overdue": (notes[0].overdue_total or 0) if notes else 0, "days": answer_days(),
            "url": f"{list_url}?view=awaiting" if list_url else None}


register_block("dispatch_incoming", template="core/dashboard/dispatch_incoming.html", build=awaiting_answer,
               order=20)
