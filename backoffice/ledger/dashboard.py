"""The e-ledger's block of the dashboard: each month of the fiscal year (the calendar year of the last month that
ended, so that December stays in view through January) with its state, and the next month due (months go in
order). One query: the year's periods on the platform and, UNION ALL, the journals being checked or uploaded here
that have no period yet."""

import calendar
from datetime import date
from urllib.parse import urlencode

from django.db.models import CharField, F, IntegerField, Q, Value
from django.utils.translation import gettext_lazy as _

from backoffice.core.choices import SyncState
from backoffice.core.dashboard import register_block
from backoffice.core.generic.registry import model_url, user_may

from .choices import CheckState, PeriodStatus
from .models import Journal, Period
from .periods import approved_statuses, failed_submission_statuses, refused_statuses

NOT_UPLOADED, REFUSED, CHECKING, UPLOADED, APPROVED = "not_uploaded", "refused", "checking", "uploaded", "approved"
NOT_ENDED = "not_ended"
# A month shows the strongest thing known of it: a range uploaded again after a refusal is no longer refused.
RANK = {NOT_UPLOADED: 0, REFUSED: 1, CHECKING: 2, UPLOADED: 3, APPROVED: 4}
STATES = {
    NOT_UPLOADED: (_("Not uploaded"), "secondary"),
    REFUSED: (_("Refused"), "danger"),
    CHECKING: (_("Being checked"), "info"),
    UPLOADED: (_("Uploaded"), "primary"),
    APPROVED: (_("Approved"), "success"),
    NOT_ENDED: (_("Month not ended"), "light"),
}
# The platform has the file and converts and checks it.
PLATFORM_CHECKING = (PeriodStatus.UPLOADED, PeriodStatus.CONVERTING)


def fiscal_year(today) -> int:
    return (today.replace(day=1) - date.resolution).year


def period_state(status) -> str:
    if status in approved_statuses():
        return APPROVED
    if status in refused_statuses() or status in failed_submission_statuses():
        return REFUSED
    if status in PLATFORM_CHECKING:
        return CHECKING
    return UPLOADED


def _entries(company, first, last):
    periods = (Period.objects.filter(company=company, fiscal_year_start__lte=last, fiscal_year_end__gte=first)
               .order_by().values(kind=Value("period", output_field=CharField()), key=F("pk"),
                                  start=F("fiscal_year_start"), end=F("fiscal_year_end"), status=F("remote_status")))
    journals = (Journal.objects.filter(Q(check_state__in=(CheckState.WAITING, CheckState.CHECKING))
                                       | Q(sync_state__in=(SyncState.QUEUED, SyncState.SENDING)),
                                       company=company, period__isnull=True, start_date__lte=last,
                                       end_date__gte=first)
                .order_by().values(kind=Value("journal", output_field=CharField()), key=F("pk"), start=F("start_date"),
                                   end=F("end_date"), status=Value(None, output_field=IntegerField())))
    return periods.union(journals, all=True)


def months_of_year(company, *, today, user=None) -> dict:
    year = fiscal_year(today)
    first, last = date(year, 1, 1), date(year, 12, 31)
    months = []
    for number in range(1, 13):
        end = date(year, number, calendar.monthrange(year, number)[1])
        months.append({"start": date(year, number, 1), "end": end, "state": NOT_UPLOADED, "url": None,
                       "ended": end < today})
    for entry in _entries(company, first, last):
        if entry["start"] is None or entry["end"] is None:
            continue
        if entry["kind"] == "period":
            state, url = period_state(entry["status"]), model_url(Period, "detail", pk=entry["key"])
        else:
            state, url = CHECKING, model_url(Journal, "detail", pk=entry["key"])
        for month in months:
            if entry["start"] <= month["end"] and entry["end"] >= month["start"] and \
                    RANK[state] >= RANK[month["state"]]:
                month.update(state=state, url=url)
    next_due = next((month for month in months if month["state"] in (NOT_UPLOADED, REFUSED)), None)
    for month in months:
        shown = month["state"] if month["ended"] or month["state"] != NOT_UPLOADED else NOT_ENDED
        month["label"], month["color"] = STATES[shown]
        month["shown"] = shown
        month["next"] = month is next_due
    upload_url = None
    if next_due is not None and user is not None and user_may(user, Journal, "add"):
        upload_url = f"{model_url(Journal, 'add')}?" + urlencode(
            {"start_date": next_due["start"].isoformat(), "end_date": next_due["end"].isoformat()})
    return {"year": year, "months": months, "next_due": next_due, "upload_url": upload_url,
            "refused": sum(1 for month in months if month["state"] == REFUSED),
            "list_url": model_url(Period, "list"), "journals_url": model_url(Journal, "list")}


register_block("ledger", template="core/dashboard/ledger.html", build=months_of_year, order=40)
