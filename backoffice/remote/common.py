"""What every service's client needs: fields of any capitalisation, numbers, JSON bodies, the paged
envelope of both spellings, list parameters with their filter, a walk over pages, lists of ids.

The platform spells one answer camelCase in one service and PascalCase in another (document 2, 2.5;
document 3: PageIndex, ..., Items), and public clients disagree on more: clients read fields through
field() and pages through envelope(), so callers see one shape.
"""

import json

from .documents import unwrap
from .transport import jsonable

MAX_PAGE_SIZE = 500  # document 1, section 8
ENVELOPE = ("pageIndex", "pageSize", "totalCount", "totalPages", "hasNextPage", "hasPreviousPage", "items")
# Filter operator for equality, as document 3 and public clients write it.
EQUALS = "eşittir"
# The list filter's query parameter: the ticket service's (public clients) and document 3's spellings.
QUERY_FILTER = "queryFilter"
FILTER_QUERY = "filterQuery"


class Client:
    """A service's client over one Transport; `prefix` goes before each operation's name (e.g. "dispatch.")."""

    prefix = ""

    def __init__(self, transport):
        self.transport = transport

    def _call(self, operation, **kwargs):
        return self.transport.call(self.prefix + operation, **kwargs)

    def _document(self, operation, **kwargs) -> tuple[bytes, str]:
        return unwrap(*self._call(operation, raw=True, **kwargs))


def field(data, *names, default=None):
    """A field of an answer under any of these names, whatever its capitalisation."""
    if not isinstance(data, dict):
        return default
    for name in names:
        if name in data:
            return data[name]
    lowered = {str(key).lower(): value for key, value in data.items()}
    for name in names:
        if name.lower() in lowered:
            return lowered[name.lower()]
    return default


def present(answer, names) -> dict:
    """The fields of `names` the answer carries (not None), under these names: fields sent for some statuses
    only."""
    return {name: value for name in names if (value := field(answer, name)) is not None}


def to_int(value):
    """An integer when the value reads as one (the platform sends some numbers as strings), else as given."""
    try:
        return int(value)
    except (TypeError, ValueError):
        return value


def items_of(answer, *names) -> list:
    """The list an answer holds: the answer itself when it is a list, else its field `names` (items)."""
    if isinstance(answer, list):
        return answer
    return field(answer, *(names or ("items",)), default=[]) or []


def envelope(data) -> dict:
    """The paged envelope in camelCase, whichever capitalisation the answer used."""
    result = {name: field(data, name) for name in ENVELOPE}
    result["items"] = result["items"] or []
    for name in ("pageIndex", "pageSize", "totalCount", "totalPages"):
        result[name] = to_int(result[name]) if result[name] is not None else 0
    for name in ("hasNextPage", "hasPreviousPage"):
        result[name] = bool(result[name])
    return result


def check_page(page_index: int, page_size: int) -> None:
    """Pages count from 1 and hold at most 500 records (document 1, section 8)."""
    if not (_whole(page_index) and _whole(page_size)) or page_index < 1 or not 1 <= page_size <= MAX_PAGE_SIZE:
        raise ValueError(f"page_index starts at 1 and page_size is 1 to {MAX_PAGE_SIZE}")


def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_page_size(params: dict | None, name: str = "pageSize") -> dict | None:
    """A query given as it is (pageIndex, pageSize, filters...), refused when it asks for more than 500
    records a page (document 1, section 8); the rest is the platform's to judge."""
    if params and params.get(name) is not None:
        size = to_int(params[name])
        if not _whole(size) or not 1 <= size <= MAX_PAGE_SIZE:
            raise ValueError(f"{name} is 1 to {MAX_PAGE_SIZE}, not {params[name]!r}")
    return params


def equals(category: str, value) -> dict:
    """One condition of a list filter: `category` equals `value`."""
    return {"category": category, "operator": EQUALS, "value": value}


def filter_query(conditions) -> str:
    """A list filter as the query parameter carries it: a JSON array of {category, operator, value}
    (operators in Turkish, sent as they are)."""
    return json.dumps(jsonable(list(conditions)), ensure_ascii=False)


def list_params(page_index: int, page_size: int, *, conditions=None, sorted_column: str | None = None,
                is_desc: bool | None = None, filter_name: str = QUERY_FILTER) -> dict:
    """The query of a list operation: paging (checked), the filter under its service's name, the sort."""
    check_page(page_index, page_size)
    params = {"pageIndex": page_index, "pageSize": page_size}
    if conditions:
        params[filter_name] = filter_query(conditions)
    if sorted_column:
        params["sortedColumn"] = sorted_column
    if is_desc is not None:
        params["isDesc"] = "true" if is_desc else "false"
    return params


def walk_pages(fetch, start: int = 1):
    """Every page from page `start` on, one envelope at a time: fetch(page_index) gives one envelope.
    Stops at the last page, and at an empty one (a platform that says "more" but sends nothing)."""
    page_index = start
    while True:
        page = fetch(page_index)
        yield page
        if not page["hasNextPage"] or not page["items"]:
            return
        page_index += 1


def ids(values, what: str = "id") -> list[str]:
    """Ids as strings for a body; at least one (the platform's "all or none" calls need something)."""
    result = [str(value) for value in values]
    if not result:
        raise ValueError(f"at least one {what} is needed")
    return result


def queue_status(status) -> int:
    """A status a change may ask for: 0 (back to draft, from 40 error) or 20 (queue and send)."""
    if status not in (0, 20):
        raise ValueError("status must be 0 (draft) or 20 (queue and send)")
    return int(status)


def status_change(values, status, what: str) -> dict:
    """The body of a status change of tickets, notes or replies, all or none: spelled Ids and Status as
    documents 2 (4.1, "Change status") and 3 (4.5) and the provider's client write them."""
    status = queue_status(status)
    return {"Ids": ids(values, what), "Status": status}
