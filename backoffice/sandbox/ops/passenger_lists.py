"""Passenger lists (document 2, section 4.3): one collective document per expedition, built from the
customer's passenger tickets, kept in the generic Document table.

Document kinds (customer-scoped):
  passenger_list          key ettn, number passengerListNumber, status SAVED (0) / REPORTED (60) /
                          REPLACED (100), data = the body as sent (isManualPlate as a boolean) plus the
                          tickets it covers and its totals; due_at = when it is reported.
  passenger_list_export   key exportId, blob = the ZIP (history and download as for tickets).
  passenger_list_report   one row per reported list, created = the moment it was reported.

Choices where the document says "not shown" (the back office relies on them):
- isNewList true creates; false, null, missing or "" updates; any other value is refused. isManualPlate
  ("declared as string") takes true / false or "true" / "false" (any case); null or "" is false.
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

import io
import re
import uuid
import zipfile
from datetime import datetime, timedelta
from decimal import Decimal

from django.db import transaction
from django.utils import timezone
from stdnum.tr import tckimlik, vkn

from ..api import Call, operation
from ..control import BadRequest, control_action
from ..models import ApiKey, Customer, Document, SandboxSetting
from . import tickets as t

SAVED, REPORTED, REPLACED = 0, 60, 100
STATE_NAMES = {SAVED: "saved", REPORTED: "reported", REPLACED: "replaced"}
CURRENT = (SAVED, REPORTED)
ISSUED = (t.QUEUED, t.APPROVED)  # the tickets a list covers
KIND = "passenger_list"
BASE = "/v1/passenger-list"
NUMBER_PREFIX = "YLS"
OPERATOR_FIELDS = t.OPERATOR_FIELDS
OPERATOR_TEXT = ("vehicleOperatingCountry", "vehicleOperatingCity", "vehicleOperatingDistrict",
                 "vehicleOperatingTown", "vehicleOperatingStreet", "vehicleOperatingBuildingName",
                 "vehicleOperatingBuildingNo", "vehicleOperatingDoorNo", "vehicleOperatingPostCode",
                 "vehicleOperatingMersisNo", "vehicleOperatingRegisterNo", "vehicleOperatingTelephone",
                 "vehicleOperatingEmail", "vehicleOperatingTitle", "vehicleOperatingTaxCenter")
CENT = Decimal("0.01")


def plate_key(value) -> str:
    """Plates compare without spaces or dashes, in capitals (34 ABC 123 = 34abc-123)."""
    return re.sub(r"[^0-9A-Za-z]", "", str(value or "")).upper()


def _flag(body: dict, name: str, problems: t.Problems, *, strings: bool) -> bool:
    """A boolean field; null, missing and "" are false. strings: "true"/"false" are taken too."""
    value = body.get(name)
    if value is None or value == "" or isinstance(value, bool):
        return bool(value)
    if strings and isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    allowed = 'true, false, "true", "false" or empty' if strings else "true, false or empty"
    problems.add(name, f"{name} must be {allowed} (got {value!r}).")
    return False


def validate(body) -> dict:
    """The save body of 4.3 checked as a whole; the normalised fields (expeditionTime as a datetime)."""
    if not isinstance(body, dict):
        raise t.refused("Validation failed", "body: The request body must be a JSON object.")
    problems = t.Problems()
    for name in ("expeditionNumber", "expeditionTime", "vehiclePlate"):
        value = body.get(name)
        if t._blank(value):
            problems.add(name, f"The {name} field is required.")
        elif not isinstance(value, str):
            problems.add(name, f"{name} must be a string.")
    moment = None
    if isinstance(body.get("expeditionTime"), str) and body["expeditionTime"].strip():
        moment = t._moment(body["expeditionTime"])
        if moment is None:
            problems.add("expeditionTime", f"The value '{body['expeditionTime']}' of expeditionTime is not a valid "
                                           "date and time.")
    if isinstance(body.get("vehiclePlate"), str) and body["vehiclePlate"].strip() and \
            not re.fullmatch(r"[0-9A-Za-z][0-9A-Za-z \-]{1,19}", body["vehiclePlate"].strip()):
        problems.add("vehiclePlate", f"The plate '{body['vehiclePlate']}' has letters, digits and spaces only.")
    manual = _flag(body, "isManualPlate", problems, strings=True)
    new = _flag(body, "isNewList", problems, strings=False)

    # Document 2, section 2.3 (and 4.3: "same conditional rule"): the five go together.
    filled = [name for name in OPERATOR_FIELDS if not t._blank(body.get(name))]
    if filled:
        for name in OPERATOR_FIELDS:
            if name not in filled:
                problems.add(name, f"{name} is required because {', '.join(filled)} is filled: the five "
                                   "vehicle-operator fields go together.")
    operator = body.get("vehicleOperatingVknTckn")
    if not t._blank(operator):
        if not (isinstance(operator, str) and re.fullmatch(r"[0-9]{10}|[0-9]{11}", operator)):
            problems.add("vehicleOperatingVknTckn", f"vehicleOperatingVknTckn must be 10 digits (VKN) or 11 digits "
                                                    f"(TCKN) (got '{operator}').")
        elif not (vkn.is_valid(operator) if len(operator) == 10 else tckimlik.is_valid(operator)):
            problems.add("vehicleOperatingVknTckn", f"vehicleOperatingVknTckn '{operator}' is not a valid "
                                                    f"{'VKN' if len(operator) == 10 else 'TCKN'}: its check digits "
                                                    "do not match.")
    for name in ("commissionAmount", "commissionTaxAmount"):
        value = body.get(name)
        if value is None:
            continue
        number = t._decimal(value)
        if number is None:
            problems.add(name, f"{name} must be a number.")
        elif number < 0:
            problems.add(name, f"{name} must not be negative.")
    for name in OPERATOR_TEXT:
        if body.get(name) is not None and not isinstance(body[name], str):
            problems.add(name, f"{name} must be a string.")
    problems.raise_any()
    return {"expeditionNumber": body["expeditionNumber"].strip(), "moment": moment,
            "plate": body["vehiclePlate"].strip(), "isManualPlate": manual, "isNewList": new}


# --- lists and their tickets ------------------------------------------------------------------------------

def _same_moment(value, moment) -> bool:
    parsed = t._moment(value) if isinstance(value, str) else None
    return parsed is not None and parsed.replace(microsecond=0) == moment.replace(microsecond=0)


def matching_tickets(customer, number: str, moment, plate: str | None) -> list[Document]:
    """The issued tickets of the expedition (and of the plate, unless it is None), oldest first."""
    candidates = Document.objects.filter(customer=customer, kind="passenger_ticket", status__in=ISSUED,
                                         data__expeditionNumber=number).order_by("created", "pk")
    wanted = plate_key(plate) if plate is not None else None
    return [doc for doc in candidates
            if _same_moment(doc.data.get("expeditionTime"), moment)
            and (wanted is None or plate_key(doc.data.get("vehiclePlate")) == wanted)]


def current_lists(customer, number: str, moment, plate: str | None) -> list[Document]:
    """The current lists of the expedition (and of the plate, unless it is None), newest first."""
    candidates = Document.objects.filter(customer=customer, kind=KIND, status__in=CURRENT,
                                         data__expeditionNumber=number).order_by("-created", "-pk")
    wanted = plate_key(plate) if plate is not None else None
    return [doc for doc in candidates
            if _same_moment(doc.data.get("expeditionTime"), moment)
            and (wanted is None or plate_key(doc.data.get("vehiclePlate")) == wanted)]


def _money(value: Decimal) -> float:
    return float(value.quantize(CENT))


def list_totals(body: dict, tickets: list[Document]) -> dict:
    payable = sum((Decimal(str(t.totals(doc.data)["payableAmount"])) for doc in tickets), Decimal(0))
    totals = {"totalPayableAmount": _money(payable), "ticketCount": len(tickets)}
    for name, total in (("commissionAmount", "totalCommissionAmount"),
                        ("commissionTaxAmount", "totalCommissionTaxAmount")):
        own = t._decimal(body.get(name))
        if own is None:
            own = sum((t._decimal(doc.data.get(name)) or Decimal(0) for doc in tickets), Decimal(0))
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
            "createdDate": t._iso(reported)}


def report_due(customer, at: datetime) -> int:
    """Report the customer's saved lists whose time has come (their report item appears). Returns how many."""
    due = Document.objects.filter(customer=customer, kind=KIND, status=SAVED, due_at__lte=at)
    if not due.exists():
        return 0
    with transaction.atomic():
        t._lock(customer)
        docs = list(due)  # again under the lock
        items = []
        for doc in docs:
            reported = doc.due_at
            doc.status, doc.due_at = REPORTED, None
            doc.data = {**doc.data, "reportedAt": t._iso(reported)}
            items.append(Document(customer=customer, kind=f"{KIND}_report", key=doc.key, number=doc.number,
                                  created=reported, data=report_item(doc, reported)))
        Document.objects.bulk_update(docs, ["status", "due_at", "data"], batch_size=500)
        Document.objects.bulk_create(items, batch_size=500, ignore_conflicts=True)
    return len(docs)


