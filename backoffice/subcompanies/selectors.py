"""Reads for the usage dashboard: the latest report, the chart series and the forecasts."""

from collections import defaultdict

from django.db.models import Sum

from . import report
from .models import ReportCustomer, SubCompany, UsageSnapshot

TREND_SNAPSHOTS = 60


def latest_snapshot(company) -> UsageSnapshot | None:
    return UsageSnapshot.objects.filter(company=company).first()


def labels_for(company, rows) -> dict[str, str]:
    """customerUniqueId -> the name to show: ours for the company itself and known sub-companies, else
    what the report carries (its name if any, else the id)."""
    names = dict(SubCompany.objects.filter(company=company).exclude(remote_id="").exclude(name="")
                 .values_list("remote_id", "name"))
    labels = {}
    for row in rows:
        if row.depth == 0:
            labels[row.customer_unique_id] = company.name
        else:
            labels[row.customer_unique_id] = names.get(row.customer_unique_id) or row.label
    return labels


def company_series(snapshot, labels) -> dict:
    """Bars per company of the latest report: offered, used, over-used (None: not in the report)."""
    rows = list(snapshot.customers.order_by("position"))
    return {
        "labels": [labels.get(row.customer_unique_id, row.label) for row in rows],
        "offered": [row.credit_offered for row in rows],
        "used": [row.credit_used for row in rows],
        "over_used": [row.credit_over_used for row in rows],
    }


def trend_series(company, limit=TREND_SNAPSHOTS) -> dict:
    """Totals of the company and all its sub-companies per snapshot, oldest first."""
    snapshots = list(UsageSnapshot.objects.filter(company=company).order_by("-fetched_at", "-pk")[:limit])
    totals = {
        row["snapshot"]: row for row in ReportCustomer.objects.filter(snapshot__in=snapshots).order_by()
        .values("snapshot").annotate(offered=Sum("credit_offered"), used=Sum("credit_used"),
                                     over_used=Sum("credit_over_used"))
    }
    snapshots.reverse()
    return {
        "times": [s.fetched_at for s in snapshots],
        "offered": [totals.get(s.pk, {}).get("offered") for s in snapshots],
        "used": [totals.get(s.pk, {}).get("used") for s in snapshots],
        "over_used": [totals.get(s.pk, {}).get("over_used") for s in snapshots],
    }


def forecasts(company, snapshot, labels) -> list[report.Forecast]:
    """One forecast per company of the latest report, from its figures over the last 30 days."""
    since = snapshot.fetched_at - report.FORECAST_WINDOW
    history = defaultdict(list)
    for uid, fetched_at, offered, used in (
            ReportCustomer.objects.filter(company=company, snapshot__fetched_at__gte=since,
                                          snapshot__fetched_at__lte=snapshot.fetched_at)
            .values_list("customer_unique_id", "snapshot__fetched_at", "credit_offered", "credit_used")):
        history[uid].append((fetched_at, offered, used))
    result = []
    for row in snapshot.customers.order_by("position"):
        uid = row.customer_unique_id
        result.append(report.forecast(uid, labels.get(uid, row.label), history.get(uid, [])))
    return result


def totals(snapshot) -> dict:
    return snapshot.customers.aggregate(offered=Sum("credit_offered"), used=Sum("credit_used"),
                                        over_used=Sum("credit_over_used"))
