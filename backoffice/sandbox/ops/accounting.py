"""Accounting service (document 3, sections 2.1 to 2.5, 2.7, 4.1 and 4.3): current accounts with their
addresses, banks, contacts and account mappings, and the chart of accounts.

Document kinds (customer-scoped; key = the record's id, see "ids" below):
  current_account   number identifier, status 1 (active); data = the fields of 2.1 (code and surname ""
                    when not given), branchId, totalBalance, used.
  ca_address, ca_bank, ca_contact   data = the fields of 2.2 / 2.3 / 2.4 with currentAccountId, branchId
                    (the account's) and isDefault (addresses and banks).
  ca_mapping        data = currentAccountId, accountId, name, branchId, used, createDate, updateDate.
  coa_account       status = type; data = the fields of 2.7 and used.
  accounting_ids    key = one of the kinds above; data {"last": the last id given}.

Choices where document 3 says "not shown" (the back office relies on them):
- Methods and paths are the defaults of backoffice/remote/endpoints.py. Answers are camelCase.
- Ids are integers counted per customer and kind from 1, never reused after a delete.
- A body that does not fit the operation's model (a string for a number such as maturity, a number for a
  boolean such as isDefault, an unknown or misspelt member) answers 422 (common.bind); rule failures answer
  400 {"title": "Validation failed", "detail": "<field>: <message>; ..."}, all of a body at once. An id
  given to a create is refused (400); currentAccountAddress is taken on create only (422 on update).
- An unknown id in a path, or the current account a child body or list names, answers 404 {title, detail};
  a chart account named by accountId or parentId that does not exist is a validation failure (400).
- Deletes answer 200 {} when done; every failure of a delete answers {"Error": text}: 404 for an unknown
  id, 400 for a refusal (a default address or bank, a used mapping, another branch).
- branchId: an account gets one at create (optional; absent or 0 means none, shown as null). A branchId
  given later (child bodies, account update, list and delete queries) must be the account's: else 400
  "branchId: The current account does not belong to branch N." Child records carry their account's.
- The first address (bank) of an account is default whatever was sent; isDefault true on a create or
  update makes the others false; isDefault missing on an update keeps the record as it was; false on the
  default is refused. A current account created with currentAccountAddress gets it as its first address.
- PUT replaces a record's fields with the body's (a field left out becomes null); required fields again.
- Phone and fax numbers are 10 or 11 digits and nothing else; webSite is an http(s) URL, the scheme may be
  left out (www.example.com); ibanNumber is compacted (spaces out, capitals) before its checks and stored so.
- Lists: pageIndex and pageSize are required (size 1..500, else 400). sortedColumn is one of the operation's
  columns, spelled as its category (Id, Name...), unknown ones answer 400; isDesc "true" or "false". filterQuery
  is a JSON array (or one object) of {category, operator, value}; every condition must hold. Member and
  category names are read exactly as spelled here (another letter case: 400, see _exact_names and
  common.condition_parts). Operators (spaces and case
  aside): eşittir and içeren / ile başlayan (and their negations) compare text ignoring case, Turkish
  capitals included and the four i's (I ı İ i) taken as one (a folded copy kept in data.search);
  Identifier is compared exactly; küçüktür ... büyük ve eşittir compare text as text and numbers as
  numbers; Id, Type and ParentId are numbers and take only the equality and comparison operators.
  Addresses, banks and contacts are answered as a JSON array ordered by id; mappings as a paged envelope.
- Current accounts: status is 1 (active) and totalBalance 0 (no invoices are posted here); isUsed is false
  until POST /_control/accounting/use marks it. Code is unique together with the identifier: two accounts
  may share an identifier only with different codes (no code counting as "").
- Chart of accounts: a main account's code, when not given, is its baseCode. An account's full code is
  code.unitCode (code alone without unitCode): the mappings show it as accountCode (adjunctAccount the
  unitCode, baseAccount the baseCode, accountCurrencyCodeId an integer) and duplicates are named by it.
  A type cannot reach one of the account's children (types grow from parent to child), and an account
  that is mapped stays a sub-account. A used account (POST /_control/accounting/use) cannot be updated.
- Mappings: only sub-accounts (type 2) are mapped. The update answers customerId (the sandbox's customer
  number), accountType (the account's type), status 1, receiveInvoice and sendInvoice true.
"""

import json
from collections.abc import Callable
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.core.validators import URLValidator, validate_email
from django.db import transaction
from stdnum import iban
from stdnum.tr import vkn

from ..api import ApiError, Call, operation
from ..control import BadRequest, control_action
from ..models import Document
from .common import (
    BOOLEAN,
    INTEGER,
    STRING,
    Checks,
    blank,
    check_model,
    control_customer,
    envelope,
    iso,
    lock,
    now,
    page,
    paged_query,
    read_body,
    refused,
    vkn_tckn_problem,
)
from .list_filters import Column, filtered, searchable, sorted_rows