def settle(call: Call) -> None:
    """Lazily, before answering: queued tickets settle, and lists due are reported."""
    t.settle(call)
    report_due(call.customer, t.now(call))


# --- operations ----------------------------------------------------------------------------------------------

def save(call: Call):
    body = t._body(call)
    fields = validate(body)
    settle(call)
    number, moment, plate = fields["expeditionNumber"], fields["moment"], fields["plate"]
    at = t.now(call)
    due = at + timedelta(seconds=call.settings.ticket_processing_seconds)
    with transaction.atomic():
        t._lock(call.customer)
        tickets = matching_tickets(call.customer, number, moment, None if fields["isManualPlate"] else plate)
        if not tickets and not fields["isManualPlate"]:
            raise t.refused("No matching tickets",
                            f"No issued passenger ticket matches expedition number {number}, expedition time "
                            f"{body['expeditionTime']} and plate {plate}: a list grouped by plate "
                            "(isManualPlate false) needs at least one; send isManualPlate true to give the plate "
                            "yourself.")
        data = _stored(body, fields, tickets)
        if fields["isNewList"]:
            ettn = str(uuid.uuid4())
            doc = Document.objects.create(customer=call.customer, kind=KIND, key=ettn,
                                          number=_next_number(call.customer, at), status=SAVED, data=data,
                                          created=at, due_at=due)
            older = [other for other in current_lists(call.customer, number, moment, plate) if other.pk != doc.pk]
            for other in older:
                other.status, other.due_at = REPLACED, None
                other.data = {**other.data, "replacedBy": ettn}
            Document.objects.bulk_update(older, ["status", "due_at", "data"])
        else:
            found = current_lists(call.customer, number, moment, None if fields["isManualPlate"] else plate)
            if fields["isManualPlate"]:  # the one with this plate if there is one, else the newest
                found.sort(key=lambda other: plate_key(other.data.get("vehiclePlate")) != plate_key(plate))
            if not found:
                raise t.refused("Not Found",
                                f"No passenger list of expedition {number} at {body['expeditionTime']}"
                                f"{'' if fields['isManualPlate'] else ' with plate ' + plate} to update; send "
                                "isNewList true to create one.", 404)
            doc = found[0]
            if doc.status == REPORTED:
                raise t.refused("Update refused",
                                f"Passenger list {doc.number} was reported to the tax authority on "
                                f"{doc.data.get('reportedAt')}; a reported list cannot be updated. Create it again "
                                "(isNewList true) to replace it.")
            doc.data, doc.due_at = data, due
            doc.save(update_fields=["data", "due_at", "updated"])
    return {"ettn": doc.key, "passengerListNumber": doc.number}


