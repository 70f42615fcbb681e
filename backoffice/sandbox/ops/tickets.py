"""Ticket service (document 2): the operations on event and passenger tickets — create, update, get, the
list with its queryFilter, HTML, the by-date report — and their routes. What a ticket body must hold, its
amounts and report item are in ticket_rules.py, its Excel exports in ticket_exports.py; the status machine,
exports, reports and request helpers are shared (statuses.py, exports.py, reports.py, common.py).
Everything is kept in the generic Document table.

Document kinds (customer-scoped):
  event_ticket / passenger_ticket   key ettn, number ticketNumber, status, data = the body as sent plus
                                    "message"; due_at = when a queued ticket is processed.
  <kind>_export                     key exportId, blob = the ZIP, due_at = when it shows in the history.
  <kind>_report                     one row per report item, created = the moment it was reported.

Choices where the documents say "not shown" (the back office relies on them; statuses.py and exports.py
list those of the state machine and the exports):
- a body that does not fit the model of document 2 (a JSON type other than the documents give, e.g. a
  number sent as a string; an unknown or misspelt member; eventCityId at update) answers 422
  {"title", "detail", "errors": {field: [messages]}} (common.bind), before any rule is checked;
- a validation failure answers 400 {"title": "Validation failed", "detail": "<field>: <message>; ..."};
  refusals of a state change answer 400 with their own title; an unknown ettn 404;
- an approved ticket is reported in the by-date report of the day it was approved;
- HTML answers {"Response": base64 of the UTF-8 HTML};
- the sandbox's "now" is the real clock plus clock_offset_seconds (tests jump ahead);
- a create whose counter does not follow the prefix's last number (N while N-1 of that prefix and year is not
  there) is refused 400 "Validation failed" on ticketNumber (document 2, 2.1: the counter starts at 1 and
  continues consecutively), unless N is the series' first: 1, or where the control
  /_control/tickets/series says a series started elsewhere continues (control_series).
"""

import json
import re
import uuid
from functools import partial

from django.template.loader import render_to_string

from ..api import Call, operation
from ..control import control_action
from ..models import Document
from . import exports, provinces, reports, statuses
from .common import (blank, condition_parts, control_customer, iso, locked, moment, now, page, paged_query, read_body,
                     refused, wrapped)
from .list_filters import OPERATORS  # queryFilter's operators are filterQuery's (Turkish, as clients send them)
from .statuses import DRAFT, ERROR
from .ticket_exports import export_start
from .ticket_rules import LIFECYCLE, customer_name, settle, totals, validate

# kind -> (path segment, report path)
KINDS = {
    "event_ticket": ("/v1/event-ticket", "/v1/eventticketreport/partsbydate/{reportDate}"),
    "passenger_ticket": ("/v1/passenger-ticket", "/v1/passengerticketreport/partsbydate/{reportDate}"),
}


def view(doc: Document) -> dict:
    """A ticket as the get, list and status operations show it."""
    data = dict(doc.data)
    message = data.pop("message", "")
    return {"ettn": doc.key, **data, "status": doc.status, "message": message or "",
            "createdDate": iso(doc.created), **totals(doc.data)}


# --- create, update, get ---------------------------------------------------------------------------------

def _duplicate(call: Call, kind: str, number: str, ettn: str | None = None) -> None:
    others = Document.objects.filter(customer=call.customer, kind=kind, number=number)
    if ettn:
        others = others.exclude(key=ettn)
    other = others.values_list("key", flat=True).first()
    if other:
        raise refused("Duplicate ticket number",
                      f"ticketNumber: {number} is already used by ticket {other}; a ticket number is used once.")


# Where a series started elsewhere continues: key "<kind>:<prefix><year>", number = its first counter here.
SERIES = "ticket_series"


def _consecutive(call: Call, kind: str, number: str) -> None:
    """Document 2, 2.1: the counter of a prefix and year starts at 1 and continues consecutively, so N is
    refused while N-1 is not there, unless N is the series' first (1, or the start the control set)."""
    series, counter = number[:7], int(number[7:])
    start = Document.objects.filter(customer=call.customer, kind=SERIES, key=f"{kind}:{series}") \
        .values_list("number", flat=True).first()
    if counter == int(start or 1):
        return
    previous = f"{series}{counter - 1:09d}"
    if not Document.objects.filter(customer=call.customer, kind=kind, number=previous).exists():
        raise refused("Validation failed",
                      f"ticketNumber: {number} does not continue the series {series}: {previous} is not there; the "
                      "counter of a prefix and year starts at 1 and continues consecutively.")


