"""Ticket service (document 2): event and passenger tickets, their state machine, HTML, Excel exports,
the by-date reports and the province list, all kept in the generic Document table.

Document kinds (customer-scoped):
  event_ticket / passenger_ticket   key ettn, number ticketNumber, status, data = the body as sent plus
                                    "message"; due_at = when a queued ticket is processed.
  <kind>_export                     key exportId, blob = the ZIP, due_at = when it shows in the history.
  <kind>_report, passenger_list_report
                                    one row per report item, created = the moment it was reported.

Choices where the documents say "not shown" (the back office relies on them):
- a validation failure answers 400 {"title": "Validation failed", "detail": "<field>: <message>; ..."};
  refusals of a state change answer 400 with their own title; an unknown ettn 404;
- a queued ticket (20) settles ticket_processing_seconds later, to error (40, with a message) for the
  share ticket_error_rate (0 and 1 are exact; in between decided by the ettn, so repeatable), else to
  approved (60), which also reports it (the by-date report of the day it was approved). Settling happens
  lazily when the customer reads anything of the service, so no background thread is needed;
- cancel (-> 100) is allowed from 0, 40 and 60; refused for a queued ticket (20: being processed) and
  for one already cancelled; a cancelled approved ticket shows canceled in its report item;
- status change: 40 -> 0 and 0 -> 20 only; cancel and status change are all-or-nothing;
- HTML answers {"Response": base64 of the UTF-8 HTML};
- an export is built when it is started, appears in the history export_ready_seconds later and can be
  downloaded for 24 hours after it was started (then 410); the download is the ZIP itself;
- the sandbox's "now" is the real clock plus clock_offset_seconds (tests jump ahead).
"""

import base64
import io
import json
import re
import uuid
import zipfile
from datetime import date, datetime, time, timedelta
from decimal import Decimal, InvalidOperation

from django.db import transaction
from django.http import HttpResponse
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from ..api import ApiError, Call, operation, page_params, problem
from ..control import BadRequest, control_action
from ..models import ApiKey, Customer, Document

DRAFT, QUEUED, ERROR, APPROVED, CANCELLED = 0, 20, 40, 60, 100
STATUS_NAMES = {DRAFT: "draft", 10: "deleted", QUEUED: "queued", ERROR: "error", APPROVED: "approved",
                CANCELLED: "cancelled"}
EXPORT_STATUSES = (DRAFT, QUEUED, ERROR, APPROVED, CANCELLED)
PAYMENT_TYPES = ("BANKAKARTI", "KREDIKARTI", "BEDELSIZ", "COKLU", "PUAN", "NAKIT", "PROMOSYON", "ULASIMKARTI",
                 "DIGER")
TICKET_NUMBER = re.compile(r"^[A-Z0-9]{3}20[0-9]{2}[0-9]{9}$")
EXPORT_LIFETIME = timedelta(hours=24)
OPERATOR_FIELDS = ("vehicleOperatingVknTckn", "vehicleOperatingTitle", "vehicleOperatingTaxCenter",
                   "commissionAmount", "commissionTaxAmount")
ERROR_MESSAGE = "Bilet vergi idaresine iletilemedi: doğrulama hatası (sandbox hata oranı)."

# kind -> (path segment, ticketType, report path)
KINDS = {
    "event_ticket": ("/v1/event-ticket", "ETKINLIK", "/v1/eventticketreport/partsbydate/{reportDate}"),
    "passenger_ticket": ("/v1/passenger-ticket", "YOLCU", "/v1/passengerticketreport/partsbydate/{reportDate}"),
}
REPORT_KINDS = ("event_ticket", "passenger_ticket", "passenger_list")

# Plate codes and Turkish names of the 81 provinces.
PROVINCES = (
    "Adana", "Adıyaman", "Afyonkarahisar", "Ağrı", "Amasya", "Ankara", "Antalya", "Artvin", "Aydın", "Balıkesir",
    "Bilecik", "Bingöl", "Bitlis", "Bolu", "Burdur", "Bursa", "Çanakkale", "Çankırı", "Çorum", "Denizli",
    "Diyarbakır", "Edirne", "Elazığ", "Erzincan", "Erzurum", "Eskişehir", "Gaziantep", "Giresun", "Gümüşhane",
    "Hakkâri", "Hatay", "Isparta", "Mersin", "İstanbul", "İzmir", "Kars", "Kastamonu", "Kayseri", "Kırklareli",
    "Kırşehir", "Kocaeli", "Konya", "Kütahya", "Malatya", "Manisa", "Kahramanmaraş", "Mardin", "Muğla", "Muş",
    "Nevşehir", "Niğde", "Ordu", "Rize", "Sakarya", "Samsun", "Siirt", "Sinop", "Sivas", "Tekirdağ", "Tokat",
    "Trabzon", "Tunceli", "Şanlıurfa", "Uşak", "Van", "Yozgat", "Zonguldak", "Aksaray", "Bayburt", "Karaman",
    "Kırıkkale", "Batman", "Şırnak", "Bartın", "Ardahan", "Iğdır", "Yalova", "Karabük", "Kilis", "Osmaniye",
    "Düzce",
)
assert len(PROVINCES) == 81


# --- clock and errors --------------------------------------------------------------------------------

def now(call: Call) -> datetime:
    return timezone.now() + timedelta(seconds=call.settings.clock_offset_seconds)


def refused(title: str, detail: str, status: int = 400) -> ApiError:
    return problem(status, title, detail)


