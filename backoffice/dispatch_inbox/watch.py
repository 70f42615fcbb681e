"""The 7-day answer watch of incoming notes (issue 33): a note awaiting our answer (70) is answered within
DISPATCH_ANSWER_DAYS of its arrival, counted in Istanbul days (mirror.days_left). The list's "answer" filter is a
range of arrival times over the index dispatch_incoming_co_status (company, status, received_at); a daily job marks
the notes whose days run out tomorrow (deadline_marked_on), which the list and the dashboard flag."""

from datetime import datetime, time, timedelta

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from backoffice.core import dashboard as core_dashboard
from backoffice.core import jobs, schedule
from backoffice.core.dashboard import ISTANBUL

from .choices import AWAITING_ANSWER
from .conf import setting
from .mirror import days_left
from .models import IncomingNote

OPEN, LAST_DAY, OVERDUE = "open", "last_day", "overdue"
FILTER_CHOICES = (
    (OPEN, gettext_lazy("To be answered (within 7 days)")),
    (LAST_DAY, gettext_lazy("Last day today or tomorrow")),
    (OVERDUE, gettext_lazy("7 days ran out, not answered")),
)


def _start_of(day):
    return datetime.combine(day, time.min, tzinfo=ISTANBUL)


def _first_open(today):
    """The start (Istanbul) of the oldest arrival day whose answer window is still open."""
    return _start_of(today - timedelta(days=int(setting("DISPATCH_ANSWER_DAYS"))))


def running_out(notes, today):
    """Notes awaiting our answer whose days end today or tomorrow."""
    first_open = _first_open(today)
    return notes.filter(remote_status=AWAITING_ANSWER, received_at__gte=first_open,
                        received_at__lt=first_open + timedelta(days=2))


def filtered(notes, value, today=None):
    today = today or core_dashboard.today()
    if value == OPEN:
        return notes.filter(remote_status=AWAITING_ANSWER, received_at__gte=_first_open(today)).order_by(
            "received_at", "id")
    if value == LAST_DAY:
        return running_out(notes, today).order_by("received_at", "id")
    if value == OVERDUE:
        return notes.filter(remote_status=AWAITING_ANSWER, received_at__lt=_first_open(today)).order_by(
            "-received_at", "-id")
    return notes


def marked(note, today=None) -> bool:
    return bool(note.deadline_marked_on) and days_left(note, today) is not None


@jobs.job(gettext_lazy("Mark incoming dispatch notes whose 7 days to answer run out"))
def answer_deadlines_mark(today=None) -> str:
    """The daily check: notes awaiting our answer whose days end today or tomorrow are marked (once)."""
    today = today or core_dashboard.today()
    count = running_out(IncomingNote.objects.filter(deadline_marked_on__isnull=True), today).update(
        deadline_marked_on=today)
    return _("%(count)s incoming dispatch note(s) to answer by tomorrow marked.") % {"count": count}


# --- what core runs for this domain (read when the app is ready: core.domains) --------------------------------------
# Every morning at 08:00 in Istanbul (05:00 UTC), with the outgoing notes' check (dispatch.invoicing).
schedule.register(func=answer_deadlines_mark, cron="0 5 * * *", name="dispatch_answer_deadlines", job_timeout=600)
