"""The check of a dispatch note uploaded as UBL-TR 1.2.1 XML (or a ZIP of several) before anything is sent to
the platform, and the packing of one XML as the platform's despatchAdviceZip (document 3, section 2.9).

Three layers, each reported as a Problem with its line: the file itself (empty, too big, not XML, a DOCTYPE,
not a DespatchAdvice), the UBL-TR schema, and the tax authority's rules we can check ourselves (facts file,
"UBL-TR dispatch documents"; the schematron's DespatchAdvice pattern); the first two, and the rules a reply shares,
are ubltr.py's. The schematron itself is not run: it needs an XSLT 2.0 processor (xsd/README.txt says why).
"""

import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from django.core.exceptions import ValidationError
from django.utils import timezone
from django.utils.translation import gettext as _

from backoffice.core.payloads import decimal
from backoffice.core.validators import UNKNOWN_DRIVER_TCKN, validate_driver_tckn

from .ubltr import (
    DATE_RE,
    DESPATCH_NS,
    GUID_RE,
    NS,
    Checked,
    Problem,
    address_meanings,
    date_of,
    first,
    identifier_error,
    line_of,
    number_rule,
    parse_xml,
    party_identifier,
    party_name,
    read_header,
    rule_customization,
    rule_party_addresses,
    rule_party_identifiers,
    rule_profile,
    rule_uuid,
    schema_problems,
    shown,
    text_of,
    upload_files,
    value_rule,
    zipped_base64,
)

TYPE_CODE = "SEVK"
POSTAL_ZONE_RE = re.compile(r"^(0[1-9]|[1-7][0-9]|8[01])[0-9]{3}$")  # the schematron's DespatchAddressCheck-4
# The schematron's LicensePlateIDSchemeIDCheck: a Turkish plate is written as the province code, letters and
# digits, no spaces (34ABC123); a foreign one has schemeID YABANCIPLAKA.
PLATE_RES = {"PLAKA": re.compile(r"^(0[1-9]|[1-7][0-9]|8[01])[A-Z]+[0-9]+$"),
             "YABANCIPLAKA": re.compile(r"^[A-Z0-9_-]+$")}


@dataclass
class Despatch(Checked):
    """One XML of an upload: what the checker found, and the fields the list and the send need."""
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


# --- the upload: one XML or a ZIP of several ---------------------------------------------------------------------

def check_upload(name: str, data: bytes, *, manual_number: bool) -> list[Despatch]:
    """Every XML of the upload checked; manual_number: the 16-character number is in the file
    (useManualDespatchAdviceId), so cbc:ID is checked too."""
    return [Despatch.refused(name, xml, refusal) if refusal else check_xml(name, xml, manual_number=manual_number)
            for name, xml, refusal in upload_files(name, data)]


# --- one XML ------------------------------------------------------------------------------------------------------

def check_xml(name: str, data: bytes, *, manual_number: bool) -> Despatch:
    """One DespatchAdvice XML: file, schema and rule problems, and its fields (read even when it has problems,
    so the user sees which note a message is about)."""
    root, problem = parse_xml(data)
    if problem:
        return Despatch(name=name, xml=data, problems=[problem])
    if root.tag != f"{{{DESPATCH_NS}}}DespatchAdvice":
        return Despatch.refused(name, data, _("The document is %(root)s, not a UBL-TR dispatch note: its root element "
                                              "must be DespatchAdvice in the namespace %(namespace)s.")
                                % {"root": root.tag, "namespace": DESPATCH_NS}, root.sourceline)
    despatch = Despatch(name=name, xml=data)
    _read_fields(despatch, root)
    despatch.problems = schema_problems(root) + rule_problems(root, manual_number=manual_number)
    despatch.problems.sort(key=lambda problem: problem.line or 0)
    return despatch


