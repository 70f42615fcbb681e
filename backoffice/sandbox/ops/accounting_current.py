"""Accounting service, current accounts with their addresses, banks and contacts (document 3, sections 2.1 to 2.4,
4.1 and 4.3). The choices are listed in accounting.py.
"""

from collections.abc import Callable
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.core.validators import URLValidator, validate_email
from stdnum import iban
from stdnum.tr import vkn

from ..api import Call, operation
from ..control import BadRequest, control_action
from ..models import Document
from .accounting import (ACCOUNT, ACCOUNT_LIMITS, ACCOUNT_MODEL, ACTIVE, ADDRESS, ADDRESS_LIMITS, ADDRESS_MODEL, BANK,
                         BANK_LIMITS, BANK_MODEL, BASE, CONTACT, CONTACT_LIMITS, CONTACT_MODEL, CREATE_MODEL,
                         NOT_ON_UPDATE, account_of, account_queried, branch_problem, delete_branch, existing,
                         find_record, given, id_of, listed, model_body, new_ids, new_record, no_id, query_int, records,
                         text_problems)
from .common import Checks, blank, control_customer, create_in_batches, failure, locked, now, vkn_tckn_problem
from .list_filters import Column, searchable

ACCOUNT_FILTERS = (Column("Id", "ident", True), Column("Name", "data__name"), Column("Identifier", "number"),
                   Column("Code", "data__code"), Column("Surname", "data__surname"))
ACCOUNT_SEARCH = ("name", "code", "surname")
ACCOUNT_SORTS = {"id": "pk", "name": "data__name", "identifier": "number"}  # pk: ids grow with it


# --- the checks of a field ----------------------------------------------------------------------------------------

def _phone(checks: Checks, name: str) -> None:
    value = checks.body.get(name)
    if not blank(value) and not (value.isascii() and value.isdigit() and 10 <= len(value) <= 11):
        checks.add(name, f"{name} must be 10 to 11 digits and nothing else (got '{value}').")


def _valid(checks: Checks, name: str, validate, what: str) -> None:
    """A problem when the field is given, fits its length, and the validator refuses it."""
    value = checks.body.get(name)
    if blank(value) or len(value) > 250:
        return
    try:
        validate(value)
    except ValidationError:
        checks.add(name, f"{name} is not a valid {what} (got '{value}').")


def _email(checks: Checks, name: str) -> None:
    _valid(checks, name, validate_email, "e-mail address")


def _url(checks: Checks, name: str) -> None:
    _valid(checks, name, lambda value: URLValidator(schemes=["http", "https"])(
        value if "://" in value else "http://" + value), "web address")


def _nested(checks: Checks, where: str, inner: Checks) -> None:
    for name, message in inner.items:
        checks.add(f"{where}.{name}", message)


# --- current accounts ------------------------------------------------------------------------------------------

def _account_checks(customer, body: dict, doc: Document | None = None) -> Checks:
    """The rules of 2.1 on a create (doc None) or on an update of doc, uniqueness included."""
    checks = Checks(body)
    if doc is None:
        no_id(checks)
    checks.required("name")
    if checks.required("identifier"):
        reason = vkn_tckn_problem(body["identifier"])
        if reason:
            checks.add("identifier", f"identifier {reason} (got '{body['identifier']}').")
    identifier = body.get("identifier") or ""
    if len(identifier) == 11 and blank(body.get("surname")):
        checks.add("surname", "The surname field is required when the identifier has 11 digits (a TCKN).")
    text_problems(checks, ACCOUNT_LIMITS)
    if body.get("maturity") is not None and body["maturity"] < 0:
        checks.add("maturity", f"maturity must not be negative (got {body['maturity']}).")
    branch = body.get("branchId")
    if doc is None and branch is not None and branch < 0:
        checks.add("branchId", f"branchId must be a positive number (got {branch}).")
    if doc is not None and branch_problem(doc, branch):
        checks.add("branchId", branch_problem(doc, branch))
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
    return {"id": id_of(doc), "branchId": data.get("branchId"), "name": data.get("name"), "identifier": doc.number,
            "code": data.get("code") or None, "surname": data.get("surname") or None,
            "taxOffice": data.get("taxOffice"),
            "maturity": data.get("maturity"), "mersisNumber": data.get("mersisNumber"),
            "registrationNumber": data.get("registrationNumber"),
            "professionalChamber": data.get("professionalChamber"),
            "chamberRegistrationNumber": data.get("chamberRegistrationNumber"), "isUsed": bool(data.get("used")),
            "status": doc.status}


def _account_item(doc: Document) -> dict:
    data = doc.data
    return {"id": id_of(doc), "branchId": data.get("branchId"), "name": data.get("name"), "identifier": doc.number,
            "surname": data.get("surname") or None, "totalBalance": data.get("totalBalance", 0),
            "status": doc.status}


@operation("accounting", "GET", BASE)
def list_accounts(call: Call):
    return listed(call, ACCOUNT, ACCOUNT_FILTERS, ACCOUNT_SORTS, _account_item)


@operation("accounting", "GET", BASE + "/{id}")
def get_account(call: Call, id):
    return account_view(existing(call.customer, ACCOUNT, id, "current account"))