class Problems:
    """Validation failures collected over the whole body, answered at once."""

    def __init__(self):
        self.items: list[tuple[str, str]] = []

    def add(self, field: str, message: str) -> None:
        self.items.append((field, message))

    def raise_any(self) -> None:
        if self.items:
            raise refused("Validation failed",
                          "; ".join(f"{field}: {message.rstrip('.')}" for field, message in self.items) + ".")


def _body(call: Call):
    try:
        return json.loads(call.request.body or b"null")
    except ValueError:
        raise refused("Validation failed", "body: The request body is not valid JSON.") from None


def _get(body: dict, name: str):
    """A body field whatever its capitalisation (the documents write Ids / Status as well as ids / status)."""
    if name in body:
        return body[name]
    lowered = name.lower()
    return next((value for key, value in body.items() if str(key).lower() == lowered), None)


def _blank(value) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _decimal(value):
    """Decimal of a JSON number or numeric string; None when it is neither."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return Decimal(str(value))
    if isinstance(value, str):
        try:
            number = Decimal(value.strip())
        except InvalidOperation:
            return None
        return number if number.is_finite() else None
    return None


def _moment(value):
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


def _is_guid(value) -> bool:
    try:
        uuid.UUID(str(value))
    except ValueError:
        return False
    return True


# --- validation: document 2, sections 2.1 to 2.4 and 3 ---------------------------------------------------

def validate(kind: str, body, *, creating: bool) -> None:
    if not isinstance(body, dict):
        raise refused("Validation failed", "body: The request body must be a JSON object.")
    problems = Problems()

    def required(name, label=None):
        if _blank(body.get(name)):
            problems.add(name, f"The {label or name} field is required.")
            return False
        return True

    def text(name):
        value = body.get(name)
        if value is not None and not isinstance(value, str):
            problems.add(name, f"{name} must be a string.")
            return False
        return True

    def numeric(name, value, where=None):
        if value is not None and _decimal(value) is None:
            problems.add(where or name, f"{where or name} must be a number.")

    def moment(name):
        value = body.get(name)
        if not _blank(value) and _moment(value) is None:
            problems.add(name, f"The value '{value}' of {name} is not a valid date and time.")

    # ettn: not at create (we take it when it is a valid GUID), required at update.
    ettn = body.get("ettn")
    if not creating and _blank(ettn):
        problems.add("ettn", "The ettn field is required to update a ticket.")
    elif not _blank(ettn) and not _is_guid(ettn):
        problems.add("ettn", f"The value '{ettn}' of ettn is not a valid GUID.")

    status = body.get("status")
    if status is not None and (isinstance(status, bool) or status not in (DRAFT, QUEUED)):
        problems.add("status", "status must be 0 (draft) or 20 (queued); no other value is accepted.")
    document_type = body.get("documentType")
    if document_type is not None and (isinstance(document_type, bool) or document_type not in (0, 1)):
        problems.add("documentType", "documentType must be 0 (SATIS) or 1 (IADE).")

    ticket_type = KINDS[kind][1]
    if required("ticketType") and body["ticketType"] != ticket_type:
        problems.add("ticketType", f"ticketType must be {ticket_type} for this service (got '{body['ticketType']}').")

    number = body.get("ticketNumber")
    if required("ticketNumber") and text("ticketNumber"):
        if len(number) != 16:
            problems.add("ticketNumber", f"The ticket number must be 16 characters (got {len(number)}): 3-character "
                                         "prefix, 4-digit year and 9-digit counter.")
        elif not TICKET_NUMBER.match(number):
            problems.add("ticketNumber", f"The ticket number '{number}' does not match ^[A-Z0-9]{{3}}20[0-9]{{2}}"
                                         "[0-9]{9}$ (prefix, year, counter).")
    if required("prefix") and text("prefix") and isinstance(number, str) and body["prefix"] != number[:3]:
        problems.add("prefix", f"The prefix '{body['prefix']}' must equal the first three characters of the "
                               f"ticket number ('{number[:3]}').")

    currency = body.get("currencyCode")
    if _blank(currency):
        problems.add("currencyCode", "currencyCode must never be empty or null; use TRY when no other currency "
                                     "applies.")
    elif not isinstance(currency, str) or not re.fullmatch(r"[A-Z]{3}", currency):
        problems.add("currencyCode", f"currencyCode must be a 3-letter currency code (got '{currency}').")
    numeric("exchangeRate", body.get("exchangeRate"))
    moment("ticketDate")

    for name in ("referenceNumber", "identifier", "customerFirstName", "customerLastName", "customerTelephone",
                 "customerTaxCenter", "xsltCode", "customerStreet", "customerCity", "customerTown"):
        text(name)
    if kind == "passenger_ticket":
        required("identifier", "identifier (national id or passport number)")
    country = body.get("customerCountry")
    if not _blank(country) and not (isinstance(country, str) and re.fullmatch(r"[A-Za-z]{2}", country)):
        problems.add("customerCountry", f"customerCountry must be a two-letter country code (got '{country}').")

    send_email = body.get("isEmailSend")
    if send_email is not None and not isinstance(send_email, bool):
        problems.add("isEmailSend", "isEmailSend must be true or false.")
    email = body.get("customerEmail")
    if send_email is True and _blank(email):
        problems.add("customerEmail", "customerEmail is required when isEmailSend is true.")
    elif not _blank(email) and not (isinstance(email, str) and re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", email)):
        problems.add("customerEmail", f"'{email}' is not a valid e-mail address.")

    payment = body.get("paymentType")
    if required("paymentType") and payment not in PAYMENT_TYPES:
        problems.add("paymentType", f"paymentType '{payment}' is not one of {', '.join(PAYMENT_TYPES)}.")
    if payment == "DIGER" and _blank(body.get("paymentDescription")):
        problems.add("paymentDescription", "paymentDescription is required when paymentType is DIGER.")

    expenses_id, expenses_title = body.get("recordExpensesVknTckn"), body.get("recordExpensesTitle")
    if not _blank(expenses_title) and _blank(expenses_id):
        problems.add("recordExpensesVknTckn", "recordExpensesVknTckn is required when recordExpensesTitle is given.")
    if not _blank(expenses_id) and _blank(expenses_title):
        problems.add("recordExpensesTitle", "recordExpensesTitle is required when recordExpensesVknTckn is given.")

    _validate_lines(body, problems, numeric)
    notes = body.get("notes")
    if notes is not None:
        if not isinstance(notes, list):
            problems.add("notes", "notes must be an array of objects with a note field.")
        else:
            for index, note in enumerate(notes):
                if not isinstance(note, dict) or not isinstance(note.get("note"), str):
                    problems.add(f"notes[{index}].note", "Each note must be an object with a string field note.")

    if kind == "event_ticket":
        if creating:
            required("seatNumber")
        for name in ("eventName", "eventLocation", "eventMunicipality"):
            required(name)
        moment("eventTime")
        if creating and required("eventCityId"):
            city = body["eventCityId"]
            if isinstance(city, bool) or not (isinstance(city, int) or (isinstance(city, str) and city.isdigit())):
                problems.add("eventCityId", f"eventCityId must be a province plate code, 1 to 81 (got '{city}').")
            elif not 1 <= int(city) <= 81:
                problems.add("eventCityId", f"eventCityId must be between 1 and 81 (got {city}).")
        organizer = body.get("eventOrganizerVknTckn")
        if required("eventOrganizerVknTckn", "organizer tax number or national id (eventOrganizerVknTckn)"):
            if not (isinstance(organizer, str) and re.fullmatch(r"[0-9]{10}|[0-9]{11}", organizer)):
                problems.add("eventOrganizerVknTckn",
                             f"eventOrganizerVknTckn must be 10 digits (VKN) or 11 digits (TCKN) (got '{organizer}').")
    else:
        for name in ("vehiclePlate", "expeditionTime", "expeditionNumber", "departureDate", "departureLocation",
                     "seatNumber"):
            required(name)
        moment("expeditionTime")
        moment("departureDate")
        filled = [name for name in OPERATOR_FIELDS if not _blank(body.get(name))]
        if filled:
            for name in OPERATOR_FIELDS:
                if name not in filled:
                    problems.add(name, f"{name} is required because {', '.join(filled)} is filled: the five "
                                       "vehicle-operator fields go together.")
        numeric("commissionAmount", body.get("commissionAmount"))
        numeric("commissionTaxAmount", body.get("commissionTaxAmount"))
    problems.raise_any()


def _validate_lines(body, problems, numeric):
    lines = body.get("ticketLines")
    if lines is None:
        return
    if not isinstance(lines, list):
        problems.add("ticketLines", "ticketLines must be an array.")
        return
    for index, line in enumerate(lines):
        where = f"ticketLines[{index}]"
        if not isinstance(line, dict):
            problems.add(where, "Each ticket line must be an object.")
            continue
        for name in ("amount", "discountRate", "discountAmount", "vatRate", "vatAmount"):
            numeric(name, line.get(name), f"{where}.{name}")
        taxes = line.get("taxes")
        if taxes is None:
            continue
        if not isinstance(taxes, list):
            problems.add(f"{where}.taxes", "taxes must be an array.")
            continue
        for tax_index, tax in enumerate(taxes):
            tax_where = f"{where}.taxes[{tax_index}]"
            if not isinstance(tax, dict):
                problems.add(tax_where, "Each tax must be an object.")
                continue
            for name in ("taxtRate", "taxtAmount"):  # sic: the platform spells them with the extra t
                numeric(name, tax.get(name), f"{tax_where}.{name}")


# --- amounts and views -----------------------------------------------------------------------------------

def totals(data: dict) -> dict:
    """totalAmount (net of discounts), totalVat and payableAmount (with the other taxes) of a ticket."""
    total = vat = other = Decimal(0)
    for line in data.get("ticketLines") or []:
        amount = _decimal(line.get("amount")) or Decimal(0)
        discount = _decimal(line.get("discountAmount"))
        if discount is None:
            discount = amount * (_decimal(line.get("discountRate")) or Decimal(0)) / 100
        total += amount - discount
        vat += _decimal(line.get("vatAmount")) or Decimal(0)
        other += sum((_decimal(tax.get("taxtAmount")) or Decimal(0) for tax in line.get("taxes") or []), Decimal(0))
    money = Decimal("0.01")
    return {"totalAmount": float(total.quantize(money)), "totalVat": float(vat.quantize(money)),
            "payableAmount": float((total + vat + other).quantize(money))}


def _iso(moment) -> str | None:
    return timezone.localtime(moment).isoformat() if moment else None


def view(doc: Document) -> dict:
    """A ticket as the get, list and status operations show it."""
    data = dict(doc.data)
    message = data.pop("message", "")
    return {"ettn": doc.key, **data, "status": doc.status, "message": message or "",
            "createdDate": _iso(doc.created), **totals(doc.data)}


def report_item(kind: str, doc: Document, reported: datetime) -> dict:
    """The by-date report item (document 2, 2.5) of an approved ticket."""
    data = doc.data
    common = {"ticketNumber": doc.number, "executionDate": data.get("ticketDate") or _iso(doc.created)}
    amounts = totals(data)
    if kind == "event_ticket":
        item = {**common, "eventDate": data.get("eventTime"), "locationCityCode": data.get("eventCityId"),
                "locationMunicipality": data.get("eventMunicipality"), "locationDescription": data.get("eventLocation"),
                "paymentType": data.get("paymentType"), "totalAmount": amounts["totalAmount"],
                "totalVat": amounts["totalVat"]}
    else:
        names = ("departureDate", "departureLocation", "destination", "expeditionTime", "expeditionNumber",
                 "vehiclePlate", "paymentType")
        item = {**common, **{name: data.get(name) for name in names}, **amounts}
    return {**item, "canceledDate": None, "canceled": False, "partIndex": 1, "createDate": _iso(reported)}


# --- the state machine ---------------------------------------------------------------------------------

def _goes_wrong(ettn: str, rate: float) -> bool:
    if rate <= 0:
        return False
    if rate >= 1:
        return True
    return uuid.UUID(ettn).int % 10_000 < rate * 10_000


def settle(call: Call) -> None:
    """Process the customer's queued tickets whose time has come (lazily, on every read)."""
    at = now(call)
    due = Document.objects.filter(customer=call.customer, kind__in=KINDS, status=QUEUED, due_at__lte=at)
    if not due.exists():
        return
    rate = call.settings.ticket_error_rate
    with transaction.atomic():
        _lock(call.customer)
        docs = list(due)  # again under the lock: a concurrent request may have settled them
        reports = []
        for doc in docs:
            reported = doc.due_at
            if _goes_wrong(doc.key, rate):
                doc.status, doc.data = ERROR, {**doc.data, "message": ERROR_MESSAGE}
            else:
                doc.status, doc.data = APPROVED, {**doc.data, "message": ""}
                reports.append(Document(customer=call.customer, kind=f"{doc.kind}_report", key=doc.key,
                                        number=doc.number, created=reported,
                                        data=report_item(doc.kind, doc, reported)))
            doc.due_at = None
        Document.objects.bulk_update(docs, ["status", "data", "due_at"], batch_size=500)
        Document.objects.bulk_create(reports, batch_size=500, ignore_conflicts=True)


