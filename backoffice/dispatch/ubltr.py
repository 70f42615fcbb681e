"""UBL-TR documents of dispatch, what a dispatch note (DespatchAdvice, ubl.py) and a reply (ReceiptAdvice,
receipt.py) share: the file layer (a safe parse, ZIPs), the UBL-TR schema (the OASIS UBL 2.1 XSDs as the tax
authority's UBL-TR package ships them, vendored in xsd/, see xsd/README.txt) with its messages made readable, the
readers of an element's parts, the rules both documents follow, and the packing of one XML as the platform's
zipped Base64.

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
from functools import cache
from pathlib import Path, PurePosixPath

from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop
from lxml import etree

from backoffice.core.validators import DOCUMENT_NUMBER_RE, validate_tckn, validate_vkn, validate_vkn_or_tckn

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
GUID_RE = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@dataclass
class Problem:
    line: int | None
    message: str
    kind: str  # "file", "schema" or "rule"


@dataclass
class Checked:
    """One XML of an upload as the checker found it, with the fields both documents have (read even when it has
    problems, so the user sees which document a message is about)."""
    name: str
    xml: bytes
    problems: list[Problem] = field(default_factory=list)
    number: str = ""
    uuid: str = ""
    issue_date: date | None = None
    issue_time: str = ""
    profile: str = ""
    type_code: str = ""

    @property
    def ok(self) -> bool:
        return not self.problems

    @classmethod
    def refused(cls, name: str, xml: bytes, message: str, line: int | None = None):
        return cls(name=name, xml=xml, problems=[Problem(line, message, "file")])


# --- the file: one XML, or a ZIP of several ------------------------------------------------------------------------

def upload_files(name: str, data: bytes) -> list[tuple[str, bytes, str]]:
    """(name, XML, why it is refused or "") of each file of an upload: the XML itself, or each XML of its ZIP. An
    upload refused as a whole (empty, too big, a ZIP that cannot be opened) is one such file."""
    if not data:
        return [(name, data, _("The file is empty."))]
    if len(data) > MAX_FILE_BYTES:
        return [(name, b"", _("The file is larger than %(size)s MB.") % {"size": MAX_FILE_BYTES // 2**20})]
    if data[:4] in (b"PK\x03\x04", b"PK\x05\x06") or name.lower().endswith(".zip"):
        archive, members, error = open_zip(data)
        if error:
            return [(name, b"", error)]
        return [(info.filename, *read_member(archive, info)) for info in members]
    return [(name, data, "")]


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


# --- reading an element's parts --------------------------------------------------------------------------------------

def read_header(document: Checked, root, type_code: str) -> None:
    """The fields both documents have, as the file writes them (`type_code`: the path of its type code)."""
    document.number, document.uuid = text_of(root, "cbc:ID"), text_of(root, "cbc:UUID")
    document.issue_date, document.issue_time = date_of(text_of(root, "cbc:IssueDate")), text_of(root, "cbc:IssueTime")
    document.profile, document.type_code = text_of(root, "cbc:ProfileID"), text_of(root, type_code)


def date_of(text: str) -> date | None:
    """A date as UBL writes it (YYYY-MM-DD), else None."""
    try:
        return date.fromisoformat(text) if DATE_RE.match(text) else None
    except ValueError:
        return None


def first(element, path: str):
    return element.find(path, NS) if element is not None else None


def text_of(element, path: str) -> str:
    found = first(element, path)
    return (found.text or "").strip() if found is not None else ""


def line_of(*elements) -> int | None:
    """The line of the first element given that exists (the element at fault, else its nearest parent)."""
    return next((element.sourceline for element in elements if element is not None), None)


def party_name(party) -> str:
    name = text_of(party, "cac:PartyName/cbc:Name")
    if name:
        return name
    return " ".join(filter(None, (text_of(party, "cac:Person/cbc:FirstName"),
                                  text_of(party, "cac:Person/cbc:FamilyName"))))


def party_identifier(party) -> tuple[str, object]:
    """The party's VKN or TCKN (the PartyIdentification whose schemeID says so) and its element."""
    for element in party.iterfind("cac:PartyIdentification/cbc:ID", NS) if party is not None else ():
        if (element.get("schemeID") or "").upper() in ("VKN", "TCKN"):
            return (element.text or "").strip(), element
    return "", None


