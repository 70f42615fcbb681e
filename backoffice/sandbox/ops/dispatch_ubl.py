"""The UBL side of a dispatch note (document 3, 2.9; the facts file's "UBL-TR dispatch documents"): reading an
uploaded DespatchAdvice (also what the reply module reads a ReceiptAdvice with), the UBL-TR 1.2.1 DespatchAdvice
written from a JSON note, and the PDF and HTML of a note.

Choices where the documents say "not shown":
- The written UBL is an unsigned draft (ext:ExtensionContent empty, the integrator's seal goes there). The sender
  is the sandbox customer, with a VKN decided by its customerUniqueId and an address in Kadıköy, İstanbul (an
  incoming note the sandbox makes up names its own sender). The carrier's address is not in the JSON model: its
  PostalAddress repeats the delivery address. Prices are not in a DespatchAdvice; payableAmount is the shipment's
  GoodsItem/ValueAmount.
- The PDF and HTML are drawn from the note's UBL (the uploaded one for a UBL note), so both forms look alike. The
  PDF writes Turkish letters outside its font's encoding (ş ğ ı İ Ş Ğ) without their marks.
"""

import base64
import binascii
import hashlib
import io
import re
import zipfile
import zlib
from datetime import date
from decimal import Decimal

from django.utils.html import format_html, format_html_join
from lxml import etree
from stdnum.tr import vkn

from .. import fakes
from .common import Problems, blank, decimal, document_root, element_maker, moment, vkn_tckn_problem
from .dispatch_rules import DESPATCH_TYPES, PROFILES, TURKISH_STATUS_NAMES, code_of, day, identifier_kind
from .dispatch_rules import number_problem

MAX_XML_BYTES = 20 * 1024 * 1024

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


def read_upload(text, problems: Problems, place: str = "despatchAdviceZip", root_tag: str = DESPATCH_ADVICE):
    """(XML bytes, root) of an upload (place names the field): Base64 of a ZIP holding one XML whose root is
    root_tag (a DespatchAdvice by default); None with the problem added when it is not one."""
    namespace, name = etree.QName(root_tag).namespace, etree.QName(root_tag).localname
    if blank(text):
        problems.add(place, f"The {place} field is required: the Base64 text of a ZIP holding one {name} XML.")
        return None
    try:
        raw = base64.b64decode(text.strip(), validate=True)
    except (binascii.Error, ValueError, AttributeError):
        problems.add(place, f"{place} is not Base64 text.")
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
        problems.add(place, f"{place} is not a readable ZIP file ({error}).")
        return None
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    try:
        root = etree.fromstring(content, parser)
    except etree.XMLSyntaxError as error:
        problems.add(place, f"{member.filename} is not well-formed XML: {error}.")
        return None
    if root.tag != root_tag:
        problems.add(place, f"{member.filename} is not a UBL {name}: its root element is "
                            f"{etree.QName(root).localname} ({etree.QName(root).namespace or 'no namespace'}), not "
                            f"{name} ({namespace}).")
        return None
    return content, root


def got(value) -> str:
    return "" if blank(value) else f" (got '{value}')"


def text_of(element, path: str) -> str:
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
    name = text_of(party, "cac:PartyName/cbc:Name") or " ".join(
        part for part in (text_of(party, "cac:Person/cbc:FirstName"), text_of(party, "cac:Person/cbc:FamilyName"))
        if part)
    return identifier, name


def upload_facts(root, problems: Problems, today: date, manual: bool) -> dict:
    """What the service takes from an uploaded note: {uuid, number, issueDate, issueTime, receiver (VKN/TCKN,
    name)}, with a problem for each that is missing or wrong."""
    place = "despatchAdviceZip"
    facts = {"uuid": text_of(root, "cbc:UUID").lower(), "number": text_of(root, "cbc:ID"),
             "issueDate": text_of(root, "cbc:IssueDate"), "issueTime": text_of(root, "cbc:IssueTime")}
    if not re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", facts["uuid"]):
        problems.add(place, f"cbc:UUID must be a GUID, the note's id (got '{text_of(root, 'cbc:UUID')}').")
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
                            f"/cbc:ID, schemeID VKN or TCKN) {reason}{got(identifier)}.")
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