ACCOUNT, ADDRESS, BANK, CONTACT, MAPPING, CHART, IDS = (
    "current_account", "ca_address", "ca_bank", "ca_contact", "ca_mapping", "coa_account", "accounting_ids")
BASE = "/v1/currentaccount"
CHART_BASE = "/v1/chartofaccount"
ACTIVE = 1
MAIN, GROUP, SUB = 0, 1, 2
TYPE_NAMES = {MAIN: "main", GROUP: "group", SUB: "sub-account"}

# Field -> most characters (document 3, 2.1 to 2.5).
ACCOUNT_LIMITS = {"name": 500, "code": 50, "surname": 250, "taxOffice": 150, "mersisNumber": 50,
                  "registrationNumber": 50, "professionalChamber": 250, "chamberRegistrationNumber": 50}
ADDRESS_LIMITS = {"addressName": 250, "subDivisionName": 100, "city": 100, "country": 100, "region": 100,
                  "streetName": 100, "buildingName": 100, "buildingNumber": 100, "doorNumber": 100,
                  "postalZone": 100, "emailAddress": 250, "webSite": 250}
BANK_LIMITS = {"name": 100, "bankName": 100, "bankBranchName": 100, "bankAccountNumber": 50, "ibanNumber": 26,
               "receiverName": 100, "type": 100}
CONTACT_LIMITS = {"fullName": 100, "emailAddress": 250}
MAPPING_LIMITS = {"name": 250}

# The bodies' models (JSON types and member names).
ACCOUNT_MODEL = {"id": INTEGER, "branchId": INTEGER, "identifier": STRING, "maturity": INTEGER,
                 **dict.fromkeys(ACCOUNT_LIMITS, STRING)}
ADDRESS_FIELDS = {"isDefault": BOOLEAN, **dict.fromkeys((*ADDRESS_LIMITS, "faxNumber", "phoneNumber"), STRING)}
CREATE_MODEL = {**ACCOUNT_MODEL, "currentAccountAddress": {"branchId": INTEGER, **ADDRESS_FIELDS}}
NOT_ON_UPDATE = {"currentAccountAddress": "currentAccountAddress is taken only when the account is created; add "
                                          "addresses with POST /v1/currentaccount/address."}
RECORD = {"id": INTEGER, "currentAccountId": INTEGER, "branchId": INTEGER}
ADDRESS_MODEL = {**RECORD, **ADDRESS_FIELDS}
BANK_MODEL = {**RECORD, "isDefault": BOOLEAN, **dict.fromkeys(BANK_LIMITS, STRING)}
CONTACT_MODEL = {**RECORD, **dict.fromkeys((*CONTACT_LIMITS, "phoneNumber"), STRING)}
MAPPING_MODEL = {**RECORD, "accountId": INTEGER, "name": STRING}
CHART_MODEL = {"id": INTEGER, "baseCode": STRING, "name": STRING, "type": INTEGER, "parentId": INTEGER,
               "code": STRING, "unitCode": STRING, "isBundleAccount": BOOLEAN, "currencyCodeId": INTEGER}

ACCOUNT_FILTERS = (Column("Id", "ident", True), Column("Name", "data__name"), Column("Identifier", "number"),
                   Column("Code", "data__code"), Column("Surname", "data__surname"))
ACCOUNT_SEARCH = ("name", "code", "surname")
CHART_SEARCH = ("name", "code", "baseCode")
ACCOUNT_SORTS = {"id": "pk", "name": "data__name", "identifier": "number"}  # pk: ids grow with it
CHART_FILTERS = (Column("Id", "ident", True), Column("Code", "data__code"), Column("Name", "data__name"),
                 Column("Type", "status", True), Column("BaseCode", "data__baseCode"),
                 Column("ParentId", "data__parentId", True))
CHART_SORTS = {"id": "pk", "code": "data__code", "name": "data__name", "type": "status",
               "basecode": "data__baseCode", "parentid": "data__parentId"}


# --- ids, look-ups, refusals ---------------------------------------------------------------------------------

def _new_ids(customer, kind: str, count: int = 1) -> int:
    """The first of `count` new ids of the kind (the caller holds the customer's lock)."""
    counter, _ = Document.objects.get_or_create(customer=customer, kind=IDS, key=kind, defaults={"data": {"last": 0}})
    first = counter.data["last"] + 1
    counter.data = {"last": counter.data["last"] + count}
    counter.save(update_fields=["data", "updated"])
    return first


def _new(customer, kind: str, data: dict, number: str = "", status=None) -> Document:
    return Document.objects.create(customer=customer, kind=kind, key=str(_new_ids(customer, kind)), number=number,
                                   status=status, data=data)


def _id(doc: Document) -> int:
    return int(doc.key)


def _find(customer, kind: str, record_id) -> Document | None:
    text = str(record_id)
    if not text.isdigit():
        return None
    return Document.objects.filter(customer=customer, kind=kind, key=str(int(text))).first()


