"""What an outgoing dispatch note (e-İrsaliye) of document 3, 2.9 is, for the dispatch service (dispatch.py): the
body models of the JSON and UBL forms read whatever the letter case of their names, the rules a JSON note must keep,
the reading of an uploaded DespatchAdvice, the UBL-TR 1.2.1 DespatchAdvice written from a JSON note, the PDF and
HTML of a note, and the tax authority's list of dispatch-note users (the taxpayer ZIP).

Choices where the documents say "not shown" (dispatch.py lists those of the operations):
- Names are read case-insensitively (the facts file: public clients mix cases): camelCase and PascalCase alike,
  at the top level and inside. An unknown top-level member, a name given twice in two cases or a JSON type other
  than the model's answers 422 (as common.bind); unknown members inside the objects are kept as given.
- despatchProfileType and despatchType are the provider client's numbers (0 TEMELIRSALIYE, 1 TICARIIRSALIYE;
  1 SEVK) or their names; issueDate "yyyy-MM-dd" (a date-time's date part is taken), issueTime "HH:mm:ss".
- The written UBL is an unsigned draft (ext:ExtensionContent empty, the integrator's seal goes there). The sender
  is the sandbox customer, with a VKN decided by its customerUniqueId and an address in Kadıköy, İstanbul. The
  carrier's address is not in the JSON model: its PostalAddress repeats the delivery address. Prices are not in a
  DespatchAdvice; payableAmount is the shipment's GoodsItem/ValueAmount.
- The PDF and HTML are drawn from the note's UBL (the uploaded one for a UBL note), so both forms look alike. The
  PDF writes Turkish letters outside its font's encoding (ş ğ ı İ Ş Ğ) without their marks.
- The taxpayer list: VKN 1234567890 with two mailboxes, TCKN 10000000146 and VKN 4840000006 with one each, and
  50 others (every tenth a person with a TCKN), the same for every customer; AppType 3 (an e-dispatch mailbox, as
  the invoice service's list has it). The ZIP holds one file, users.json: a UTF-8 byte-order mark, then the JSON array.
"""

import base64
import binascii
import codecs
import hashlib
import io
import json
import re
import zipfile
import zlib
from datetime import date

from django.utils.html import format_html, format_html_join
from lxml import etree
from stdnum.tr import tckimlik, vkn

from .. import fakes
from ..api import binding_failed
from .common import BOOLEAN, INTEGER, NUMBER, STRING, Problems, array, blank, decimal, fits, json_type, moment
from .common import vkn_tckn_problem

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
GENERIC_ALIAS = "urn:mail:irsaliyepk@gib.gov.tr"  # the generic recipient alias for receivers that are no users
UNKNOWN_DRIVER = "11111111111"  # document 3, 2.9: a driver whose TCKN is unknown
MAX_XML_BYTES = 20 * 1024 * 1024

# --- the body models (document 3, 2.9; inner fields from the facts file) ---------------------------------------

CODE, OBJECT = "code", "object"  # CODE: a number or a name (despatchProfileType, despatchType); OBJECT: any object
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
    "customDocumentReferenceList": array(OBJECT),
    "notes": array({"note": STRING}),
}
UBL_MODEL = {"despatchAdviceZip": STRING, "localReferenceId": STRING, "prefix": STRING, "targetAlias": STRING,
             "useManualDespatchAdviceId": BOOLEAN, "checkLocalReferenceId": BOOLEAN, "status": INTEGER}


def bound(body, model: dict) -> dict:
    """The body with its members spelled as the model spells them; 422 when it does not fit the model."""
    errors = {}
    result = _object(body, model, "", errors, strict=True)
    if errors:
        raise binding_failed(errors)
    return result


def _object(body, model: dict, where: str, errors: dict, strict: bool):
    if not isinstance(body, dict):
        errors[where or "body"] = [f"{where or 'The request body'} must be a JSON object (got {json_type(body)})."]
        return body
    names = {name.lower(): name for name in model}
    result = {}
    for name, value in body.items():
        canonical = names.get(str(name).lower())
        place = f"{where}.{canonical or name}" if where else canonical or name
        if canonical is None:
            if strict:
                errors[place] = [f"Unknown field '{name}': it is not a member of this operation's body."]
            else:
                result[name] = value
        elif canonical in result:
            errors[place] = [f"{canonical} is given twice (names are read whatever their letter case)."]
        else:
            result[canonical] = None if value is None else _value(value, model[canonical], place, errors)
    return result