def query(call: Call):
    settle(call)
    page_index, page_size = t._page(call)
    lists = Document.objects.filter(customer=call.customer, kind=KIND, status__in=CURRENT).order_by("created", "pk")
    total = lists.count()
    start = (page_index - 1) * page_size
    items = [{"id": doc.key, "passengerListNumber": doc.number, "expeditionNumber": doc.data.get("expeditionNumber"),
              "vehiclePlate": doc.data.get("vehiclePlate"), "expeditionTime": doc.data.get("expeditionTime"),
              "createDate": t._iso(doc.created)} for doc in lists[start:start + page_size]]
    return t.envelope(items, total, page_index, page_size)


# --- Excel export --------------------------------------------------------------------------------------------

def _export_filters(body) -> dict:
    if body is None:
        body = {}
    if not isinstance(body, dict):
        raise t.refused("Validation failed", "body: The export filters must be a JSON object.")
    problems = t.Problems()
    filters = {}
    ids = t._get(body, "ids")
    if ids is not None and (not isinstance(ids, list) or not all(isinstance(i, str) for i in ids)):
        problems.add("ids", "ids must be an array of passenger-list ids (ettn).")
    elif ids:
        filters["ids"] = ids
    for name in ("startDate", "endDate"):
        value = t._get(body, name)
        if t._blank(value):
            continue
        moment = t._moment(value)
        if moment is None:
            problems.add(name, f"The value '{value}' of {name} is not a valid date and time.")
            continue
        if name == "endDate" and isinstance(value, str) and "T" not in value and " " not in value.strip():
            moment += timedelta(days=1) - timedelta(microseconds=1)  # a bare end date covers the whole day
        filters[name] = moment
    if filters.get("startDate") and filters.get("endDate") and filters["startDate"] > filters["endDate"]:
        problems.add("endDate", "endDate is before startDate.")
    problems.raise_any()
    return filters