def _not_found(what: str, record_id, where: str = "") -> ApiError:
    return refused("Not Found", f"{where + ': ' if where else ''}No {what} with id {record_id}.", 404)


def _error(text: str, status: int = 400) -> ApiError:
    """A failure of a delete (document 3, section 4): an object with field Error."""
    return ApiError(status, {"Error": text})


def _body(call: Call, model: dict, not_here: dict | None = None) -> dict:
    body = read_body(call)
    check_model(body, model, not_here)
    return body


def _given(value) -> bool:
    """A branchId, currentAccountId... that was given: null and 0 (a long's default) are not."""
    return value not in (None, 0, "")


def _branch_problem(account: Document, branch) -> str | None:
    if _given(branch) and branch != account.data.get("branchId"):
        return f"The current account does not belong to branch {branch}."
    return None


def _query_int(call: Call, name: str, required: bool = False) -> int | None:
    raw = call.query.get(name, "").strip()
    if not raw:
        if required:
            raise refused("Bad Request", f"{name}: The {name} field is required.")
        return None
    try:
        return int(raw)
    except ValueError:
        raise refused("Bad Request", f"{name}: The value '{raw}' is not a whole number.") from None


def _text_problems(checks: Checks, limits: dict) -> None:
    for name, limit in limits.items():
        value = checks.body.get(name)
        if isinstance(value, str) and len(value) > limit:
            checks.add(name, f"{name} must be at most {limit} characters (got {len(value)}).")


def _no_id(checks: Checks) -> None:
    if checks.body.get("id") is not None:
        checks.add("id", "The id is given by the platform: leave it out to create (PUT updates a record).")


def _phone(checks: Checks, name: str) -> None:
    value = checks.body.get(name)
    if not blank(value) and not (value.isascii() and value.isdigit() and 10 <= len(value) <= 11):
        checks.add(name, f"{name} must be 10 to 11 digits and nothing else (got '{value}').")


def _email(checks: Checks, name: str) -> None:
    value = checks.body.get(name)
    if blank(value) or len(value) > 250:
        return
    try:
        validate_email(value)
    except ValidationError:
        checks.add(name, f"{name} is not a valid e-mail address (got '{value}').")


def _url(checks: Checks, name: str) -> None:
    value = checks.body.get(name)
    if blank(value) or len(value) > 250:
        return
    try:
        URLValidator(schemes=["http", "https"])(value if "://" in value else "http://" + value)
    except ValidationError:
        checks.add(name, f"{name} is not a valid web address (got '{value}').")


def _nested(checks: Checks, where: str, inner: Checks) -> None:
    for name, message in inner.items:
        checks.add(f"{where}.{name}", message)


# --- current accounts ------------------------------------------------------------------------------------------

def _account_checks(customer, body: dict, doc: Document | None = None) -> Checks:
    """The rules of 2.1 on a create (doc None) or on an update of doc, uniqueness included."""
    checks = Checks(body)
    if doc is None:
        _no_id(checks)
    checks.required("name")
    if checks.required("identifier"):
        reason = vkn_tckn_problem(body["identifier"])
        if reason:
            checks.add("identifier", f"identifier {reason} (got '{body['identifier']}').")
    identifier = body.get("identifier") or ""
    if len(identifier) == 11 and blank(body.get("surname")):
        checks.add("surname", "The surname field is required when the identifier has 11 digits (a TCKN).")
    _text_problems(checks, ACCOUNT_LIMITS)
    if body.get("maturity") is not None and body["maturity"] < 0:
        checks.add("maturity", f"maturity must not be negative (got {body['maturity']}).")
    branch = body.get("branchId")
    if doc is None and branch is not None and branch < 0:
        checks.add("branchId", f"branchId must be a positive number (got {branch}).")
    if doc is not None and _branch_problem(doc, branch):
        checks.add("branchId", _branch_problem(doc, branch))
    code = (body.get("code") or "").strip()
    if identifier and not vkn_tckn_problem(identifier):
        twins = Document.objects.filter(customer=customer, kind=ACCOUNT, number=identifier, data__code=code)
        if doc is not None:
            twins = twins.exclude(pk=doc.pk)
        if twins.exists():
            checks.add("identifier", f"A current account with identifier {identifier}"
                                     f"{' and code ' + code if code else ''} already exists; give a code to tell "
                                     "them apart.")
    return checks


def _account_data(body: dict, old: dict | None = None) -> dict:
    data = {name: body.get(name) for name in ACCOUNT_LIMITS}
    data.update(code=(body.get("code") or "").strip(), surname=body.get("surname") or "",
                maturity=body.get("maturity"))
    old = old or {}
    data.update(branchId=old.get("branchId", body.get("branchId") or None), totalBalance=old.get("totalBalance", 0),
                used=old.get("used", False))
    return searchable(data, ACCOUNT_SEARCH)