def incoming_facts(root) -> dict:
    """What an incoming note's list item and replies need from its DespatchAdvice: the sender, issue date and
    time, profile, lines {id, quantity, unitCode, name} and the payable amount (GoodsItem/ValueAmount)."""
    sender_id, sender = party_of(root.find("cac:DespatchSupplierParty/cac:Party", XPATH_NS))
    lines = []
    for line in root.findall("cac:DespatchLine", XPATH_NS):
        quantity = line.find("cbc:DeliveredQuantity", XPATH_NS)
        lines.append({"id": text_of(line, "cbc:ID"), "name": text_of(line, "cac:Item/cbc:Name"),
                      "quantity": (quantity.text or "0").strip() if quantity is not None else "0",
                      "unitCode": quantity.get("unitCode", "C62") if quantity is not None else "C62"})
    value = root.find("cac:Shipment/cac:GoodsItem/cbc:ValueAmount", XPATH_NS)
    amount = decimal(value.text) if value is not None else None
    return {"sender": {"vknTckn": sender_id, "title": sender}, "issueDate": text_of(root, "cbc:IssueDate"),
            "issueTime": text_of(root, "cbc:IssueTime"), "profile": text_of(root, "cbc:ProfileID") or "TEMELIRSALIYE",
            "lines": lines, "payableAmount": float(amount) if amount is not None else None,
            "currencyCode": value.get("currencyID", "TRY") if value is not None else "TRY"}


# --- the UBL-TR 1.2.1 DespatchAdvice of a JSON note -------------------------------------------------------------

# The sandbox customer's address as add_address takes it: district, city, country, street, postal zone.
COMPANY_ADDRESS = ("Kadıköy", "İstanbul", "Türkiye", "Caferağa Mah. Moda Cad. No:1", "34710")


def company_vkn(customer) -> str:
    """The sandbox customer's own VKN, decided by its customerUniqueId (check digit included)."""
    digest = int.from_bytes(hashlib.sha256(f"company:{customer.customer_unique_id}".encode()).digest()[:8], "big")
    base = str(digest % 900_000_000 + 100_000_000)
    return base + vkn.calc_check_digit(base)


add = element_maker(NS)


def plain(value) -> str:
    """A JSON number as UBL writes it: no exponent, no trailing zeros."""
    number = value if isinstance(value, Decimal) else decimal(value)
    return format(number.normalize(), "f") if number is not None else "0"


def add_address(parent, tag: str, district, city, country, street=None, postal_zone=None) -> None:
    element = add(parent, tag)
    if street:
        add(element, "cbc:StreetName", street)
    add(element, "cbc:CitySubdivisionName", district or "")  # the district (ilçe)
    add(element, "cbc:CityName", city or "")  # the province (il)
    if postal_zone:
        add(element, "cbc:PostalZone", postal_zone)
    add(add(element, "cac:Country"), "cbc:Name", country or "Türkiye")


def add_party(parent, identifier: str, name: str, surname, address: tuple) -> None:
    party = add(parent, "cac:Party")
    add(add(party, "cac:PartyIdentification"), "cbc:ID", identifier, schemeID=identifier_kind(identifier))
    person = len(identifier) == 11
    if not person:
        add(add(party, "cac:PartyName"), "cbc:Name", name)
    add_address(party, "cac:PostalAddress", *address)
    if person:
        first, family = (name, surname) if surname else (name.rpartition(" ")[0] or name, name.rpartition(" ")[2])
        holder = add(party, "cac:Person")
        add(holder, "cbc:FirstName", first)
        add(holder, "cbc:FamilyName", family)


def add_signature(root, identifier: str, number: str) -> None:
    """Who seals the document (UBL-TR requires the element; the seal itself goes into the UBLExtensions)."""
    signature = add(root, "cac:Signature")
    add(signature, "cbc:ID", identifier, schemeID="VKN_TCKN")
    signatory = add(signature, "cac:SignatoryParty")
    add(add(signatory, "cac:PartyIdentification"), "cbc:ID", identifier, schemeID="VKN")
    add_address(signatory, "cac:PostalAddress", *COMPANY_ADDRESS)
    add(add(add(signature, "cac:DigitalSignatureAttachment"), "cac:ExternalReference"), "cbc:URI",
        f"#Signature_{number}")