@operation("accounting", "POST", BASE)
def create_account(call: Call):
    body = model_body(call, CREATE_MODEL)
    address = body.get("currentAccountAddress")
    with locked(call.customer):
        checks = _account_checks(call.customer, body)
        if address is not None:
            inner = Checks(address)
            PARTS["address"].check(inner)
            _nested(checks, "currentAccountAddress", inner)
            if given(address.get("branchId")) and address["branchId"] != (body.get("branchId") or None):
                checks.add("currentAccountAddress.branchId",
                           f"The current account does not belong to branch {address['branchId']}.")
        checks.raise_any()
        doc = new_record(call.customer, ACCOUNT, _account_data(body), number=body["identifier"], status=ACTIVE)
        first = _add_record(call.customer, PARTS["address"], doc, address) if address is not None else None
    return {**account_view(doc), "currentAccountAddress": record_view(first) if first else None}


@operation("accounting", "PUT", BASE)
def update_account(call: Call):
    body = model_body(call, ACCOUNT_MODEL, NOT_ON_UPDATE)
    with locked(call.customer):
        doc = None if body.get("id") is None else existing(call.customer, ACCOUNT, body["id"], "current account", "id")
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
    text_problems(checks, ADDRESS_LIMITS)
    for name in ("faxNumber", "phoneNumber"):
        _phone(checks, name)
    _email(checks, "emailAddress")
    _url(checks, "webSite")


def _check_bank(checks: Checks) -> None:
    checks.required("name")
    if isinstance(checks.body.get("ibanNumber"), str):
        checks.body["ibanNumber"] = iban.compact(checks.body["ibanNumber"])
    text_problems(checks, BANK_LIMITS)
    number = checks.body.get("ibanNumber")
    if not blank(number) and len(number) <= 26 and not iban.is_valid(number):
        checks.add("ibanNumber", f"ibanNumber is not a valid IBAN: its length or check digits do not match "
                                 f"(got '{number}').")


def _check_contact(checks: Checks) -> None:
    checks.required("fullName")
    text_problems(checks, CONTACT_LIMITS)
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
    return {"id": id_of(doc), **doc.data}


def _make_default(customer, part: Part, account_id: int, keep: Document | None) -> None:
    """Only one default at a time: the others of the account are set false."""
    others = [doc for doc in records(customer, part.kind, account_id)
              if doc.data.get("isDefault") and (keep is None or doc.pk != keep.pk)]
    for doc in others:
        doc.data = {**doc.data, "isDefault": False}
    Document.objects.bulk_update(others, ["data"])


def _add_record(customer, part: Part, account: Document, body: dict) -> Document:
    account_id = id_of(account)
    data = {"currentAccountId": account_id, "branchId": account.data.get("branchId")}
    if part.has_default:
        first = not records(customer, part.kind, account_id).exists()
        data["isDefault"] = first or body.get("isDefault") is True
        if data["isDefault"] and not first:
            _make_default(customer, part, account_id, None)
    data.update({name: body.get(name) for name in part.fields})
    return new_record(customer, part.kind, data)


def list_records(call: Call, part: Part):
    account_id = query_int(call, "currentAccountId", required=True)
    account_queried(call, account_id)
    return [record_view(doc) for doc in records(call.customer, part.kind, account_id)]


def create_record(call: Call, part: Part):
    body = model_body(call, part.model)
    with locked(call.customer):
        checks = Checks(body)
        no_id(checks)
        account = account_of(call, body, checks)
        part.check(checks)
        checks.raise_any()
        doc = _add_record(call.customer, part, account, body)
    return record_view(doc)


def update_record(call: Call, part: Part):
    body = model_body(call, part.model)
    with locked(call.customer):
        checks = Checks(body)
        doc = None
        if checks.required("id"):
            doc = existing(call.customer, part.kind, body["id"], part.noun, "id")
            account = find_record(call.customer, ACCOUNT, doc.data["currentAccountId"])
            if given(body.get("currentAccountId")) and body["currentAccountId"] != id_of(account):
                checks.add("currentAccountId", f"The {part.noun} {body['id']} belongs to current account "
                                               f"{id_of(account)}; it cannot be moved to another.")
            problem = branch_problem(account, body.get("branchId"))
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
    with locked(call.customer):
        doc = find_record(call.customer, part.kind, id)
        if doc is None:
            raise failure(f"No {part.noun} with id {id}.", 404)
        delete_branch(call, doc)
        if part.has_default and doc.data.get("isDefault"):
            raise failure(f"The default {part.noun} cannot be deleted; make another {part.noun} default first.")
        doc.delete()
    return {}


def _routes() -> None:
    for name, part in PARTS.items():
        path = f"{BASE}/{name}"
        operation("accounting", "GET", path)(lambda call, part=part: list_records(call, part))
        operation("accounting", "POST", path)(lambda call, part=part: create_record(call, part))
        operation("accounting", "PUT", path)(lambda call, part=part: update_record(call, part))
        operation("accounting", "DELETE", path + "/{id}")(lambda call, id, part=part: delete_record(call, id, part))


_routes()


# --- control: many current accounts at once -----------------------------------------------------------------------

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
    with locked(customer):
        taken = set(Document.objects.filter(customer=customer, kind=ACCOUNT).values_list("number", flat=True))
        first = new_ids(customer, ACCOUNT, count)
        numbers = _fresh_vkns(taken, first)
        moment = now()
        create_in_batches((Document(customer=customer, kind=ACCOUNT, key=str(account_id), number=identifier,
                                    status=ACTIVE, created=moment, data=_account_data(
                                        {"name": f"Örnek Cari Hesap {account_id}", "identifier": identifier,
                                         "branchId": branch}))
                           for account_id, identifier in zip(range(first, first + count), numbers)), 5000)
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
