"""Accounting service (document 3, sections 2.1 to 2.5, 2.7, 4.1 and 4.3): current accounts with their
addresses, banks, contacts and account mappings, and the chart of accounts.

Every method and path of this service is a default of the endpoint table, to be confirmed with the
provider (`manage.py endpoints --defaults`). Answers come back in the platform's camelCase names, read
through field() whatever their capitalisation. A delete, post or reverse refused by the platform answers
an object with field Error: a 4xx becomes a RemoteError whose message is that text, and an Error in a 2xx
answer is raised the same way, so a refusal is never taken for success.
"""

from .common import (MAX_PAGE_SIZE, FILTER_QUERY, Client, envelope, field, filter_query, items_of, list_params,
                     to_int, walk_pages)
from .errors import RemoteError

# The child lists of a current account (endpoint-table prefixes current_account_<part>).
PARTS = ("address", "bank", "contact", "mapping")
# Filter operators of document 3 (4.1) and the public clients (facts file, "List filters").
OPERATORS = ("eşittir", "eşit değildir", "eşittir değildir", "küçüktür", "küçük ve eşittir", "büyüktür",
             "büyük ve eşittir", "içeren", "içermeyen", "ile başlayan", "ile başlamayan")


def condition(category: str, operator: str, value) -> dict:
    """One condition of filterQuery; the operator is one of OPERATORS, sent in Turkish as it is."""
    if operator not in OPERATORS:
        raise ValueError(f"unknown filter operator {operator!r}")
    return {"category": category, "operator": operator, "value": value}


def raise_refusal(answer, operation: str) -> None:
    """An Error text in a successful answer is a refusal all the same (document 3, section 4)."""
    text = field(answer, "error") if isinstance(answer, dict) else None
    if text:
        raise RemoteError(str(text), status=400, permanent=True, detail=str(text), operation=operation)


def unless_gone(call, operation: str, **kwargs):
    """call(operation, ...)'s answer, or None when the platform answers 404: the record is not there, or already
    gone (a DELETE sent again after its first try applied, which is what was asked)."""
    try:
        return call(operation, **kwargs)
    except RemoteError as exc:
        if exc.status == 404:
            return None
        raise


def _with_id(answer, operation: str) -> dict:
    raise_refusal(answer, operation)
    if not isinstance(answer, dict) or field(answer, "id") in (None, "", 0):
        raise ValueError(f"{operation}: the platform's answer has no id: {answer!r}")
    return {**answer, "id": str(field(answer, "id"))}


