"""What a ticket of document 2 is: the rules its body must follow (sections 2.1 to 2.4 and 3), its amounts,
its by-date report item and its Lifecycle in the shared status machine (statuses.py). tickets.py holds the
operations and routes, ticket_exports.py the Excel exports; passenger lists reuse the amounts and the
vehicle-operator rule.
"""

import re
from datetime import date, datetime
from decimal import Decimal

from ..api import Call
from ..models import Document
from . import reports, statuses
from .common import (BOOLEAN, INTEGER, NUMBER, STRING, Checks, Problems, array, blank, check_model, decimal, is_guid,
                     iso, refused, vkn_tckn_problem)
from .statuses import DRAFT, QUEUED

PAYMENT_TYPES = ("BANKAKARTI", "KREDIKARTI", "BEDELSIZ", "COKLU", "PUAN", "NAKIT", "PROMOSYON", "ULASIMKARTI",
                 "DIGER")
TICKET_NUMBER = re.compile(r"^[A-Z0-9]{3}20[0-9]{2}[0-9]{9}$")
OPERATOR_FIELDS = ("vehicleOperatingVknTckn", "vehicleOperatingTitle", "vehicleOperatingTaxCenter",
                   "commissionAmount", "commissionTaxAmount")
ERROR_MESSAGE = "Bilet vergi idaresine iletilemedi: doğrulama hatası (sandbox hata oranı)."
TICKET_TYPES = {"event_ticket": "ETKINLIK", "passenger_ticket": "YOLCU"}  # kind -> ticketType
# The vehicle operator's text fields of 2.3 (the amounts are commissionAmount and commissionTaxAmount).
VEHICLE_OPERATOR_TEXT = (
    "vehicleOperatingVknTckn", "vehicleOperatingTitle", "vehicleOperatingTaxCenter", "vehicleOperatingCountry",
    "vehicleOperatingCity", "vehicleOperatingDistrict", "vehicleOperatingTown", "vehicleOperatingStreet",
    "vehicleOperatingBuildingName", "vehicleOperatingBuildingNo", "vehicleOperatingDoorNo",
    "vehicleOperatingPostCode", "vehicleOperatingMersisNo", "vehicleOperatingRegisterNo",
    "vehicleOperatingTelephone", "vehicleOperatingEmail")

# --- the body models of document 2, sections 2.1 to 2.4 (JSON types and member names) ---------------------

LINE_MODEL = {
    "serviceType": STRING, "serviceDescription": STRING, "amount": NUMBER, "discountRate": NUMBER,
    "discountAmount": NUMBER, "vatRate": NUMBER, "vatAmount": NUMBER,
    # sic: taxtRate and taxtAmount, spelled with the extra t
    "taxes": array({"taxCode": STRING, "taxName": STRING, "taxtRate": NUMBER, "taxtAmount": NUMBER}),
}
COMMON_MODEL = {
    "ettn": STRING, "status": INTEGER, "documentType": INTEGER, "ticketType": STRING, "ticketDate": STRING,
    "ticketNumber": STRING, "prefix": STRING, "currencyCode": STRING, "exchangeRate": NUMBER,
    **dict.fromkeys((
        "referenceNumber", "identifier", "customerFirstName", "customerLastName", "customerStreet",
        "customerBuildingName", "customerBuildingNo", "customerDoorNo", "customerTown", "customerDistrict",
        "customerCity", "customerPostCode", "customerCountry", "customerTelephone", "customerEmail",
        "customerTaxCenter", "paymentType", "paymentDescription", "recordExpensesVknTckn", "recordExpensesTitle",
        "xsltCode"), STRING),
    "isEmailSend": BOOLEAN, "ticketLines": array(LINE_MODEL), "notes": array({"note": STRING}),
}
EVENT_MODEL = {
    **COMMON_MODEL, "seatNumber": STRING, "eventTime": STRING, "eventName": STRING, "eventLocation": STRING,
    "eventCity": STRING, "eventCityId": INTEGER, "eventMunicipality": STRING, "eventDescription": STRING,
    "eventOrganizerVknTckn": STRING,
}
PASSENGER_MODEL = {
    **COMMON_MODEL, "vehiclePlate": STRING, **dict.fromkeys(VEHICLE_OPERATOR_TEXT, STRING),
    "commissionAmount": NUMBER, "commissionTaxAmount": NUMBER, "expeditionTime": STRING, "expeditionNumber": STRING,
    "departureDate": STRING, "departureLocation": STRING, "destination": STRING, "seatNumber": STRING,
}
MODELS = {"event_ticket": EVENT_MODEL, "passenger_ticket": PASSENGER_MODEL}
# Document 2, 2.2: eventCityId is "not in the update model".
NOT_IN_UPDATE = {"eventCityId": "eventCityId is not part of the update model (document 2, 2.2): the province "
                                "of an event ticket is fixed at create."}