def _value(value, kind, place: str, errors: dict):
    if isinstance(kind, dict):
        return _object(value, kind, place, errors, strict=False)
    if isinstance(kind, tuple):  # array(item)
        if not isinstance(value, list):
            errors[place] = [f"{place} must be a JSON array (got {json_type(value)})."]
            return value
        items = []
        for index, item in enumerate(value):
            if item is None:
                errors[f"{place}[{index}]"] = [f"{place}[{index}] must not be null."]
            items.append(item if item is None else _value(item, kind[1], f"{place}[{index}]", errors))
        return items
    if kind == OBJECT:
        wanted, ok = "object", isinstance(value, dict)
    elif kind == CODE:
        wanted, ok = "integer or string", fits(value, INTEGER) or isinstance(value, str)
    else:
        wanted, ok = kind, fits(value, kind)
    if not ok:
        errors[place] = [f"{place} must be a JSON {wanted}, not a {json_type(value)} ({json.dumps(value)[:40]})."]
    return value


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


# --- the taxpayer list: dispatch-note users and their mailboxes -------------------------------------------------

DISPATCH_APP = 3
TITLE_WORDS = ("Anadolu", "Marmara", "Ege", "Toros", "Karadeniz", "Yıldız", "Çınar", "Güneş", "Doğu", "Kuzey")
TITLE_TRADES = ("Lojistik", "Gıda", "Tekstil", "İnşaat", "Makine", "Kimya", "Tarım")
PERSON_NAMES = (("Ayşe", "Yılmaz"), ("Mehmet", "Kaya"), ("Zeynep", "Demir"), ("Ali", "Şahin"), ("Elif", "Çelik"))


def _generated(kind: str, index: int) -> str:
    """A valid VKN or TCKN (check digits included) decided by the index."""
    digest = int.from_bytes(hashlib.sha256(f"dispatch-user:{kind}:{index}".encode()).digest()[:8], "big")
    base = str(digest % 900_000_000 + 100_000_000)
    return base + (vkn.calc_check_digit(base) if kind == "VKN" else tckimlik.calc_check_digits(base))