def account_view(doc: Document) -> dict:
    """A current account as get, create and update answer it."""
    data = doc.data
    return {"id": _id(doc), "branchId": data.get("branchId"), "name": data.get("name"), "identifier": doc.number,
            "code": data.get("code") or None, "surname": data.get("surname") or None,
            "taxOffice": data.get("taxOffice"),
            "maturity": data.get("maturity"), "mersisNumber": data.get("mersisNumber"),
            "registrationNumber": data.get("registrationNumber"),
            "professionalChamber": data.get("professionalChamber"),
            "chamberRegistrationNumber": data.get("chamberRegistrationNumber"), "isUsed": bool(data.get("used")),
            "status": doc.status}


def _account_item(doc: Document) -> dict:
    data = doc.data
    return {"id": _id(doc), "branchId": data.get("branchId"), "name": data.get("name"), "identifier": doc.number,
            "surname": data.get("surname") or None, "totalBalance": data.get("totalBalance", 0),
            "status": doc.status}


def _spelled(name: str, names) -> str | None:
    """The spelling of `name` among `names` when it differs from it in letter case or spaces only."""
    wanted = name.strip().lower()
    return next((known for known in names if known.lower() == wanted), None)


def _exact_names(call: Call, columns: tuple, sorts: dict) -> None:
    """Document 3's names read only as it spells them: the categories and sortedColumn (the columns' names, as Code
    in 4.3; a condition's own members are common.condition_parts'). Another letter case answers 400, so that what
    the back office sends is pinned; names unknown in any case are left to list_filters' refusals."""
    raw = call.query.get("filterQuery", "")
    try:
        conditions = json.loads(raw) if raw.strip() else []
    except ValueError:
        conditions = []  # list_filters refuses it with its own detail
    categories = {column.name for column in columns}
    for condition in conditions if isinstance(conditions, list) else [conditions]:
        if not isinstance(condition, dict):
            continue
        category = condition.get("category")
        if isinstance(category, str) and category not in categories and _spelled(category, categories):
            raise refused("Bad Request", f"filterQuery: unknown category '{category}'; it is spelled "
                                         f"{_spelled(category, categories)} (names are case-sensitive).")
    wanted = call.query.get("sortedColumn", "")
    sortable = {column.name for column in columns if column.name.lower() in sorts}
    if wanted and wanted not in sortable and _spelled(wanted, sortable):
        raise refused("Bad Request", f"sortedColumn: unknown column '{wanted}'; it is spelled "
                                     f"{_spelled(wanted, sortable)} (names are case-sensitive).")


def list_accounts(call: Call):
    _exact_names(call, ACCOUNT_FILTERS, ACCOUNT_SORTS)
    page_index, page_size = page(call)
    rows = Document.objects.filter(customer=call.customer, kind=ACCOUNT)
    rows = filtered(rows, call.query.get("filterQuery", ""), ACCOUNT_FILTERS)
    return paged_query(sorted_rows(call, rows, ACCOUNT_SORTS), page_index, page_size, _account_item)


def get_account(call: Call, id):
    doc = _find(call.customer, ACCOUNT, id)
    if doc is None:
        raise _not_found("current account", id)
    return account_view(doc)


def create_account(call: Call):
    body = _body(call, CREATE_MODEL)
    address = body.get("currentAccountAddress")
    with transaction.atomic():
        lock(call.customer)
        checks = _account_checks(call.customer, body)
        if address is not None:
            inner = Checks(address)
            PARTS["address"].check(inner)
            _nested(checks, "currentAccountAddress", inner)
            if _given(address.get("branchId")) and address["branchId"] != (body.get("branchId") or None):
                checks.add("currentAccountAddress.branchId",
                           f"The current account does not belong to branch {address['branchId']}.")
        checks.raise_any()
        doc = _new(call.customer, ACCOUNT, _account_data(body), number=body["identifier"], status=ACTIVE)
        first = _add_record(call.customer, PARTS["address"], doc, address) if address is not None else None
    return {**account_view(doc), "currentAccountAddress": record_view(first) if first else None}


def update_account(call: Call):
    body = _body(call, ACCOUNT_MODEL, NOT_ON_UPDATE)
    with transaction.atomic():
        lock(call.customer)
        doc = _find(call.customer, ACCOUNT, body["id"]) if body.get("id") is not None else None
        if body.get("id") is not None and doc is None:
            raise _not_found("current account", body["id"], "id")
        checks = _account_checks(call.customer, body, doc)
        checks.required("id")
        checks.raise_any()
        doc.number, doc.data = body["identifier"], _account_data(body, doc.data)
        doc.save(update_fields=["number", "data", "updated"])
    return account_view(doc)


# --- addresses, banks, contacts ----------------------------------------------------------------------------------

def _check_address(checks: Checks) -> None:
    for name in ("addressName", "subDivisionName", "city", "country"):
        checks.required(name)
    _text_problems(checks, ADDRESS_LIMITS)
    for name in ("faxNumber", "phoneNumber"):
        _phone(checks, name)
    _email(checks, "emailAddress")
    _url(checks, "webSite")


