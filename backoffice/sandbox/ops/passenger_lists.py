"""Passenger lists (document 2, section 4.3): one collective document per expedition, built from the
customer's passenger tickets, kept in the generic Document table.

Document kinds (customer-scoped):
  passenger_list          key ettn, number passengerListNumber, status SAVED (0) / REPORTED (60) /
                          REPLACED (100), data = the body as sent (isManualPlate as a boolean) plus the
                          tickets it covers and its totals; due_at = when it is reported.
  passenger_list_export   key exportId, blob = the ZIP (history and download as for tickets).
  passenger_list_report   one row per reported list, created = the moment it was reported.

Choices where the document says "not shown" (the back office relies on them):
- isNewList (bool) true creates; false, null, missing or "" updates. isManualPlate is "declared as string":
  "true" or "false" (any case), null, missing or "" being false; a JSON boolean or any other type answers
  422, as does a number sent as a string for the commissions, or a member the body does not have.
- A list covers the tickets that were issued: queued (20) or approved (60); drafts, tickets in error and
  cancelled ones are left out. Tickets match on expeditionNumber (exact), expeditionTime (the same
  instant) and, when isManualPlate is false, vehiclePlate (compared without spaces or dashes, in
  capitals). isManualPlate false with no matching ticket: 400 "No matching tickets". isManualPlate true
  with none: the list is saved empty (the document refuses only the plate-grouped case).
- "The same information" is the same expedition number, expedition time and plate. Creating a list again
  with it replaces the current one: the old list keeps its ettn and number, is marked replaced (status
  100, data.replacedBy = the new ettn), leaves the query and is never reported; a report item it already
  has stays. A replacement is allowed after reporting: it is how a reported list is corrected.
- An update finds the current list of the expedition (number and time, and the plate unless isManualPlate
  is true, in which case the stored plate may change); none: 404 "Not Found". It keeps ettn and number,
  regroups the tickets and restarts the reporting delay.
- A list is reported to the tax authority ticket_processing_seconds (the sandbox setting, default 5 s)
  after its last save, lazily, when the customer next uses the lists or their report; it then appears in
  the by-date report of that (Istanbul) day. POST /_control/passenger-lists/report reports at once.
  A reported list cannot be updated: 400 "Update refused".
- Totals: totalPayableAmount is the sum of the tickets' payableAmount; totalCommissionAmount and
  totalCommissionTaxAmount are the list's own commissionAmount / commissionTaxAmount when it gives the
  vehicle operator, else the sums of its tickets' (commissionTaxAmount taken as an amount, as the
  tickets' is).
- The query (pageIndex from 1, pageSize at most 500) lists the current lists (not replaced), oldest first.
- An export covers the current lists, by ids and/or expeditionTime range (startDate..endDate; a bare end
  date covers its day): a ZIP with yolcu-listeleri.xlsx (a sheet of lists and one of their tickets).
"""

import re
import uuid
from datetime import date, datetime, timedelta
from decimal import Decimal

from django.utils import timezone

from ..api import Call, operation
from ..control import control_action
from ..models import Document
from . import exports, reports, statuses, ticket_rules
from .common import (FLAG, NUMBER, STRING, Checks, Problems, array, check_model, control_customer, decimal, iso, locked,
                     moment, now, page, paged_query, read_body, refused)
from .statuses import APPROVED, QUEUED

SAVED, REPORTED, REPLACED = 0, 60, 100
STATE_NAMES = {SAVED: "saved", REPORTED: "reported", REPLACED: "replaced"}
CURRENT = (SAVED, REPORTED)
ISSUED = (QUEUED, APPROVED)  # the tickets a list covers
KIND = "passenger_list"
BASE = "/v1/passenger-list"
NUMBER_PREFIX = "YLS"
FILE_STEM = "yolcu-listeleri"
CENT = Decimal("0.01")
# Document 2, 4.3: the save body, with all vehicle-operator fields of 2.3.
SAVE_MODEL = {"expeditionNumber": STRING, "expeditionTime": STRING, "vehiclePlate": STRING, "isManualPlate": STRING,
              **dict.fromkeys(ticket_rules.VEHICLE_OPERATOR_TEXT, STRING), "commissionAmount": NUMBER,
              "commissionTaxAmount": NUMBER, "isNewList": FLAG}