def _directory() -> tuple[dict, ...]:
    def user(identifier, title, alias):
        return {"Identifier": identifier, "Title": title, "Alias": alias, "AppType": DISPATCH_APP}

    items = [user("1234567890", "Örnek Ticaret A.Ş.", alias) for alias in (
        "urn:mail:irsaliyepk@ornek.com.tr", "urn:mail:irsaliye2pk@ornek.com.tr")]
    items.append(user("10000000146", "Ahmet Yılmaz", "urn:mail:irsaliyepk@ahmetyilmaz.com.tr"))
    # The examples' e-archive customer (document 4) as a user with one mailbox, for the back office's tests.
    items.append(user("4840000006", "Tek Kutu Lojistik A.Ş.", "urn:mail:irsaliyepk@tekkutu.com.tr"))
    for index in range(1, 51):
        if index % 10 == 0:
            first, last = PERSON_NAMES[index // 10 - 1]
            identifier, title = _generated("TCKN", index), f"{first} {last}"
        else:
            identifier = _generated("VKN", index)
            title = f"{TITLE_WORDS[index % 10]} {TITLE_TRADES[index % 7]} {index:02d} A.Ş."
        items.append(user(identifier, title, f"urn:mail:irsaliyepk@kullanici{index:02d}.com.tr"))
    return tuple(items)


DIRECTORY = _directory()
ALIASES: dict[str, list[str]] = {}
for _item in DIRECTORY:
    ALIASES.setdefault(_item["Identifier"], []).append(_item["Alias"])
TITLES = {item["Identifier"]: item["Title"] for item in DIRECTORY}


def alias_problem(identifier: str, alias: str) -> str | None:
    """Why a mailbox cannot receive the note: one listed for a user, the generic recipient alias for others."""
    listed = ALIASES.get(identifier)
    if listed and alias not in listed:
        return (f"'{alias}' is not a dispatch mailbox of {identifier} (its mailboxes: {', '.join(listed)}).")
    if not listed and alias != GENERIC_ALIAS:
        return (f"{identifier} is not a dispatch-note user (not in the taxpayer list): send the generic recipient "
                f"alias {GENERIC_ALIAS} (got '{alias}').")
    return None


def taxpayer_zip() -> bytes:
    content = codecs.BOM_UTF8 + json.dumps(list(DIRECTORY), ensure_ascii=False).encode("utf-8")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("users.json", content)
    return buffer.getvalue()


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
        if not isinstance(line, dict):
            continue  # refused by the model (422)
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
        if not isinstance(driver, dict):
            continue  # refused by the model (422)
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


# --- reading an uploaded DespatchAdvice -------------------------------------------------------------------------

NS = {
    None: "urn:oasis:names:specification:ubl:schema:xsd:DespatchAdvice-2",
    "cac": "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2",
    "cbc": "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2",
    "ext": "urn:oasis:names:specification:ubl:schema:xsd:CommonExtensionComponents-2",
}
XPATH_NS = {prefix: uri for prefix, uri in NS.items() if prefix}
DESPATCH_ADVICE = f"{{{NS[None]}}}DespatchAdvice"
UNREADABLE = (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, NotImplementedError, RuntimeError, EOFError,
              OSError, ValueError)  # what a broken or encrypted ZIP raises


def read_upload(text, problems: Problems):
    """(XML bytes, root) of the despatchAdviceZip: Base64 of a ZIP holding one DespatchAdvice XML; None with the
    problem added when it is not one."""
    place = "despatchAdviceZip"
    if blank(text):
        problems.add(place, "The despatchAdviceZip field is required: the Base64 text of a ZIP holding one "
                            "DespatchAdvice XML.")
        return None
    try:
        raw = base64.b64decode(text.strip(), validate=True)
    except (binascii.Error, ValueError):
        problems.add(place, "despatchAdviceZip is not Base64 text.")
        return None
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as archive:
            members = [info for info in archive.infolist() if not info.is_dir()
                       and info.filename.lower().endswith(".xml")]
            if len(members) != 1:
                names = ", ".join(info.filename for info in members) or "none"
                problems.add(place, f"The ZIP must hold exactly one .xml file (it holds {len(members)}: {names}).")
                return None
            member = members[0]
            if member.file_size > MAX_XML_BYTES:
                problems.add(place, f"{member.filename} is larger than {MAX_XML_BYTES // 1024 // 1024} MB.")
                return None
            content = archive.read(member)
    except UNREADABLE as error:
        problems.add(place, f"despatchAdviceZip is not a readable ZIP file ({error}).")
        return None
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    try:
        root = etree.fromstring(content, parser)
    except etree.XMLSyntaxError as error:
        problems.add(place, f"{member.filename} is not well-formed XML: {error}.")
        return None
    if root.tag != DESPATCH_ADVICE:
        problems.add(place, f"{member.filename} is not a UBL DespatchAdvice: its root element is "
                            f"{etree.QName(root).localname} ({etree.QName(root).namespace or 'no namespace'}), not "
                            f"DespatchAdvice ({NS[None]}).")
        return None
    return content, root


def _text(element, path: str) -> str:
    found = element.find(path, XPATH_NS) if element is not None else None
    return (found.text or "").strip() if found is not None else ""


def party_of(party) -> tuple[str, str]:
    """(VKN or TCKN, name) of a cac:Party: the identification with schemeID VKN or TCKN; the party's name, or the
    person's first and family name."""
    identifier = ""
    for element in party.findall("cac:PartyIdentification/cbc:ID", XPATH_NS) if party is not None else []:
        if (element.get("schemeID") or "").upper() in ("VKN", "TCKN"):
            identifier = (element.text or "").strip()
            break
    name = _text(party, "cac:PartyName/cbc:Name") or " ".join(
        part for part in (_text(party, "cac:Person/cbc:FirstName"), _text(party, "cac:Person/cbc:FamilyName")) if part)
    return identifier, name


def upload_facts(root, problems: Problems, today: date, manual: bool) -> dict:
    """What the service takes from an uploaded note: {uuid, number, issueDate, issueTime, receiver (VKN/TCKN,
    name)}, with a problem for each that is missing or wrong."""
    place = "despatchAdviceZip"
    facts = {"uuid": _text(root, "cbc:UUID").lower(), "number": _text(root, "cbc:ID"),
             "issueDate": _text(root, "cbc:IssueDate"), "issueTime": _text(root, "cbc:IssueTime")}
    if not re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", facts["uuid"]):
        problems.add(place, f"cbc:UUID must be a GUID, the note's id (got '{_text(root, 'cbc:UUID')}').")
    issue_day = day(facts["issueDate"])
    if issue_day is None:
        problems.add(place, f"cbc:IssueDate must be a date yyyy-MM-dd (got '{facts['issueDate']}').")
    elif issue_day > today:
        problems.add(place, f"cbc:IssueDate {issue_day} is in the future (today is {today}).")
    elif not 2000 <= issue_day.year <= 2099:
        problems.add(place, f"The year of cbc:IssueDate must be 20xx (got {issue_day.year}).")
    party = root.find("cac:DeliveryCustomerParty/cac:Party", XPATH_NS)
    identifier, name = party_of(party)
    reason = "is missing" if not identifier else vkn_tckn_problem(identifier)
    if reason:
        problems.add(place, "The receiver's VKN or TCKN (cac:DeliveryCustomerParty/cac:Party/cac:PartyIdentification"
                            f"/cbc:ID, schemeID VKN or TCKN) {reason}{_got(identifier)}.")
    facts["receiver"] = {"vknTckn": identifier, "title": name}
    if manual:
        reason = number_problem(facts["number"], issue_day)
        if reason:
            problems.add(place, f"cbc:ID: {reason}")
    return facts


def with_number(root, number: str) -> bytes:
    """The XML with cbc:ID set to the number the platform gave (the sender's file left as it was otherwise)."""
    element = root.find("cbc:ID", XPATH_NS)
    if element is None:
        element = etree.Element(f"{{{NS['cbc']}}}ID")
        # cbc:ID follows UBLExtensions, UBLVersionID, CustomizationID, ProfileID and ProfileExecutionID.
        before = [child for child in root if etree.QName(child).localname in
                  ("UBLExtensions", "UBLVersionID", "CustomizationID", "ProfileID", "ProfileExecutionID")]
        root.insert(root.index(before[-1]) + 1 if before else 0, element)
    element.text = number
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8")


# --- the UBL-TR 1.2.1 DespatchAdvice of a JSON note -------------------------------------------------------------

COMPANY_ADDRESS = {"street": "Caferağa Mah. Moda Cad. No:1", "district": "Kadıköy", "city": "İstanbul",
                   "country": "Türkiye", "zip": "34710"}


def company_vkn(customer) -> str:
    """The sandbox customer's own VKN, decided by its customerUniqueId (check digit included)."""
    digest = int.from_bytes(hashlib.sha256(f"company:{customer.customer_unique_id}".encode()).digest()[:8], "big")
    base = str(digest % 900_000_000 + 100_000_000)
    return base + vkn.calc_check_digit(base)


def _add(parent, tag: str, text=None, **attributes):
    prefix, _, name = tag.rpartition(":")
    element = etree.SubElement(parent, f"{{{NS[prefix or None]}}}{name}", {k: str(v) for k, v in attributes.items()})
    if text is not None:
        element.text = str(text)
    return element


def _plain(value) -> str:
    """A JSON number as UBL writes it: no exponent, no trailing zeros."""
    number = decimal(value)
    return format(number.normalize(), "f") if number is not None else "0"


def _address(parent, tag: str, district, city, country, street=None, postal_zone=None) -> None:
    element = _add(parent, tag)
    if street:
        _add(element, "cbc:StreetName", street)
    _add(element, "cbc:CitySubdivisionName", district or "")  # the district (ilçe)
    _add(element, "cbc:CityName", city or "")  # the province (il)
    if postal_zone:
        _add(element, "cbc:PostalZone", postal_zone)
    _add(_add(element, "cac:Country"), "cbc:Name", country or "Türkiye")


def _party(parent, identifier: str, name: str, surname, address: tuple) -> None:
    party = _add(parent, "cac:Party")
    _add(_add(party, "cac:PartyIdentification"), "cbc:ID", identifier, schemeID=identifier_kind(identifier))
    person = len(identifier) == 11
    if not person:
        _add(_add(party, "cac:PartyName"), "cbc:Name", name)
    _address(party, "cac:PostalAddress", *address)
    if person:
        first, family = (name, surname) if surname else (name.rpartition(" ")[0] or name, name.rpartition(" ")[2])
        holder = _add(party, "cac:Person")
        _add(holder, "cbc:FirstName", first)
        _add(holder, "cbc:FamilyName", family)


def despatch_xml(doc, customer) -> bytes:
    """The note as a UBL-TR 1.2.1 DespatchAdvice (UTF-8, with its XML declaration)."""
    data = doc.data
    general, book = data.get("generalInfo") or {}, data.get("addressBook") or {}
    delivery, shipment = data.get("deliveryAddressInfo") or {}, data.get("despatchShipmentInfo") or {}
    lines = data.get("despatchLines") or []
    supplier = company_vkn(customer)
    root = etree.Element(DESPATCH_ADVICE, nsmap=NS)
    _add(_add(_add(root, "ext:UBLExtensions"), "ext:UBLExtension"), "ext:ExtensionContent")
    _add(root, "cbc:UBLVersionID", "2.1")
    _add(root, "cbc:CustomizationID", "TR1.2.1")
    _add(root, "cbc:ProfileID", PROFILES[code_of(general.get("despatchProfileType"), PROFILES, 0)])
    _add(root, "cbc:ID", doc.number)
    _add(root, "cbc:CopyIndicator", "false")
    _add(root, "cbc:UUID", doc.key)
    _add(root, "cbc:IssueDate", data["issueDate"])
    _add(root, "cbc:IssueTime", data["issueTime"])
    _add(root, "cbc:DespatchAdviceTypeCode", DESPATCH_TYPES[code_of(general.get("despatchType"), DESPATCH_TYPES, 1)])
    for note in data.get("notes") or []:
        if note.get("note"):
            _add(root, "cbc:Note", note["note"])
    _add(root, "cbc:LineCountNumeric", len(lines))
    for reference in data.get("customDocumentReferenceList") or []:
        lowered = {str(name).lower(): value for name, value in reference.items()}
        if not blank(lowered.get("id")):
            element = _add(root, "cac:AdditionalDocumentReference")
            _add(element, "cbc:ID", lowered["id"])
            _add(element, "cbc:IssueDate", day(lowered.get("issuedate")) or data["issueDate"])
            for name, tag in (("documenttypecode", "cbc:DocumentTypeCode"), ("documenttype", "cbc:DocumentType")):
                if not blank(lowered.get(name)):
                    _add(element, tag, lowered[name])
    signature = _add(root, "cac:Signature")
    _add(signature, "cbc:ID", supplier, schemeID="VKN_TCKN")
    signatory = _add(signature, "cac:SignatoryParty")
    _add(_add(signatory, "cac:PartyIdentification"), "cbc:ID", supplier, schemeID="VKN")
    company_address = tuple(COMPANY_ADDRESS[name] for name in ("district", "city", "country", "street", "zip"))
    _address(signatory, "cac:PostalAddress", *company_address)
    _add(_add(_add(signature, "cac:DigitalSignatureAttachment"), "cac:ExternalReference"), "cbc:URI",
         f"#Signature_{doc.number}")
    _party(_add(root, "cac:DespatchSupplierParty"), supplier, customer.name, None, company_address)
    _party(_add(root, "cac:DeliveryCustomerParty"), book["identificationNumber"], book["name"], None,
           (book.get("receiverDistrict") or delivery.get("district"), book.get("receiverCity") or delivery.get("city"),
            book.get("receiverCountry") or delivery.get("countryName")))
    for name, tag in (("despatchBuyerCustomerInfo", "cac:BuyerCustomerParty"),
                      ("sellerSupplierInfo", "cac:SellerSupplierParty")):
        party = data.get(name) or {}
        if not blank(party.get("identificationNumber")):
            _party(_add(root, tag), party["identificationNumber"], party.get("name") or "", party.get("personSurName"),
                   (party.get("district"), party.get("city"), party.get("countryName")))
    _shipment(root, data, general, delivery, shipment)
    for index, line in enumerate(lines, start=1):
        element = _add(root, "cac:DespatchLine")
        _add(element, "cbc:ID", index)
        _add(element, "cbc:DeliveredQuantity", _plain(line.get("amount")), unitCode=line.get("unitCode") or "C62")
        _add(_add(element, "cac:OrderLineReference"), "cbc:LineID", index)
        item = _add(element, "cac:Item")
        _add(item, "cbc:Name", line.get("productName") or "")
        if not blank(line.get("manufacturersItemIdentification")):
            _add(_add(item, "cac:ManufacturersItemIdentification"), "cbc:ID", line["manufacturersItemIdentification"])
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)