class AccountingClient(Client):
    # --- current accounts -------------------------------------------------------------------------
    def current_accounts(self, page_index: int = 1, page_size: int = MAX_PAGE_SIZE, *, conditions=None,
                         sorted_column: str | None = None, is_desc: bool | None = None) -> dict:
        """One page of current accounts: items {id, branchId, name, identifier, surname, totalBalance,
        status} (2.1). At most 500 a page; `conditions` built with condition()."""
        params = list_params(page_index, page_size, conditions=conditions, sorted_column=sorted_column,
                             is_desc=is_desc, filter_name=FILTER_QUERY)
        page = envelope(self._call("current_account.list", params=params))
        page["items"] = [_id_str(item) for item in page["items"]]
        return page

    def current_account_pages(self, *, page_size: int = MAX_PAGE_SIZE, conditions=None, sorted_column=None,
                              is_desc=None, start: int = 1):
        return walk_pages(lambda index: self.current_accounts(index, page_size, conditions=conditions,
                                                              sorted_column=sorted_column, is_desc=is_desc), start)

    def current_account(self, account_id) -> dict:
        return _with_id(self._call("current_account.get", path_params={"id": account_id}), "current_account.get")

    def create_current_account(self, body: dict) -> dict:
        """Create (name and identifier required); the answer holds currentAccountAddress when one was sent.
        A POST: after a 5xx or a timeout, look it up with find_current_account() before sending again."""
        return _with_id(self._call("current_account.create", json=body), "current_account.create")

    def update_current_account(self, body: dict) -> dict:
        return _with_id(self._call("current_account.update", json=body), "current_account.update")

    def find_current_account(self, *, identifier: str, code: str = "") -> dict | None:
        """The account with this identifier and code, or None: how a create whose answer was lost is
        reconciled. The list item has no code, so each candidate is read in full."""
        for page in filtered_or_all(self.current_account_pages, [condition("Identifier", "eşittir", identifier)]):
            for item in page["items"]:
                if str(field(item, "identifier") or "") != identifier:
                    continue  # a platform that filters loosely
                full = self.current_account(item["id"])
                if str(field(full, "code") or "") == (code or ""):
                    return full
        return None

    # --- addresses, banks, contacts, mappings ------------------------------------------------------
    def children(self, part: str, current_account_id, *, branch_id=None) -> list[dict]:
        """Every record of one child list of an account (mappings: all their pages)."""
        params = {"currentAccountId": current_account_id}
        if branch_id:
            params["branchId"] = branch_id
        if part == "mapping":
            return [item for page in walk_pages(lambda index: self._mapping_page(params, index))
                    for item in page["items"]]
        return [_id_str(item) for item in items_of(self._call(f"current_account_{part}.list", params=params))]

    def _mapping_page(self, params, page_index):
        answer = self._call("current_account_mapping.list", params={**params, **list_params(page_index, MAX_PAGE_SIZE)})
        if isinstance(answer, list):  # a platform that answers the whole list as an array
            answer = {"items": answer, "pageIndex": 1, "totalPages": 1, "hasNextPage": False}
        page = envelope(answer)
        page["items"] = [_id_str(item) for item in page["items"]]
        return page

    def create_child(self, part: str, body: dict) -> dict:
        return _with_id(self._call(f"current_account_{part}.create", json=body),
                        f"current_account_{part}.create")

    def update_child(self, part: str, body: dict) -> dict:
        return _with_id(self._call(f"current_account_{part}.update", json=body),
                        f"current_account_{part}.update")

    def delete_child(self, part: str, record_id, *, branch_id=None) -> None:
        """Delete one record; a 404 means it is already gone (a retried DELETE whose first try applied),
        which is what was asked. A refusal (a default record, a mapping in use) raises with the Error text."""
        operation = f"current_account_{part}.delete"
        raise_refusal(unless_gone(self._call, operation, path_params={"id": record_id},
                                  params={"branchId": branch_id} if branch_id else None), operation)

    # --- chart of accounts -------------------------------------------------------------------------
    def accounts(self, page_index: int = 1, page_size: int = MAX_PAGE_SIZE, *, conditions=None,
                 sorted_column: str | None = None, is_desc: bool | None = None) -> dict:
        """One page of the chart: items {id, parentId, type, name, code, unitCode, isBundleAccount,
        currencyCodeId (a string), hasChild} (2.7)."""
        params = list_params(page_index, page_size, conditions=conditions, sorted_column=sorted_column,
                             is_desc=is_desc, filter_name=FILTER_QUERY)
        page = envelope(self._call("chart_of_accounts.list", params=params))
        page["items"] = [_id_str(item) for item in page["items"]]
        return page

    def account_pages(self, *, page_size: int = MAX_PAGE_SIZE, conditions=None, start: int = 1):
        return walk_pages(lambda index: self.accounts(index, page_size, conditions=conditions), start)

    def create_account(self, body: dict) -> dict:
        return _with_id(self._call("chart_of_accounts.create", json=body), "chart_of_accounts.create")

    def update_account(self, body: dict) -> dict:
        return _with_id(self._call("chart_of_accounts.update", json=body), "chart_of_accounts.update")

    def find_account(self, *, type: int, base_code: str, code: str = "", unit_code: str = "") -> dict | None:
        """The chart account with these codes, or None (reconciling a create whose answer was lost)."""
        for page in filtered_or_all(self.account_pages, [condition("Code", "eşittir", code or base_code)]):
            for item in page["items"]:
                if (to_int(field(item, "type")) == type and str(field(item, "code") or "") == (code or base_code)
                        and str(field(item, "unitCode") or "") == (unit_code or "")):
                    return item
        return None


def filtered_or_all(pages, conditions):
    """The pages of a list filtered by `conditions`; every page when the platform refuses the filter (document
    3: the filter is "supported simply and for some fields only"). Callers compare each item themselves."""
    walk = pages(conditions=conditions)
    try:
        first = next(walk, None)
    except RemoteError as exc:
        if exc.status not in (400, 422):
            raise
        yield from pages()
        return
    if first is not None:
        yield first
        yield from walk


def _id_str(item) -> dict:
    item = dict(item) if isinstance(item, dict) else {}
    if field(item, "id") is not None:
        item["id"] = str(field(item, "id"))
    return item


__all__ = ["AccountingClient", "OPERATORS", "PARTS", "condition", "filter_query", "filtered_or_all", "raise_refusal",
           "unless_gone"]
