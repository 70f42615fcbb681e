"""The usage report of document 1, section 2.1: parsing, the three figures, and the credit forecast.

Document 1 names the report's fields but not the fields of its array elements (beyond the id of a
credit). The charts need numbers, so a few element fields are read by name when they are present; the
names are listed here and in docs/README-subcompanies.md as assumptions to confirm with the provider.
An element that lacks them is kept as it came and shown as key/value pairs; a figure the report does not
give is None ("not in the report"), never a guess.
"""

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from backoffice.core.payloads import integer

# Assumed element field names (to confirm): the amount of a credit, usage or over-usage element, and the
# flag of an inactive (cancelled) credit offer.
QUANTITY_KEYS = ("quantity",)
CREDIT_ACTIVE_KEY = "isActive"

DOCUMENTED = ("customerUniqueId", "applicationId", "applicationSource", "applicationStatus", "applicationCreateDate",
              "distributors", "credits", "usages", "overUsages", "subCustomers")


class ReportError(ValueError):
    """The body is not a report of section 2.1."""


@dataclass
class ParsedCustomer:
    customer_unique_id: str
    application_id: int | None
    application_source: int | None
    application_status: int | None
    application_create_date: datetime | None
    distributors: list
    credits: list  # [(id, element)]
    usages: list
    over_usages: list
    extra: dict
    children: list = field(default_factory=list)
    depth: int = 0

    @property
    def credit_offered(self):
        return total([element for _id, element in self.credits if element.get(CREDIT_ACTIVE_KEY) is not False])

    @property
    def credit_used(self):
        return total(self.usages)

    @property
    def credit_over_used(self):
        return total(self.over_usages)

    def walk(self):
        """This company and every sub-company below it, depth first, in the report's order."""
        yield self
        for child in self.children:
            yield from child.walk()


def _number(value):
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def total(elements) -> int | None:
    """Sum of the amounts of the elements. [] is 0 (nothing); elements without an amount give None."""
    if not isinstance(elements, list):
        return None
    if not elements:
        return 0
    amounts = []
    for element in elements:
        if isinstance(element, dict):
            amounts += [n for key in QUANTITY_KEYS if (n := _number(element.get(key))) is not None][:1]
    if not amounts:
        return None
    return int(sum(amounts))


def _date(value):
    if not isinstance(value, str):
        return None
    try:
        parsed = parse_datetime(value)
    except ValueError:
        return None
    if parsed is not None and parsed.tzinfo is None:
        parsed = timezone.make_aware(parsed)
    return parsed


def _list(value):
    return value if isinstance(value, list) else []


def parse(body, depth=0) -> ParsedCustomer:
    """The report (or one of its subCustomers) as a tree of ParsedCustomer."""
    if not isinstance(body, dict):
        raise ReportError(_("The usage report is not a JSON object."))
    customer_unique_id = body.get("customerUniqueId")
    if not customer_unique_id or not isinstance(customer_unique_id, str):
        raise ReportError(_("An entry of the usage report has no customerUniqueId."))
    credits = []
    for element in _list(body.get("credits")):
        credit_id = integer(element.get("id")) if isinstance(element, dict) else None
        if credit_id is None:
            raise ReportError(_("A credit offer of the usage report has no integer id."))
        credits.append((credit_id, element))
    customer = ParsedCustomer(
        customer_unique_id=customer_unique_id,
        application_id=integer(body.get("applicationId")),
        application_source=integer(body.get("applicationSource")),
        application_status=integer(body.get("applicationStatus")),
        application_create_date=_date(body.get("applicationCreateDate")),
        distributors=_list(body.get("distributors")),
        credits=credits,
        usages=_list(body.get("usages")),
        over_usages=_list(body.get("overUsages")),
        extra={key: value for key, value in body.items() if key not in DOCUMENTED},
        depth=depth,
    )
    customer.children = [parse(child, depth + 1) for child in _list(body.get("subCustomers"))]
    return customer


def identifiers_in(extra: dict) -> set[str]:
    """Every text value of an element's undocumented fields: where a sub-company's identifier shows
    (rule 3: the created company is read later from the report) whatever the field is called."""
    return {str(value).strip() for value in extra.values() if isinstance(value, (str, int)) and not isinstance(value, bool)}


def flatten(value, prefix="") -> list[tuple[str, object]]:
    """Nested JSON as (dotted key, scalar value) pairs, for showing unknown elements as key/value."""
    if isinstance(value, dict):
        if not value and prefix:
            return [(prefix, "{}")]
        pairs = []
        for key, inner in value.items():
            pairs += flatten(inner, f"{prefix}.{key}" if prefix else str(key))
        return pairs
    if isinstance(value, list):
        if not value:
            return [(prefix, "[]")]
        pairs = []
        for index, inner in enumerate(value):
            pairs += flatten(inner, f"{prefix}[{index}]")
        return pairs
    return [(prefix, value)]