def _shipment(root, data: dict, general: dict, delivery: dict, shipment: dict) -> None:
    element = _add(root, "cac:Shipment")
    _add(element, "cbc:ID", "1")
    if general.get("payableAmount") is not None:
        goods = _add(element, "cac:GoodsItem")
        currency = general.get("currencyCode") or "TRY"
        _add(goods, "cbc:ValueAmount", _plain(general["payableAmount"]), currencyID=currency)
    drivers = shipment.get("driverLines") or []
    plate = shipment.get("shipmentPlateNo")
    if plate or drivers:
        stage = _add(element, "cac:ShipmentStage")
        if plate:
            _add(_add(_add(stage, "cac:TransportMeans"), "cac:RoadTransport"), "cbc:LicensePlateID", plate,
                 schemeID="PLAKA")
        for driver in drivers:
            person = _add(stage, "cac:DriverPerson")
            _add(person, "cbc:FirstName", driver.get("driverName") or "")
            _add(person, "cbc:FamilyName", driver.get("driverSurname") or "")
            _add(person, "cbc:Title", "Şoför")
            _add(person, "cbc:NationalityID", driver.get("driverTckn") or "")
    element_delivery = _add(element, "cac:Delivery")
    address = (delivery.get("district"), delivery.get("city"), delivery.get("countryName"), None,
               delivery.get("zipCode"))
    _address(element_delivery, "cac:DeliveryAddress", *address)
    if not blank(shipment.get("shipmentSenderTcknVkn")):
        carrier = _add(element_delivery, "cac:CarrierParty")
        identifier = shipment["shipmentSenderTcknVkn"]
        _add(_add(carrier, "cac:PartyIdentification"), "cbc:ID", identifier, schemeID=identifier_kind(identifier))
        _add(_add(carrier, "cac:PartyName"), "cbc:Name", shipment.get("shipmentSenderTitle") or "")
        _address(carrier, "cac:PostalAddress", *address)
    shipped = moment((data.get("orderInfo") or {}).get("shipmentDate") or "")
    despatch = _add(element_delivery, "cac:Despatch")
    _add(despatch, "cbc:ActualDespatchDate", shipped.date().isoformat() if shipped else data["issueDate"])
    _add(despatch, "cbc:ActualDespatchTime", shipped.strftime("%H:%M:%S") if shipped else data["issueTime"])


