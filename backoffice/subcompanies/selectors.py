"""Reads for the usage dashboard: the latest report, the chart series and the forecasts."""

from collections import defaultdict

from django.db.models import Sum

from backoffice.core.choices import SyncState

from . import report
from .choices import OperationKind
from .models import ReportCustomer, SubCompany, UsageSnapshot

TREND_SNAPSHOTS = 60
# The three figures of a report as the charts name them: {series name: ReportCustomer field}.
FIGURES = {"offered": "credit_offered", "used": "credit_used", "over_used": "credit_over_used"}


def latest_snapshot(company) -> UsageSnapshot | None:
    return UsageSnapshot.objects.filter(company=company).first()


def labels_for(company, rows) -> dict[str, str]:
    """customerUniqueId -> the name to show: ours for the company itself and known sub-companies, else
    what the report carries (its name if any, else the id)."""
    names = dict(SubCompany.objects.filter(company=company).exclude(remote_id="").exclude(name="")
                 .values_list("remote_id", "name"))
    return {row.customer_unique_id: company.name if row.depth == 0 else (names.get(row.customer_unique_id) or row.label)
            for row in rows}


def company_series(snapshot, labels) -> dict:
    """Bars per company of the latest report: offered, used, over-used (None: not in the report)."""
    rows = list(snapshot.customers.order_by("position"))
    return {"labels": [labels.get(row.customer_unique_id, row.label) for row in rows],
            **{name: [getattr(row, figure) for row in rows] for name, figure in FIGURES.items()}}


def trend_series(company, limit=TREND_SNAPSHOTS) -> dict:
    """Totals of the company and all its sub-companies per snapshot, oldest first."""
    snapshots = list(UsageSnapshot.objects.filter(company=company).order_by("-fetched_at", "-pk")[:limit])
    totals = {row["snapshot"]: row for row in ReportCustomer.objects.filter(snapshot__in=snapshots).order_by()
              .values("snapshot").annotate(**_sums())}
    snapshots.reverse()
    return {"times": [s.fetched_at for s in snapshots],
            **{name: [totals.get(s.pk, {}).get(name) for s in snapshots] for name in FIGURES}}


def forecasts(company, snapshot, labels) -> list[report.Forecast]:
    """One forecast per company of the latest report, from its figures over the last 30 days."""
    since = snapshot.fetched_at - report.FORECAST_WINDOW
    history = defaultdict(list)
    for uid, fetched_at, offered, used in (
            ReportCustomer.objects.filter(company=company, snapshot__fetched_at__gte=since,
                                          snapshot__fetched_at__lte=snapshot.fetched_at)
            .values_list("customer_unique_id", "snapshot__fetched_at", "credit_offered", "credit_used")):
        history[uid].append((fetched_at, offered, used))
    return [report.forecast(row.customer_unique_id, labels.get(row.customer_unique_id, row.label),
                            history.get(row.customer_unique_id, [])) for row in snapshot.customers.order_by("position")]


def _sums() -> dict:
    return {name: Sum(figure) for name, figure in FIGURES.items()}


def totals(snapshot) -> dict:
    return snapshot.customers.aggregate(**_sums())


# --- what background work has done since the latest report ------------------------------------------

def _credit_id_in(response, customer_unique_id):
    """The id of the new offer in the platform's answer to a credit request, when it gives one: document 1
    does not show that answer, so only a dict (or a list of dicts, one per company) with an integer "id"."""
    answers = response if isinstance(response, list) else [response]
    for answer in answers:
        if not isinstance(answer, dict):
            continue
        uid = answer.get("customerUniqueId")
        if uid not in (None, "") and str(uid) != str(customer_unique_id):
            continue
        value = answer.get("id")
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def offers_since_report(subcompany) -> list[dict]:
    """Credit offers requested for the sub-company that the latest report cannot show yet: being sent, or
    accepted by the platform after the report that last showed the company. [{operation, quantity, credit_id,
    state: "sending" | "accepted", at}] newest first."""
    operations = subcompany.operations.filter(kind__in=(OperationKind.ADD_CREDIT, OperationKind.ADD_CREDIT_BATCH))
    in_flight = operations.filter(sync_state__in=(SyncState.LOCAL, SyncState.QUEUED, SyncState.SENDING))
    accepted = operations.filter(sync_state=SyncState.SYNCED)
    if subcompany.last_seen_at is not None:
        accepted = accepted.filter(synced_at__gt=subcompany.last_seen_at)
    offers = [{"operation": op, "quantity": op.quantity, "credit_id": None, "state": "sending", "at": op.created_at}
              for op in in_flight.order_by("-created_at", "-pk")]
    offers += [{"operation": op, "quantity": op.quantity, "state": "accepted", "at": op.synced_at,
                "credit_id": _credit_id_in(op.response, subcompany.remote_id)}
               for op in accepted.order_by("-synced_at", "-pk")]
    return offers


def cancellations(subcompany) -> dict[int, dict]:
    """applicationCreditId -> the latest cancellation not refused: {"state": "sending" | "accepted", "at"}."""
    result = {}
    for op in (subcompany.operations.filter(kind=OperationKind.CANCEL_CREDIT).exclude(sync_state=SyncState.FAILED)
               .order_by("created_at", "pk")):
        accepted = op.sync_state == SyncState.SYNCED
        result[op.application_credit_id] = {"state": "accepted" if accepted else "sending",
                                            "at": op.synced_at if accepted else op.created_at, "operation": op}
    return result