def _lock(customer) -> None:
    """Serialise a customer's writes that read first (SQLite's IMMEDIATE transactions already do)."""
    Customer.objects.select_for_update().filter(pk=customer.pk).first()


def _ticket(call: Call, kind: str, ettn: str) -> Document:
    doc = Document.objects.filter(customer=call.customer, kind=kind, key=ettn).first()
    if doc is None:
        raise refused("Not Found", f"No {kind.replace('_', ' ')} with ettn {ettn}.", 404)
    return doc


def _duplicate(call: Call, kind: str, number: str, ettn: str | None = None) -> None:
    others = Document.objects.filter(customer=call.customer, kind=kind, number=number)
    if ettn:
        others = others.exclude(key=ettn)
    other = others.values_list("key", flat=True).first()
    if other:
        raise refused("Duplicate ticket number",
                      f"ticketNumber: {number} is already used by ticket {other}; a ticket number is used once.")


def _stored(body: dict) -> dict:
    return {name: value for name, value in body.items() if name not in ("ettn", "status")}


def create(call: Call, kind: str):
    body = _body(call)
    validate(kind, body, creating=True)
    ettn = str(uuid.UUID(str(body["ettn"]))) if not _blank(body.get("ettn")) else str(uuid.uuid4())
    status = body.get("status") or DRAFT
    at = now(call)
    with transaction.atomic():
        _lock(call.customer)
        _duplicate(call, kind, body["ticketNumber"])
        if Document.objects.filter(customer=call.customer, kind=kind, key=ettn).exists():
            raise refused("Duplicate ettn", f"ettn: a ticket with ettn {ettn} already exists.")
        Document.objects.create(
            customer=call.customer, kind=kind, key=ettn, number=body["ticketNumber"], status=status,
            data={**_stored(body), "message": ""}, created=at,
            due_at=at + timedelta(seconds=call.settings.ticket_processing_seconds) if status == QUEUED else None,
        )
    return {"ettn": ettn, "ticketNumber": body["ticketNumber"]}