# --- PDF and HTML, drawn from the note's UBL ----------------------------------------------------------------------

TURKISH_ONLY = str.maketrans("şŞğĞıİ", "sSgGiI")  # letters Helvetica's WinAnsiEncoding lacks
PDF_LINES = 40


def layout_of(standard: bool, xslt_code) -> str:
    """The layout a PDF or HTML is drawn in: the standard one, or the company's (the note's xsltCode, else the
    company's default among its uploaded layouts)."""
    if standard:
        return "Standart tasarım (GİB)"
    return f"Firma tasarımı: {xslt_code}" if not blank(xslt_code) else "Firma tasarımı: varsayılan"


def summary(root, status: int, layout: str) -> tuple[list[tuple[str, str]], list[list[str]]]:
    """(header rows, line rows) that the PDF and the HTML show."""
    supplier_id, supplier = party_of(root.find("cac:DespatchSupplierParty/cac:Party", XPATH_NS))
    receiver_id, receiver = party_of(root.find("cac:DeliveryCustomerParty/cac:Party", XPATH_NS))
    delivery = root.find("cac:Shipment/cac:Delivery", XPATH_NS)
    address = delivery.find("cac:DeliveryAddress", XPATH_NS) if delivery is not None else None
    header = [("Belge", f"e-İrsaliye ({_text(root, 'cbc:ProfileID')}, {_text(root, 'cbc:DespatchAdviceTypeCode')})"),
              ("İrsaliye No", _text(root, "cbc:ID")), ("ETTN", _text(root, "cbc:UUID")),
              ("Düzenleme Tarihi", f"{_text(root, 'cbc:IssueDate')} {_text(root, 'cbc:IssueTime')}".strip()),
              ("Gönderici", f"{supplier} ({supplier_id})"), ("Alıcı", f"{receiver} ({receiver_id})"),
              ("Teslimat Adresi", " / ".join(part for part in (
                  _text(address, "cbc:CitySubdivisionName"), _text(address, "cbc:CityName"),
                  _text(address, "cac:Country/cbc:Name")) if part))]
    carrier = delivery.find("cac:CarrierParty", XPATH_NS) if delivery is not None else None
    if carrier is not None:
        carrier_id, carrier_name = party_of(carrier)
        header.append(("Taşıyıcı", f"{carrier_name} ({carrier_id})"))
    for driver in root.findall("cac:Shipment/cac:ShipmentStage/cac:DriverPerson", XPATH_NS):
        header.append(("Şoför", f"{_text(driver, 'cbc:FirstName')} {_text(driver, 'cbc:FamilyName')} "
                                f"({_text(driver, 'cbc:NationalityID')})"))
    plate = _text(root, "cac:Shipment/cac:ShipmentStage/cac:TransportMeans/cac:RoadTransport/cbc:LicensePlateID")
    if plate:
        header.append(("Plaka", plate))
    despatched = f"{_text(delivery, 'cac:Despatch/cbc:ActualDespatchDate')} " \
                 f"{_text(delivery, 'cac:Despatch/cbc:ActualDespatchTime')}".strip()
    if despatched:
        header.append(("Sevk Tarihi", despatched))
    header += [("Durum", f"{TURKISH_STATUS_NAMES.get(status, status)} ({status})"), ("Tasarım", layout)]
    header += [("Not", note.text or "") for note in root.findall("cbc:Note", XPATH_NS)]
    rows = []
    for line in root.findall("cac:DespatchLine", XPATH_NS):
        quantity = line.find("cbc:DeliveredQuantity", XPATH_NS)
        rows.append([_text(line, "cbc:ID"), _text(line, "cac:Item/cbc:Name"),
                     f"{(quantity.text or '').strip() if quantity is not None else ''} "
                     f"{quantity.get('unitCode', '') if quantity is not None else ''}".strip()])
    return header, rows