# --- validation: document 2, sections 2.1 to 2.4 and 3 ---------------------------------------------------

def validate(kind: str, body, *, creating: bool) -> None:
    """The body's model first (422: JSON types, unknown or misspelt members, eventCityId at update), then the
    rules of the document (400, every failing rule named at once)."""
    if not isinstance(body, dict):
        raise refused("Validation failed", "body: The request body must be a JSON object.")
    model = MODELS[kind]
    if not creating:
        model = {name: kind_ for name, kind_ in model.items() if name not in NOT_IN_UPDATE}
    check_model(body, model, not_here=None if creating else NOT_IN_UPDATE)
    checks = Checks(body)
    _check_identity(checks, kind, creating)
    _check_customer(checks, kind)
    _check_payment(checks)
    _check_lines(checks)
    _check_notes(checks)
    if kind == "event_ticket":
        _check_event(checks, creating)
    else:
        _check_passenger(checks)
    checks.raise_any()


def _check_identity(checks: Checks, kind: str, creating: bool) -> None:
    """ettn, status, documentType, ticketType, ticketNumber and prefix."""
    body = checks.body
    # ettn: not at create (we take it when it is a valid GUID), required at update.
    ettn = body.get("ettn")
    if not creating and blank(ettn):
        checks.add("ettn", "The ettn field is required to update a ticket.")
    elif not blank(ettn) and not is_guid(ettn):
        checks.add("ettn", f"The value '{ettn}' of ettn is not a valid GUID.")
    status = body.get("status")
    if status is not None and status not in (DRAFT, QUEUED):
        checks.add("status", "status must be 0 (draft) or 20 (queued); no other value is accepted.")
    document_type = body.get("documentType")
    if document_type is not None and document_type not in (0, 1):
        checks.add("documentType", "documentType must be 0 (SATIS) or 1 (IADE).")
    ticket_type = TICKET_TYPES[kind]
    if checks.required("ticketType") and body["ticketType"] != ticket_type:
        checks.add("ticketType", f"ticketType must be {ticket_type} for this service (got '{body['ticketType']}').")
    number = body.get("ticketNumber")
    if checks.required("ticketNumber"):
        if len(number) != 16:
            checks.add("ticketNumber", f"The ticket number must be 16 characters (got {len(number)}): 3-character "
                                       "prefix, 4-digit year and 9-digit counter.")
        elif not TICKET_NUMBER.match(number):
            checks.add("ticketNumber", f"The ticket number '{number}' does not match ^[A-Z0-9]{{3}}20[0-9]{{2}}"
                                       "[0-9]{9}$ (prefix, year, counter).")
    if checks.required("prefix") and isinstance(number, str) and body["prefix"] != number[:3]:
        checks.add("prefix", f"The prefix '{body['prefix']}' must equal the first three characters of the "
                             f"ticket number ('{number[:3]}').")


def _check_customer(checks: Checks, kind: str) -> None:
    """Currency, rate, date and the customer's fields."""
    body = checks.body
    currency = body.get("currencyCode")
    if blank(currency):
        checks.add("currencyCode", "currencyCode must never be empty or null; use TRY when no other currency "
                                   "applies.")
    elif not isinstance(currency, str) or not re.fullmatch(r"[A-Z]{3}", currency):
        checks.add("currencyCode", f"currencyCode must be a 3-letter currency code (got '{currency}').")
    checks.number("exchangeRate", body.get("exchangeRate"))
    checks.moment("ticketDate")
    if kind == "passenger_ticket":
        checks.required("identifier", "identifier (national id or passport number)")
    country = body.get("customerCountry")
    if not blank(country) and not (isinstance(country, str) and re.fullmatch(r"[A-Za-z]{2}", country)):
        checks.add("customerCountry", f"customerCountry must be a two-letter country code (got '{country}').")


