"""By-date reports (document 2, 2.5): one Document row of kind "<kind>_report" per reported document,
created = the moment it was reported, data = the report item; the paged operation over a day's items, and
the control action that fills a day with items in bulk for tests and benchmarks (each domain registers the
item shape of its kinds with @filler).
"""

import re
import uuid
from collections.abc import Callable
from datetime import date, datetime, time, timedelta

from django.utils import timezone

from ..api import Call, problem
from ..control import BadRequest, control_action
from ..models import Document
from .common import control_customer, create_in_batches, page, paged_query, refused

FILLERS: dict[str, Callable[[date, int], dict]] = {}


def by_date(call: Call, kind: str, report_date: str, settle: Callable[[Call], None] | None = None):
    """The items reported on that (Istanbul) day, oldest first; settle runs once the request is checked.
    Only for credentials with the e-ticket listing permission (document 1, section 5, rule 5)."""
    if not call.customer.listing_permission:
        raise problem(403, "Forbidden", "The credentials lack the e-ticket listing permission needed for reports.")
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", report_date or ""):
        raise refused("Bad Request", f"reportDate: '{report_date}' is not a date in the format yyyy-MM-dd.")
    try:
        day = date.fromisoformat(report_date)
    except ValueError:
        raise refused("Bad Request", f"reportDate: '{report_date}' is not a valid date (yyyy-MM-dd).") from None
    page_index, page_size = page(call)
    if settle is not None:
        settle(call)
    start = timezone.make_aware(datetime.combine(day, time.min))
    items = Document.objects.filter(customer=call.customer, kind=f"{kind}_report", created__gte=start,
                                    created__lt=start + timedelta(days=1))
    return paged_query(items.order_by("created", "pk").values_list("data", flat=True), page_index, page_size)


# --- control: report items in bulk ------------------------------------------------------------------------

def filler(kind: str):
    """Register the maker of a kind's filler items: (day, index) -> the report item."""

    def register(make):
        FILLERS[kind] = make
        return make

    return register


def sample(day: date, index: int) -> tuple[str, str, float]:
    """The moment, document number and amount of the index-th filler item of a day."""
    moment = f"{day.isoformat()}T10:00:00+03:00"
    number = f"BNC{day.year}{index + 1:09d}"
    amount = round(100 + index % 900 + (index % 100) / 100, 2)
    return moment, number, amount


@control_action("POST", "tickets/report-items")
def control_report_items(body):
    """{customer_unique_id or api_key, kind: event_ticket | passenger_ticket | passenger_list,
    date: yyyy-mm-dd, count} -> that many report items on that day (spread over it, in order)."""
    kind = body.get("kind")
    if kind not in FILLERS:
        raise BadRequest(f"kind must be one of {', '.join(FILLERS)}")
    customer = control_customer(body)
    day = date.fromisoformat(str(body.get("date")))
    count = int(body.get("count", 0))
    if not 0 <= count <= 1_000_000:
        raise BadRequest("count must be between 0 and 1,000,000")
    start = timezone.make_aware(datetime.combine(day, time.min))
    step = 86_400_000_000 // max(count, 1)  # microseconds: every item inside the day, in order
    create_in_batches((Document(customer=customer, kind=f"{kind}_report", key=uuid.uuid4().hex,
                                number=f"BNC{day.year}{index + 1:09d}",
                                created=start + timedelta(microseconds=step * index), data=FILLERS[kind](day, index))
                       for index in range(count)), 2000)
    return {"created": count, "kind": kind, "date": day.isoformat()}
