"""The check of a dispatch note uploaded as UBL-TR 1.2.1 XML (or a ZIP of several) before anything is sent to
the platform, and the packing of one XML as the platform's despatchAdviceZip (document 3, section 2.9).

Three layers, each reported as a Problem with its line: the file itself (empty, too big, not XML, a DOCTYPE,
not a DespatchAdvice), the UBL-TR schema (the OASIS UBL 2.1 XSDs as the tax authority's UBL-TR package ships
them, vendored in xsd/, see xsd/README.txt), and the tax authority's rules we can check ourselves (facts file,
"UBL-TR dispatch documents"; the schematron's DespatchAdvice pattern). The schematron itself is not run: it
needs an XSLT 2.0 processor (xsd/README.txt says why).

Nothing here raises on bad input, and nothing reaches the network: the parser expands no entity, loads no DTD
and refuses any DOCTYPE.
"""

import base64
import io
import re
import threading
import zipfile
import zlib
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal, InvalidOperation
from functools import cache
from pathlib import Path, PurePosixPath

from django.core.exceptions import ValidationError
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop
from lxml import etree

from backoffice.core.validators import (
    DOCUMENT_NUMBER_RE,
    UNKNOWN_DRIVER_TCKN,
    validate_driver_tckn,
    validate_tckn,
    validate_vkn,
    validate_vkn_or_tckn,
)

MAX_FILE_BYTES = 10 * 1024 * 1024  # one XML, and the uploaded file itself
MAX_ZIP_XML_FILES = 100
MAX_ZIP_XML_BYTES = 50 * 1024 * 1024  # the XMLs of one ZIP unpacked, all kept in memory until sent

DESPATCH_NS = "urn:oasis:names:specification:ubl:schema:xsd:DespatchAdvice-2"
RECEIPT_NS = "urn:oasis:names:specification:ubl:schema:xsd:ReceiptAdvice-2"
NS = {
    "cac": "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2",
    "cbc": "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2",
    "ext": "urn:oasis:names:specification:ubl:schema:xsd:CommonExtensionComponents-2",
}
# Prefixes for the schema's messages: "{urn:oasis:...CommonBasicComponents-2}ID" reads as cbc:ID.
MESSAGE_PREFIXES = {
    NS["cac"]: "cac:", NS["cbc"]: "cbc:", NS["ext"]: "ext:", DESPATCH_NS: "", RECEIPT_NS: "",
    "http://www.w3.org/2000/09/xmldsig#": "ds:", "http://uri.etsi.org/01903/v1.3.2#": "xades:",
    "urn:oasis:names:specification:ubl:schema:xsd:CommonSignatureComponents-2": "sig:",
    "urn:oasis:names:specification:ubl:schema:xsd:SignatureAggregateComponents-2": "sac:",
    "urn:oasis:names:specification:ubl:schema:xsd:SignatureBasicComponents-2": "sbc:",
}
XSD_DIR = Path(__file__).resolve().parent / "xsd"
SCHEMA_FILES = {DESPATCH_NS: "maindoc/UBL-DespatchAdvice-2.1.xsd", RECEIPT_NS: "maindoc/UBL-ReceiptAdvice-2.1.xsd"}
# Put into an empty ext:ExtensionContent before validation (the bare XSD wants one element of another namespace
# there, processContents lax): an unsigned draft keeps the place empty for the integrator's seal.
PLACEHOLDER = "{urn:x-backoffice:unsigned-draft}Placeholder"

CUSTOMIZATION_ID = "TR1.2.1"
# Document 3 / the dispatch contract: despatchProfileType 0 TEMELIRSALIYE, 1 TICARIIRSALIYE.
# The tax authority's schematron (its July 2026 update) allows these; TICARIIRSALIYE, still in the provider's
# client, is refused there, so it is refused here before it is sent.
PROFILES = ("TEMELIRSALIYE", "HKSIRSALIYE", "IDISIRSALIYE")
TYPE_CODE = "SEVK"
GUID_RE = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
POSTAL_ZONE_RE = re.compile(r"^(0[1-9]|[1-7][0-9]|8[01])[0-9]{3}$")  # the schematron's DespatchAddressCheck-4
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
# The schematron's LicensePlateIDSchemeIDCheck: a Turkish plate is written as the province code, letters and
# digits, no spaces (34ABC123); a foreign one has schemeID YABANCIPLAKA.
PLATE_RES = {"PLAKA": re.compile(r"^(0[1-9]|[1-7][0-9]|8[01])[A-Z]+[0-9]+$"),
             "YABANCIPLAKA": re.compile(r"^[A-Z0-9_-]+$")}


