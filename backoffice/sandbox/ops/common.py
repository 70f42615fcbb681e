"""What every simulated service of the platform's document APIs shares: reading the request body and
binding it to the operation's model, parsing blanks, numbers, moments and GUIDs, tax numbers with their
check digits, collecting validation problems into one 400, the sandbox clock, paging and the paged
envelope, id lists, the elements of a UBL document, the per-customer lock and the customer a control
action names.

A body that does not fit the operation's model (a JSON type other than the documents give, such as a
number sent as a string or a boolean for a number; an unknown or misspelt member, names being
case-sensitive) answers 422 {"title", "detail", "errors": {field: [messages]}} before any rule is looked
at. Refusals by the rules answer 400 {"title", "detail"}; the details name the field first
("<field>: <message>").
"""

import base64
import itertools
import json
import math
import re
import uuid
from contextlib import contextmanager
from datetime import datetime, time, timedelta
from decimal import Decimal, InvalidOperation

from django.db import transaction
from django.utils import timezone
from lxml import etree
from django.utils.dateparse import parse_date, parse_datetime
from stdnum.tr import tckimlik, vkn

from ..api import ApiError, Call, binding_failed, envelope, page_params, problem
from ..control import BadRequest
from ..models import ApiKey, Customer, Document, SandboxSetting

# --- clock and refusals ------------------------------------------------------------------------------


def now(call: Call | None = None) -> datetime:
    """The sandbox's "now": the real clock plus clock_offset_seconds (tests jump ahead)."""
    settings = call.settings if call is not None else SandboxSetting.load()
    return timezone.now() + timedelta(seconds=settings.clock_offset_seconds)


def refused(title: str, detail: str, status: int = 400) -> ApiError:
    return problem(status, title, detail)


def found(rows, detail: str):
    """The first of the rows, or 404 {"title": "Not Found", "detail"}."""
    doc = rows.first()
    if doc is None:
        raise refused("Not Found", detail, 404)
    return doc


def failure(text: str, status: int = 400) -> ApiError:
    """A failure of a delete, a post or a reverse of the accounting service (document 3, section 4): an object with
    field Error."""
    return ApiError(status, {"Error": text})


# --- the body's model: JSON types and member names ----------------------------------------------------------

STRING, INTEGER, NUMBER, BOOLEAN, FLAG = "string", "integer", "number", "boolean", "flag"  # FLAG: a boolean or ""
CODE = "code"  # a number or a name (the dispatch notes' despatchProfileType and despatchType)


def array(item):
    """An array member whose items are of this type, or objects of this model (a dict)."""
    return ("array", item)


def json_type(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return {str: "string", list: "array", dict: "object"}.get(type(value), type(value).__name__)


def fits(value, kind: str) -> bool:
    """Whether a JSON value is of the type: booleans are no numbers (True is an int in Python), strings of
    digits are no numbers, and an integer is a number without a fraction."""
    if kind == STRING:
        return isinstance(value, str)
    if kind == BOOLEAN:
        return isinstance(value, bool)
    if kind == FLAG:
        return isinstance(value, bool) or value == ""
    if isinstance(value, bool):
        return False
    if kind == INTEGER:
        return isinstance(value, int)
    # NUMBER (the documents' decimal and numeric); NaN and Infinity, which Python's json reads, are no JSON numbers
    return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))


def bind(body, model: dict, where: str = "", errors: dict | None = None, not_here: dict | None = None) -> dict:
    """{field: [messages]} of every member of the body that the model has not (not_here: {name: message} for
    the ones with a reason of their own) or whose JSON type differs; null is left to the rules (required)."""
    errors = {} if errors is None else errors
    _members(body, model, where, errors, not_here=not_here or {})
    return errors


def bound(body, model: dict, spellings: dict | None = None) -> dict:
    """The body with its members as the model spells them; 422 when it does not fit the model (the dispatch
    service's binding: unknown members inside the objects are kept as given, a null array item is refused).
    spellings: a second spelling document 3 gives a top-level name -> the model's name (accepted exactly, like
    the model's own)."""
    errors = {}
    result = _members(body, model, "", errors, spellings=spellings or {}, inner=False)
    if errors:
        raise binding_failed(errors)
    return result