def update(call: Call, kind: str, id):
    body = _body(call)
    validate(kind, body, creating=False)
    if str(body["ettn"]).lower() != id.lower():
        raise refused("Validation failed", f"ettn: The ettn of the body ({body['ettn']}) differs from the id in "
                                           f"the path ({id}).")
    settle(call)
    status = body.get("status") or DRAFT
    at = now(call)
    with transaction.atomic():
        _lock(call.customer)
        doc = _ticket(call, kind, id)
        if doc.status not in (DRAFT, ERROR):
            raise refused("Update refused",
                          f"Ticket {doc.number} is {STATUS_NAMES.get(doc.status, doc.status)} ({doc.status}); only "
                          "tickets in draft (0) or error (40) can be updated.")
        _duplicate(call, kind, body["ticketNumber"], doc.key)
        data = _stored(body)
        # eventCityId is not in the update model, and seatNumber is optional there: keep what was sent at create.
        for name in ("eventCityId", "seatNumber"):
            if name in doc.data and (name == "eventCityId" or _blank(data.get(name))):
                data[name] = doc.data[name]
        doc.number, doc.status, doc.data = body["ticketNumber"], status, {**data, "message": ""}
        doc.due_at = at + timedelta(seconds=call.settings.ticket_processing_seconds) if status == QUEUED else None
        doc.save()
    return {"ettn": doc.key, "ticketNumber": doc.number}


def get(call: Call, kind: str, id):
    settle(call)
    return view(_ticket(call, kind, id))