def _check_payment(checks: Checks) -> None:
    """E-mail sending, payment type and the record-expenses pair."""
    body = checks.body
    send_email = body.get("isEmailSend")  # a boolean or null: the model binds it
    email = body.get("customerEmail")
    if send_email is True and blank(email):
        checks.add("customerEmail", "customerEmail is required when isEmailSend is true.")
    elif not blank(email) and not (isinstance(email, str) and re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", email)):
        checks.add("customerEmail", f"'{email}' is not a valid e-mail address.")
    payment = body.get("paymentType")
    if checks.required("paymentType") and payment not in PAYMENT_TYPES:
        checks.add("paymentType", f"paymentType '{payment}' is not one of {', '.join(PAYMENT_TYPES)}.")
    if payment == "DIGER" and blank(body.get("paymentDescription")):
        checks.add("paymentDescription", "paymentDescription is required when paymentType is DIGER.")
    expenses_id, expenses_title = body.get("recordExpensesVknTckn"), body.get("recordExpensesTitle")
    if not blank(expenses_title) and blank(expenses_id):
        checks.add("recordExpensesVknTckn", "recordExpensesVknTckn is required when recordExpensesTitle is given.")
    if not blank(expenses_id) and blank(expenses_title):
        checks.add("recordExpensesTitle", "recordExpensesTitle is required when recordExpensesVknTckn is given.")
    checks.vkn_tckn("recordExpensesVknTckn")


def _check_lines(checks: Checks) -> None:
    for where, line in checks.objects(checks.body.get("ticketLines"), "ticketLines", "ticketLines", "ticket line"):
        for name in ("amount", "discountRate", "discountAmount", "vatRate", "vatAmount"):
            checks.number(name, line.get(name), f"{where}.{name}")
        for tax_where, tax in checks.objects(line.get("taxes"), f"{where}.taxes", "taxes", "tax"):
            for name in ("taxtRate", "taxtAmount"):  # sic: the platform spells them with the extra t
                checks.number(name, tax.get(name), f"{tax_where}.{name}")


def _check_notes(checks: Checks) -> None:
    for index, note in enumerate(checks.body.get("notes") or []):  # an array or null: the model binds it
        if not isinstance(note, dict) or not isinstance(note.get("note"), str):
            checks.add(f"notes[{index}].note", "Each note must be an object with a string field note.")


def _check_event(checks: Checks, creating: bool) -> None:
    body = checks.body
    if creating:
        checks.required("seatNumber")
    for name in ("eventName", "eventLocation", "eventMunicipality"):
        checks.required(name)
    checks.moment("eventTime")
    if creating and checks.required("eventCityId") and not 1 <= body["eventCityId"] <= 81:
        checks.add("eventCityId", f"eventCityId must be a province plate code, 1 to 81 (got {body['eventCityId']}).")
    if checks.required("eventOrganizerVknTckn", "organizer tax number or national id (eventOrganizerVknTckn)"):
        checks.vkn_tckn("eventOrganizerVknTckn")


def _check_passenger(checks: Checks) -> None:
    for name in ("vehiclePlate", "expeditionTime", "expeditionNumber", "departureDate", "departureLocation",
                 "seatNumber"):
        checks.required(name)
    checks.moment("expeditionTime")
    checks.moment("departureDate")
    check_operator(checks.body, checks)
    checks.number("commissionAmount", checks.body.get("commissionAmount"))
    checks.number("commissionTaxAmount", checks.body.get("commissionTaxAmount"))


def check_operator(body: dict, problems: Problems) -> None:
    """Document 2, section 2.3 (and 4.3 for passenger lists): the five vehicle-operator fields go together,
    and the operator's VKN or TCKN has valid check digits."""
    filled = [name for name in OPERATOR_FIELDS if not blank(body.get(name))]
    if filled:
        for name in OPERATOR_FIELDS:
            if name not in filled:
                problems.add(name, f"{name} is required because {', '.join(filled)} is filled: the five "
                                   "vehicle-operator fields go together.")
    operator = body.get("vehicleOperatingVknTckn")
    reason = None if blank(operator) else vkn_tckn_problem(operator)
    if reason:
        problems.add("vehicleOperatingVknTckn", f"vehicleOperatingVknTckn {reason} (got '{operator}').")


# --- amounts and views -----------------------------------------------------------------------------------

def totals(data: dict) -> dict:
    """totalAmount (net of discounts), totalVat and payableAmount (with the other taxes) of a ticket."""
    total = vat = other = Decimal(0)
    for line in data.get("ticketLines") or []:
        amount = decimal(line.get("amount")) or Decimal(0)
        discount = decimal(line.get("discountAmount"))
        if discount is None:
            discount = amount * (decimal(line.get("discountRate")) or Decimal(0)) / 100
        total += amount - discount
        vat += decimal(line.get("vatAmount")) or Decimal(0)
        other += sum((decimal(tax.get("taxtAmount")) or Decimal(0) for tax in line.get("taxes") or []), Decimal(0))
    money = Decimal("0.01")
    return {"totalAmount": float(total.quantize(money)), "totalVat": float(vat.quantize(money)),
            "payableAmount": float((total + vat + other).quantize(money))}


def customer_name(data: dict) -> str:
    return " ".join(part for part in (data.get("customerFirstName"), data.get("customerLastName")) if part)


def report_item(doc: Document, reported: datetime) -> dict:
    """The by-date report item (document 2, 2.5) of an approved ticket."""
    data = doc.data
    common = {"ticketNumber": doc.number, "executionDate": data.get("ticketDate") or iso(doc.created)}
    amounts = totals(data)
    if doc.kind == "event_ticket":
        item = {**common, "eventDate": data.get("eventTime"), "locationCityCode": data.get("eventCityId"),
                "locationMunicipality": data.get("eventMunicipality"), "locationDescription": data.get("eventLocation"),
                "paymentType": data.get("paymentType"), "totalAmount": amounts["totalAmount"],
                "totalVat": amounts["totalVat"]}
    else:
        names = ("departureDate", "departureLocation", "destination", "expeditionTime", "expeditionNumber",
                 "vehiclePlate", "paymentType")
        item = {**common, **{name: data.get(name) for name in names}, **amounts}
    return {**item, "canceledDate": None, "canceled": False, "partIndex": 1, "createDate": iso(reported)}


LIFECYCLE = statuses.Lifecycle(kinds=tuple(TICKET_TYPES), noun="ticket", error_message=ERROR_MESSAGE,
                               report_item=report_item)


def settle(call: Call) -> None:
    """Process the customer's queued tickets whose time has come (lazily, on every read)."""
    statuses.settle(call, LIFECYCLE)


# --- control: the shape of bulk report items --------------------------------------------------------------

def _filler(kind: str, day: date, index: int) -> dict:
    """A report item of the control API's bulk fill (see reports.py)."""
    moment_text, number, amount = reports.sample(day, index)
    vat = round(amount * 0.2, 2)
    common = {"ticketNumber": number, "executionDate": moment_text, "paymentType": PAYMENT_TYPES[index % 8],
              "totalAmount": amount, "totalVat": vat}
    if kind == "event_ticket":
        item = {**common, "eventDate": moment_text, "locationCityCode": index % 81 + 1,
                "locationMunicipality": "Kadıköy", "locationDescription": f"Salon {index % 10}"}
    else:
        item = {**common, "departureDate": moment_text, "departureLocation": "İstanbul", "destination": "Ankara",
                "expeditionTime": moment_text, "expeditionNumber": f"S{index % 1000:04d}",
                "vehiclePlate": f"34 ABC {index % 1000:03d}", "payableAmount": round(amount + vat, 2)}
    return {**item, "canceledDate": None, "canceled": False, "partIndex": index // 1000 + 1,
            "createDate": moment_text}


# Here rather than in tickets.py: passenger lists import this module, so ticket kinds are always listed first.
for _kind in TICKET_TYPES:
    reports.filler(_kind)(lambda day, index, kind=_kind: _filler(kind, day, index))
