"""What an outgoing dispatch note (e-İrsaliye) of document 3, 2.9 is, for the dispatch service (dispatch.py): the
statuses, the body models of the JSON and UBL forms read whatever the letter case of their names, and the rules a
JSON note must keep. The UBL reading and writing and the PDF and HTML are in dispatch_ubl.py, the taxpayer list in
dispatch_directory.py.

Choices where the documents say "not shown" (dispatch.py lists those of the operations):
- Names are read only as document 3 (and, for inner fields it does not show, the facts file) spells them
  (issue 28: the facts file's guess that the service reads any letter case pins nothing of what a client sends).
  A name in another letter case, an unknown top-level member, a name given twice or a JSON type other than the
  model's answers 422 (as common.bind); unknown members inside the objects are kept as given. Where document 3
  itself spells one name two ways, a model lists the second spelling (bound's `spellings`), and only that one.
- despatchProfileType and despatchType are the provider client's numbers (0 TEMELIRSALIYE, 1 TICARIIRSALIYE;
  1 SEVK) or their names; issueDate "yyyy-MM-dd" (a date-time's date part is taken), issueTime "HH:mm:ss".
"""

import re
from datetime import date

from stdnum.tr import tckimlik

from .common import BOOLEAN, CODE, INTEGER, NUMBER, STRING, Problems, array, blank, decimal, moment
from .common import vkn_tckn_problem
from .dispatch_directory import GENERIC_ALIAS, alias_problem

DRAFT, QUEUED, ERROR, DELIVERED, APPROVED = 0, 20, 40, 50, 60
STATUS_NAMES = {
    0: "draft", 20: "queued", 40: "in error", 50: "delivered to the tax authority", 60: "approved",
    61: "being approved", 62: "in approval error", 65: "approved automatically", 70: "awaiting approval",
    80: "rejected", 81: "being rejected", 82: "in rejection error", 90: "partially accepted",
    91: "being partially accepted", 92: "in partial-acceptance error",
}
STATUSES = tuple(STATUS_NAMES)
TURKISH_STATUS_NAMES = {
    0: "Taslak", 20: "Kuyrukta", 40: "Hata", 50: "GİB'e iletildi", 60: "Onaylandı", 61: "Onaylanıyor",
    62: "Onay hatası", 65: "Otomatik onaylandı", 70: "Onay bekliyor", 80: "Reddedildi", 81: "Reddediliyor",
    82: "Red hatası", 90: "Kısmi kabul edildi", 91: "Kısmi kabul ediliyor", 92: "Kısmi kabul hatası",
}
PROFILES = {0: "TEMELIRSALIYE", 1: "TICARIIRSALIYE"}
DESPATCH_TYPES = {1: "SEVK"}
NUMBER_PATTERN = re.compile(r"^[A-Z0-9]{3}20[0-9]{2}[0-9]{9}$")
PREFIX_PATTERN = re.compile(r"^[A-Z0-9]{3}$")
DEFAULT_PREFIX = "EIR"
UNKNOWN_DRIVER = "11111111111"  # document 3, 2.9: a driver whose TCKN is unknown

# --- the body models (document 3, 2.9; inner fields from the facts file) ---------------------------------------

LINE_MODEL = {
    "productName": STRING, "amount": NUMBER, "unitCode": STRING, "unitPrice": NUMBER, "lineAmount": NUMBER,
    "taxTotal": {"taxAmount": NUMBER,
                 "taxSubTotals": array({"taxableAmount": NUMBER, "taxAmount": NUMBER, "percent": NUMBER})},
    "manufacturersItemIdentification": STRING,
}
PARTY_MODEL = {name: STRING for name in ("identificationNumber", "name", "personSurName", "city", "district",
                                         "countryName")}