@control_action("POST", "tickets/series")
def control_series(body):
    """{customer_unique_id or api_key, kind: event_ticket | passenger_ticket, series: prefix + year ("ETK2026"),
    first: counter} -> that series of the customer started elsewhere: its numbers here continue from `first`."""
    customer = control_customer(body)
    kind, series, first = body.get("kind"), str(body.get("series") or ""), int(body.get("first") or 0)
    if kind not in KINDS or not re.fullmatch(r"[A-Z0-9]{3}20[0-9]{2}", series) or not 1 <= first <= 999_999_999:
        raise ValueError("kind must be a ticket kind, series a prefix and year (ETK2026), first 1 to 999999999")
    Document.objects.update_or_create(customer=customer, kind=SERIES, key=f"{kind}:{series}",
                                      defaults={"number": str(first)})
    return {"kind": kind, "series": series, "first": first}


def _stored(body: dict) -> dict:
    return {name: value for name, value in body.items() if name not in ("ettn", "status")}


def create(call: Call, kind: str):
    body = read_body(call)
    validate(kind, body, creating=True)
    ettn = str(uuid.UUID(str(body["ettn"]))) if not blank(body.get("ettn")) else str(uuid.uuid4())
    status = body.get("status") or DRAFT
    at = now(call)
    with locked(call.customer):
        _duplicate(call, kind, body["ticketNumber"])
        _consecutive(call, kind, body["ticketNumber"])
        if Document.objects.filter(customer=call.customer, kind=kind, key=ettn).exists():
            raise refused("Duplicate ettn", f"ettn: a ticket with ettn {ettn} already exists.")
        Document.objects.create(
            customer=call.customer, kind=kind, key=ettn, number=body["ticketNumber"], status=status,
            data={**_stored(body), "message": ""}, created=at, due_at=statuses.due_at(call, at, status),
        )
    return {"ettn": ettn, "ticketNumber": body["ticketNumber"]}


def update(call: Call, kind: str, id):
    body = read_body(call)
    validate(kind, body, creating=False)
    if str(body["ettn"]).lower() != id.lower():
        raise refused("Validation failed", f"ettn: The ettn of the body ({body['ettn']}) differs from the id in "
                                           f"the path ({id}).")
    settle(call)
    status = body.get("status") or DRAFT
    at = now(call)
    with locked(call.customer):
        doc = statuses.document(call, kind, id)
        if doc.status not in (DRAFT, ERROR):
            raise refused("Update refused",
                          f"Ticket {doc.number} is {statuses.status_name(doc.status)} ({doc.status}); only "
                          "tickets in draft (0) or error (40) can be updated.")
        _duplicate(call, kind, body["ticketNumber"], doc.key)
        data = _stored(body)
        # eventCityId is not in the update model, and seatNumber is optional there: keep what was sent at create.
        for name in ("eventCityId", "seatNumber"):
            if name in doc.data and (name == "eventCityId" or blank(data.get(name))):
                data[name] = doc.data[name]
        doc.number, doc.status, doc.data = body["ticketNumber"], status, {**data, "message": ""}
        doc.due_at = statuses.due_at(call, at, status)
        doc.save()
    return {"ettn": doc.key, "ticketNumber": doc.number}


def get(call: Call, kind: str, id):
    settle(call)
    return view(statuses.document(call, kind, id))


# --- the list and its queryFilter ------------------------------------------------------------------------

COLUMNS = {"ettn": "key", "id": "key", "ticketnumber": "number", "status": "status", "createddate": "created"}
FILTER_SHAPE = "queryFilter: must be a JSON array of {category, operator, value}."


def _conditions(raw: str) -> list:
    try:
        conditions = json.loads(raw)
    except ValueError:
        raise refused("Bad Request", FILTER_SHAPE) from None
    if isinstance(conditions, dict):
        conditions = [conditions]
    if not isinstance(conditions, list):
        raise refused("Bad Request", FILTER_SHAPE)
    return conditions