def shown(value: str) -> str:
    """A value as a message quotes it ("nothing" when empty)."""
    return value if value else _("nothing")


# --- the tax authority's rules of both documents ---------------------------------------------------------------------

def value_rule(root, path: str, accepted, message: str, **values) -> list[Problem]:
    """[] when the text of `path` passes accepted(text), else `message` (naming %(value)s, as found, and `values`)
    at the element, or at the root when it is missing."""
    value = text_of(root, path)
    if accepted(value):
        return []
    return [Problem(line_of(first(root, path), root), message % {**values, "value": shown(value)}, "rule")]


def number_rule(root, malformed: str, other_year: str, refusal=lambda value: "") -> list[Problem]:
    """The number written in the file (cbc:ID): ^[A-Z0-9]{3}20[0-9]{2}[0-9]{9}$, of the issue date's year.
    `malformed` names %(value)s, `other_year` %(number)s, %(year)s and %(date)s; refusal(number) is any other
    fault of a well-formed number ("" when none)."""
    element, value, issued = first(root, "cbc:ID"), text_of(root, "cbc:ID"), text_of(root, "cbc:IssueDate")
    if not DOCUMENT_NUMBER_RE.match(value):
        message = malformed % {"value": shown(value)}
    elif not (message := refusal(value)) and DATE_RE.match(issued) and value[3:7] != issued[:4]:
        message = other_year % {"number": value, "year": value[3:7], "date": issued}
    return [Problem(line_of(element, root), message, "rule")] if message else []


def rule_customization(root) -> list[Problem]:
    return value_rule(root, "cbc:CustomizationID", lambda value: value == CUSTOMIZATION_ID,
                      _("cbc:CustomizationID must be %(expected)s (found: %(value)s)."), expected=CUSTOMIZATION_ID)


def rule_profile(root) -> list[Problem]:
    return value_rule(root, "cbc:ProfileID", lambda value: value in PROFILES,
                      _("cbc:ProfileID must be %(expected)s (found: %(value)s)."), expected=" / ".join(PROFILES))


def rule_uuid(root) -> list[Problem]:
    return value_rule(root, "cbc:UUID", GUID_RE.match,
                      _("cbc:UUID must be a GUID, 8-4-4-4-12 hexadecimal digits (found: %(value)s)."))


def address_meanings():
    return (("cbc:CitySubdivisionName", _("the district")), ("cbc:CityName", _("the city")),
            ("cac:Country/cbc:Name", _("the country")))


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
        address = first(root, f"{path}/cac:Party/cac:PostalAddress")
        if address is None:
            continue  # the schema says it is missing
        problems += [Problem(line_of(first(address, element), address),
                             _("%(party)s: the postal address has no %(element)s (%(meaning)s).")
                             % {"party": label, "element": element, "meaning": meaning}, "rule")
                     for element, meaning in address_meanings() if not text_of(address, element)]
    return problems


def identifier_error(value: str, scheme: str) -> str:
    try:
        {"VKN": validate_vkn, "TCKN": validate_tckn}.get(scheme, validate_vkn_or_tckn)(value)
    except ValidationError as error:
        return " ".join(str(message) for message in error.messages)
    return ""


def rule_party_identifiers(root) -> list[Problem]:
    """The sender and the receiver are named by a VKN (10 digits) or a TCKN (11 digits) with valid check digits."""
    problems = []
    for path, label in _parties()[:2]:
        party = first(root, f"{path}/cac:Party")
        if party is None:
            continue  # the schema says it is missing
        value, element = party_identifier(party)
        if element is None:
            problems.append(Problem(line_of(first(party, "cac:PartyIdentification"), party),
                                    _("%(party)s: no identifier with schemeID VKN or TCKN "
                                      "(cac:PartyIdentification/cbc:ID).") % {"party": label}, "rule"))
        elif error := identifier_error(value, element.get("schemeID").upper()):
            problems.append(Problem(element.sourceline, "%s: %s" % (label, error), "rule"))
    return problems


# --- what the platform gets --------------------------------------------------------------------------------------

def zipped_base64(name: str, xml: bytes) -> str:
    """Base64 text of a ZIP holding one file, the same bytes for the same input (a fixed date)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), xml,
                         compress_type=zipfile.ZIP_DEFLATED)
    return base64.b64encode(buffer.getvalue()).decode("ascii")