NOTE_MODEL = {
    "status": INTEGER, "isNew": BOOLEAN, "xsltCode": STRING, "localReferenceId": STRING,
    "useManualDespatchAdviceId": BOOLEAN,
    "addressBook": {name: STRING for name in ("identificationNumber", "alias", "name", "receiverCity",
                                              "receiverCountry", "receiverDistrict")},
    "generalInfo": {"issueDate": STRING, "issueTime": STRING, "despatchProfileType": CODE, "currencyCode": STRING,
                    "despatchType": CODE, "payableAmount": NUMBER, "totalAmount": NUMBER,
                    "despatchAdviceNumber": STRING, "despatchNumber": STRING},
    "despatchLines": array(LINE_MODEL),
    "deliveryAddressInfo": {name: STRING for name in ("district", "city", "zipCode", "countryName")},
    "despatchShipmentInfo": {"shipmentSenderTitle": STRING, "shipmentSenderTcknVkn": STRING,
                             "shipmentPlateNo": STRING,
                             "driverLines": array({"driverName": STRING, "driverSurname": STRING,
                                                   "driverTckn": STRING})},
    "despatchBuyerCustomerInfo": PARTY_MODEL,
    "sellerSupplierInfo": PARTY_MODEL,
    "orderInfo": {"shipmentDate": STRING},
    "customDocumentReferenceList": array({"id": STRING, "issueDate": STRING, "documentTypeCode": STRING,
                                          "documentType": STRING}),
    "notes": array({"note": STRING}),
}
# The status change of notes and replies: document 3 (4.5) writes its body {Ids, Status}; the facts file's public
# clients write the same path's body {ids, status}, as document 3 itself writes ids in its other operations (the
# exports, approve / reject). Exactly these two spellings are read.
STATUS_CHANGE_MODEL = {"Ids": array(STRING), "Status": INTEGER}
STATUS_CHANGE_SPELLINGS = {"ids": "Ids", "status": "Status"}
UBL_MODEL = {"despatchAdviceZip": STRING, "localReferenceId": STRING, "prefix": STRING, "targetAlias": STRING,
             "useManualDespatchAdviceId": BOOLEAN, "checkLocalReferenceId": BOOLEAN, "status": INTEGER}


# --- values ------------------------------------------------------------------------------------------------------

def day(value) -> date | None:
    """A date from "yyyy-MM-dd" (or the date part of a date-time); None when it is none."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    if len(text) > 10 and text[10] in "T ":
        text = text[:10]
    try:
        return date.fromisoformat(text) if len(text) == 10 else None
    except ValueError:
        return None


def clock_time(value) -> bool:
    return isinstance(value, str) and re.fullmatch(r"([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]", value) is not None


def code_of(value, codes: dict, default: int) -> int | None:
    """The number of a code given as its number or its name (None when it is neither); default when missing."""
    if value is None or value == "":
        return default
    if isinstance(value, str):
        return next((number for number, name in codes.items() if name == value.strip().upper()), None)
    return value if value in codes else None


def number_problem(number, issue_day: date | None) -> str | None:
    """Why a sender's 16-character number is refused: its pattern, or a year other than the issue date's."""
    if not isinstance(number, str) or not NUMBER_PATTERN.match(number):
        return (f"'{number}' is not a dispatch note number: 16 characters matching ^[A-Z0-9]{{3}}20[0-9]{{2}}"
                "[0-9]{9}$ (3-character prefix, year, 9-digit counter).")
    if issue_day is not None and int(number[3:7]) != issue_day.year:
        return f"The year of {number} ({number[3:7]}) is not the year of the issue date ({issue_day.year})."
    return None


def _got(value) -> str:
    return "" if blank(value) else f" (got '{value}')"


def identifier_kind(identifier: str) -> str:
    return "TCKN" if len(identifier) == 11 else "VKN"


def manual_number(general: dict):
    """The sender's number in generalInfo: despatchAdviceNumber (document 3) or despatchNumber (a public client)."""
    number = general.get("despatchAdviceNumber")
    return general.get("despatchNumber") if blank(number) else number


