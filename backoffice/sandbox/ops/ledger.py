"""Electronic ledger service (document 3; property names are capitalised there)."""

import calendar

from .. import fakes
from ..api import Call, operation
from .common import listed


def periods(customer) -> list[dict]:
    """One monthly period per month of 2025, the latest months still being processed."""
    items = []
    for month in range(1, 13):
        last_day = calendar.monthrange(2025, month)[1]
        period_id = 1000 + customer.pk * 100 + month
        done = month <= 9
        items.append({
            "Id": period_id,
            # The upload's StartDate and EndDate come back as these two.
            "FiscalYearStart": f"2025-{month:02d}-01T00:00:00",
            "FiscalYearEnd": f"2025-{month:02d}-{last_day}T00:00:00",
            "Status": 60 if done else 20,
            "IsActive": True,
            "SplitSize": 150,
            "TimeStamp": False,
            "WithoutTaxDetail": False,
            "IsLiquidation": False,
            "Task": {"Id": fakes.seed(customer, "task", month) % 10**6, "Status": 3 if done else 1,
                     "Progress": 100 if done else 20, "Message": ""},
        })
    return items


@operation("ledger", "GET", "/v1/period/getperiodlist")
def period_list(call: Call):
    # isDesc with no column sorts by creation date, newest first (document 3).
    return listed(call, periods(call.customer), capitalised=True)