@dataclass
class Problem:
    line: int | None
    message: str
    kind: str  # "file", "schema" or "rule"


@dataclass
class Despatch:
    """One XML of an upload: what the checker found, and the fields the list and the send need."""
    name: str
    xml: bytes
    problems: list[Problem] = field(default_factory=list)
    number: str = ""
    uuid: str = ""
    issue_date: date | None = None
    issue_time: str = ""
    profile: str = ""
    type_code: str = ""
    receiver_identifier: str = ""
    receiver_name: str = ""
    receiver_city: str = ""
    receiver_district: str = ""
    delivery_city: str = ""
    delivery_district: str = ""
    delivery_country: str = ""
    carrier_title: str = ""
    carrier_identifier: str = ""
    plate: str = ""
    drivers: list[tuple[str, str, str]] = field(default_factory=list)  # (first name, family name, TCKN)
    line_count: int = 0
    lines: list[dict] = field(default_factory=list)  # {"name", "quantity" Decimal | None, "unit"}

    @property
    def ok(self) -> bool:
        return not self.problems


# --- the upload: one XML or a ZIP of several ---------------------------------------------------------------------

def check_upload(name: str, data: bytes, *, manual_number: bool) -> list[Despatch]:
    """Every XML of the upload checked; manual_number: the 16-character number is in the file
    (useManualDespatchAdviceId), so cbc:ID is checked too."""
    if not data:
        return [_refused(name, data, _("The file is empty."))]
    if len(data) > MAX_FILE_BYTES:
        return [_refused(name, b"", _("The file is larger than %(size)s MB.") % {"size": MAX_FILE_BYTES // 2**20})]
    if data[:4] in (b"PK\x03\x04", b"PK\x05\x06") or name.lower().endswith(".zip"):
        return _check_zip(name, data, manual_number=manual_number)
    return [check_xml(name, data, manual_number=manual_number)]


def _check_zip(name: str, data: bytes, *, manual_number: bool) -> list[Despatch]:
    archive, members, error = open_zip(data)
    if error:
        return [_refused(name, b"", error)]
    despatches = []
    for info in members:
        xml, error = read_member(archive, info)
        despatches.append(_refused(info.filename, xml, error) if error
                          else check_xml(info.filename, xml, manual_number=manual_number))
    return despatches


def open_zip(data: bytes) -> tuple[zipfile.ZipFile | None, list[zipfile.ZipInfo], str]:
    """(the archive, its XML files, "") or (None, [], why the upload is refused as a whole)."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        members = [info for info in archive.infolist() if _is_xml_member(info)]
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError):
        return None, [], _("This ZIP file cannot be opened: it is damaged or incomplete.")
    if not members:
        return None, [], _("The ZIP file holds no XML file.")
    if len(members) > MAX_ZIP_XML_FILES:
        return None, [], (_("The ZIP file holds more than %(count)s XML files; upload at most %(count)s at a time.")
                          % {"count": MAX_ZIP_XML_FILES})
    if sum(info.file_size for info in members) > MAX_ZIP_XML_BYTES:
        return None, [], (_("The XML files of this ZIP add up to more than %(size)s MB unpacked.")
                          % {"size": MAX_ZIP_XML_BYTES // 2**20})
    return archive, members, ""


def read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> tuple[bytes, str]:
    """(the XML of one file of the ZIP, "") or (its bytes, empty if unread, and why it is refused)."""
    if info.file_size > MAX_FILE_BYTES:
        return b"", _("The file is larger than %(size)s MB.") % {"size": MAX_FILE_BYTES // 2**20}
    try:
        with archive.open(info) as member:
            xml = member.read(MAX_FILE_BYTES + 1)  # the header's size may lie
    except (zipfile.BadZipFile, zlib.error, RuntimeError, ValueError, EOFError, OSError, NotImplementedError):
        return b"", _("This file of the ZIP cannot be read: it is damaged or encrypted.")
    if len(xml) > MAX_FILE_BYTES:
        return b"", _("The file is larger than %(size)s MB.") % {"size": MAX_FILE_BYTES // 2**20}
    return xml, "" if xml else _("The file is empty.")


def _is_xml_member(info: zipfile.ZipInfo) -> bool:
    path = PurePosixPath(info.filename)
    # macOS puts "._name.xml" resource forks under __MACOSX/: not documents
    return (not info.is_dir() and path.suffix.lower() == ".xml" and not path.name.startswith("._")
            and "__MACOSX" not in path.parts)


def _refused(name: str, xml: bytes, message: str, line: int | None = None) -> Despatch:
    return Despatch(name=name, xml=xml, problems=[Problem(line, message, "file")])


# --- one XML ------------------------------------------------------------------------------------------------------

def _parser() -> etree.XMLParser:
    return etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False, load_dtd=False,
                           dtd_validation=False)


def parse_xml(data: bytes):
    """(the root element, None), or (None, the file Problem that stops the check: not well-formed XML, a
    DOCTYPE). Any UBL document of the back office goes through here: no entity expanded, no DTD loaded."""
    try:
        root = etree.fromstring(data, _parser())
    except etree.XMLSyntaxError as error:
        return None, Problem(error.lineno or None, _("This is not well-formed XML: %(error)s") % {"error": error.msg},
                             "file")
    except ValueError:  # e.g. a file lxml cannot decode at all
        return None, Problem(None, _("This is not well-formed XML."), "file")
    docinfo = root.getroottree().docinfo
    if docinfo.internalDTD is not None or docinfo.externalDTD is not None or docinfo.doctype:
        return None, Problem(1, _("The file declares a DOCTYPE: UBL-TR documents have none, and it is refused for "
                                  "safety (its entities are not expanded)."), "file")
    return root, None


def check_xml(name: str, data: bytes, *, manual_number: bool) -> Despatch:
    """One DespatchAdvice XML: file, schema and rule problems, and its fields (read even when it has problems,
    so the user sees which note a message is about)."""
    root, problem = parse_xml(data)
    if problem:
        return Despatch(name=name, xml=data, problems=[problem])
    if root.tag != f"{{{DESPATCH_NS}}}DespatchAdvice":
        return _refused(name, data, _("The document is %(root)s, not a UBL-TR dispatch note: its root element must "
                                      "be DespatchAdvice in the namespace %(namespace)s.")
                        % {"root": root.tag, "namespace": DESPATCH_NS}, root.sourceline)
    despatch = Despatch(name=name, xml=data)
    _read_fields(despatch, root)
    despatch.problems = schema_problems(root) + rule_problems(root, manual_number=manual_number)
    despatch.problems.sort(key=lambda problem: problem.line or 0)
    return despatch


# --- the schema ---------------------------------------------------------------------------------------------------

_schema_lock = threading.Lock()  # one validator per process: its error_log is that of its last run


@cache
def schema(namespace: str = DESPATCH_NS) -> etree.XMLSchema:
    """The compiled UBL-TR schema of a document (DespatchAdvice, or ReceiptAdvice for replies), built once."""
    # The vendored xmldsig schema has an internal DTD with entities: our own file, parsed with the defaults.
    return etree.XMLSchema(etree.parse(str(XSD_DIR / SCHEMA_FILES[namespace])))


def schema_problems(root) -> list[Problem]:
    """The XSD's findings, each with its line and the schema's message made readable. An empty
    ext:ExtensionContent (the unsigned draft's place for the seal) is given a placeholder first; the tree is our
    parse of the upload, the bytes sent stay as uploaded."""
    for content in root.iterfind("ext:UBLExtensions/ext:UBLExtension/ext:ExtensionContent", NS):
        if not any(isinstance(child.tag, str) for child in content) and not (content.text or "").strip():
            etree.SubElement(content, PLACEHOLDER)
    namespace = etree.QName(root).namespace
    # @cache keys on the arguments as written: schema() and schema(DESPATCH_NS) would compile it twice
    validator = schema() if namespace == DESPATCH_NS else schema(namespace)
    with _schema_lock:
        if validator.validate(root):
            return []
        entries = [(entry.line, entry.message) for entry in validator.error_log]
    return [Problem(line or None, schema_message(message), "schema") for line, message in entries]


def readable(text: str) -> str:
    """"{urn:oasis:...:CommonBasicComponents-2}ID" as cbc:ID."""
    return re.sub(r"\{([^}]*)\}", lambda match: MESSAGE_PREFIXES.get(match.group(1), match.group(0)), text)


ELEMENT = r"Element '(?P<element>[^']+)'"
EXPECTED = r"Expected is (?:one of )?\( (?P<expected>.+) \)\."
# The schema's most frequent messages in the user's language (libxml2 writes them in English only); any other
# message is shown as the schema wrote it.
SCHEMA_MESSAGES = [(re.compile(pattern), message) for pattern, message in (
    (ELEMENT + r": This element is not expected\. " + EXPECTED,
     gettext_noop("Element %(element)s: this element is not expected here. Expected is %(expected)s.")),
    (ELEMENT + r": This element is not expected\.",
     gettext_noop("Element %(element)s: this element is not expected here.")),
    (ELEMENT + r": Missing child element\(s\)\. " + EXPECTED,
     gettext_noop("Element %(element)s: a required child element is missing. Expected is %(expected)s.")),
    (ELEMENT + r": '(?P<value>.*)' is not a valid value of the (?:local )?atomic type '(?P<type>[^']+)'\.",
     gettext_noop("Element %(element)s: '%(value)s' is not a valid value of the type %(type)s.")),
    (ELEMENT + r", attribute '(?P<attribute>[^']+)': The attribute '[^']+' is not allowed\.",
     gettext_noop("Element %(element)s: the attribute %(attribute)s is not allowed.")),
    (ELEMENT + r": The attribute '(?P<attribute>[^']+)' is required but missing\.",
     gettext_noop("Element %(element)s: the attribute %(attribute)s is required but missing.")),
    (ELEMENT + r": Character content other than whitespace is not allowed because the content type is "
               r"'element-only'\.",
     gettext_noop("Element %(element)s: text is not allowed here, only elements.")),
)]


def schema_message(message: str) -> str:
    # ExtensionContent's wildcard: "##other{urn:...:CommonExtensionComponents-2}*"
    message = re.sub(r"##other\{[^}]*\}\*", _("an element of another namespace"), message.strip())
    message = readable(message)
    for pattern, translated in SCHEMA_MESSAGES:
        if match := pattern.fullmatch(message):
            return _(translated) % match.groupdict()
    return message


# --- reading the note ---------------------------------------------------------------------------------------------

def _first(element, path: str):
    return element.find(path, NS) if element is not None else None


def _text(element, path: str) -> str:
    found = _first(element, path)
    return (found.text or "").strip() if found is not None else ""


def _line(*elements) -> int | None:
    """The line of the first element given that exists (the element at fault, else its nearest parent)."""
    return next((element.sourceline for element in elements if element is not None), None)


def _party_name(party) -> str:
    name = _text(party, "cac:PartyName/cbc:Name")
    if name:
        return name
    return " ".join(filter(None, (_text(party, "cac:Person/cbc:FirstName"), _text(party, "cac:Person/cbc:FamilyName"))))


def _party_identifier(party) -> tuple[str, object]:
    """The party's VKN or TCKN (the PartyIdentification whose schemeID says so) and its element."""
    for element in party.iterfind("cac:PartyIdentification/cbc:ID", NS) if party is not None else ():
        if (element.get("schemeID") or "").upper() in ("VKN", "TCKN"):
            return (element.text or "").strip(), element
    return "", None


def _quantity(text: str) -> Decimal | None:
    try:
        value = Decimal(text)
    except (InvalidOperation, ValueError):
        return None
    return value if value.is_finite() else None


def _read_fields(despatch: Despatch, root) -> None:
    despatch.number = _text(root, "cbc:ID")
    despatch.uuid = _text(root, "cbc:UUID")
    try:
        despatch.issue_date = date.fromisoformat(_text(root, "cbc:IssueDate"))
    except ValueError:
        despatch.issue_date = None
    despatch.issue_time = _text(root, "cbc:IssueTime")
    despatch.profile = _text(root, "cbc:ProfileID")
    despatch.type_code = _text(root, "cbc:DespatchAdviceTypeCode")
    receiver = _first(root, "cac:DeliveryCustomerParty/cac:Party")
    despatch.receiver_identifier = _party_identifier(receiver)[0]
    despatch.receiver_name = _party_name(receiver)
    despatch.receiver_city = _text(receiver, "cac:PostalAddress/cbc:CityName")
    despatch.receiver_district = _text(receiver, "cac:PostalAddress/cbc:CitySubdivisionName")
    address = _first(root, "cac:Shipment/cac:Delivery/cac:DeliveryAddress")
    despatch.delivery_city = _text(address, "cbc:CityName")
    despatch.delivery_district = _text(address, "cbc:CitySubdivisionName")
    despatch.delivery_country = _text(address, "cac:Country/cbc:Name")
    carrier = _first(root, "cac:Shipment/cac:Delivery/cac:CarrierParty")
    despatch.carrier_title = _party_name(carrier)
    despatch.carrier_identifier = _party_identifier(carrier)[0] or _text(carrier, "cac:PartyIdentification/cbc:ID")
    despatch.plate = _text(root, "cac:Shipment/cac:ShipmentStage/cac:TransportMeans/cac:RoadTransport/"
                                 "cbc:LicensePlateID")
    despatch.drivers = [(_text(driver, "cbc:FirstName"), _text(driver, "cbc:FamilyName"),
                         _text(driver, "cbc:NationalityID"))
                        for driver in root.iterfind("cac:Shipment/cac:ShipmentStage/cac:DriverPerson", NS)]
    lines = root.findall("cac:DespatchLine", NS)
    despatch.line_count = len(lines)
    despatch.lines = []
    for line in lines:
        quantity = _first(line, "cbc:DeliveredQuantity")
        despatch.lines.append({"name": _text(line, "cac:Item/cbc:Name"),
                               "quantity": _quantity((quantity.text or "").strip()) if quantity is not None else None,
                               "unit": (quantity.get("unitCode") or "").strip() if quantity is not None else ""})


# --- the tax authority's rules ------------------------------------------------------------------------------------

def _found(value: str) -> str:
    return value if value else _("nothing")


def rule_customization(root) -> list[Problem]:
    element = _first(root, "cbc:CustomizationID")
    value = _text(root, "cbc:CustomizationID")
    if value == CUSTOMIZATION_ID:
        return []
    return [Problem(_line(element, root), _("cbc:CustomizationID must be %(expected)s (found: %(value)s).")
                    % {"expected": CUSTOMIZATION_ID, "value": _found(value)}, "rule")]


def rule_profile(root) -> list[Problem]:
    value = _text(root, "cbc:ProfileID")
    if value in PROFILES:
        return []
    return [Problem(_line(_first(root, "cbc:ProfileID"), root),
                    _("cbc:ProfileID must be %(expected)s (found: %(value)s).")
                    % {"expected": " / ".join(PROFILES), "value": _found(value)}, "rule")]


def rule_type_code(root) -> list[Problem]:
    value = _text(root, "cbc:DespatchAdviceTypeCode")
    if value == TYPE_CODE:
        return []
    return [Problem(_line(_first(root, "cbc:DespatchAdviceTypeCode"), root),
                    _("cbc:DespatchAdviceTypeCode must be %(expected)s (found: %(value)s).")
                    % {"expected": TYPE_CODE, "value": _found(value)}, "rule")]


def rule_uuid(root) -> list[Problem]:
    value = _text(root, "cbc:UUID")
    if GUID_RE.match(value):
        return []
    return [Problem(_line(_first(root, "cbc:UUID"), root),
                    _("cbc:UUID must be a GUID, 8-4-4-4-12 hexadecimal digits (found: %(value)s).")
                    % {"value": _found(value)}, "rule")]


def rule_number(root) -> list[Problem]:
    """The number written in the file (useManualDespatchAdviceId): ^[A-Z0-9]{3}20[0-9]{2}[0-9]{9}$, of the
    issue date's year."""
    element = _first(root, "cbc:ID")
    value = _text(root, "cbc:ID")
    if not DOCUMENT_NUMBER_RE.match(value):
        return [Problem(_line(element, root),
                        _("The note number (cbc:ID) must have 16 characters: a 3-character prefix, the 4-digit year "
                          "and a 9-digit counter, e.g. EIR2025000000001 (found: %(value)s).")
                        % {"value": _found(value)}, "rule")]
    issue_date = _text(root, "cbc:IssueDate")
    if DATE_RE.match(issue_date) and value[3:7] != issue_date[:4]:
        return [Problem(_line(element, root),
                        _("The note number %(number)s is of the year %(year)s, but the note is dated %(date)s.")
                        % {"number": value, "year": value[3:7], "date": issue_date}, "rule")]
    return []


def _address_meanings():
    return (("cbc:CitySubdivisionName", _("the district")), ("cbc:CityName", _("the city")),
            ("cac:Country/cbc:Name", _("the country")))


def rule_delivery_address(root) -> list[Problem]:
    """The schematron's DespatchAddressCheck 1 to 4: the place the goods go to, with its postal code."""
    shipment = _first(root, "cac:Shipment")
    address = _first(shipment, "cac:Delivery/cac:DeliveryAddress")
    if address is None:
        return [Problem(_line(_first(shipment, "cac:Delivery"), shipment, root),
                        _("The delivery address (cac:Shipment/cac:Delivery/cac:DeliveryAddress) is missing: the tax "
                          "authority requires the district, the city, the country and the postal code of the place "
                          "the goods go to."), "rule")]
    problems = [Problem(_line(_first(address, path), address),
                        _("The delivery address has no %(element)s (%(meaning)s).")
                        % {"element": path, "meaning": meaning}, "rule")
                for path, meaning in _address_meanings() if not _text(address, path)]
    postal_zone = _text(address, "cbc:PostalZone")
    if not POSTAL_ZONE_RE.match(postal_zone):
        problems.append(Problem(_line(_first(address, "cbc:PostalZone"), address),
                                _("The delivery address needs a postal code (cbc:PostalZone) of 5 digits starting with "
                                  "a province code 01 to 81 (found: %(value)s).") % {"value": _found(postal_zone)},
                                "rule"))
    return problems


def _parties():
    return (("cac:DespatchSupplierParty", _("Sender (cac:DespatchSupplierParty)")),
            ("cac:DeliveryCustomerParty", _("Receiver (cac:DeliveryCustomerParty)")),
            ("cac:BuyerCustomerParty", _("Buyer (cac:BuyerCustomerParty)")),
            ("cac:SellerSupplierParty", _("Seller (cac:SellerSupplierParty)")),
            ("cac:OriginatorCustomerParty", _("Originator (cac:OriginatorCustomerParty)")))


def rule_party_addresses(root) -> list[Problem]:
    """The parties' postal addresses carry the district, the city and the country (facts file)."""
    problems = []
    for path, label in _parties():
        address = _first(root, f"{path}/cac:Party/cac:PostalAddress")
        if address is None:
            continue  # the schema says it is missing
        problems += [Problem(_line(_first(address, element), address),
                             _("%(party)s: the postal address has no %(element)s (%(meaning)s).")
                             % {"party": label, "element": element, "meaning": meaning}, "rule")
                     for element, meaning in _address_meanings() if not _text(address, element)]
    return problems


def _identifier_error(value: str, scheme: str) -> str:
    try:
        {"VKN": validate_vkn, "TCKN": validate_tckn}.get(scheme, validate_vkn_or_tckn)(value)
    except ValidationError as error:
        return " ".join(str(message) for message in error.messages)
    return ""


def rule_party_identifiers(root) -> list[Problem]:
    """The sender and the receiver are named by a VKN (10 digits) or a TCKN (11 digits) with valid check digits."""
    problems = []
    for path, label in _parties()[:2]:
        party = _first(root, f"{path}/cac:Party")
        if party is None:
            continue  # the schema says it is missing
        value, element = _party_identifier(party)
        if element is None:
            problems.append(Problem(_line(_first(party, "cac:PartyIdentification"), party),
                                    _("%(party)s: no identifier with schemeID VKN or TCKN "
                                      "(cac:PartyIdentification/cbc:ID).") % {"party": label}, "rule"))
        elif error := _identifier_error(value, element.get("schemeID").upper()):
            problems.append(Problem(element.sourceline, "%s: %s" % (label, error), "rule"))
    return problems


def rule_carrier_or_driver(root) -> list[Problem]:
    """A carrier company (title and VKN/TCKN) or at least one driver (first name, family name and an 11-digit
    TCKN with its check digits, or 11111111111 when unknown); whichever is given must be right. Drivers need the
    plate (the schematron's LicensePlateIDCheck-1). UBL-TR's ShipmentStage has no CarrierParty: the carrier is
    cac:Delivery's."""
    shipment = _first(root, "cac:Shipment")
    carrier = _first(shipment, "cac:Delivery/cac:CarrierParty")
    drivers = shipment.findall("cac:ShipmentStage/cac:DriverPerson", NS) if shipment is not None else []
    if carrier is None and not drivers:
        return [Problem(_line(shipment, root),
                        _("Neither a carrier company (cac:Shipment/cac:Delivery/cac:CarrierParty) nor a driver "
                          "(cac:Shipment/cac:ShipmentStage/cac:DriverPerson) is given: the tax authority requires "
                          "one of them."), "rule")]
    problems = []
    if carrier is not None:
        label = _("Carrier company (cac:CarrierParty)")
        if not _party_name(carrier):
            problems.append(Problem(carrier.sourceline, _("%(party)s: the name (cac:PartyName/cbc:Name) is missing.")
                                    % {"party": label}, "rule"))
        element = _first(carrier, "cac:PartyIdentification/cbc:ID")
        value = _text(carrier, "cac:PartyIdentification/cbc:ID")
        if error := _identifier_error(value, ""):
            problems.append(Problem(_line(element, carrier), "%s: %s" % (label, error), "rule"))
    for index, driver in enumerate(drivers, 1):
        label = _("Driver %(index)s (cac:DriverPerson)") % {"index": index}
        for path, message in (("cbc:FirstName", _("%(driver)s: the first name (cbc:FirstName) is missing.")),
                              ("cbc:FamilyName", _("%(driver)s: the family name (cbc:FamilyName) is missing."))):
            if not _text(driver, path):
                problems.append(Problem(_line(_first(driver, path), driver), message % {"driver": label}, "rule"))
        element = _first(driver, "cbc:NationalityID")
        value = _text(driver, "cbc:NationalityID")
        if not value:
            problems.append(Problem(_line(element, driver),
                                    _("%(driver)s: the national id (cbc:NationalityID) is missing; enter %(unknown)s "
                                      "when it is unknown.") % {"driver": label, "unknown": UNKNOWN_DRIVER_TCKN},
                                    "rule"))
        else:
            try:
                validate_driver_tckn(value)
            except ValidationError as error:
                problems.append(Problem(_line(element, driver), "%s: %s" % (label, " ".join(error.messages)),
                                        "rule"))
    plate = _text(shipment, "cac:ShipmentStage/cac:TransportMeans/cac:RoadTransport/cbc:LicensePlateID")
    if drivers and not plate:
        problems.append(Problem(_line(drivers[0].getparent()),
                                _("Drivers are given but no vehicle plate (cac:ShipmentStage/cac:TransportMeans/"
                                  "cac:RoadTransport/cbc:LicensePlateID): the tax authority requires it."), "rule"))
    return problems


def rule_plates(root) -> list[Problem]:
    """Each vehicle plate has schemeID PLAKA (written 34ABC123, no spaces) or YABANCIPLAKA (a foreign plate)."""
    problems = []
    for plate in root.iterfind("cac:Shipment/cac:ShipmentStage/cac:TransportMeans/cac:RoadTransport/"
                               "cbc:LicensePlateID", NS):
        scheme, value = plate.get("schemeID") or "", " ".join((plate.text or "").split())
        if scheme not in PLATE_RES:
            problems.append(Problem(plate.sourceline, _("The plate %(plate)s needs schemeID PLAKA, or YABANCIPLAKA for "
                                                        "a foreign vehicle (found: %(value)s).")
                                    % {"plate": value, "value": _found(scheme)}, "rule"))
        elif not PLATE_RES[scheme].match(value):
            problems.append(Problem(plate.sourceline, _("The plate %(plate)s is not written as the tax authority "
                                                        "wants: capital letters and digits without spaces, a Turkish "
                                                        "plate starting with its province code, e.g. 34ABC123.")
                                    % {"plate": value or _("nothing")}, "rule"))
    return problems


def rule_issue_date(root) -> list[Problem]:
    """The platform refuses a note dated in the future."""
    element, value = _first(root, "cbc:IssueDate"), _text(root, "cbc:IssueDate")
    try:
        issued = date.fromisoformat(value)
    except ValueError:
        return []  # the schema says so
    if issued > timezone.localdate():
        return [Problem(_line(element, root), _("The note is dated %(date)s, in the future.") % {"date": value},
                        "rule")]
    return []


def rule_despatch_date(root) -> list[Problem]:
    """The schematron's DespatchDateCheck and DespatchTimeCheck: when the goods leave."""
    delivery = _first(root, "cac:Shipment/cac:Delivery")
    despatch = _first(delivery, "cac:Despatch")
    problems = []
    value = _text(despatch, "cbc:ActualDespatchDate")
    if not DATE_RE.match(value):
        problems.append(Problem(_line(_first(despatch, "cbc:ActualDespatchDate"), despatch, delivery,
                                      _first(root, "cac:Shipment"), root),
                                _("The despatch date (cac:Shipment/cac:Delivery/cac:Despatch/cbc:ActualDespatchDate) "
                                  "must be a date YYYY-MM-DD (found: %(value)s).") % {"value": _found(value)}, "rule"))
    if not _text(despatch, "cbc:ActualDespatchTime"):
        problems.append(Problem(_line(_first(despatch, "cbc:ActualDespatchTime"), despatch, delivery,
                                      _first(root, "cac:Shipment"), root),
                                _("The despatch time (cac:Shipment/cac:Delivery/cac:Despatch/cbc:ActualDespatchTime) "
                                  "is missing."), "rule"))
    return problems


def rule_lines(root) -> list[Problem]:
    """At least one cac:DespatchLine; each with a quantity greater than 0, its unitCode and the item's name."""
    lines = root.findall("cac:DespatchLine", NS)
    if not lines:
        return [Problem(root.sourceline, _("The note has no line (cac:DespatchLine)."), "rule")]
    problems = []
    for index, line in enumerate(lines, 1):
        quantity = _first(line, "cbc:DeliveredQuantity")
        value = (quantity.text or "").strip() if quantity is not None else ""
        amount = _quantity(value)
        if amount is None or amount <= 0:
            problems.append(Problem(_line(quantity, line),
                                    _("Line %(index)s: the delivered quantity (cbc:DeliveredQuantity) must be greater "
                                      "than 0 (found: %(value)s).") % {"index": index, "value": _found(value)},
                                    "rule"))
        if quantity is not None and not (quantity.get("unitCode") or "").strip():
            problems.append(Problem(quantity.sourceline,
                                    _("Line %(index)s: the delivered quantity has no unit (unitCode), e.g. C62 for "
                                      "pieces or KGM for kilograms.") % {"index": index}, "rule"))
        if not _text(line, "cac:Item/cbc:Name"):
            problems.append(Problem(_line(_first(line, "cac:Item/cbc:Name"), _first(line, "cac:Item"), line),
                                    _("Line %(index)s: the item has no name (cac:Item/cbc:Name).") % {"index": index},
                                    "rule"))
    return problems


RULES = (rule_customization, rule_profile, rule_type_code, rule_uuid, rule_issue_date, rule_party_identifiers,
         rule_party_addresses,
         rule_delivery_address, rule_despatch_date, rule_carrier_or_driver, rule_plates, rule_lines)


def rule_problems(root, *, manual_number: bool) -> list[Problem]:
    problems = [problem for rule in RULES for problem in rule(root)]
    if manual_number:
        problems += rule_number(root)
    return problems


# --- what the platform gets ---------------------------------------------------------------------------------------

def despatch_zip(despatch: Despatch) -> str:
    """despatchAdviceZip of document 3, 2.9: Base64 text of a ZIP holding the XML, as uploaded, named
    <uuid>.xml (or after the uploaded file when the UUID is not a GUID)."""
    if GUID_RE.match(despatch.uuid):
        stem = despatch.uuid
    else:
        stem = re.sub(r"[^\w.-]", "_", PurePosixPath(despatch.name.replace("\\", "/")).stem) or "despatch"
    return zipped_base64(f"{stem}.xml", despatch.xml)


def zipped_base64(name: str, xml: bytes) -> str:
    """Base64 text of a ZIP holding one file, the same bytes for the same input (a fixed date)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), xml,
                         compress_type=zipfile.ZIP_DEFLATED)
    return base64.b64encode(buffer.getvalue()).decode("ascii")