def _members(body, model: dict, where: str, errors: dict, not_here: dict | None = None,
             spellings: dict | None = None, inner: bool = True, strict: bool = True):
    """The object's members bound (see bind and bound). strict: an unknown member is refused, not kept; inner: the
    objects inside it bound by bind's rules (strict, a null object in an array left to the rules), else bound's."""
    if not isinstance(body, dict):
        errors[where or "body"] = [f"{where or 'The request body'} must be a JSON object (got {json_type(body)})."]
        return body
    spellings, not_here = spellings or {}, not_here or {}
    lowered = {name.lower(): name for name in (*model, *spellings)}
    result = {}
    for name, value in body.items():
        canonical = name if name in model else spellings.get(name)
        place = f"{where}.{canonical or name}" if where else canonical or name
        if canonical is None:
            spelled = lowered.get(str(name).lower())
            message = not_here.get(name) or (
                f"Unknown field '{name}': this body spells it {spelled} (names are case-sensitive)." if spelled else
                f"Unknown field '{name}': it is not a member of this operation's body." if strict else None)
            if message:
                errors[place] = [message]
            else:
                result[name] = value
        elif canonical in result:
            errors[place] = [f"{canonical} is given twice."]
        else:
            result[canonical] = None if value is None else _value(value, model[canonical], place, errors, inner)
    return result


def _value(value, kind, place: str, errors: dict, inner: bool):
    if isinstance(kind, dict):
        return _members(value, kind, place, errors, inner=inner, strict=inner)
    if isinstance(kind, tuple):  # array(item)
        if not isinstance(value, list):
            errors[place] = [f"{place} must be a JSON array (got {json_type(value)})."]
            return value
        items = []
        for index, item in enumerate(value):
            if item is None and not (inner and isinstance(kind[1], dict)):
                errors[f"{place}[{index}]"] = [f"{place}[{index}] must not be null."]
            items.append(item if item is None else _value(item, kind[1], f"{place}[{index}]", errors, inner))
        return items
    if kind == CODE:
        wanted, ok = "integer or string", fits(value, INTEGER) or isinstance(value, str)
    else:
        wanted, ok = "boolean (or empty)" if kind == FLAG else kind, fits(value, kind)
    if not ok:
        errors[place] = [f"{place} must be a JSON {wanted}, not a {json_type(value)} ({json.dumps(value)[:40]})."]
    return value


def check_model(body, model: dict, not_here: dict | None = None) -> None:
    """Answer 422 when the body does not fit the model (see bind)."""
    errors = bind(body, model, not_here=not_here)
    if errors:
        raise binding_failed(errors)


# --- validation problems -------------------------------------------------------------------------------------

class Problems:
    """Validation failures collected over the whole body, answered at once."""

    def __init__(self):
        self.items: list[tuple[str, str]] = []

    def add(self, field: str, message: str) -> None:
        self.items.append((field, message))

    def raise_any(self, title: str = "Validation failed") -> None:
        if self.items:
            raise refused(title,
                          "; ".join(f"{field}: {message.rstrip('.')}" for field, message in self.items) + ".")


class Checks(Problems):
    """Problems of one body, with the checks the document services repeat field after field."""

    def __init__(self, body: dict):
        super().__init__()
        self.body = body

    def required(self, name: str, label: str | None = None) -> bool:
        if blank(self.body.get(name)):
            self.add(name, f"The {label or name} field is required.")
            return False
        return True

    def number(self, name: str, value, where: str | None = None):
        """The Decimal of a JSON number (None when it is none); a problem when it is given but not a number
        (a numeric string is not one: the body's model has already refused it, see bind)."""
        number = decimal(value) if fits(value, NUMBER) else None
        if value is not None and number is None:
            self.add(where or name, f"{where or name} must be a number.")
        return number

    def vkn_tckn(self, name: str, label: str | None = None) -> None:
        """A tax number (VKN) or national id (TCKN), when given: its digits and check digits."""
        value = self.body.get(name)
        if not blank(value):
            reason = vkn_tckn_problem(value)
            if reason:
                self.add(name, f"{label or name} {reason} (got '{value}').")

    def objects(self, value, where: str, name: str, what: str):
        """(place, item) of each object of an array value, in order; a problem for a value that is given but
        not an array, and one for each item that is not an object (added as the iteration passes it)."""
        if value is None:
            return
        if not isinstance(value, list):
            self.add(where, f"{name} must be an array.")
            return
        for index, item in enumerate(value):
            if isinstance(item, dict):
                yield f"{where}[{index}]", item
            else:
                self.add(f"{where}[{index}]", f"Each {what} must be an object.")

    def moment(self, name: str):
        """The field as an aware datetime (None when blank); a problem when it is given but not one."""
        value = self.body.get(name)
        if blank(value):
            return None
        parsed = moment(value)
        if parsed is None:
            self.add(name, f"The value '{value}' of {name} is not a valid date and time.")
        return parsed


