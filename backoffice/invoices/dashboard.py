"""The invoices' block of the dashboard: this month's invoices by direction and status, with their payable totals
per currency (different currencies are never added), refused and erroneous ones first. One grouped query over the
month's rows (index invoices_co_issued: company, issue date)."""

import calendar
from collections import defaultdict
from urllib.parse import urlencode

from django.db.models import Count, Sum
from django.utils.translation import gettext_lazy as _

from backoffice.core.dashboard import register_block
from backoffice.core.generic.registry import model_url

from .choices import ATTENTION_STATUSES, InvoiceStatus, status_label
from .models import Invoice

DIRECTIONS = ((True, "out", _("Outgoing")), (False, "in", _("Incoming")))


def month_range(today):
    return today.replace(day=1), today.replace(day=calendar.monthrange(today.year, today.month)[1])


def month_summary(company, *, today, user=None) -> dict:
    first, last = month_range(today)
    rows = (Invoice.objects.filter(company=company, issue_date__gte=first, issue_date__lte=last).order_by()
            .values("is_send", "remote_status", "currency_code")
            .annotate(count=Count("pk"), payable=Sum("payable_amount")))
    groups = defaultdict(lambda: {"count": 0, "totals": {}})
    for row in rows:
        group = groups[(row["is_send"], row["remote_status"])]
        group["count"] += row["count"]
        currency = row["currency_code"] or "TRY"
        group["totals"][currency] = group["totals"].get(currency, 0) + (row["payable"] or 0)
    list_url = model_url(Invoice, "list")
    month = {"date_from": first.isoformat(), "date_to": last.isoformat()}
    directions = []
    for is_send, key, label in DIRECTIONS:
        statuses = []
        for (send, code), group in groups.items():
            if send != is_send:
                continue
            query = {"direction": key, **month}
            query.update({"remote_status": code} if code is not None else {"on_platform": "false"})
            statuses.append({
                "code": code, "color": InvoiceStatus.color(code),
                "label": status_label(code) if code is not None else str(_("Not on the platform yet")),
                "attention": code in ATTENTION_STATUSES, "count": group["count"],
                "totals": sorted(group["totals"].items()), "url": f"{list_url}?{urlencode(query)}"})
        # refused and erroneous first, then in the platform's order; "not on the platform yet" last
        statuses.sort(key=lambda item: (not item["attention"], item["code"] is None, item["code"] or 0))
        totals = defaultdict(lambda: 0)
        for item in statuses:
            for currency, amount in item["totals"]:
                totals[currency] += amount
        directions.append({"key": key, "label": label, "statuses": statuses,
                           "count": sum(item["count"] for item in statuses), "totals": sorted(totals.items()),
                           "url": f"{list_url}?{urlencode({'direction': key, **month})}"})
    return {"month": first, "directions": directions, "count": sum(item["count"] for item in directions),
            "attention": sum(item["count"] for direction in directions for item in direction["statuses"]
                             if item["attention"]),
            "list_url": list_url, "month_url": f"{list_url}?{urlencode(month)}"}


register_block("invoices", template="core/dashboard/invoices.html", build=month_summary, order=10)