def export_lists(call: Call, filters: dict) -> list[Document]:
    lists = Document.objects.filter(customer=call.customer, kind=KIND, status__in=CURRENT).order_by("created", "pk")
    if filters.get("ids"):
        lists = lists.filter(key__in=filters["ids"])
    start, end = filters.get("startDate"), filters.get("endDate")
    chosen = []
    for doc in lists.iterator(chunk_size=1000):
        moment = t._moment(doc.data.get("expeditionTime"))
        if (start or end) and (moment is None or (start and moment < start) or (end and moment > end)):
            continue
        chosen.append(doc)
    return chosen


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
                ("Oluşturma Tarihi", lambda d: t._iso(d.created)))


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
                                t.customer_name(ticket.data), t.totals(ticket.data)["payableAmount"]])
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("yolcu-listeleri.xlsx", t._xlsx({"Listeler": lists, "Biletler": tickets}))
    return out.getvalue()


def export_start(call: Call):
    filters = _export_filters(t._body(call))
    settle(call)
    at = t.now(call)
    docs = export_lists(call, filters)
    export_id = str(uuid.uuid4())
    Document.objects.create(
        customer=call.customer, kind=f"{KIND}_export", key=export_id, created=at,
        due_at=at + timedelta(seconds=call.settings.export_ready_seconds), blob=export_zip(call, docs),
        data={"fileName": f"yolcu-listeleri-{timezone.localtime(at):%Y%m%d-%H%M%S}.zip", "count": len(docs),
              "filters": {k: t._iso(v) if isinstance(v, datetime) else v for k, v in filters.items()}},
    )
    return {"exportId": export_id}


def export_history(call: Call):
    return t.export_history(call, KIND)


def export_download(call: Call, exportId):
    return t.export_download(call, KIND, exportId)


def report(call: Call, reportDate):
    """The by-date report of lists (document 2, 4.3): lists due are reported first."""
    settle(call)
    return t.report(call, KIND, reportDate)


# More specific paths first.
operation("ticket", "POST", BASE + "/export")(export_start)
operation("ticket", "GET", BASE + "/export/history")(export_history)
operation("ticket", "GET", BASE + "/export/{exportId}/download")(export_download)
operation("ticket", "POST", BASE)(save)
operation("ticket", "GET", BASE)(query)
operation("ticket", "GET", "/v1/passengerticketlistreport/partsbydate/{reportDate}")(report)


# --- control: report lists at once ----------------------------------------------------------------------------

@control_action("POST", "passenger-lists/report")
def control_report(body):
    """{customer_unique_id or api_key, ettn (optional)} -> the customer's saved list (or all of them) is
    reported now, as if its delay had passed: {"reported": count}."""
    if body.get("customer_unique_id"):
        customer = Customer.objects.filter(customer_unique_id=body["customer_unique_id"]).first()
    else:
        key = ApiKey.objects.select_related("customer").filter(key=body.get("api_key") or "").first()
        customer = key.customer if key else None
    if customer is None:
        raise BadRequest("no customer with that customer_unique_id or api_key")
    at = timezone.now() + timedelta(seconds=SandboxSetting.load().clock_offset_seconds)
    lists = Document.objects.filter(customer=customer, kind=KIND, status=SAVED)
    if body.get("ettn"):
        lists = lists.filter(key=body["ettn"])
    lists.update(due_at=at)
    return {"reported": report_due(customer, at)}