EXPORT_MODEL = {"ids": array(STRING), "startDate": STRING, "endDate": STRING}


def plate_key(value) -> str:
    """Plates compare without spaces or dashes, in capitals (34 ABC 123 = 34abc-123)."""
    return re.sub(r"[^0-9A-Za-z]", "", str(value or "")).upper()


def _manual_plate(body: dict, problems: Problems) -> bool:
    """isManualPlate, a string (the model refused any other type): "true" / "false"; null, missing, "" false."""
    value = (body.get("isManualPlate") or "").strip().lower()
    if value not in ("", "true", "false"):
        problems.add("isManualPlate", f'isManualPlate must be "true" or "false" (got {body["isManualPlate"]!r}).')
    return value == "true"


def validate(body) -> dict:
    """The save body of 4.3 checked as a whole; the normalised fields (expeditionTime as a datetime)."""
    if not isinstance(body, dict):
        raise refused("Validation failed", "body: The request body must be a JSON object.")
    check_model(body, SAVE_MODEL)
    checks = Checks(body)
    for name in ("expeditionNumber", "expeditionTime", "vehiclePlate"):
        checks.required(name)
    when = checks.moment("expeditionTime") if isinstance(body.get("expeditionTime"), str) else None
    if isinstance(body.get("vehiclePlate"), str) and body["vehiclePlate"].strip() and \
            not re.fullmatch(r"[0-9A-Za-z][0-9A-Za-z \-]{1,19}", body["vehiclePlate"].strip()):
        checks.add("vehiclePlate", f"The plate '{body['vehiclePlate']}' has letters, digits and spaces only.")
    manual = _manual_plate(body, checks)
    new = body.get("isNewList") is True
    _check_operator(checks)
    checks.raise_any()
    return {"expeditionNumber": body["expeditionNumber"].strip(), "moment": when,
            "plate": body["vehiclePlate"].strip(), "isManualPlate": manual, "isNewList": new}


def _check_operator(checks: Checks) -> None:
    """The vehicle operator: the five fields go together (as for tickets), a valid VKN or TCKN, amounts."""
    body = checks.body
    ticket_rules.check_operator(body, checks)
    for name in ("commissionAmount", "commissionTaxAmount"):
        number = checks.number(name, body.get(name))
        if number is not None and number < 0:
            checks.add(name, f"{name} must not be negative.")


# --- lists and their tickets ------------------------------------------------------------------------------

def _same_moment(value, when) -> bool:
    parsed = moment(value) if isinstance(value, str) else None
    return parsed is not None and parsed.replace(microsecond=0) == when.replace(microsecond=0)


def _of_expedition(candidates, when, plate: str | None) -> list[Document]:
    wanted = plate_key(plate) if plate is not None else None
    return [doc for doc in candidates
            if _same_moment(doc.data.get("expeditionTime"), when)
            and (wanted is None or plate_key(doc.data.get("vehiclePlate")) == wanted)]


def matching_tickets(customer, number: str, when, plate: str | None) -> list[Document]:
    """The issued tickets of the expedition (and of the plate, unless it is None), oldest first."""
    candidates = Document.objects.filter(customer=customer, kind="passenger_ticket", status__in=ISSUED,
                                         data__expeditionNumber=number).order_by("created", "pk")
    return _of_expedition(candidates, when, plate)


