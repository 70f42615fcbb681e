"""Accounting service, invoices: the incoming and outgoing lists (document 3, 2.6 and 4.1), filtered and sorted
in the database. The choices are listed in invoices.py.
"""

import json

from ..api import Call, operation
from ..models import Document
from .common import decimal, moment, page, paged_query, refused
from .invoice_store import BASE, INCOMING, OUTGOING, day, list_item, settle, stamp
from .list_filters import OPERATORS, TEXT_ONLY, Column, filtered, sorted_rows

# Categories and sort columns are the list item's field names, spelled as document 3 spells them (exactly: a
# platform that binds names does not guess at capitals). Typed categories are compared here (moments, days and
# amounts); the others go to list_filters.filtered.
MOMENTS = {"updateDateUtc": "data__updateDateUtc", "createDateUtc": "data__createDateUtc"}
DAYS = {"issueDate": "data__issueDate"}
AMOUNTS = {"payableAmount": "data__payableAmount", "taxExclusiveAmount": "data__taxExclusiveAmount",
           "totalAmount": "data__totalAmount", "taxTotal": "data__taxTotal"}
COLUMNS = (Column("invoiceNumber", "number"), Column("targetVknTckn", "data__targetVknTckn"),
           Column("targetTitle", "data__targetTitle"), Column("targetAlias", "data__targetAlias"),
           Column("profile", "data__profile"), Column("type", "data__type"),
           Column("invoiceStatus", "status", True), Column("recordType", "data__recordType", True),
           Column("recordStatus", "data__recordStatus", True), Column("currencyId", "data__currencyId", True),
           *(Column(name, "") for name in (*MOMENTS, *DAYS, *AMOUNTS)))
CATEGORIES = tuple(column.name for column in COLUMNS)
CONDITION_MEMBERS = ("category", "operator", "value")
SORTS = {"createDateUtc": "created", "updateDateUtc": "data__updateDateUtc", "issueDate": "data__issueDate",
         "invoiceNumber": "number", "invoiceStatus": "status", "payableAmount": "data__payableAmount",
         "targetTitle": "data__targetTitle", "targetVknTckn": "data__targetVknTckn", "recordType": "data__recordType",
         "recordStatus": "data__recordStatus", "ettn": "key"}


def _typed(rows, condition: dict, category: str):
    """A condition on a moment, a day or an amount, compared as such (filtered() compares text or integers)."""
    operator = condition.get("operator")
    found = OPERATORS.get(" ".join(str(operator or "").split()).lower())
    if found is None:
        raise refused("Bad Request", f"filterQuery: unknown operator '{operator}'; one of {', '.join(OPERATORS)}.")
    lookup, negated = found
    if lookup in TEXT_ONLY:
        raise refused("Bad Request", f"filterQuery: {category} takes the equality and comparison operators only "
                                     f"(got '{operator}').")
    value = condition.get("value")
    if category in MOMENTS:
        parsed = moment(value) if isinstance(value, str) else None
        name, wanted, what = MOMENTS[category], parsed and stamp(parsed), "an ISO date and time"
    elif category in DAYS:
        parsed = day(value)
        name, wanted, what = DAYS[category], parsed and parsed.isoformat(), "a date (yyyy-MM-dd)"
    else:
        parsed = decimal(value)
        name, wanted, what = AMOUNTS[category], parsed is not None and float(parsed), "a number"
    if parsed is None:
        raise refused("Bad Request", f"filterQuery: {category} takes {what} (got {value!r}).")
    condition_filter = {f"{name}__{lookup}": wanted}
    return rows.exclude(**condition_filter) if negated else rows.filter(**condition_filter)


def _filtered(rows, raw: str):
    try:
        conditions = json.loads(raw) if raw.strip() else []
    except ValueError:
        return filtered(rows, raw, COLUMNS)  # it names the problem
    conditions = [conditions] if isinstance(conditions, dict) else conditions
    if not isinstance(conditions, list):
        return filtered(rows, raw, COLUMNS)
    rest = []
    for condition in conditions:
        if not isinstance(condition, dict):
            return filtered(rows, raw, COLUMNS)  # it names the problem
        _exact(condition)
        category = str(condition.get("category") or "").strip()
        if category in MOMENTS or category in DAYS or category in AMOUNTS:
            rows = _typed(rows, condition, category)
        else:
            rest.append(condition)
    return filtered(rows, json.dumps(rest), COLUMNS) if rest else rows


def _exact(condition: dict) -> None:
    """A condition's members and category as document 3 spells them (4.1: category, operator, value)."""
    for key in condition:
        member = next((name for name in CONDITION_MEMBERS if str(key).lower() == name), None)
        if member is not None and key != member:
            raise refused("Bad Request", f"filterQuery: unknown member '{key}'; a condition is {{category, operator, "
                                         f"value}}, spelled so.")
    category = str(condition.get("category") or "").strip()
    if category and category not in CATEGORIES:
        raise refused("Bad Request", f"filterQuery: unknown category '{category}'; one of {', '.join(CATEGORIES)} "
                                     f"(spelled so).")


def _list(call: Call, kind: str):
    page_index, page_size = page(call)
    settle(call)
    rows = _filtered(Document.objects.filter(customer=call.customer, kind=kind), call.query.get("filterQuery", ""))
    rows = sorted_rows(call, rows, SORTS, default="createDateUtc", spelled_so=True)
    return paged_query(rows, page_index, page_size, list_item)


operation("accounting", "GET", BASE + "/incoming/list")(lambda call: _list(call, INCOMING))
operation("accounting", "GET", BASE + "/outgoing/list")(lambda call: _list(call, OUTGOING))
