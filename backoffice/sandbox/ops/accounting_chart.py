"""Accounting service, the chart of accounts (document 3, sections 2.7, 4.1 and 4.3): main, group and sub-accounts.
The choices are listed in accounting.py.
"""


from ..api import Call, operation
from ..models import Document
from .accounting import (CHART, CHART_BASE, CHART_MODEL, GROUP, MAIN, MAPPING, SUB, TYPE_NAMES, existing, find_record,
                         full_code, id_of, listed, model_body, new_record, no_id)
from .common import Checks, blank, locked, refused
from .list_filters import Column, searchable

CHART_SEARCH = ("name", "code", "baseCode")
CHART_FILTERS = (Column("Id", "ident", True), Column("Code", "data__code"), Column("Name", "data__name"),
                 Column("Type", "status", True), Column("BaseCode", "data__baseCode"),
                 Column("ParentId", "data__parentId", True))
CHART_SORTS = {"id": "pk", "code": "data__code", "name": "data__name", "type": "status",
               "basecode": "data__baseCode", "parentid": "data__parentId"}


def chart_item(doc: Document, has_child: bool) -> dict:
    data = doc.data
    currency = data.get("currencyCodeId")
    return {"id": id_of(doc), "parentId": data.get("parentId"), "type": doc.status, "name": data.get("name"),
            "code": data.get("code"), "unitCode": data.get("unitCode"),
            "isBundleAccount": bool(data.get("isBundleAccount")),
            "currencyCodeId": None if currency is None else str(currency), "hasChild": has_child,
            "baseCode": data.get("baseCode")}


def _children(customer, doc: Document):
    return Document.objects.filter(customer=customer, kind=CHART, data__parentId=id_of(doc))


def _chart_checks(customer, body: dict, doc: Document | None = None) -> Checks:
    """The rules of 2.7 and 4.3 on a create (doc None) or on an update of doc."""
    checks = Checks(body)
    if doc is None:
        no_id(checks)
    for name in ("baseCode", "name"):
        checks.required(name)
    kind = body.get("type")
    if kind is None:
        checks.add("type", "The type field is required: 0 (main), 1 (group) or 2 (sub-account).")
    elif kind not in TYPE_NAMES:
        checks.add("type", f"type must be 0 (main), 1 (group) or 2 (sub-account) (got {kind}).")
        kind = None
    if kind in (GROUP, SUB) and blank(body.get("code")):
        checks.add("code", "The code field is required for group and sub-accounts: the code of the parent account.")
    if kind == SUB and body.get("currencyCodeId") is None:
        checks.add("currencyCodeId", "The currencyCodeId field is required for sub-accounts.")
    if body.get("isBundleAccount") is True and kind is not None and kind != SUB:
        checks.add("isBundleAccount", "Only sub-accounts (type 2) can be pool accounts.")
    if body.get("parentId") is not None:
        parent = find_record(customer, CHART, body["parentId"])
        if parent is None:
            checks.add("parentId", f"No chart-of-accounts account with id {body['parentId']}.")
        elif doc is not None and parent.pk == doc.pk:
            checks.add("parentId", "An account cannot be its own parent.")
        elif kind is not None and parent.status >= kind:
            checks.add("parentId", f"The parent must be of a lower type than the account: account "
                                   f"{full_code(parent.data)} is a {TYPE_NAMES[parent.status]} account (type "
                                   f"{parent.status}).")
    if doc is not None:
        _update_rules(customer, body, doc, kind, checks)
    if kind is not None and not blank(body.get("baseCode")):
        data = _chart_data(body)
        twins = Document.objects.filter(customer=customer, kind=CHART, status=kind, data__baseCode=data["baseCode"],
                                        data__code=data["code"], data__unitCode=data["unitCode"])
        if doc is not None:
            twins = twins.exclude(pk=doc.pk)
        if twins.exists():
            checks.add("code", f"An account with code {full_code(data)} already exists.")
    return checks


def _update_rules(customer, body: dict, doc: Document, kind, checks: Checks) -> None:
    """What an account's mappings and children keep from changing."""
    holders = {mapping.data["currentAccountId"] for mapping in Document.objects.filter(
        customer=customer, kind=MAPPING, data__accountId=id_of(doc))}
    if len(holders) > 1 and body.get("isBundleAccount") is not True:
        checks.add("isBundleAccount", "The account is mapped to several current accounts; it must stay a pool account.")
    if holders and kind is not None and kind != SUB:
        checks.add("type", "The account is mapped to a current account; it must stay a sub-account (type 2).")
    child_types = {child.status for child in _children(customer, doc)}
    if kind is not None and child_types and kind >= min(child_types):
        checks.add("type", f"The account has child accounts of type {min(child_types)}; its type must stay below "
                           "theirs.")


def _chart_data(body: dict, old: dict | None = None) -> dict:
    code = body.get("code") or ""
    if not code and body.get("type") == MAIN:
        code = body.get("baseCode") or ""
    return searchable({"baseCode": body.get("baseCode"), "name": body.get("name"), "parentId": body.get("parentId"),
                        "code": code, "unitCode": body.get("unitCode") or "",
                        "isBundleAccount": body.get("isBundleAccount") is True,
                        "currencyCodeId": body.get("currencyCodeId"), "used": (old or {}).get("used", False)},
                       CHART_SEARCH)


@operation("accounting", "GET", CHART_BASE)
def list_chart(call: Call):
    result = listed(call, CHART, CHART_FILTERS, CHART_SORTS)
    ids = [id_of(doc) for doc in result["items"]]
    parents = set(Document.objects.filter(customer=call.customer, kind=CHART, data__parentId__in=ids)
                  .values_list("data__parentId", flat=True)) if ids else set()
    result["items"] = [chart_item(doc, id_of(doc) in parents) for doc in result["items"]]
    return result


@operation("accounting", "POST", CHART_BASE)
def create_chart_account(call: Call):
    body = model_body(call, CHART_MODEL)
    with locked(call.customer):
        _chart_checks(call.customer, body).raise_any()
        doc = new_record(call.customer, CHART, _chart_data(body), status=body["type"])
    return chart_item(doc, False)


@operation("accounting", "PUT", CHART_BASE)
def update_chart_account(call: Call):
    body = model_body(call, CHART_MODEL)
    with locked(call.customer):
        doc = None if body.get("id") is None else existing(call.customer, CHART, body["id"],
                                                           "chart-of-accounts account", "id")
        if doc is not None and doc.data.get("used"):
            raise refused("Update refused", "This account is used and cannot be changed.")
        checks = _chart_checks(call.customer, body, doc)
        checks.required("id")
        checks.raise_any()
        doc.status, doc.data = body["type"], _chart_data(body, doc.data)
        doc.save(update_fields=["status", "data", "updated"])
    return chart_item(doc, _children(call.customer, doc).exists())