# --- forecast -----------------------------------------------------------------------------------------

FORECAST_WINDOW = timedelta(days=30)
# Beyond this the date means nothing (and a slow enough rate would overflow a datetime).
FORECAST_HORIZON_DAYS = 3650
# Reports closer together than this give no rate: two reports 15 minutes apart would turn a few credits into a
# daily rate. settings.SUBCOMPANY_FORECAST_MIN_SPAN_HOURS changes it.
FORECAST_MIN_SPAN_HOURS = 24


def forecast_min_span() -> timedelta:
    hours = getattr(settings, "SUBCOMPANY_FORECAST_MIN_SPAN_HOURS", FORECAST_MIN_SPAN_HOURS)
    return timedelta(hours=max(float(hours), 0.0))


def span_text(span: timedelta) -> str:
    """A span as people say it: "4 days", "1 day", "18 hours" (whole units, rounded)."""
    hours = span.total_seconds() / 3600
    if hours >= 24:
        days = max(1, round(hours / 24))
        return ngettext("%(count)s day", "%(count)s days", days) % {"count": days}
    whole = max(1, round(hours))
    return ngettext("%(count)s hour", "%(count)s hours", whole) % {"count": whole}


@dataclass
class Forecast:
    """When a company runs out of credit at its recent rate of use, or why that cannot be said."""

    customer_unique_id: str
    label: str
    offered: int | None
    used: int | None
    remaining: int | None = None
    rate_per_day: float | None = None
    runs_out_at: datetime | None = None
    exhausted: bool = False
    beyond_horizon: bool = False  # lasts more than FORECAST_HORIZON_DAYS at this rate
    reason: str = ""  # set when there is not enough data
    points: int = 0
    # The two reports the rate comes from (set whenever a rate was computed).
    span_start: datetime | None = None
    span_end: datetime | None = None

    @property
    def enough_data(self) -> bool:
        return not self.reason

    @property
    def span(self) -> timedelta | None:
        return self.span_end - self.span_start if self.span_start and self.span_end else None

    @property
    def span_label(self) -> str:
        return span_text(self.span) if self.span else ""


def forecast(customer_unique_id, label, history, min_span=None) -> Forecast:
    """history: [(fetched_at, offered, used)] of one company, any order, over the forecast window.

    rate = (credit used in the newest snapshot - in the oldest) / days between them;
    runs out at = newest snapshot time + (offered - used) / rate. Not enough data: fewer than two
    snapshots with figures, the oldest and the newest closer than min_span (default: the setting
    SUBCOMPANY_FORECAST_MIN_SPAN_HOURS, 24 h), or no growth of the credit used.
    """
    min_span = forecast_min_span() if min_span is None else min_span
    points = sorted((at, offered, used) for at, offered, used in history if used is not None)
    _at, latest_offered, latest_used = points[-1] if points else (None, None, None)
    result = Forecast(customer_unique_id, label, latest_offered, latest_used, points=len(points))
    if latest_offered is None or latest_used is None:
        result.reason = str(_("The report does not give the credit offered and used for this company."))
        return result
    result.remaining = latest_offered - latest_used
    if result.remaining <= 0:
        result.exhausted = True
        result.runs_out_at = points[-1][0]
        return result
    if len(points) < 2:
        result.reason = str(_("Fewer than two usage reports with figures in the last 30 days."))
        return result
    (first_at, _o, first_used), (last_at, _o2, last_used) = points[0], points[-1]
    if last_at - first_at < min_span or last_at <= first_at:
        result.reason = str(_("Not enough history yet: reports at least %(span)s apart are needed (the oldest and "
                              "the newest of the last 30 days are %(gap)s apart).")
                            % {"span": min_span_text(min_span),
                               "gap": _gap_text(last_at - first_at)})
        return result
    result.span_start, result.span_end = first_at, last_at
    days = (last_at - first_at).total_seconds() / 86400
    growth = last_used - first_used
    if growth <= 0:
        result.reason = str(_("No credit was used between the first and the last usage report of the last 30 days."))
        return result
    result.rate_per_day = growth / days
    days_left = result.remaining / result.rate_per_day
    if days_left > FORECAST_HORIZON_DAYS:
        result.beyond_horizon = True
    else:
        result.runs_out_at = last_at + timedelta(days=days_left)
    return result


def _gap_text(gap: timedelta) -> str:
    minutes = round(gap.total_seconds() / 60)
    if minutes < 60:
        return ngettext("%(count)s minute", "%(count)s minutes", minutes) % {"count": minutes}
    return span_text(gap)


def min_span_text(span: timedelta) -> str:
    return str(_("a day")) if span == timedelta(hours=24) else _gap_text(span)