# --- the rules of a JSON note (document 3, 2.9 and the facts file) -----------------------------------------------

def note_problems(body: dict, today: date) -> Problems:
    """Every rule the note breaks (the number's uniqueness is the operation's: it needs the store)."""
    problems = Problems()
    status = body.get("status")
    if status is not None and status not in (DRAFT, QUEUED):
        problems.add("status", f"status must be 0 (draft) or 20 (save and send), no other value is accepted "
                               f"(got {status}).")
    _receiver(body.get("addressBook") or {}, problems)
    issue_day = _general(body, problems, today)
    _lines(body.get("despatchLines"), problems)
    delivery = body.get("deliveryAddressInfo") or {}
    for name, label in (("city", "city"), ("district", "district"), ("countryName", "country")):
        if blank(delivery.get(name)):
            problems.add(f"deliveryAddressInfo.{name}", f"The delivery address's {label} is required (the tax "
                                                        "authority's rule: city, district and country).")
    _carrier(body.get("despatchShipmentInfo") or {}, problems)
    for name in ("despatchBuyerCustomerInfo", "sellerSupplierInfo"):
        identifier = (body.get(name) or {}).get("identificationNumber")
        reason = None if blank(identifier) else vkn_tckn_problem(identifier)
        if reason:
            problems.add(f"{name}.identificationNumber", f"identificationNumber {reason} (got '{identifier}').")
    shipment_date = (body.get("orderInfo") or {}).get("shipmentDate")
    if not blank(shipment_date) and moment(shipment_date) is None:
        problems.add("orderInfo.shipmentDate", f"'{shipment_date}' is not a date and time yyyy-MM-dd HH:mm:ss.")
    if body.get("useManualDespatchAdviceId") is True:
        general = body.get("generalInfo") or {}
        number = manual_number(general)
        if blank(number):
            problems.add("generalInfo.despatchAdviceNumber", "The note's 16-character number is required when "
                                                             "useManualDespatchAdviceId is true.")
        else:
            reason = number_problem(number, issue_day)
            if reason:
                problems.add("generalInfo.despatchAdviceNumber", reason)
    return problems


def _receiver(book: dict, problems: Problems) -> None:
    identifier, alias = book.get("identificationNumber"), book.get("alias")
    reason = "is required" if blank(identifier) else vkn_tckn_problem(identifier)
    if reason:
        problems.add("addressBook.identificationNumber", f"The receiver's VKN or TCKN {reason}{_got(identifier)}.")
    if blank(book.get("name")):
        problems.add("addressBook.name", "The receiver's name (title) is required.")
    if blank(alias):
        problems.add("addressBook.alias", "The receiver's mailbox (alias) is required: one the taxpayer list gives "
                                          f"for its VKN/TCKN, or {GENERIC_ALIAS} for a receiver that is no user.")
    elif not reason:
        reason = alias_problem(identifier, alias)
        if reason:
            problems.add("addressBook.alias", reason)


def _general(body: dict, problems: Problems, today: date) -> date | None:
    general = body.get("generalInfo") or {}
    issue, issue_day = general.get("issueDate"), None
    if blank(issue):
        problems.add("generalInfo.issueDate", "The issue date is required (yyyy-MM-dd).")
    else:
        issue_day = day(issue)
        if issue_day is None:
            problems.add("generalInfo.issueDate", f"'{issue}' is not a date yyyy-MM-dd.")
        elif issue_day > today:
            problems.add("generalInfo.issueDate", f"The issue date {issue_day} is in the future (today is {today}).")
        elif not 2000 <= issue_day.year <= 2099:
            problems.add("generalInfo.issueDate", f"The year of the issue date must be 20xx (got {issue_day.year}).")
    issue_time = general.get("issueTime")
    if not blank(issue_time) and not clock_time(issue_time):
        problems.add("generalInfo.issueTime", f"'{issue_time}' is not a time HH:mm:ss.")
    if code_of(general.get("despatchProfileType"), PROFILES, 0) is None:
        problems.add("generalInfo.despatchProfileType", "despatchProfileType must be 0 (TEMELIRSALIYE) or 1 "
                                                        f"(TICARIIRSALIYE) (got {general['despatchProfileType']!r}).")
    if code_of(general.get("despatchType"), DESPATCH_TYPES, 1) is None:
        problems.add("generalInfo.despatchType", f"despatchType must be 1 (SEVK) (got {general['despatchType']!r}).")
    currency = general.get("currencyCode")
    if not blank(currency) and not re.fullmatch(r"[A-Z]{3}", currency):
        problems.add("generalInfo.currencyCode", f"currencyCode must be a 3-letter currency code (got '{currency}').")
    return issue_day