def _read_fields(despatch: Despatch, root) -> None:
    read_header(despatch, root, "cbc:DespatchAdviceTypeCode")
    receiver = first(root, "cac:DeliveryCustomerParty/cac:Party")
    despatch.receiver_identifier = party_identifier(receiver)[0]
    despatch.receiver_name = party_name(receiver)
    despatch.receiver_city = text_of(receiver, "cac:PostalAddress/cbc:CityName")
    despatch.receiver_district = text_of(receiver, "cac:PostalAddress/cbc:CitySubdivisionName")
    address = first(root, "cac:Shipment/cac:Delivery/cac:DeliveryAddress")
    despatch.delivery_city = text_of(address, "cbc:CityName")
    despatch.delivery_district = text_of(address, "cbc:CitySubdivisionName")
    despatch.delivery_country = text_of(address, "cac:Country/cbc:Name")
    carrier = first(root, "cac:Shipment/cac:Delivery/cac:CarrierParty")
    despatch.carrier_title = party_name(carrier)
    despatch.carrier_identifier = party_identifier(carrier)[0] or text_of(carrier, "cac:PartyIdentification/cbc:ID")
    despatch.plate = text_of(root, "cac:Shipment/cac:ShipmentStage/cac:TransportMeans/cac:RoadTransport/"
                                 "cbc:LicensePlateID")
    despatch.drivers = [(text_of(driver, "cbc:FirstName"), text_of(driver, "cbc:FamilyName"),
                         text_of(driver, "cbc:NationalityID"))
                        for driver in root.iterfind("cac:Shipment/cac:ShipmentStage/cac:DriverPerson", NS)]
    lines = root.findall("cac:DespatchLine", NS)
    despatch.line_count = len(lines)
    despatch.lines = []
    for line in lines:
        quantity = first(line, "cbc:DeliveredQuantity")
        despatch.lines.append({"name": text_of(line, "cac:Item/cbc:Name"),
                               "quantity": decimal((quantity.text or "").strip()) if quantity is not None else None,
                               "unit": (quantity.get("unitCode") or "").strip() if quantity is not None else ""})


# --- the tax authority's rules ------------------------------------------------------------------------------------

def rule_type_code(root) -> list[Problem]:
    return value_rule(root, "cbc:DespatchAdviceTypeCode", lambda value: value == TYPE_CODE,
                      _("cbc:DespatchAdviceTypeCode must be %(expected)s (found: %(value)s)."), expected=TYPE_CODE)


def rule_number(root) -> list[Problem]:
    """The number written in the file (useManualDespatchAdviceId), of the issue date's year."""
    return number_rule(root, _("The note number (cbc:ID) must have 16 characters: a 3-character prefix, the 4-digit "
                               "year and a 9-digit counter, e.g. EIR2025000000001 (found: %(value)s)."),
                       _("The note number %(number)s is of the year %(year)s, but the note is dated %(date)s."))


def rule_delivery_address(root) -> list[Problem]:
    """The schematron's DespatchAddressCheck 1 to 4: the place the goods go to, with its postal code."""
    shipment = first(root, "cac:Shipment")
    address = first(shipment, "cac:Delivery/cac:DeliveryAddress")
    if address is None:
        return [Problem(line_of(first(shipment, "cac:Delivery"), shipment, root),
                        _("The delivery address (cac:Shipment/cac:Delivery/cac:DeliveryAddress) is missing: the tax "
                          "authority requires the district, the city, the country and the postal code of the place "
                          "the goods go to."), "rule")]
    problems = [Problem(line_of(first(address, path), address),
                        _("The delivery address has no %(element)s (%(meaning)s).")
                        % {"element": path, "meaning": meaning}, "rule")
                for path, meaning in address_meanings() if not text_of(address, path)]
    postal_zone = text_of(address, "cbc:PostalZone")
    if not POSTAL_ZONE_RE.match(postal_zone):
        problems.append(Problem(line_of(first(address, "cbc:PostalZone"), address),
                                _("The delivery address needs a postal code (cbc:PostalZone) of 5 digits starting with "
                                  "a province code 01 to 81 (found: %(value)s).") % {"value": shown(postal_zone)},
                                "rule"))
    return problems


