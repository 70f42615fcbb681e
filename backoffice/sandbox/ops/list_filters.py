"""filterQuery and sortedColumn of the accounting service's lists (document 3, 4.1; the operators of the facts
file): conditions {category, operator, value} run in the database over the generic Document table.

A list declares its columns (Column: the platform's category name and the Document field it reads) and its
sort keys; text compared case-blind reads a folded copy kept in data["search"] (searchable()), because the
database's LIKE lowers ASCII letters only and Turkish has four i's.
"""

import json
from dataclasses import dataclass

from django.db.models import BigIntegerField
from django.db.models.functions import Cast

from ..api import Call
from .common import condition_parts, refused

# filterQuery operators (document 3, 4.1, and the facts file) -> (lookup, negated).
OPERATORS = {
    "eşittir": ("exact", False), "eşit değildir": ("exact", True), "eşittir değildir": ("exact", True),
    "küçüktür": ("lt", False), "küçük ve eşittir": ("lte", False), "büyüktür": ("gt", False),
    "büyük ve eşittir": ("gte", False), "içeren": ("icontains", False), "içermeyen": ("icontains", True),
    "ile başlayan": ("istartswith", False), "ile başlamayan": ("istartswith", True),
}
TEXT_ONLY = ("icontains", "istartswith")
CASE_BLIND = ("iexact", *TEXT_ONLY)


@dataclass(frozen=True)
class Column:
    name: str  # as the platform spells the category
    lookup: str  # the Document field ("ident": the id as a number, annotated)
    number: bool = False

    @property
    def folded(self) -> str:
        """The field of the folded copy (see fold) that the case-blind operators read."""
        return self.lookup.replace("data__", "data__search__") if self.lookup.startswith("data__") else self.lookup


def fold(text) -> str:
    """Text as the case-blind operators compare it: Turkish capitals lowered (the database's LIKE lowers ASCII
    only), and the four i's (I ı İ i) one letter, so that ALICI finds Alıcılar and INFO finds info."""
    text = str(text or "")
    for letter in "Iıİ":
        text = text.replace(letter, "i")
    return text.lower()


def searchable(data: dict, names: tuple) -> dict:
    return {**data, "search": {name: fold(data.get(name)) for name in names}}


def filtered(rows, raw: str, columns: tuple):
    """The rows that meet every condition of filterQuery."""
    if not raw.strip():
        return rows
    try:
        conditions = json.loads(raw)
    except ValueError:
        raise refused("Bad Request", "filterQuery: is not valid JSON; send an array of {category, operator, value}.") \
            from None
    if isinstance(conditions, dict):
        conditions = [conditions]
    if not isinstance(conditions, list):
        raise refused("Bad Request", "filterQuery: must be a JSON array of {category, operator, value}.")
    by_name = {column.name.lower(): column for column in columns}
    rows = rows.annotate(ident=Cast("key", BigIntegerField())) if "id" in by_name else rows
    for condition in conditions:
        if not isinstance(condition, dict):
            raise refused("Bad Request", "filterQuery: each condition must be an object {category, operator, value}.")
        column, lookup, negated, value = _condition(condition, by_name)
        name = column.folded if lookup in CASE_BLIND else column.lookup
        condition_filter = {f"{name}__{lookup}": fold(value) if name != column.lookup else value}
        rows = rows.exclude(**condition_filter) if negated else rows.filter(**condition_filter)
    return rows


def _condition(condition: dict, by_name: dict):
    category, operator, value = condition_parts(condition, "filterQuery")
    column = by_name.get(str(category or "").strip().lower())
    if column is None:
        names = ", ".join(column.name for column in by_name.values())
        raise refused("Bad Request", f"filterQuery: unknown category '{category}'; one of {names}.")
    found = OPERATORS.get(" ".join(str(operator or "").split()).lower())
    if found is None:
        raise refused("Bad Request", f"filterQuery: unknown operator '{operator}'; one of {', '.join(OPERATORS)}.")
    lookup, negated = found
    if value is None:
        raise refused("Bad Request", f"filterQuery: the condition on {column.name} has no value.")
    if not column.number:  # identifiers are digits: exact, by their index
        return column, "iexact" if lookup == "exact" and column.lookup != "number" else lookup, negated, str(value)
    if lookup in TEXT_ONLY:
        raise refused("Bad Request", f"filterQuery: {column.name} is a number; the operator '{operator}' applies to "
                                     "text only.")
    try:
        number = int(str(value).strip()) if not isinstance(value, (bool, float)) else None
    except ValueError:
        number = None
    if number is None:
        raise refused("Bad Request", f"filterQuery: {column.name} takes a whole number (got {json.dumps(value)}).")
    return column, lookup, negated, number


def sorted_rows(call: Call, rows, sorts: dict, default: str = "id", spelled_so: bool = False):
    """The rows in the order of sortedColumn (a key of sorts, in any letter case unless spelled_so) and isDesc."""
    wanted = call.query.get("sortedColumn", "").strip()
    column = sorts.get((wanted if spelled_so else wanted.lower()) or default)
    if column is None:
        names = f"{', '.join(sorts)} (spelled so)" if spelled_so else ", ".join(
            name for name in ("Id", "Name", "Identifier", "Code", "Type", "BaseCode", "ParentId")
            if name.lower() in sorts)
        raise refused("Bad Request", f"sortedColumn: unknown column '{wanted}'; one of {names}.")
    flag = call.query.get("isDesc", "").strip().lower()
    if flag not in ("", "true", "false"):
        raise refused("Bad Request", f"isDesc: must be true or false (got '{call.query['isDesc']}').")
    sign = "-" if flag == "true" else ""
    return rows.order_by(*dict.fromkeys(f"{sign}{name}" for name in (column, "pk")))