def _pdf_text(text: str) -> bytes:
    encoded = text.translate(TURKISH_ONLY).encode("cp1252", "replace")
    return encoded.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")


def pdf(root, status: int, layout: str) -> bytes:
    """A one-page PDF 1.4 of the note (text in Helvetica): its header and lines."""
    header, rows = summary(root, status, layout)
    texts = ["e-Irsaliye"] + [f"{label}: {value}" for label, value in header] + ["", "Sira  Mal / Hizmet  Miktar"]
    texts += ["  ".join(row) for row in rows[:PDF_LINES]]
    if len(rows) > PDF_LINES:
        texts.append(f"... {len(rows) - PDF_LINES} satir daha")
    stream = b"BT /F1 10 Tf 14 TL 50 800 Td " + b" ".join(b"(%s) Tj T*" % _pdf_text(text) for text in texts) + b" ET"
    return fakes.pdf_page(stream, b" /Encoding /WinAnsiEncoding")


def html(root, status: int, layout: str) -> str:
    """A small HTML page of the note (no script)."""
    header, rows = summary(root, status, layout)
    return format_html(
        '<!DOCTYPE html><html lang="tr"><head><meta charset="utf-8"><title>e-İrsaliye {}</title></head><body>'
        "<h1>e-İrsaliye {}</h1><p class=\"layout\">{}</p><table>{}</table><table><thead><tr><th>Sıra</th>"
        "<th>Mal / Hizmet</th><th>Miktar</th></tr></thead><tbody>{}</tbody></table></body></html>",
        header[1][1], header[1][1], layout, format_html_join("", "<tr><th>{}</th><td>{}</td></tr>", header),
        format_html_join("", "<tr><td>{}</td><td>{}</td><td>{}</td></tr>", rows),
    )


def parse_stored(xml: bytes):
    return etree.fromstring(xml, etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False))