def _check_bank(checks: Checks) -> None:
    checks.required("name")
    if isinstance(checks.body.get("ibanNumber"), str):
        checks.body["ibanNumber"] = iban.compact(checks.body["ibanNumber"])
    _text_problems(checks, BANK_LIMITS)
    number = checks.body.get("ibanNumber")
    if not blank(number) and len(number) <= 26 and not iban.is_valid(number):
        checks.add("ibanNumber", f"ibanNumber is not a valid IBAN: its length or check digits do not match "
                                 f"(got '{number}').")


def _check_contact(checks: Checks) -> None:
    checks.required("fullName")
    _text_problems(checks, CONTACT_LIMITS)
    _phone(checks, "phoneNumber")
    _email(checks, "emailAddress")


@dataclass(frozen=True)
class Part:
    kind: str
    model: dict
    noun: str  # in messages: "No <noun> with id N", "The default <noun> cannot be deleted"
    check: Callable[[Checks], None]
    has_default: bool

    @property
    def fields(self) -> tuple:
        return tuple(name for name in self.model if name not in ("id", "currentAccountId", "branchId", "isDefault"))


PARTS = {
    "address": Part(ADDRESS, ADDRESS_MODEL, "address", _check_address, True),
    "bank": Part(BANK, BANK_MODEL, "bank record", _check_bank, True),
    "contact": Part(CONTACT, CONTACT_MODEL, "contact", _check_contact, False),
}


def record_view(doc: Document) -> dict:
    return {"id": _id(doc), **doc.data}


def _records(customer, kind: str, account_id: int):
    return Document.objects.filter(customer=customer, kind=kind, data__currentAccountId=account_id).order_by("pk")


def _make_default(customer, part: Part, account_id: int, keep: Document | None) -> None:
    """Only one default at a time: the others of the account are set false."""
    others = [doc for doc in _records(customer, part.kind, account_id)
              if doc.data.get("isDefault") and (keep is None or doc.pk != keep.pk)]
    for doc in others:
        doc.data = {**doc.data, "isDefault": False}
    Document.objects.bulk_update(others, ["data"])


def _add_record(customer, part: Part, account: Document, body: dict) -> Document:
    account_id = _id(account)
    data = {"currentAccountId": account_id, "branchId": account.data.get("branchId")}
    if part.has_default:
        first = not _records(customer, part.kind, account_id).exists()
        data["isDefault"] = first or body.get("isDefault") is True
        if data["isDefault"] and not first:
            _make_default(customer, part, account_id, None)
    data.update({name: body.get(name) for name in part.fields})
    return _new(customer, part.kind, data)


def _account_of(call: Call, body: dict, checks: Checks) -> Document | None:
    """The current account the body names (404 when there is none), its branchId checked."""
    if not checks.required("currentAccountId"):
        return None
    account = _find(call.customer, ACCOUNT, body["currentAccountId"])
    if account is None:
        raise _not_found("current account", body["currentAccountId"], "currentAccountId")
    problem = _branch_problem(account, body.get("branchId"))
    if problem:
        checks.add("branchId", problem)
    return account


def list_records(call: Call, part: Part):
    account_id = _query_int(call, "currentAccountId", required=True)
    account = _find(call.customer, ACCOUNT, account_id)
    if account is None:
        raise _not_found("current account", account_id, "currentAccountId")
    problem = _branch_problem(account, _query_int(call, "branchId"))
    if problem:
        raise refused("Bad Request", f"branchId: {problem}")
    return [record_view(doc) for doc in _records(call.customer, part.kind, account_id)]


def create_record(call: Call, part: Part):
    body = _body(call, part.model)
    with transaction.atomic():
        lock(call.customer)
        checks = Checks(body)
        _no_id(checks)
        account = _account_of(call, body, checks)
        part.check(checks)
        checks.raise_any()
        doc = _add_record(call.customer, part, account, body)
    return record_view(doc)


def update_record(call: Call, part: Part):
    body = _body(call, part.model)
    with transaction.atomic():
        lock(call.customer)
        checks = Checks(body)
        doc = None
        if checks.required("id"):
            doc = _find(call.customer, part.kind, body["id"])
            if doc is None:
                raise _not_found(part.noun, body["id"], "id")
            account = _find(call.customer, ACCOUNT, doc.data["currentAccountId"])
            if _given(body.get("currentAccountId")) and body["currentAccountId"] != _id(account):
                checks.add("currentAccountId", f"The {part.noun} {body['id']} belongs to current account "
                                               f"{_id(account)}; it cannot be moved to another.")
            problem = _branch_problem(account, body.get("branchId"))
            if problem:
                checks.add("branchId", problem)
            if part.has_default and body.get("isDefault") is False and doc.data.get("isDefault"):
                checks.add("isDefault", f"An account needs a default {part.noun}; make another one default instead.")
        part.check(checks)
        checks.raise_any()
        data = {**doc.data, **{name: body.get(name) for name in part.fields}}
        if part.has_default and body.get("isDefault") is True and not doc.data.get("isDefault"):
            _make_default(call.customer, part, data["currentAccountId"], doc)
            data["isDefault"] = True
        doc.data = data
        doc.save(update_fields=["data", "updated"])
    return record_view(doc)