# queryFilter operators (Turkish, as public clients send them) -> (lookup, negated)
OPERATORS = {
    "eşittir": ("exact", False), "eşit değildir": ("exact", True), "eşittir değildir": ("exact", True),
    "küçüktür": ("lt", False), "küçük ve eşittir": ("lte", False), "büyüktür": ("gt", False),
    "büyük ve eşittir": ("gte", False), "içeren": ("icontains", False), "içermeyen": ("icontains", True),
    "ile başlayan": ("istartswith", False), "ile başlamayan": ("istartswith", True),
}
COLUMNS = {"ettn": "key", "id": "key", "ticketnumber": "number", "status": "status", "createddate": "created"}


def _page(call: Call):
    try:
        return page_params(call)
    except ApiError as error:  # the shared helper answers 422 {field: [message]}; this service uses Error
        field, messages = next(iter(error.body.items()))
        raise refused("Bad Request", f"{field}: {messages[0]}") from None


def _filtered(tickets, raw: str):
    try:
        conditions = json.loads(raw)
    except ValueError:
        raise refused("Bad Request", "queryFilter: must be a JSON array of {category, operator, value}.") from None
    if isinstance(conditions, dict):
        conditions = [conditions]
    if not isinstance(conditions, list):
        raise refused("Bad Request", "queryFilter: must be a JSON array of {category, operator, value}.")
    for condition in conditions:
        if not isinstance(condition, dict):
            raise refused("Bad Request", "queryFilter: each condition must be an object.")
        category = str(_get(condition, "category") or "")
        operator = str(_get(condition, "operator") or "").strip().lower()
        value = _get(condition, "value")
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
            value = _moment(value)
            if value is None:
                raise refused("Bad Request", "queryFilter: createdDate must be a date.")
        condition_filter = {f"{column or 'data__' + category}__{lookup}": value}
        tickets = tickets.exclude(**condition_filter) if negated else tickets.filter(**condition_filter)
    return tickets


def ticket_list(call: Call, kind: str):
    settle(call)
    page_index, page_size = _page(call)
    tickets = Document.objects.filter(customer=call.customer, kind=kind)
    if call.query.get("queryFilter"):
        tickets = _filtered(tickets, call.query["queryFilter"])
    column = COLUMNS.get(call.query.get("sortedColumn", "").lower(), "created")
    descending = call.query.get("isDesc", "").lower() == "true"
    tickets = tickets.order_by(*(f"-{c}" if descending else c for c in (column, "pk")))
    total = tickets.count()
    start = (page_index - 1) * page_size
    return envelope([view(doc) for doc in tickets[start:start + page_size]], total, page_index, page_size)