def current_lists(customer, number: str, when, plate: str | None) -> list[Document]:
    """The current lists of the expedition (and of the plate, unless it is None), newest first."""
    candidates = Document.objects.filter(customer=customer, kind=KIND, status__in=CURRENT,
                                         data__expeditionNumber=number).order_by("-created", "-pk")
    return _of_expedition(candidates, when, plate)


def _money(value: Decimal) -> float:
    return float(value.quantize(CENT))


def list_totals(body: dict, tickets: list[Document]) -> dict:
    payable = sum((Decimal(str(ticket_rules.totals(doc.data)["payableAmount"])) for doc in tickets), Decimal(0))
    totals = {"totalPayableAmount": _money(payable), "ticketCount": len(tickets)}
    for name, total in (("commissionAmount", "totalCommissionAmount"),
                        ("commissionTaxAmount", "totalCommissionTaxAmount")):
        own = decimal(body.get(name))
        if own is None:
            own = sum((decimal(doc.data.get(name)) or Decimal(0) for doc in tickets), Decimal(0))
        totals[total] = _money(own)
    return totals


def _stored(body: dict, fields: dict, tickets: list[Document]) -> dict:
    data = {name: value for name, value in body.items() if name not in ("isNewList", "ettn", "id")}
    data["isManualPlate"] = fields["isManualPlate"]
    data["tickets"] = [doc.key for doc in tickets]
    data["ticketNumbers"] = [doc.number for doc in tickets]
    return {**data, **list_totals(body, tickets), "replacedBy": None, "reportedAt": None}


def _next_number(customer, at: datetime) -> str:
    year = timezone.localtime(at).year
    prefix = f"{NUMBER_PREFIX}{year}"
    used = Document.objects.filter(customer=customer, kind=KIND, number__startswith=prefix).count()
    return f"{prefix}{used + 1:09d}"


def report_item(doc: Document, reported: datetime) -> dict:
    """The by-date report item (document 2, 2.5) of a reported list."""
    data = doc.data
    return {"passengerListNumber": doc.number, "expeditionNumber": data.get("expeditionNumber"),
            "vehiclePlate": data.get("vehiclePlate"), "expeditionTime": data.get("expeditionTime"),
            "totalPayableAmount": data.get("totalPayableAmount"),
            "totalCommissionAmount": data.get("totalCommissionAmount"),
            "totalCommissionTaxAmount": data.get("totalCommissionTaxAmount"), "partIndex": 1,
            "createdDate": iso(reported)}


def report_due(customer, at: datetime) -> int:
    """Report the customer's saved lists whose time has come (their report item appears). Returns how many."""
    due = Document.objects.filter(customer=customer, kind=KIND, status=SAVED, due_at__lte=at)

    def reported_now(doc: Document, reported: datetime) -> dict:
        doc.status = REPORTED
        doc.data = {**doc.data, "reportedAt": iso(reported)}
        return report_item(doc, reported)

    return statuses.process_due(customer, due, reported_now)


def settle(call: Call) -> None:
    """Lazily, before answering: queued tickets settle, and lists due are reported."""
    ticket_rules.settle(call)
    report_due(call.customer, now(call))


# --- operations ----------------------------------------------------------------------------------------------

def _replace(call: Call, fields: dict, data: dict, at: datetime) -> Document:
    """A new list of the expedition; the current ones of the same information are marked replaced by it."""
    ettn = str(uuid.uuid4())
    doc = Document.objects.create(customer=call.customer, kind=KIND, key=ettn,
                                  number=_next_number(call.customer, at), status=SAVED, data=data,
                                  created=at, due_at=at + timedelta(seconds=call.settings.ticket_processing_seconds))
    older = [other for other in current_lists(call.customer, fields["expeditionNumber"], fields["moment"],
                                              fields["plate"]) if other.pk != doc.pk]
    for other in older:
        other.status, other.due_at = REPLACED, None
        other.data = {**other.data, "replacedBy": ettn}
    Document.objects.bulk_update(older, ["status", "due_at", "data"])
    return doc