def _lines(lines, problems: Problems) -> None:
    if not lines:
        problems.add("despatchLines", "At least one line is required.")
        return
    for index, line in enumerate(lines):
        where = f"despatchLines[{index}]"
        if blank(line.get("productName")):
            problems.add(f"{where}.productName", "The product name is required.")
        amount = decimal(line.get("amount"))
        if amount is None or amount <= 0:
            problems.add(f"{where}.amount", f"The quantity must be greater than 0 (got {line.get('amount')}).")
        if blank(line.get("unitCode")):
            problems.add(f"{where}.unitCode", "The unit code is required (e.g. C62 for a piece, KGM for a kilogram).")


def _carrier(shipment: dict, problems: Problems) -> None:
    """Document 3, 2.9: a carrier company (title and VKN/TCKN), or else drivers (name, surname, 11-digit TCKN,
    eleven 1s when unknown); both, or neither, is refused."""
    title, carrier_id = shipment.get("shipmentSenderTitle"), shipment.get("shipmentSenderTcknVkn")
    drivers = shipment.get("driverLines") or []
    company = not blank(title) or not blank(carrier_id)
    if company and drivers:
        problems.add("despatchShipmentInfo", "Give either a carrier company (shipmentSenderTitle and "
                                             "shipmentSenderTcknVkn) or drivers (driverLines), not both.")
        return
    if not company and not drivers:
        problems.add("despatchShipmentInfo", "A carrier company (shipmentSenderTitle and shipmentSenderTcknVkn) or "
                                             "at least one driver (driverLines) is required.")
        return
    if company:
        if blank(title):
            problems.add("despatchShipmentInfo.shipmentSenderTitle", "The carrier's title is required when a company "
                                                                     "carries.")
        reason = "is required when a company carries" if blank(carrier_id) else vkn_tckn_problem(carrier_id)
        if reason:
            problems.add("despatchShipmentInfo.shipmentSenderTcknVkn",
                         f"The carrier's VKN or TCKN {reason}{_got(carrier_id)}.")
        return
    for index, driver in enumerate(drivers):
        where = f"despatchShipmentInfo.driverLines[{index}]"
        for name, label in (("driverName", "name"), ("driverSurname", "surname")):
            if blank(driver.get(name)):
                problems.add(f"{where}.{name}", f"The driver's {label} is required.")
        tckn = driver.get("driverTckn")
        if blank(tckn):
            problems.add(f"{where}.driverTckn", f"The driver's TCKN is required ({UNKNOWN_DRIVER} when unknown).")
        elif tckn != UNKNOWN_DRIVER and not re.fullmatch(r"[0-9]{11}", tckn):
            problems.add(f"{where}.driverTckn", f"A driver's TCKN is 11 digits (got '{tckn}', {len(tckn)} "
                                                f"characters), {UNKNOWN_DRIVER} when unknown.")
        elif tckn != UNKNOWN_DRIVER and not tckimlik.is_valid(tckn):
            problems.add(f"{where}.driverTckn", f"'{tckn}' is not a valid TCKN: its check digits do not match "
                                                f"({UNKNOWN_DRIVER} when unknown).")