def delete_record(call: Call, id, part: Part):
    with transaction.atomic():
        lock(call.customer)
        doc = _find(call.customer, part.kind, id)
        if doc is None:
            raise _error(f"No {part.noun} with id {id}.", 404)
        _delete_branch(call, doc)
        if part.has_default and doc.data.get("isDefault"):
            raise _error(f"The default {part.noun} cannot be deleted; make another {part.noun} default first.")
        doc.delete()
    return {}


def _delete_branch(call: Call, doc: Document) -> None:
    try:
        branch = _query_int(call, "branchId")
    except ApiError as error:
        raise _error(error.body["detail"]) from None
    if _given(branch) and branch != doc.data.get("branchId"):
        raise _error(f"The current account does not belong to branch {branch}.")


# --- mappings --------------------------------------------------------------------------------------------------

def full_code(data: dict) -> str:
    """An account's own code: its code and unit code (code.unitCode)."""
    code, unit = data.get("code") or "", data.get("unitCode") or ""
    return f"{code}.{unit}" if code and unit else code or unit


def _mapping_account(call: Call, body: dict, checks: Checks, doc: Document | None = None) -> Document | None:
    """The sub-account the mapping body names, with the rules of 2.5 against the other mappings."""
    if not checks.required("accountId"):
        return None
    account = _find(call.customer, CHART, body["accountId"])
    if account is None:
        checks.add("accountId", f"No chart-of-accounts account with id {body['accountId']}.")
        return None
    code = full_code(account.data)
    if account.status != SUB:
        checks.add("accountId", f"Account {code} is a {TYPE_NAMES[account.status]} account; only sub-accounts "
                                "(type 2) can be mapped to a current account.")
        return account
    current = body.get("currentAccountId")
    others = Document.objects.filter(customer=call.customer, kind=MAPPING, data__accountId=_id(account))
    if doc is not None:
        others = others.exclude(pk=doc.pk)
    holders = sorted({other.data["currentAccountId"] for other in others})
    if current in holders:
        checks.add("accountId", f"Account {code} is already mapped to current account {current}.")
    elif holders and not account.data.get("isBundleAccount"):
        checks.add("accountId", f"Account {code} is not a pool account and is already mapped to current account "
                                f"{holders[0]}; only a pool account can be mapped to several current accounts.")
    return account


def posting_refusal(customer, identifier: str, code: str = "") -> str | None:
    """Why an invoice of this customer cannot be posted (document 3, 2.6: a current account the invoice created
    has no mapping until one is made in the accounting interface, "otherwise the posting step fails"); None when
    its current account (identifier and code) is mapped to a sub-account."""
    code = (code or "").strip()
    named = f"{identifier}{' / ' + code if code else ''}"
    account = Document.objects.filter(customer=customer, kind=ACCOUNT, number=identifier, data__code=code).first()
    if account is None:
        return f"the current account {named} has no account mapping (it is not among the current accounts)"
    if not Document.objects.filter(customer=customer, kind=MAPPING, data__currentAccountId=_id(account)).exists():
        return (f"the current account {account.data.get('name')} ({named}, id {_id(account)}) has no account "
                "mapping: map it to a sub-account first")
    return None


def _account_part(account: Document) -> dict:
    return {"code": full_code(account.data), "name": account.data.get("name"),
            "isBundleAccount": bool(account.data.get("isBundleAccount"))}


def _mapping_created(doc: Document, account: Document) -> dict:
    data = doc.data
    return {"id": _id(doc), "currentAccountId": data["currentAccountId"], "accountId": data["accountId"],
            "name": data.get("name"), "account": _account_part(account)}


def _mapping_updated(call: Call, doc: Document, account: Document, current: Document) -> dict:
    data = doc.data
    return {**_mapping_created(doc, account), "branchId": data.get("branchId"), "customerId": call.customer.pk,
            "accountType": account.status, "status": ACTIVE, "createDate": data.get("createDate"),
            "updateDate": data.get("updateDate"),
            "currentAccount": {"id": _id(current), "name": current.data.get("name"), "identifier": current.number,
                               "code": current.data.get("code") or None},
            "receiveInvoice": True, "sendInvoice": True}


def _mapping_item(doc: Document, account: Document | None) -> dict:
    data, chart = doc.data, (account.data if account else {})
    currency = chart.get("currencyCodeId")
    return {"id": _id(doc), "name": data.get("name"), "branchId": data.get("branchId"),
            "currentAccountId": data["currentAccountId"], "accountId": data["accountId"],
            "accountCode": full_code(chart) or None, "accountName": chart.get("name"),
            "adjunctAccount": chart.get("unitCode") or None, "baseAccount": chart.get("baseCode"),
            "isBundleAccount": bool(chart.get("isBundleAccount")), "accountCurrencyCodeId": currency,
            "status": ACTIVE}