def _update(call: Call, body: dict, fields: dict, data: dict, at: datetime) -> Document:
    """The current list of the expedition, saved again with these data; refused once it is reported."""
    number, plate, manual = fields["expeditionNumber"], fields["plate"], fields["isManualPlate"]
    found = current_lists(call.customer, number, fields["moment"], None if manual else plate)
    if manual:  # the one with this plate if there is one, else the newest
        found.sort(key=lambda other: plate_key(other.data.get("vehiclePlate")) != plate_key(plate))
    if not found:
        raise refused("Not Found",
                      f"No passenger list of expedition {number} at {body['expeditionTime']}"
                      f"{'' if manual else ' with plate ' + plate} to update; send isNewList true to create one.", 404)
    doc = found[0]
    if doc.status == REPORTED:
        raise refused("Update refused",
                      f"Passenger list {doc.number} was reported to the tax authority on "
                      f"{doc.data.get('reportedAt')}; a reported list cannot be updated. Create it again "
                      "(isNewList true) to replace it.")
    doc.data, doc.due_at = data, at + timedelta(seconds=call.settings.ticket_processing_seconds)
    doc.save(update_fields=["data", "due_at", "updated"])
    return doc


def save(call: Call):
    body = read_body(call)
    fields = validate(body)
    settle(call)
    number, plate, manual = fields["expeditionNumber"], fields["plate"], fields["isManualPlate"]
    at = now(call)
    with locked(call.customer):
        tickets = matching_tickets(call.customer, number, fields["moment"], None if manual else plate)
        if not tickets and not manual:
            raise refused("No matching tickets",
                          f"No issued passenger ticket matches expedition number {number}, expedition time "
                          f"{body['expeditionTime']} and plate {plate}: a list grouped by plate "
                          "(isManualPlate false) needs at least one; send isManualPlate true to give the plate "
                          "yourself.")
        data = _stored(body, fields, tickets)
        if fields["isNewList"]:
            doc = _replace(call, fields, data, at)
        else:
            doc = _update(call, body, fields, data, at)
    return {"ettn": doc.key, "passengerListNumber": doc.number}


def _query_item(doc: Document) -> dict:
    return {"id": doc.key, "passengerListNumber": doc.number, "expeditionNumber": doc.data.get("expeditionNumber"),
            "vehiclePlate": doc.data.get("vehiclePlate"), "expeditionTime": doc.data.get("expeditionTime"),
            "createDate": iso(doc.created)}


def query(call: Call):
    settle(call)
    page_index, page_size = page(call)
    lists = Document.objects.filter(customer=call.customer, kind=KIND, status__in=CURRENT).order_by("created", "pk")
    return paged_query(lists, page_index, page_size, _query_item)


# --- Excel export --------------------------------------------------------------------------------------------

def _export_filters(body) -> dict:
    body, problems, filters = exports.filters_of(body, EXPORT_MODEL)
    exports.date_filter(body, "startDate", problems, filters, end=False)
    exports.date_filter(body, "endDate", problems, filters, end=True)
    if filters.get("startDate") and filters.get("endDate") and filters["startDate"] > filters["endDate"]:
        problems.add("endDate", "endDate is before startDate.")
    problems.raise_any()
    return filters


def export_lists(call: Call, filters: dict) -> list[Document]:
    lists = Document.objects.filter(customer=call.customer, kind=KIND, status__in=CURRENT).order_by("created", "pk")
    if filters.get("ids"):
        lists = lists.filter(key__in=filters["ids"])
    start, end = filters.get("startDate"), filters.get("endDate")
    return [doc for doc in lists.iterator(chunk_size=1000)
            if exports.within(moment(doc.data.get("expeditionTime")), start, end)]


