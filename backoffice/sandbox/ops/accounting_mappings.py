"""Accounting service, account mappings (document 3, sections 2.5 and 4.1): a current account mapped to a
sub-account of the chart of accounts, and whether an invoice's current account is mapped (posting). The choices
are listed in accounting.py.
"""


from ..api import Call, operation
from ..models import Document
from .accounting import (ACCOUNT, ACTIVE, BASE, CHART, MAPPING, MAPPING_LIMITS, MAPPING_MODEL, SUB, TYPE_NAMES,
                         account_of, account_queried, delete_branch, existing, find_record, full_code, id_of,
                         model_body, new_record, no_id, query_int, records, text_problems)
from .common import Checks, failure, iso, locked, now, page, paged_query


def _mapping_account(call: Call, body: dict, checks: Checks, doc: Document | None = None) -> Document | None:
    """The sub-account the mapping body names, with the rules of 2.5 against the other mappings."""
    if not checks.required("accountId"):
        return None
    account = find_record(call.customer, CHART, body["accountId"])
    if account is None:
        checks.add("accountId", f"No chart-of-accounts account with id {body['accountId']}.")
        return None
    code = full_code(account.data)
    if account.status != SUB:
        checks.add("accountId", f"Account {code} is a {TYPE_NAMES[account.status]} account; only sub-accounts "
                                "(type 2) can be mapped to a current account.")
        return account
    current = body.get("currentAccountId")
    others = Document.objects.filter(customer=call.customer, kind=MAPPING, data__accountId=id_of(account))
    if doc is not None:
        others = others.exclude(pk=doc.pk)
    holders = sorted({other.data["currentAccountId"] for other in others})
    if current in holders:
        checks.add("accountId", f"Account {code} is already mapped to current account {current}.")
    elif holders and not account.data.get("isBundleAccount"):
        checks.add("accountId", f"Account {code} is not a pool account and is already mapped to current account "
                                f"{holders[0]}; only a pool account can be mapped to several current accounts.")
    return account


def _mapping_parts(call: Call, body: dict, checks: Checks, doc: Document | None = None) -> tuple:
    """(current account, sub-account) the mapping body names; every problem of the body answered at once."""
    current = account_of(call, body, checks)
    account = _mapping_account(call, body, checks, doc)
    text_problems(checks, MAPPING_LIMITS)
    checks.raise_any()
    return current, account


def posting_refusal(customer, identifier: str, code: str = "") -> str | None:
    """Why an invoice of this customer cannot be posted (document 3, 2.6: a current account the invoice created
    has no mapping until one is made in the accounting interface, "otherwise the posting step fails"); None when
    its current account (identifier and code) is mapped to a sub-account."""
    code = (code or "").strip()
    named = f"{identifier}{' / ' + code if code else ''}"
    account = Document.objects.filter(customer=customer, kind=ACCOUNT, number=identifier, data__code=code).first()
    if account is None:
        return f"the current account {named} has no account mapping (it is not among the current accounts)"
    if not Document.objects.filter(customer=customer, kind=MAPPING, data__currentAccountId=id_of(account)).exists():
        return (f"the current account {account.data.get('name')} ({named}, id {id_of(account)}) has no account "
                "mapping: map it to a sub-account first")
    return None


def _account_part(account: Document) -> dict:
    return {"code": full_code(account.data), "name": account.data.get("name"),
            "isBundleAccount": bool(account.data.get("isBundleAccount"))}


def _mapping_created(doc: Document, account: Document) -> dict:
    data = doc.data
    return {"id": id_of(doc), "currentAccountId": data["currentAccountId"], "accountId": data["accountId"],
            "name": data.get("name"), "account": _account_part(account)}


def _mapping_updated(call: Call, doc: Document, account: Document, current: Document) -> dict:
    data = doc.data
    return {**_mapping_created(doc, account), "branchId": data.get("branchId"), "customerId": call.customer.pk,
            "accountType": account.status, "status": ACTIVE, "createDate": data.get("createDate"),
            "updateDate": data.get("updateDate"),
            "currentAccount": {"id": id_of(current), "name": current.data.get("name"), "identifier": current.number,
                               "code": current.data.get("code") or None},
            "receiveInvoice": True, "sendInvoice": True}


def _mapping_item(doc: Document, account: Document | None) -> dict:
    data, chart = doc.data, (account.data if account else {})
    currency = chart.get("currencyCodeId")
    return {"id": id_of(doc), "name": data.get("name"), "branchId": data.get("branchId"),
            "currentAccountId": data["currentAccountId"], "accountId": data["accountId"],
            "accountCode": full_code(chart) or None, "accountName": chart.get("name"),
            "adjunctAccount": chart.get("unitCode") or None, "baseAccount": chart.get("baseCode"),
            "isBundleAccount": bool(chart.get("isBundleAccount")), "accountCurrencyCodeId": currency,
            "status": ACTIVE}


@operation("accounting", "GET", BASE + "/mapping")
def list_mappings(call: Call):
    account_id = query_int(call, "currentAccountId", required=True)
    page_index, page_size = page(call)
    account_queried(call, account_id)
    result = paged_query(records(call.customer, MAPPING, account_id), page_index, page_size)
    accounts = {doc.key: doc for doc in Document.objects.filter(
        customer=call.customer, kind=CHART, key__in=[str(doc.data["accountId"]) for doc in result["items"]])}
    result["items"] = [_mapping_item(doc, accounts.get(str(doc.data["accountId"]))) for doc in result["items"]]
    return result


@operation("accounting", "POST", BASE + "/mapping")
def create_mapping(call: Call):
    body = model_body(call, MAPPING_MODEL)
    with locked(call.customer):
        checks = Checks(body)
        no_id(checks)
        current, account = _mapping_parts(call, body, checks)
        moment = iso(now(call))
        doc = new_record(call.customer, MAPPING, {
            "currentAccountId": id_of(current), "accountId": id_of(account), "name": body.get("name"),
            "branchId": current.data.get("branchId"), "used": False, "createDate": moment, "updateDate": moment})
    return _mapping_created(doc, account)


@operation("accounting", "PUT", BASE + "/mapping")
def update_mapping(call: Call):
    body = model_body(call, MAPPING_MODEL)
    with locked(call.customer):
        checks = Checks(body)
        doc = None if body.get("id") is None else existing(call.customer, MAPPING, body["id"], "mapping", "id")
        checks.required("id")
        current, account = _mapping_parts(call, body, checks, doc)
        doc.data = {**doc.data, "currentAccountId": id_of(current), "accountId": id_of(account),
                    "name": body.get("name"), "branchId": current.data.get("branchId"), "updateDate": iso(now(call))}
        doc.save(update_fields=["data", "updated"])
    return _mapping_updated(call, doc, account, current)


@operation("accounting", "DELETE", BASE + "/mapping/{id}")
def delete_mapping(call: Call, id):
    with locked(call.customer):
        doc = find_record(call.customer, MAPPING, id)
        if doc is None:
            raise failure(f"No mapping with id {id}.", 404)
        delete_branch(call, doc)
        if doc.data.get("used"):
            raise failure("The mapping is used by a record; delete that record first.")
        doc.delete()
    return {}