def despatch_xml(doc, customer, sender: tuple[str, str] | None = None) -> bytes:
    """The note as a UBL-TR 1.2.1 DespatchAdvice (UTF-8, with its XML declaration); the sender (VKN, title) is
    the customer unless given."""
    data = doc.data
    general, book = data.get("generalInfo") or {}, data.get("addressBook") or {}
    delivery, shipment = data.get("deliveryAddressInfo") or {}, data.get("despatchShipmentInfo") or {}
    lines = data.get("despatchLines") or []
    supplier, supplier_name = sender or (company_vkn(customer), customer.name)
    root = document_root(DESPATCH_ADVICE, NS, PROFILES[code_of(general.get("despatchProfileType"), PROFILES, 0)],
                         doc.number, doc.key, data["issueDate"], data["issueTime"])
    add(root, "cbc:DespatchAdviceTypeCode", DESPATCH_TYPES[code_of(general.get("despatchType"), DESPATCH_TYPES, 1)])
    for note in data.get("notes") or []:
        if note.get("note"):
            add(root, "cbc:Note", note["note"])
    add(root, "cbc:LineCountNumeric", len(lines))
    _references(root, data)
    add_signature(root, supplier, doc.number)
    add_party(add(root, "cac:DespatchSupplierParty"), supplier, supplier_name, None, COMPANY_ADDRESS)
    add_party(add(root, "cac:DeliveryCustomerParty"), book["identificationNumber"], book["name"], None,
           (book.get("receiverDistrict") or delivery.get("district"), book.get("receiverCity") or delivery.get("city"),
            book.get("receiverCountry") or delivery.get("countryName")))
    for name, tag in (("despatchBuyerCustomerInfo", "cac:BuyerCustomerParty"),
                      ("sellerSupplierInfo", "cac:SellerSupplierParty")):
        party = data.get(name) or {}
        if not blank(party.get("identificationNumber")):
            add_party(add(root, tag), party["identificationNumber"], party.get("name") or "",
                      party.get("personSurName"), (party.get("district"), party.get("city"), party.get("countryName")))
    _shipment(root, data, general, delivery, shipment)
    for index, line in enumerate(lines, start=1):
        _despatch_line(root, index, line)
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)


def _references(root, data: dict) -> None:
    for reference in data.get("customDocumentReferenceList") or []:
        # Inner names are not shown in document 3: the sandbox reads them spelled so, as the rest of the model.
        if not blank(reference.get("id")):
            element = add(root, "cac:AdditionalDocumentReference")
            add(element, "cbc:ID", reference["id"])
            add(element, "cbc:IssueDate", day(reference.get("issueDate")) or data["issueDate"])
            for name, tag in (("documentTypeCode", "cbc:DocumentTypeCode"), ("documentType", "cbc:DocumentType")):
                if not blank(reference.get(name)):
                    add(element, tag, reference[name])


def _despatch_line(root, index: int, line: dict) -> None:
    element = add(root, "cac:DespatchLine")
    add(element, "cbc:ID", index)
    add(element, "cbc:DeliveredQuantity", plain(line.get("amount")), unitCode=line.get("unitCode") or "C62")
    add(add(element, "cac:OrderLineReference"), "cbc:LineID", index)
    item = add(element, "cac:Item")
    add(item, "cbc:Name", line.get("productName") or "")
    if not blank(line.get("manufacturersItemIdentification")):
        add(add(item, "cac:ManufacturersItemIdentification"), "cbc:ID", line["manufacturersItemIdentification"])


def _shipment(root, data: dict, general: dict, delivery: dict, shipment: dict) -> None:
    element = add(root, "cac:Shipment")
    add(element, "cbc:ID", "1")
    if general.get("payableAmount") is not None:
        goods = add(element, "cac:GoodsItem")
        currency = general.get("currencyCode") or "TRY"
        add(goods, "cbc:ValueAmount", plain(general["payableAmount"]), currencyID=currency)
    drivers = shipment.get("driverLines") or []
    plate = shipment.get("shipmentPlateNo")
    if plate or drivers:
        stage = add(element, "cac:ShipmentStage")
        if plate:
            add(add(add(stage, "cac:TransportMeans"), "cac:RoadTransport"), "cbc:LicensePlateID", plate,
                 schemeID="PLAKA")
        for driver in drivers:
            person = add(stage, "cac:DriverPerson")
            add(person, "cbc:FirstName", driver.get("driverName") or "")
            add(person, "cbc:FamilyName", driver.get("driverSurname") or "")
            add(person, "cbc:Title", "Şoför")
            add(person, "cbc:NationalityID", driver.get("driverTckn") or "")
    element_delivery = add(element, "cac:Delivery")
    address = (delivery.get("district"), delivery.get("city"), delivery.get("countryName"), None,
               delivery.get("zipCode"))
    add_address(element_delivery, "cac:DeliveryAddress", *address)
    if not blank(shipment.get("shipmentSenderTcknVkn")):
        carrier = add(element_delivery, "cac:CarrierParty")
        identifier = shipment["shipmentSenderTcknVkn"]
        add(add(carrier, "cac:PartyIdentification"), "cbc:ID", identifier, schemeID=identifier_kind(identifier))
        add(add(carrier, "cac:PartyName"), "cbc:Name", shipment.get("shipmentSenderTitle") or "")
        add_address(carrier, "cac:PostalAddress", *address)
    shipped = moment((data.get("orderInfo") or {}).get("shipmentDate") or "")
    despatch = add(element_delivery, "cac:Despatch")
    add(despatch, "cbc:ActualDespatchDate", shipped.date().isoformat() if shipped else data["issueDate"])
    add(despatch, "cbc:ActualDespatchTime", shipped.strftime("%H:%M:%S") if shipped else data["issueTime"])