# --- the request body and its values --------------------------------------------------------------------

def read_body(call: Call):
    try:
        return json.loads(call.request.body or b"null")
    except ValueError:
        raise refused("Validation failed", "body: The request body is not valid JSON.") from None


def whole_number(call: Call, name: str, problems: Problems, required: bool = True,
                 invalid: str = "is not valid for {name}: an integer is expected") -> int | None:
    """An integer of the query; a problem when it is required and missing, or no integer (invalid says why)."""
    raw = call.query.get(name, "").strip()
    if not raw:
        if required:
            problems.add(name, f"The {name} field is required.")
        return None
    try:
        return int(raw)
    except ValueError:
        problems.add(name, f"The value '{raw}' {invalid.format(name=name)}.")
        return None


def field(body: dict, *names: str):
    """A member of what no model binds (list filter conditions, the status query's {ids} tolerated beside its bare
    array, export filters), spelled exactly as the documents write it: names are case-sensitive here as in bind,
    so that a test pins the spelling a client sends. Give several names only where the documents spell one member
    two ways, and say where beside the call. None when the body has none of them."""
    if not isinstance(body, dict):
        return None
    return next((body[name] for name in names if name in body), None)


# A condition of a list filter (queryFilter of the ticket service, filterQuery of document 3, 4.1).
CONDITION = ("category", "operator", "value")


def condition_parts(condition: dict, parameter: str) -> tuple:
    """(category, operator, value) of one list filter condition; 400 for a member spelled otherwise ("Category"
    is not category), which would otherwise read as a condition without it."""
    unknown = [str(key) for key in condition if key not in CONDITION]
    if unknown:
        raise refused("Bad Request", f"{parameter}: unknown member '{unknown[0]}' in a condition; its members are "
                                     "category, operator and value, spelled so.")
    return tuple(field(condition, name) for name in CONDITION)


