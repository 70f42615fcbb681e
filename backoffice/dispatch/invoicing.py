"""The 7-day invoicing watch of our sent notes (issue 33): an invoice is issued within 7 days of the goods' dispatch,
counted from the note's date in Istanbul days. A note is invoiced when the invoices domain says so (set_invoiced,
through dispatch.api: an invoice that references it was saved; its deletion or refusal frees it again); this module
decides nothing of invoices, it keeps what it is told and counts the days of the rest.

Every question of the watch is a range of issue dates over the sent notes not invoiced (index
dispatch_note_to_invoice), so the list's filters and the dashboard stay fast on a million notes. A daily job marks
the notes whose 7 days run out tomorrow (deadline_marked_on): the list and the note's page flag them.
"""

from datetime import timedelta

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from backoffice.core import dashboard as core_dashboard
from backoffice.core import jobs, schedule

from .choices import SENT_STATUSES
from .models import DispatchNote

INVOICING_DAYS = 7
OVERDUE_SHOWN_DAYS = 30  # a window that ran out longer ago is not on the dashboard any more

# The list's "invoicing" filter: its values and what people read for them.
OPEN, LAST_DAY, OVERDUE, NOT_INVOICED, INVOICED = "open", "last_day", "overdue", "not_invoiced", "invoiced"
FILTER_CHOICES = (
    (OPEN, gettext_lazy("To be invoiced (within 7 days)")),
    (LAST_DAY, gettext_lazy("Last day today or tomorrow")),
    (OVERDUE, gettext_lazy("7 days ran out, not invoiced")),
    (NOT_INVOICED, gettext_lazy("Not invoiced (every sent note)")),
    (INVOICED, gettext_lazy("Invoiced")),
)


def not_invoiced(notes):
    """The notes of `notes` no invoice covers (the one place that decides it)."""
    return notes.filter(invoiced_as="")


def to_invoice(notes):
    """Sent (not rejected) and not invoiced: what the watch counts, in the shape of the partial index."""
    return not_invoiced(notes).filter(remote_status__in=SENT_STATUSES)


def invoicing_window(notes, today):
    """Sent notes (not rejected) whose invoicing window is open, or ran out in the last OVERDUE_SHOWN_DAYS, not
    invoiced yet; the fewest days left first."""
    oldest = today - timedelta(days=INVOICING_DAYS + OVERDUE_SHOWN_DAYS)
    return to_invoice(notes).filter(issue_date__gte=oldest).order_by("issue_date", "pk")


def invoicing_days_left(issue_date, today) -> int:
    return (issue_date + timedelta(days=INVOICING_DAYS) - today).days


def days_left(note, today=None) -> int | None:
    """Days left to invoice a sent note not invoiced (negative: late), or None when the watch does not count it."""
    if note.invoiced_as or note.remote_status not in SENT_STATUSES or note.issue_date is None:
        return None
    return invoicing_days_left(note.issue_date, today or core_dashboard.today())


def filtered(notes, value, today=None):
    """The list's "invoicing" filter (FILTER_CHOICES); an unknown value leaves the list as it is."""
    today = today or core_dashboard.today()
    first_open = today - timedelta(days=INVOICING_DAYS)  # the oldest note date whose window is still open
    if value == OPEN:
        return to_invoice(notes).filter(issue_date__gte=first_open).order_by("issue_date", "pk")
    if value == LAST_DAY:
        return to_invoice(notes).filter(issue_date__gte=first_open, issue_date__lte=first_open + timedelta(days=1)
                                        ).order_by("issue_date", "pk")
    if value == OVERDUE:
        return to_invoice(notes).filter(issue_date__lt=first_open).order_by("-issue_date", "-pk")
    if value == NOT_INVOICED:
        return to_invoice(notes)
    if value == INVOICED:
        return notes.exclude(invoiced_as="")
    return notes


# A note the user says was invoiced outside the back office (before it, or in another program): kept as invoiced,
# with no invoice of ours behind it (invoiced_target empty); the invoices domain's reconciliation leaves it alone.
ELSEWHERE = "elsewhere"


def invoiced_label(note) -> str:
    """What the lists show for the invoice that bills the note ("" when none)."""
    if note.invoiced_as == ELSEWHERE and not note.invoiced_target:
        return str(gettext_lazy("Invoiced elsewhere"))
    return note.invoiced_as


def mark_elsewhere(notes, *, invoiced: bool) -> int:
    """"Invoiced elsewhere" (or back on the watch): only notes no invoice of ours bills are changed."""
    ours = notes.exclude(invoiced_target="")
    if invoiced:
        return notes.filter(invoiced_as="").update(invoiced_as=ELSEWHERE)
    return notes.exclude(pk__in=ours.values("pk")).filter(invoiced_as=ELSEWHERE).update(invoiced_as="")


def set_invoiced(company, marks: dict) -> int:
    """Keep what the invoices domain says: {note pk: (invoice label, record target)}, ("", "") for a note no
    invoice covers any more. Notes of another company are left alone. Returns how many changed."""
    by_value = {}
    for pk, (label, target) in marks.items():
        by_value.setdefault((label[:64], target[:64]), []).append(pk)
    changed = 0
    for (label, target), pks in by_value.items():
        changed += (DispatchNote.objects.filter(company=company, pk__in=pks)
                    .exclude(invoiced_as=label, invoiced_target=target)
                    .update(invoiced_as=label, invoiced_target=target))
    return changed


def invoiced_notes(company):
    """The company's notes the watch holds as invoiced by an invoice of ours (the invoices domain's
    reconciliation; a note invoiced elsewhere is the user's word, not ours to undo)."""
    return DispatchNote.objects.filter(company=company).exclude(invoiced_as="").exclude(invoiced_target="")


def running_out(notes, today):
    """Sent notes not invoiced whose 7 days end today or tomorrow."""
    first_open = today - timedelta(days=INVOICING_DAYS)
    return to_invoice(notes).filter(issue_date__gte=first_open, issue_date__lte=first_open + timedelta(days=1))


@jobs.job(gettext_lazy("Mark dispatch notes whose 7 days to invoice run out"))
def deadlines_mark(today=None) -> str:
    """The daily check: sent notes not invoiced whose 7 days end today or tomorrow are marked (once)."""
    today = today or core_dashboard.today()
    marked = running_out(DispatchNote.objects.filter(deadline_marked_on__isnull=True), today).update(
        deadline_marked_on=today)
    return _("%(count)s dispatch note(s) to invoice by tomorrow marked.") % {"count": marked}


def marked(note, today=None) -> bool:
    """Whether the note carries the daily check's mark and its last day is today or tomorrow (a note freed later,
    its window over, shows as late instead)."""
    left = days_left(note, today) if note.deadline_marked_on else None
    return left is not None and 0 <= left <= 1


# --- what core runs for this domain (read when the app is ready: core.domains) --------------------------------------
# Every morning at 08:00 in Istanbul (05:00 UTC): before the accountants start.
schedule.register(func=deadlines_mark, cron="0 5 * * *", name="dispatch_invoicing_deadlines", job_timeout=600)