def rule_carrier_or_driver(root) -> list[Problem]:
    """A carrier company (title and VKN/TCKN) or at least one driver (first name, family name and an 11-digit
    TCKN with its check digits, or 11111111111 when unknown); whichever is given must be right. Drivers need the
    plate (the schematron's LicensePlateIDCheck-1). UBL-TR's ShipmentStage has no CarrierParty: the carrier is
    cac:Delivery's."""
    shipment = first(root, "cac:Shipment")
    carrier = first(shipment, "cac:Delivery/cac:CarrierParty")
    drivers = shipment.findall("cac:ShipmentStage/cac:DriverPerson", NS) if shipment is not None else []
    if carrier is None and not drivers:
        return [Problem(line_of(shipment, root),
                        _("Neither a carrier company (cac:Shipment/cac:Delivery/cac:CarrierParty) nor a driver "
                          "(cac:Shipment/cac:ShipmentStage/cac:DriverPerson) is given: the tax authority requires "
                          "one of them."), "rule")]
    problems = []
    if carrier is not None:
        label = _("Carrier company (cac:CarrierParty)")
        if not party_name(carrier):
            problems.append(Problem(carrier.sourceline, _("%(party)s: the name (cac:PartyName/cbc:Name) is missing.")
                                    % {"party": label}, "rule"))
        element = first(carrier, "cac:PartyIdentification/cbc:ID")
        value = text_of(carrier, "cac:PartyIdentification/cbc:ID")
        if error := identifier_error(value, ""):
            problems.append(Problem(line_of(element, carrier), "%s: %s" % (label, error), "rule"))
    for index, driver in enumerate(drivers, 1):
        label = _("Driver %(index)s (cac:DriverPerson)") % {"index": index}
        for path, message in (("cbc:FirstName", _("%(driver)s: the first name (cbc:FirstName) is missing.")),
                              ("cbc:FamilyName", _("%(driver)s: the family name (cbc:FamilyName) is missing."))):
            if not text_of(driver, path):
                problems.append(Problem(line_of(first(driver, path), driver), message % {"driver": label}, "rule"))
        element = first(driver, "cbc:NationalityID")
        value = text_of(driver, "cbc:NationalityID")
        if not value:
            problems.append(Problem(line_of(element, driver),
                                    _("%(driver)s: the national id (cbc:NationalityID) is missing; enter %(unknown)s "
                                      "when it is unknown.") % {"driver": label, "unknown": UNKNOWN_DRIVER_TCKN},
                                    "rule"))
        else:
            try:
                validate_driver_tckn(value)
            except ValidationError as error:
                problems.append(Problem(line_of(element, driver), "%s: %s" % (label, " ".join(error.messages)),
                                        "rule"))
    plate = text_of(shipment, "cac:ShipmentStage/cac:TransportMeans/cac:RoadTransport/cbc:LicensePlateID")
    if drivers and not plate:
        problems.append(Problem(line_of(drivers[0].getparent()),
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
                                    % {"plate": value, "value": shown(scheme)}, "rule"))
        elif not PLATE_RES[scheme].match(value):
            problems.append(Problem(plate.sourceline, _("The plate %(plate)s is not written as the tax authority "
                                                        "wants: capital letters and digits without spaces, a Turkish "
                                                        "plate starting with its province code, e.g. 34ABC123.")
                                    % {"plate": value or _("nothing")}, "rule"))
    return problems


def rule_issue_date(root) -> list[Problem]:
    """The platform refuses a note dated in the future."""
    element, value = first(root, "cbc:IssueDate"), text_of(root, "cbc:IssueDate")
    issued = date_of(value)
    if issued is None:
        return []  # the schema says so
    if issued > timezone.localdate():
        return [Problem(line_of(element, root), _("The note is dated %(date)s, in the future.") % {"date": value},
                        "rule")]
    return []


def rule_despatch_date(root) -> list[Problem]:
    """The schematron's DespatchDateCheck and DespatchTimeCheck: when the goods leave."""
    delivery = first(root, "cac:Shipment/cac:Delivery")
    despatch = first(delivery, "cac:Despatch")
    problems = []
    value = text_of(despatch, "cbc:ActualDespatchDate")
    if not DATE_RE.match(value):
        problems.append(Problem(line_of(first(despatch, "cbc:ActualDespatchDate"), despatch, delivery,
                                        first(root, "cac:Shipment"), root),
                                _("The despatch date (cac:Shipment/cac:Delivery/cac:Despatch/cbc:ActualDespatchDate) "
                                  "must be a date YYYY-MM-DD (found: %(value)s).") % {"value": shown(value)}, "rule"))
    if not text_of(despatch, "cbc:ActualDespatchTime"):
        problems.append(Problem(line_of(first(despatch, "cbc:ActualDespatchTime"), despatch, delivery,
                                        first(root, "cac:Shipment"), root),
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
        quantity = first(line, "cbc:DeliveredQuantity")
        value = (quantity.text or "").strip() if quantity is not None else ""
        amount = decimal(value)
        if amount is None or amount <= 0:
            problems.append(Problem(line_of(quantity, line),
                                    _("Line %(index)s: the delivered quantity (cbc:DeliveredQuantity) must be greater "
                                      "than 0 (found: %(value)s).") % {"index": index, "value": shown(value)},
                                    "rule"))
        if quantity is not None and not (quantity.get("unitCode") or "").strip():
            problems.append(Problem(quantity.sourceline,
                                    _("Line %(index)s: the delivered quantity has no unit (unitCode), e.g. C62 for "
                                      "pieces or KGM for kilograms.") % {"index": index}, "rule"))
        if not text_of(line, "cac:Item/cbc:Name"):
            problems.append(Problem(line_of(first(line, "cac:Item/cbc:Name"), first(line, "cac:Item"), line),
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