def blank(value) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def decimal(value):
    """Decimal of a JSON number or numeric string; None when it is neither."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return Decimal(str(value)) if math.isfinite(value) else None
    if isinstance(value, str):
        try:
            number = Decimal(value.strip())
        except InvalidOperation:
            return None
        return number if number.is_finite() else None
    return None


def moment(value):
    """An aware datetime from an ISO date or date-time (naive ones in the platform's time zone); None if bad."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    try:
        parsed = parse_datetime(text)
    except ValueError:
        return None
    if parsed is None:
        try:
            day = parse_date(text)
        except ValueError:
            return None
        if day is None:
            return None
        parsed = datetime.combine(day, time.min)
    if timezone.is_naive(parsed):
        parsed = timezone.make_aware(parsed)
    return parsed


def vkn_tckn_problem(value) -> str | None:
    """Why a value is no valid VKN (10 digits) or TCKN (11 digits), checked with their check digits
    (python-stdnum); None when it is one."""
    if not (isinstance(value, str) and re.fullmatch(r"[0-9]{10}|[0-9]{11}", value)):
        return "must be 10 digits (VKN) or 11 digits (TCKN)"
    if len(value) == 10 and not vkn.is_valid(value):
        return "is not a valid VKN: its check digit does not match"
    if len(value) == 11 and not tckimlik.is_valid(value):
        return "is not a valid TCKN: its check digits do not match"
    return None


def is_guid(value) -> bool:
    try:
        uuid.UUID(str(value))
    except ValueError:
        return False
    return True


def wrapped(content: bytes) -> dict:
    """A document as the document services answer it: {"Response": base64 of the file}."""
    return {"Response": base64.b64encode(content).decode("ascii")}


def iso(moment) -> str | None:
    return timezone.localtime(moment).isoformat() if moment else None


def id_list(body, noun: str, name: str = "ids") -> list[str]:
    """The non-empty list of document ids (ettn) of the body (spelled exactly so), each once, in the order given."""
    ids = body.get(name) if isinstance(body, dict) else None
    if not isinstance(ids, list) or not ids or not all(isinstance(item, str) and item for item in ids):
        raise refused("Bad Request", f"{name}: must be a non-empty array of {noun} ids (ettn).")
    return list(dict.fromkeys(ids))


# --- paging ----------------------------------------------------------------------------------------------

def page(call: Call) -> tuple[int, int]:
    """(pageIndex, pageSize) of the query, refused as this family of services refuses (400 Bad Request)."""
    try:
        return page_params(call)
    except ApiError as error:  # the shared helper answers 422 {field: [message]}; these services use Error
        if error.status != 422:  # already a problem of its own (a name in another letter case)
            raise
        field_name, messages = next(iter(error.body.items()))
        raise refused("Bad Request", f"{field_name}: {messages[0]}") from None


def paged_query(rows, page_index: int, page_size: int, item=None, capitalised=False) -> dict:
    """The envelope of one page of a query, counted and cut by the database; item(row) shapes each row."""
    total = rows.count()
    start = (page_index - 1) * page_size
    chosen = rows[start:start + page_size]
    return envelope([item(row) for row in chosen] if item else list(chosen), total, page_index, page_size,
                    capitalised)


# --- UBL documents -----------------------------------------------------------------------------------------------

def element_maker(namespaces: dict):
    """add(parent, "prefix:name", text=None, **attributes) -> the new child element of a UBL document in these
    namespaces (a name without a prefix is in the document's own, namespaces[None])."""

    def add(parent, tag: str, text=None, **attributes):
        prefix, _, name = tag.rpartition(":")
        element = etree.SubElement(parent, f"{{{namespaces[prefix or None]}}}{name}",
                                   {k: str(v) for k, v in attributes.items()})
        if text is not None:
            element.text = str(text)
        return element

    return add


def document_root(tag: str, nsmap: dict, profile: str, number: str, key: str, issue_date: str, issue_time: str):
    """The root of a UBL-TR 1.2.1 document the platform writes, with its header up to the issue time (an unsigned
    draft: ext:ExtensionContent empty, the integrator's seal goes there)."""
    add = element_maker(nsmap)
    root = etree.Element(tag, nsmap=nsmap)
    add(add(add(root, "ext:UBLExtensions"), "ext:UBLExtension"), "ext:ExtensionContent")
    for name, value in (("UBLVersionID", "2.1"), ("CustomizationID", "TR1.2.1"), ("ProfileID", profile),
                        ("ID", number), ("CopyIndicator", "false"), ("UUID", key), ("IssueDate", issue_date),
                        ("IssueTime", issue_time)):
        add(root, f"cbc:{name}", value)
    return root


# --- writes and control ----------------------------------------------------------------------------------

def create_in_batches(docs, size: int, **options) -> None:
    """Document.objects.bulk_create of the documents, `size` at a time, never holding more (seeds of millions)."""
    docs = iter(docs)
    while batch := list(itertools.islice(docs, size)):
        Document.objects.bulk_create(batch, **options)


def lock(customer) -> None:
    """Serialise a customer's writes that read first (SQLite's IMMEDIATE transactions already do)."""
    Customer.objects.select_for_update().filter(pk=customer.pk).first()


@contextmanager
def locked(customer):
    """A transaction holding the customer's lock (lock)."""
    with transaction.atomic():
        lock(customer)
        yield


def control_customer(body: dict, by_key: bool = True,
                     missing: str = "no customer with that customer_unique_id or api_key") -> Customer:
    """The customer a control action names by customer_unique_id or api_key (by_key false: by customer_unique_id
    only, the crm actions'); missing is the refusal when there is none."""
    if body.get("customer_unique_id") or not by_key:
        customer = Customer.objects.filter(customer_unique_id=body.get("customer_unique_id")).first()
    else:
        key = ApiKey.objects.select_related("customer").filter(key=body.get("api_key") or "").first()
        customer = key.customer if key else None
    if customer is None:
        raise BadRequest(missing)
    return customer


def named_customer(body: dict, guid_only: bool = False) -> Customer:
    """The customer a control action names by customer: its id (an integer, as POST /_control/customers answers
    it), its customerUniqueId or an API key of it (guid_only, the invoice actions': its customerUniqueId); else by
    customer_unique_id or api_key (control_customer)."""
    named = body.get("customer")
    if named in (None, "") or guid_only and not named:
        return control_customer(body)
    customer = None
    if isinstance(named, int) and not isinstance(named, bool) and not guid_only:
        customer = Customer.objects.filter(pk=named).first()
    elif isinstance(named, str):
        if is_guid(named):
            customer = Customer.objects.filter(customer_unique_id=named).first()
        if customer is None and not guid_only:
            key = ApiKey.objects.select_related("customer").filter(key=named).first()
            customer = key.customer if key else None
    if customer is None:
        raise BadRequest("no customer with that customer (customerUniqueId)" if guid_only else
                         "no customer with that id, customerUniqueId or API key")
    return customer