LIST_COLUMNS = (("ETTN", lambda d: d.key), ("Liste No", lambda d: d.number),
                ("Sefer No", lambda d: d.data.get("expeditionNumber")),
                ("Sefer Zamanı", lambda d: d.data.get("expeditionTime")),
                ("Plaka", lambda d: d.data.get("vehiclePlate")),
                ("Elle Girilen Plaka", lambda d: "Evet" if d.data.get("isManualPlate") else "Hayır"),
                ("Araç İşleteni", lambda d: d.data.get("vehicleOperatingTitle")),
                ("İşleten VKN/TCKN", lambda d: d.data.get("vehicleOperatingVknTckn")),
                ("Bilet Sayısı", lambda d: d.data.get("ticketCount")),
                ("Ödenecek Toplam", lambda d: d.data.get("totalPayableAmount")),
                ("Komisyon", lambda d: d.data.get("totalCommissionAmount")),
                ("Komisyon KDV", lambda d: d.data.get("totalCommissionTaxAmount")),
                ("Durum", lambda d: STATE_NAMES.get(d.status, d.status)),
                ("Oluşturma Tarihi", lambda d: iso(d.created)))


def export_zip(call: Call, docs: list[Document]) -> bytes:
    lists = [[name for name, _ in LIST_COLUMNS]] + [[column(doc) for _, column in LIST_COLUMNS] for doc in docs]
    tickets = [["Liste No", "Bilet No", "Koltuk", "Yolcu", "Ödenecek"]]
    by_ettn = {doc.key: doc for doc in Document.objects.filter(
        customer=call.customer, kind="passenger_ticket", key__in=[e for d in docs for e in d.data.get("tickets", [])])}
    for doc in docs:
        for ettn in doc.data.get("tickets", []):
            ticket = by_ettn.get(ettn)
            if ticket is not None:
                tickets.append([doc.number, ticket.number, ticket.data.get("seatNumber"),
                                ticket_rules.customer_name(ticket.data),
                                ticket_rules.totals(ticket.data)["payableAmount"]])
    return exports.archive({f"{FILE_STEM}.xlsx": exports.xlsx({"Listeler": lists, "Biletler": tickets})})


def export_start(call: Call):
    filters = _export_filters(read_body(call))
    settle(call)

    def build():
        docs = export_lists(call, filters)
        return export_zip(call, docs), len(docs)

    return exports.start(call, KIND, FILE_STEM, filters, build)


def report(call: Call, reportDate):
    """The by-date report of lists (document 2, 4.3): lists due are reported first."""
    settle(call)
    return reports.by_date(call, KIND, reportDate)


exports.routes("ticket", BASE, KIND, export_start)
operation("ticket", "POST", BASE)(save)
operation("ticket", "GET", BASE)(query)
operation("ticket", "GET", "/v1/passengerticketlistreport/partsbydate/{reportDate}")(report)


# --- control: report lists at once; report items in bulk --------------------------------------------------------

@control_action("POST", "passenger-lists/report")
def control_report(body):
    """{customer_unique_id or api_key, ettn (optional)} -> the customer's saved list (or all of them) is
    reported now, as if its delay had passed: {"reported": count}."""
    customer = control_customer(body)
    at = now()
    lists = Document.objects.filter(customer=customer, kind=KIND, status=SAVED)
    if body.get("ettn"):
        lists = lists.filter(key=body["ettn"])
    lists.update(due_at=at)
    return {"reported": report_due(customer, at)}


@reports.filler(KIND)
def _filler(day: date, index: int) -> dict:
    """A report item of the control API's bulk fill (see reports.py)."""
    moment_text, number, amount = reports.sample(day, index)
    return {"passengerListNumber": number, "expeditionNumber": f"S{index % 1000:04d}",
            "vehiclePlate": f"34 ABC {index % 1000:03d}", "expeditionTime": moment_text,
            "totalPayableAmount": amount, "totalCommissionAmount": round(amount * 0.1, 2),
            "totalCommissionTaxAmount": round(amount * 0.02, 2), "partIndex": index // 1000 + 1,
            "createdDate": moment_text}
