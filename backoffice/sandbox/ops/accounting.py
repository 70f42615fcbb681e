"""Accounting service (document 3, sections 2.1 to 2.5, 2.7, 4.1 and 4.3): current accounts with their
addresses, banks, contacts and account mappings, and the chart of accounts.

The operations are in accounting_current.py (current accounts with their addresses, banks and contacts),
accounting_mappings.py (account mappings) and accounting_chart.py (the chart of accounts); this module holds what
they share: the kinds and the bodies' models, ids, look-ups, refusals and the checks every body repeats.

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
  category names are read exactly as spelled here (another letter case: 400, see exact_names and
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


from ..api import ApiError, Call
from ..control import BadRequest, control_action
from ..models import Document
from .common import (BOOLEAN, INTEGER, STRING, Checks, Problems, check_model, control_customer, failure, locked,
                     page, paged_query, read_body, refused, whole_number)
from .list_filters import filtered, sorted_rows

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


# --- ids, look-ups, refusals ---------------------------------------------------------------------------------

def new_ids(customer, kind: str, count: int = 1) -> int:
    """The first of `count` new ids of the kind (the caller holds the customer's lock)."""
    counter, _ = Document.objects.get_or_create(customer=customer, kind=IDS, key=kind, defaults={"data": {"last": 0}})
    first = counter.data["last"] + 1
    counter.data = {"last": counter.data["last"] + count}
    counter.save(update_fields=["data", "updated"])
    return first


def new_record(customer, kind: str, data: dict, number: str = "", status=None) -> Document:
    return Document.objects.create(customer=customer, kind=kind, key=str(new_ids(customer, kind)), number=number,
                                   status=status, data=data)


def id_of(doc: Document) -> int:
    return int(doc.key)


def find_record(customer, kind: str, record_id) -> Document | None:
    text = str(record_id)
    if not text.isdigit():
        return None
    return Document.objects.filter(customer=customer, kind=kind, key=str(int(text))).first()


def existing(customer, kind: str, record_id, what: str, where: str = "") -> Document:
    """The record of the id; 404 naming it (and the field it came in) when there is none."""
    doc = find_record(customer, kind, record_id)
    if doc is None:
        raise refused("Not Found", f"{where + ': ' if where else ''}No {what} with id {record_id}.", 404)
    return doc


def model_body(call: Call, model: dict, not_here: dict | None = None) -> dict:
    body = read_body(call)
    check_model(body, model, not_here)
    return body


def given(value) -> bool:
    """A branchId, currentAccountId... that was given: null and 0 (a long's default) are not."""
    return value not in (None, 0, "")


def branch_problem(account: Document, branch) -> str | None:
    if given(branch) and branch != account.data.get("branchId"):
        return f"The current account does not belong to branch {branch}."
    return None


def query_int(call: Call, name: str, required: bool = False) -> int | None:
    problems = Problems()
    value = whole_number(call, name, problems, required, invalid="is not a whole number")
    problems.raise_any("Bad Request")
    return value


def text_problems(checks: Checks, limits: dict) -> None:
    for name, limit in limits.items():
        value = checks.body.get(name)
        if isinstance(value, str) and len(value) > limit:
            checks.add(name, f"{name} must be at most {limit} characters (got {len(value)}).")


def no_id(checks: Checks) -> None:
    if checks.body.get("id") is not None:
        checks.add("id", "The id is given by the platform: leave it out to create (PUT updates a record).")


# --- names as document 3 spells them -------------------------------------------------------------------------------

def _spelled(name: str, names) -> str | None:
    """The spelling of `name` among `names` when it differs from it in letter case or spaces only."""
    wanted = name.strip().lower()
    return next((known for known in names if known.lower() == wanted), None)


def exact_names(call: Call, columns: tuple, sorts: dict) -> None:
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


def listed(call: Call, kind: str, columns: tuple, sorts: dict, item=None) -> dict:
    """One page of the customer's records of a kind, filtered by filterQuery on the columns and sorted by
    sortedColumn / isDesc, names read as document 3 spells them."""
    exact_names(call, columns, sorts)
    page_index, page_size = page(call)
    rows = filtered(Document.objects.filter(customer=call.customer, kind=kind), call.query.get("filterQuery", ""),
                    columns)
    return paged_query(sorted_rows(call, rows, sorts), page_index, page_size, item)


# --- the records of a current account ---------------------------------------------------------------------------

def records(customer, kind: str, account_id: int):
    return Document.objects.filter(customer=customer, kind=kind, data__currentAccountId=account_id).order_by("pk")


def account_queried(call: Call, account_id: int) -> Document:
    """The current account a list's query names (404 when there is none), the query's branchId checked (400)."""
    account = existing(call.customer, ACCOUNT, account_id, "current account", "currentAccountId")
    problem = branch_problem(account, query_int(call, "branchId"))
    if problem:
        raise refused("Bad Request", f"branchId: {problem}")
    return account


def account_of(call: Call, body: dict, checks: Checks) -> Document | None:
    """The current account the body names (404 when there is none), its branchId checked."""
    if not checks.required("currentAccountId"):
        return None
    account = existing(call.customer, ACCOUNT, body["currentAccountId"], "current account", "currentAccountId")
    problem = branch_problem(account, body.get("branchId"))
    if problem:
        checks.add("branchId", problem)
    return account


def delete_branch(call: Call, doc: Document) -> None:
    try:
        branch = query_int(call, "branchId")
    except ApiError as error:
        raise failure(error.body["detail"]) from None
    if given(branch) and branch != doc.data.get("branchId"):
        raise failure(f"The current account does not belong to branch {branch}.")


def full_code(data: dict) -> str:
    """An account's own code: its code and unit code (code.unitCode)."""
    code, unit = data.get("code") or "", data.get("unitCode") or ""
    return f"{code}.{unit}" if code and unit else code or unit


# --- control: mark records used ----------------------------------------------------------------------------------

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
    with locked(customer):
        doc = find_record(customer, kind, body.get("id"))
        if doc is None:
            raise BadRequest(f"no {body['kind']} with id {body.get('id')}")
        doc.data = {**doc.data, "used": body.get("used", True) is not False}
        doc.save(update_fields=["data", "updated"])
    return {"kind": body["kind"], "id": id_of(doc), "used": doc.data["used"]}