def envelope(items: list, total: int, page_index: int, page_size: int) -> dict:
    """The paged envelope of document 2, 2.5, over one page already cut by the database."""
    pages = -(-total // page_size) if total else 0
    return {"pageIndex": page_index, "pageSize": page_size, "totalCount": total, "totalPages": pages,
            "hasNextPage": page_index < pages, "hasPreviousPage": page_index > 1, "items": items}


def _ids(call: Call, body, name="ids") -> list[str]:
    ids = _get(body, name) if isinstance(body, dict) else None
    if not isinstance(ids, list) or not ids or not all(isinstance(item, str) and item for item in ids):
        raise refused("Bad Request", f"{name}: must be a non-empty array of ticket ids (ettn).")
    return list(dict.fromkeys(ids))


def _tickets(call: Call, kind: str, ids: list[str]) -> list[Document]:
    """The tickets of these ids, in the given order; 404 naming the first unknown one."""
    found = {doc.key: doc for doc in Document.objects.filter(customer=call.customer, kind=kind, key__in=ids)}
    missing = [ettn for ettn in ids if ettn not in found]
    if missing:
        raise refused("Not Found", f"No {kind.replace('_', ' ')} with ettn {', '.join(missing)}.", 404)
    return [found[ettn] for ettn in ids]


def statuses(call: Call, kind: str):
    body = _body(call)
    if isinstance(body, dict):  # tolerate {"ids": [...]} as well as the bare array
        body = _get(body, "ids")
    if not isinstance(body, list) or not all(isinstance(item, str) for item in body):
        raise refused("Bad Request", "body: must be an array of ticket ids (ettn).")
    settle(call)
    found = {doc.key: doc for doc in Document.objects.filter(customer=call.customer, kind=kind, key__in=body)}
    return [{"id": ettn, "status": found[ettn].status, "message": found[ettn].data.get("message", "")}
            for ettn in dict.fromkeys(body) if ettn in found]


def cancel(call: Call, kind: str):
    ids = _ids(call, _body(call))
    settle(call)
    at = now(call)
    with transaction.atomic():
        _lock(call.customer)
        docs = _tickets(call, kind, ids)
        for doc in docs:
            if doc.status == CANCELLED:
                raise refused("Cancel refused", f"Ticket {doc.number} ({doc.key}) is already cancelled.")
            if doc.status == QUEUED:
                raise refused("Cancel refused", f"Ticket {doc.number} ({doc.key}) is queued and being processed; "
                                                "cancel it once it is approved or in error.")
            if doc.status not in (DRAFT, ERROR, APPROVED):
                raise refused("Cancel refused", f"Ticket {doc.number} ({doc.key}) cannot be cancelled in status "
                                                f"{doc.status}.")
        reported = list(Document.objects.filter(customer=call.customer, kind=f"{kind}_report",
                                                key__in=[doc.key for doc in docs if doc.status == APPROVED]))
        for doc in docs:
            doc.status, doc.due_at = CANCELLED, None
        for item in reported:
            item.data = {**item.data, "canceled": True, "canceledDate": _iso(at)}
        Document.objects.bulk_update(docs, ["status", "due_at"], batch_size=500)
        Document.objects.bulk_update(reported, ["data"], batch_size=500)
    return None


def update_status(call: Call, kind: str):
    body = _body(call)
    ids = _ids(call, body)
    target = _get(body, "status")
    if isinstance(target, bool) or target not in (DRAFT, QUEUED):
        raise refused("Bad Request", "status: must be 0 (draft) or 20 (queue and send).")
    settle(call)
    allowed_from = ERROR if target == DRAFT else DRAFT
    at = now(call)
    with transaction.atomic():
        _lock(call.customer)
        docs = _tickets(call, kind, ids)
        for doc in docs:
            if doc.status != allowed_from:
                raise refused(
                    "Status change refused",
                    f"Ticket {doc.number} ({doc.key}) is {STATUS_NAMES.get(doc.status, doc.status)} ({doc.status}): "
                    f"only {STATUS_NAMES[allowed_from]} ({allowed_from}) tickets can be set to "
                    f"{STATUS_NAMES[target]} ({target}).")
        for doc in docs:
            doc.status = target
            doc.due_at = at + timedelta(seconds=call.settings.ticket_processing_seconds) if target == QUEUED else None
            if target == DRAFT:
                doc.data = {**doc.data, "message": ""}
        Document.objects.bulk_update(docs, ["status", "due_at", "data"], batch_size=500)
    return None


def html(call: Call, kind: str, id, isStandartXslt):
    flag = isStandartXslt.lower()
    if flag not in ("true", "false"):
        raise refused("Bad Request", f"isStandartXslt: must be true or false (got '{isStandartXslt}').")
    settle(call)
    doc = _ticket(call, kind, id)
    data = doc.data
    city = data.get("eventCityId")
    context = {
        "kind": kind, "ticket": data, "ettn": doc.key, "status": doc.status,
        "status_name": STATUS_NAMES.get(doc.status, doc.status), "totals": totals(data),
        "city_name": PROVINCES[int(city) - 1] if str(city).isdigit() and 1 <= int(city) <= 81 else "",
        "lines": [{**line, "net": totals({"ticketLines": [line]})["totalAmount"]}
                  for line in data.get("ticketLines") or []],
        "customer_name": customer_name(data), "company": call.customer.name,
    }
    template = "standard" if flag == "true" else "company"
    page = render_to_string(f"sandbox/tickets/{template}.html", context)
    return {"Response": base64.b64encode(page.encode("utf-8")).decode("ascii")}


def customer_name(data: dict) -> str:
    return " ".join(part for part in (data.get("customerFirstName"), data.get("customerLastName")) if part)


# --- Excel exports ---------------------------------------------------------------------------------------

EXPORT_DATES = {
    # filter pair -> what it ranges over (created is the document's own column)
    "event_ticket": {"start": "created", "execution": "ticketDate", "event": "eventTime"},
    "passenger_ticket": {"start": "created", "execution": "ticketDate", "departure": "departureDate"},
}


def _export_filters(kind: str, body) -> dict:
    if body is None:
        body = {}
    if not isinstance(body, dict):
        raise refused("Validation failed", "body: The export filters must be a JSON object.")
    problems = Problems()
    filters = {}
    ids = _get(body, "ids")
    if ids is not None and (not isinstance(ids, list) or not all(isinstance(i, str) for i in ids)):
        problems.add("ids", "ids must be an array of ticket ids (ettn).")
    elif ids:
        filters["ids"] = ids
    status = _get(body, "status")
    if status is not None:
        if isinstance(status, bool) or status not in EXPORT_STATUSES:
            problems.add("status", f"status must be one of {', '.join(map(str, EXPORT_STATUSES))}.")
        else:
            filters["status"] = status
    for flag in ("generateSummaryReport", "isArchived"):
        value = _get(body, flag)
        if value is not None and not isinstance(value, bool):
            problems.add(flag, f"{flag} must be true or false.")
        filters[flag] = value is True
    for prefix in EXPORT_DATES[kind]:
        for end in ("Start", "End"):
            name = f"{prefix}{end}Date" if prefix != "start" else f"{end.lower()}Date"
            value = _get(body, name)
            if _blank(value):
                continue
            moment = _moment(value)
            if moment is None:
                problems.add(name, f"The value '{value}' of {name} is not a valid date and time.")
                continue
            if end == "End" and isinstance(value, str) and "T" not in value and " " not in value.strip():
                moment += timedelta(days=1) - timedelta(microseconds=1)  # a bare end date covers the whole day
            filters[name] = moment
    problems.raise_any()
    return filters


def _matches(kind: str, doc: Document, filters: dict) -> bool:
    for prefix, field in EXPORT_DATES[kind].items():
        start = filters.get("startDate" if prefix == "start" else f"{prefix}StartDate")
        end = filters.get("endDate" if prefix == "start" else f"{prefix}EndDate")
        if start is None and end is None:
            continue
        moment = doc.created if field == "created" else _moment(doc.data.get(field))
        if moment is None or (start and moment < start) or (end and moment > end):
            return False
    return True


def export_tickets(call: Call, kind: str, filters: dict) -> list[Document]:
    if filters.get("isArchived"):
        return []  # the sandbox archives nothing
    tickets = Document.objects.filter(customer=call.customer, kind=kind).order_by("created", "pk")
    if filters.get("ids"):
        tickets = tickets.filter(key__in=filters["ids"])
    if "status" in filters:
        tickets = tickets.filter(status=filters["status"])
    return [doc for doc in tickets.iterator(chunk_size=1000) if _matches(kind, doc, filters)]


EXPORT_COLUMNS = {
    "common": [("ETTN", lambda d, v: d.key), ("Bilet No", lambda d, v: d.number),
               ("Durum", lambda d, v: d.status), ("Bilet Tarihi", lambda d, v: v.get("ticketDate")),
               ("Oluşturma Tarihi", lambda d, v: _iso(d.created)), ("Müşteri", lambda d, v: customer_name(v)),
               ("Kimlik", lambda d, v: v.get("identifier")), ("Ödeme Tipi", lambda d, v: v.get("paymentType")),
               ("Para Birimi", lambda d, v: v.get("currencyCode"))],
    "event_ticket": [("Etkinlik", "eventName"), ("Etkinlik Zamanı", "eventTime"), ("Yer", "eventLocation"),
                     ("İl Kodu", "eventCityId"), ("Belediye", "eventMunicipality"), ("Koltuk", "seatNumber"),
                     ("Organizatör VKN/TCKN", "eventOrganizerVknTckn")],
    "passenger_ticket": [("Plaka", "vehiclePlate"), ("Sefer No", "expeditionNumber"),
                         ("Sefer Zamanı", "expeditionTime"), ("Kalkış", "departureDate"),
                         ("Kalkış Yeri", "departureLocation"), ("Varış", "destination"), ("Koltuk", "seatNumber")],
}
AMOUNT_COLUMNS = (("Tutar", "totalAmount"), ("KDV", "totalVat"), ("Ödenecek", "payableAmount"))
FILE_NAMES = {"event_ticket": "etkinlik-biletleri", "passenger_ticket": "yolcu-biletleri"}


def _xlsx(rows_by_sheet: dict) -> bytes:
    from openpyxl import Workbook  # only exports need it

    book = Workbook(write_only=True)
    for title, rows in rows_by_sheet.items():
        sheet = book.create_sheet(title)
        for row in rows:
            sheet.append(row)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def export_zip(kind: str, docs: list[Document], summary: bool) -> bytes:
    kind_columns = EXPORT_COLUMNS[kind]
    header = [name for name, _ in EXPORT_COLUMNS["common"]] + [name for name, _ in kind_columns] + \
             [name for name, _ in AMOUNT_COLUMNS]
    rows = [header]
    by_status: dict[int, list] = {}
    for doc in docs:
        data, amounts = doc.data, totals(doc.data)
        rows.append([column(doc, data) for _, column in EXPORT_COLUMNS["common"]] +
                    [data.get(field) for _, field in kind_columns] + [amounts[field] for _, field in AMOUNT_COLUMNS])
        tally = by_status.setdefault(doc.status, [0, 0.0, 0.0, 0.0])
        tally[0] += 1
        for index, (_, field) in enumerate(AMOUNT_COLUMNS, start=1):
            tally[index] += amounts[field]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(f"{FILE_NAMES[kind]}.xlsx", _xlsx({"Biletler": rows}))
        if summary:
            summary_rows = [["Durum", "Kod", "Adet", *[name for name, _ in AMOUNT_COLUMNS]]]
            for status in sorted(by_status):
                count, *amounts = by_status[status]
                summary_rows.append([STATUS_NAMES.get(status, str(status)), status, count,
                                     *[round(amount, 2) for amount in amounts]])
            summary_rows.append(["Toplam", None, len(docs),
                                 *[round(sum(t[i] for t in by_status.values()), 2) for i in (1, 2, 3)]])
            archive.writestr("ozet-rapor.xlsx", _xlsx({"Özet": summary_rows}))
    return out.getvalue()


def export_start(call: Call, kind: str):
    filters = _export_filters(kind, _body(call))
    settle(call)
    at = now(call)
    docs = export_tickets(call, kind, filters)
    export_id = str(uuid.uuid4())
    file_name = f"{FILE_NAMES[kind]}-{timezone.localtime(at):%Y%m%d-%H%M%S}.zip"
    Document.objects.create(
        customer=call.customer, kind=f"{kind}_export", key=export_id, created=at,
        due_at=at + timedelta(seconds=call.settings.export_ready_seconds),
        blob=export_zip(kind, docs, filters["generateSummaryReport"]),
        data={"fileName": file_name, "count": len(docs),
              "filters": {k: _iso(v) if isinstance(v, datetime) else v for k, v in filters.items()}},
    )
    return {"exportId": export_id}


def export_history(call: Call, kind: str):
    exports = Document.objects.filter(customer=call.customer, kind=f"{kind}_export", due_at__lte=now(call))
    return [{"exportId": doc.key, "createdDate": _iso(doc.created), "fileName": doc.data.get("fileName", "")}
            for doc in exports.order_by("-created", "-pk").defer("blob")]


def export_download(call: Call, kind: str, exportId):
    doc = Document.objects.filter(customer=call.customer, kind=f"{kind}_export", key=exportId).first()
    at = now(call)
    if doc is None:
        raise refused("Not Found", f"No export with id {exportId}.", 404)
    if doc.due_at and doc.due_at > at:
        raise refused("Not Found", f"Export {exportId} is still being prepared; it shows in the export history "
                                   "once it is ready.", 404)
    if at >= doc.created + EXPORT_LIFETIME:
        raise refused("Gone", f"Export {exportId} expired: exported files can be downloaded for 24 hours after "
                              f"they were created ({_iso(doc.created)}).", 410)
    response = HttpResponse(bytes(doc.blob), content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{doc.data.get("fileName", "export.zip")}"'
    return response


# --- by-date reports -------------------------------------------------------------------------------------

def report(call: Call, kind: str, reportDate):
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", reportDate or ""):
        raise refused("Bad Request", f"reportDate: '{reportDate}' is not a date in the format yyyy-MM-dd.")
    try:
        day = date.fromisoformat(reportDate)
    except ValueError:
        raise refused("Bad Request", f"reportDate: '{reportDate}' is not a valid date (yyyy-MM-dd).") from None
    page_index, page_size = _page(call)
    if kind in KINDS:
        settle(call)
    start = timezone.make_aware(datetime.combine(day, time.min))
    items = Document.objects.filter(customer=call.customer, kind=f"{kind}_report", created__gte=start,
                                    created__lt=start + timedelta(days=1))
    total = items.count()
    offset = (page_index - 1) * page_size
    page = list(items.order_by("created", "pk").values_list("data", flat=True)[offset:offset + page_size])
    return envelope(page, total, page_index, page_size)


# --- registration: more specific paths first (PUT /updatestatuslist before PUT /{id}) ----------------------

def _bind(handler, kind):
    def bound(call, **kwargs):
        return handler(call, kind, **kwargs)

    bound.__name__ = f"{kind}_{handler.__name__}"
    return bound


for _kind, (_base, _, _report_path) in KINDS.items():
    for _method, _suffix, _handler in (
        ("PUT", "/updatestatuslist", update_status),
        ("POST", "/cancel", cancel),
        ("POST", "/status", statuses),
        ("POST", "/export", export_start),
        ("GET", "/export/history", export_history),
        ("GET", "/export/{exportId}/download", export_download),
        ("GET", "/{id}/html/{isStandartXslt}", html),
        ("POST", "", create),
        ("GET", "", ticket_list),
        ("PUT", "/{id}", update),
        ("GET", "/{id}", get),
    ):
        operation("ticket", _method, _base + _suffix)(_bind(_handler, _kind))
    operation("ticket", "GET", _report_path)(_bind(report, _kind))
# The passenger-list report is registered by ops/passenger_lists.py (it reports due lists first).


@operation("ticket", "GET", "/v1/city/list")
def city_list(call: Call):
    return [{"id": code, "name": name} for code, name in enumerate(PROVINCES, start=1)]


# --- control: report items in bulk for tests and benchmarks ----------------------------------------------

def _report_filler(kind: str, day: date, index: int) -> dict:
    moment = f"{day.isoformat()}T10:00:00+03:00"
    number = f"BNC{day.year}{index + 1:09d}"
    amount = round(100 + index % 900 + (index % 100) / 100, 2)
    vat = round(amount * 0.2, 2)
    if kind == "passenger_list":
        return {"passengerListNumber": number, "expeditionNumber": f"S{index % 1000:04d}",
                "vehiclePlate": f"34 ABC {index % 1000:03d}", "expeditionTime": moment,
                "totalPayableAmount": amount, "totalCommissionAmount": round(amount * 0.1, 2),
                "totalCommissionTaxAmount": round(amount * 0.02, 2), "partIndex": index // 1000 + 1,
                "createdDate": moment}
    common = {"ticketNumber": number, "executionDate": moment, "paymentType": PAYMENT_TYPES[index % 8],
              "totalAmount": amount, "totalVat": vat}
    if kind == "event_ticket":
        item = {**common, "eventDate": moment, "locationCityCode": index % 81 + 1,
                "locationMunicipality": "Kadıköy", "locationDescription": f"Salon {index % 10}"}
    else:
        item = {**common, "departureDate": moment, "departureLocation": "İstanbul", "destination": "Ankara",
                "expeditionTime": moment, "expeditionNumber": f"S{index % 1000:04d}",
                "vehiclePlate": f"34 ABC {index % 1000:03d}", "payableAmount": round(amount + vat, 2)}
    return {**item, "canceledDate": None, "canceled": False, "partIndex": index // 1000 + 1, "createDate": moment}


@control_action("POST", "tickets/report-items")
def control_report_items(body):
    """{customer_unique_id or api_key, kind: event_ticket | passenger_ticket | passenger_list,
    date: yyyy-mm-dd, count} -> that many report items on that day (spread over it, in order)."""
    kind = body.get("kind")
    if kind not in REPORT_KINDS:
        raise BadRequest(f"kind must be one of {', '.join(REPORT_KINDS)}")
    if body.get("customer_unique_id"):
        customer = Customer.objects.filter(customer_unique_id=body["customer_unique_id"]).first()
    else:
        key = ApiKey.objects.select_related("customer").filter(key=body.get("api_key") or "").first()
        customer = key.customer if key else None
    if customer is None:
        raise BadRequest("no customer with that customer_unique_id or api_key")
    day = date.fromisoformat(str(body.get("date")))
    count = int(body.get("count", 0))
    if not 0 <= count <= 1_000_000:
        raise BadRequest("count must be between 0 and 1,000,000")
    start = timezone.make_aware(datetime.combine(day, time.min))
    step = 86_400_000_000 // max(count, 1)  # microseconds: every item inside the day, in order
    batch = []
    for index in range(count):
        batch.append(Document(customer=customer, kind=f"{kind}_report", key=uuid.uuid4().hex,
                              number=f"BNC{day.year}{index + 1:09d}",
                              created=start + timedelta(microseconds=step * index),
                              data=_report_filler(kind, day, index)))
        if len(batch) == 2000:
            Document.objects.bulk_create(batch)
            batch = []
    Document.objects.bulk_create(batch)
    return {"created": count, "kind": kind, "date": day.isoformat()}