def list_mappings(call: Call):
    account_id = _query_int(call, "currentAccountId", required=True)
    page_index, page_size = page(call)
    current = _find(call.customer, ACCOUNT, account_id)
    if current is None:
        raise _not_found("current account", account_id, "currentAccountId")
    problem = _branch_problem(current, _query_int(call, "branchId"))
    if problem:
        raise refused("Bad Request", f"branchId: {problem}")
    mappings = _records(call.customer, MAPPING, account_id)
    total = mappings.count()
    start = (page_index - 1) * page_size
    chosen = list(mappings[start:start + page_size])
    accounts = {doc.key: doc for doc in Document.objects.filter(
        customer=call.customer, kind=CHART, key__in=[str(doc.data["accountId"]) for doc in chosen])}
    items = [_mapping_item(doc, accounts.get(str(doc.data["accountId"]))) for doc in chosen]
    return envelope(items, total, page_index, page_size)


def create_mapping(call: Call):
    body = _body(call, MAPPING_MODEL)
    with transaction.atomic():
        lock(call.customer)
        checks = Checks(body)
        _no_id(checks)
        current = _account_of(call, body, checks)
        account = _mapping_account(call, body, checks)
        _text_problems(checks, MAPPING_LIMITS)
        checks.raise_any()
        moment = iso(now(call))
        doc = _new(call.customer, MAPPING, {
            "currentAccountId": _id(current), "accountId": _id(account), "name": body.get("name"),
            "branchId": current.data.get("branchId"), "used": False, "createDate": moment, "updateDate": moment})
    return _mapping_created(doc, account)


def update_mapping(call: Call):
    body = _body(call, MAPPING_MODEL)
    with transaction.atomic():
        lock(call.customer)
        checks = Checks(body)
        doc = None
        if body.get("id") is not None:
            doc = _find(call.customer, MAPPING, body["id"])
            if doc is None:
                raise _not_found("mapping", body["id"], "id")
        checks.required("id")
        current = _account_of(call, body, checks)
        account = _mapping_account(call, body, checks, doc)
        _text_problems(checks, MAPPING_LIMITS)
        checks.raise_any()
        doc.data = {**doc.data, "currentAccountId": _id(current), "accountId": _id(account), "name": body.get("name"),
                    "branchId": current.data.get("branchId"), "updateDate": iso(now(call))}
        doc.save(update_fields=["data", "updated"])
    return _mapping_updated(call, doc, account, current)


def delete_mapping(call: Call, id):
    with transaction.atomic():
        lock(call.customer)
        doc = _find(call.customer, MAPPING, id)
        if doc is None:
            raise _error(f"No mapping with id {id}.", 404)
        _delete_branch(call, doc)
        if doc.data.get("used"):
            raise _error("The mapping is used by a record; delete that record first.")
        doc.delete()
    return {}


# --- chart of accounts -------------------------------------------------------------------------------------------

def chart_item(doc: Document, has_child: bool) -> dict:
    data = doc.data
    currency = data.get("currencyCodeId")
    return {"id": _id(doc), "parentId": data.get("parentId"), "type": doc.status, "name": data.get("name"),
            "code": data.get("code"), "unitCode": data.get("unitCode"),
            "isBundleAccount": bool(data.get("isBundleAccount")),
            "currencyCodeId": None if currency is None else str(currency), "hasChild": has_child,
            "baseCode": data.get("baseCode")}


def _children(customer, doc: Document):
    return Document.objects.filter(customer=customer, kind=CHART, data__parentId=_id(doc))


def _chart_checks(customer, body: dict, doc: Document | None = None) -> Checks:
    """The rules of 2.7 and 4.3 on a create (doc None) or on an update of doc."""
    checks = Checks(body)
    if doc is None:
        _no_id(checks)
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
        parent = _find(customer, CHART, body["parentId"])
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
        customer=customer, kind=MAPPING, data__accountId=_id(doc))}
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


def list_chart(call: Call):
    _exact_names(call, CHART_FILTERS, CHART_SORTS)
    page_index, page_size = page(call)
    rows = Document.objects.filter(customer=call.customer, kind=CHART)
    rows = filtered(rows, call.query.get("filterQuery", ""), CHART_FILTERS)
    result = paged_query(sorted_rows(call, rows, CHART_SORTS), page_index, page_size)
    ids = [_id(doc) for doc in result["items"]]
    parents = set(Document.objects.filter(customer=call.customer, kind=CHART, data__parentId__in=ids)
                  .values_list("data__parentId", flat=True)) if ids else set()
    result["items"] = [chart_item(doc, _id(doc) in parents) for doc in result["items"]]
    return result


def create_chart_account(call: Call):
    body = _body(call, CHART_MODEL)
    with transaction.atomic():
        lock(call.customer)
        _chart_checks(call.customer, body).raise_any()
        doc = _new(call.customer, CHART, _chart_data(body), status=body["type"])
    return chart_item(doc, False)