# --- PDF and HTML, drawn from the note's UBL ----------------------------------------------------------------------

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
    kind = f"{text_of(root, 'cbc:ProfileID')}, {text_of(root, 'cbc:DespatchAdviceTypeCode')}"
    header = [("Belge", f"e-İrsaliye ({kind})"),
              ("İrsaliye No", text_of(root, "cbc:ID")), ("ETTN", text_of(root, "cbc:UUID")),
              ("Düzenleme Tarihi", f"{text_of(root, 'cbc:IssueDate')} {text_of(root, 'cbc:IssueTime')}".strip()),
              ("Gönderici", f"{supplier} ({supplier_id})"), ("Alıcı", f"{receiver} ({receiver_id})"),
              ("Teslimat Adresi", " / ".join(part for part in (
                  text_of(address, "cbc:CitySubdivisionName"), text_of(address, "cbc:CityName"),
                  text_of(address, "cac:Country/cbc:Name")) if part))]
    carrier = delivery.find("cac:CarrierParty", XPATH_NS) if delivery is not None else None
    if carrier is not None:
        carrier_id, carrier_name = party_of(carrier)
        header.append(("Taşıyıcı", f"{carrier_name} ({carrier_id})"))
    for driver in root.findall("cac:Shipment/cac:ShipmentStage/cac:DriverPerson", XPATH_NS):
        header.append(("Şoför", f"{text_of(driver, 'cbc:FirstName')} {text_of(driver, 'cbc:FamilyName')} "
                                f"({text_of(driver, 'cbc:NationalityID')})"))
    plate = text_of(root, "cac:Shipment/cac:ShipmentStage/cac:TransportMeans/cac:RoadTransport/cbc:LicensePlateID")
    if plate:
        header.append(("Plaka", plate))
    despatched = f"{text_of(delivery, 'cac:Despatch/cbc:ActualDespatchDate')} " \
                 f"{text_of(delivery, 'cac:Despatch/cbc:ActualDespatchTime')}".strip()
    if despatched:
        header.append(("Sevk Tarihi", despatched))
    header += [("Durum", f"{TURKISH_STATUS_NAMES.get(status, status)} ({status})"), ("Tasarım", layout)]
    header += [("Not", note.text or "") for note in root.findall("cbc:Note", XPATH_NS)]
    rows = []
    for line in root.findall("cac:DespatchLine", XPATH_NS):
        quantity = line.find("cbc:DeliveredQuantity", XPATH_NS)
        rows.append([text_of(line, "cbc:ID"), text_of(line, "cac:Item/cbc:Name"),
                     f"{(quantity.text or '').strip() if quantity is not None else ''} "
                     f"{quantity.get('unitCode', '') if quantity is not None else ''}".strip()])
    return header, rows


def pdf(root, status: int, layout: str) -> bytes:
    """A one-page PDF 1.4 of the note (text in Helvetica): its header and lines."""
    header, rows = summary(root, status, layout)
    return drawn_pdf("e-Irsaliye", header, ("Sira", "Mal / Hizmet", "Miktar"), rows)


def drawn_pdf(title: str, header: list, columns: tuple, rows: list) -> bytes:
    """A one-page PDF 1.4 (text in Helvetica): a title, the header rows, then the line rows under their columns."""
    return fakes.text_pdf([title] + [f"{label}: {value}" for label, value in header] + ["", "  ".join(columns)],
                          ["  ".join(row) for row in rows])


def html(root, status: int, layout: str) -> str:
    """A small HTML page of the note (no script)."""
    header, rows = summary(root, status, layout)
    return drawn_html("e-İrsaliye", header, layout, ("Sıra", "Mal / Hizmet", "Miktar"), rows)


def drawn_html(title: str, header: list, layout: str, columns: tuple, rows: list) -> str:
    """A small HTML page (no script): the title with the document's number (header[1]), the header, the lines."""
    cells = "".join("<td>{}</td>" for _ in columns)
    return format_html(
        '<!DOCTYPE html><html lang="tr"><head><meta charset="utf-8"><title>{} {}</title></head><body>'
        "<h1>{} {}</h1><p class=\"layout\">{}</p><table>{}</table><table><thead><tr>{}</tr></thead><tbody>{}"
        "</tbody></table></body></html>",
        title, header[1][1], title, header[1][1], layout,
        format_html_join("", "<tr><th>{}</th><td>{}</td></tr>", header),
        format_html_join("", "<th>{}</th>", ((column,) for column in columns)),
        format_html_join("", "<tr>" + cells + "</tr>", rows),
    )


def parse_stored(xml: bytes):
    return etree.fromstring(xml, etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False))