def _condition(condition) -> tuple[dict, bool]:
    """One queryFilter condition as ({lookup: value}, negated)."""
    if not isinstance(condition, dict):
        raise refused("Bad Request", "queryFilter: each condition must be an object.")
    category, operator, value = condition_parts(condition, "queryFilter")
    category, operator = str(category or ""), str(operator or "").strip().lower()
    if operator not in OPERATORS:
        raise refused("Bad Request", f"queryFilter: unknown operator '{operator}'.")
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9]*", category):
        raise refused("Bad Request", f"queryFilter: unknown category '{category}'.")
    lookup, negated = OPERATORS[operator]
    column = COLUMNS.get(category.lower())
    if column == "status":
        try:
            value = int(value)
        except (TypeError, ValueError):
            raise refused("Bad Request", f"queryFilter: status '{value}' is not a number.") from None
    elif column == "created":
        value = moment(value)
        if value is None:
            raise refused("Bad Request", "queryFilter: createdDate must be a date.")
    return {f"{column or 'data__' + category}__{lookup}": value}, negated


def _filtered(tickets, raw: str):
    for condition in _conditions(raw):
        lookup, negated = _condition(condition)
        tickets = tickets.exclude(**lookup) if negated else tickets.filter(**lookup)
    return tickets


def ticket_list(call: Call, kind: str):
    settle(call)
    page_index, page_size = page(call)
    tickets = Document.objects.filter(customer=call.customer, kind=kind)
    if call.query.get("queryFilter"):
        tickets = _filtered(tickets, call.query["queryFilter"])
    column = COLUMNS.get(call.query.get("sortedColumn", "").lower(), "created")
    descending = call.query.get("isDesc", "").lower() == "true"
    tickets = tickets.order_by(*(f"-{c}" if descending else c for c in (column, "pk")))
    return paged_query(tickets, page_index, page_size, view)


def html(call: Call, kind: str, id, isStandartXslt):
    flag = isStandartXslt.lower()
    if flag not in ("true", "false"):
        raise refused("Bad Request", f"isStandartXslt: must be true or false (got '{isStandartXslt}').")
    settle(call)
    doc = statuses.document(call, kind, id)
    data = doc.data
    context = {
        "kind": kind, "ticket": data, "ettn": doc.key, "status": doc.status,
        "status_name": statuses.status_name(doc.status), "totals": totals(data),
        "city_name": provinces.name_of(data.get("eventCityId")),
        "lines": [{**line, "net": totals({"ticketLines": [line]})["totalAmount"]}
                  for line in data.get("ticketLines") or []],
        "customer_name": customer_name(data), "company": call.customer.name,
    }
    template = "standard" if flag == "true" else "company"
    page_html = render_to_string(f"sandbox/tickets/{template}.html", context)
    return wrapped(page_html.encode("utf-8"))


# --- by-date reports -------------------------------------------------------------------------------------

def report(call: Call, kind: str, reportDate):
    return reports.by_date(call, kind, reportDate, settle)


# --- registration: every handler takes the ticket kind ---------------------------------------------------

for _kind, (_base, _report_path) in KINDS.items():
    for _method, _suffix, _handler in (
        ("PUT", "/updatestatuslist", lambda call, kind: statuses.change_status(call, LIFECYCLE, kind)),
        ("POST", "/cancel", lambda call, kind: statuses.cancel(call, LIFECYCLE, kind)),
        ("POST", "/status", lambda call, kind: statuses.status_query(call, LIFECYCLE, kind)),
        ("GET", "/{id}/html/{isStandartXslt}", html),
        ("POST", "", create),
        ("GET", "", ticket_list),
        ("PUT", "/{id}", update),
        ("GET", "/{id}", get),
    ):
        operation("ticket", _method, _base + _suffix)(partial(_handler, kind=_kind))
    operation("ticket", "GET", _report_path)(partial(report, kind=_kind))
    exports.routes("ticket", _base, _kind, partial(export_start, kind=_kind))
# The passenger-list report is registered by ops/passenger_lists.py (it reports due lists first).