def update_chart_account(call: Call):
    body = _body(call, CHART_MODEL)
    with transaction.atomic():
        lock(call.customer)
        doc = None
        if body.get("id") is not None:
            doc = _find(call.customer, CHART, body["id"])
            if doc is None:
                raise _not_found("chart-of-accounts account", body["id"], "id")
            if doc.data.get("used"):
                raise refused("Update refused", "This account is used and cannot be changed.")
        checks = _chart_checks(call.customer, body, doc)
        checks.required("id")
        checks.raise_any()
        doc.status, doc.data = body["type"], _chart_data(body, doc.data)
        doc.save(update_fields=["status", "data", "updated"])
    return chart_item(doc, _children(call.customer, doc).exists())


# --- routes: the child lists' paths before /{id} --------------------------------------------------------------

def _routes() -> None:
    for name, part in PARTS.items():
        path = f"{BASE}/{name}"
        operation("accounting", "GET", path)(lambda call, part=part: list_records(call, part))
        operation("accounting", "POST", path)(lambda call, part=part: create_record(call, part))
        operation("accounting", "PUT", path)(lambda call, part=part: update_record(call, part))
        operation("accounting", "DELETE", path + "/{id}")(lambda call, id, part=part: delete_record(call, id, part))


_routes()
operation("accounting", "GET", BASE + "/mapping")(list_mappings)
operation("accounting", "POST", BASE + "/mapping")(create_mapping)
operation("accounting", "PUT", BASE + "/mapping")(update_mapping)
operation("accounting", "DELETE", BASE + "/mapping/{id}")(delete_mapping)
operation("accounting", "GET", BASE)(list_accounts)
operation("accounting", "POST", BASE)(create_account)
operation("accounting", "PUT", BASE)(update_account)
operation("accounting", "GET", BASE + "/{id}")(get_account)
operation("accounting", "GET", CHART_BASE)(list_chart)
operation("accounting", "POST", CHART_BASE)(create_chart_account)
operation("accounting", "PUT", CHART_BASE)(update_chart_account)


# --- control: mark records used; many current accounts at once ----------------------------------------------------

USED_KINDS = {"mapping": MAPPING, "account": CHART, "current_account": ACCOUNT}


@control_action("POST", "accounting/use")
def control_use(body):
    """{customer_unique_id or api_key, kind: "mapping" | "account" (chart) | "current_account", id, used
    (default true)} -> the record is marked used (a used mapping cannot be deleted, a used chart account
    cannot be updated, a used current account shows isUsed)."""
    customer = control_customer(body)
    kind = USED_KINDS.get(body.get("kind"))
    if kind is None:
        raise BadRequest(f"kind must be one of {', '.join(USED_KINDS)}")
    with transaction.atomic():
        lock(customer)
        doc = _find(customer, kind, body.get("id"))
        if doc is None:
            raise BadRequest(f"no {body['kind']} with id {body.get('id')}")
        doc.data = {**doc.data, "used": body.get("used", True) is not False}
        doc.save(update_fields=["data", "updated"])
    return {"kind": body["kind"], "id": _id(doc), "used": doc.data["used"]}


@control_action("POST", "accounting/seed-current-accounts")
def control_seed(body):
    """{customer_unique_id or api_key, count, branch_id (optional)} -> that many valid current accounts (VKNs
    with their check digit, none already used), created in bulk for list tests and benchmarks:
    {"created", "first_id", "last_id"}."""
    customer = control_customer(body)
    count = int(body.get("count") or 0)
    if not 1 <= count <= 2_000_000:
        raise BadRequest("count must be between 1 and 2000000")
    branch = body.get("branch_id")
    with transaction.atomic():
        lock(customer)
        taken = set(Document.objects.filter(customer=customer, kind=ACCOUNT).values_list("number", flat=True))
        first = _new_ids(customer, ACCOUNT, count)
        numbers = _fresh_vkns(taken, first)
        moment = now()
        chunk = []
        for account_id in range(first, first + count):
            identifier = next(numbers)
            data = _account_data({"name": f"Örnek Cari Hesap {account_id}", "identifier": identifier,
                                  "branchId": branch})
            chunk.append(Document(customer=customer, kind=ACCOUNT, key=str(account_id), number=identifier,
                                  status=ACTIVE, created=moment, data=data))
            if len(chunk) == 5000:
                Document.objects.bulk_create(chunk)
                chunk = []
        Document.objects.bulk_create(chunk)
    return {"created": count, "first_id": first, "last_id": first + count - 1}


def _fresh_vkns(taken: set, start: int):
    """Valid VKNs not in `taken`, from a point that moves with the ids (seeding twice gives new ones)."""
    base = 100_000_000 + start * 7 % 800_000_000
    while True:
        number = f"{base:09d}"
        number += vkn.calc_check_digit(number)
        if number not in taken:
            yield number
        base = base + 1 if base < 999_999_999 else 100_000_000
