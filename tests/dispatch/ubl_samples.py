"""Our own UBL-TR 1.2.1 DespatchAdvice drafts for tests (never the public samples): valid by default, unsigned
like a real draft (an empty ext:ExtensionContent where the integrator's seal goes), every part a parameter.

    despatch_xml()                                      a valid note of today with one driver
    despatch_xml(carrier=CARRIER, drivers=(), plate=None)   carried by a company
    despatch_xml(number="X", delivery=None)             a bad number, no delivery address

The identifiers are those of tests/dispatch/builders.py (the receiver is the one-mailbox dispatch-note user).
A dict field given as None is left out of the XML; "" writes the element empty.
"""

import io
import zipfile

from django.utils import timezone
from lxml import etree

NS = {
    None: "urn:oasis:names:specification:ubl:schema:xsd:DespatchAdvice-2",
    "cac": "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2",
    "cbc": "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2",
    "ext": "urn:oasis:names:specification:ubl:schema:xsd:CommonExtensionComponents-2",
}

SENDER = {"identifier": "9000068418", "name": "Acme Lojistik A.Ş.", "street": "Moda Cad. No:1",
          "district": "Kadıköy", "city": "İstanbul", "postal_zone": "34710", "country": "Türkiye"}
RECEIVER = {"identifier": "4840000006", "name": "Tek Kutu Lojistik A.Ş.", "street": "Atatürk Bulvarı No:5",
            "district": "Çankaya", "city": "Ankara", "postal_zone": "06420", "country": "Türkiye"}
PERSON_RECEIVER = {"identifier": "10000000146", "name": "Ayşe Yılmaz", "district": "Konak", "city": "İzmir",
                   "postal_zone": "35250", "country": "Türkiye"}
DELIVERY = {"street": "Depo Sok. No:7", "district": "Gebze", "city": "Kocaeli", "postal_zone": "41400",
            "country": "Türkiye"}
DRIVER = ("Mehmet", "Öztürk", "10000000146")
UNKNOWN_DRIVER = ("Ali", "Kaya", "11111111111")
CARRIER = {"identifier": "3920000003", "name": "Hızlı Nakliyat A.Ş.", "district": "Esenler", "city": "İstanbul",
           "postal_zone": "34220", "country": "Türkiye"}
LINES = (("Bakır kablo 2,5 mm", "120", "MTR"), ("Sigorta kutusu", "4", "C62"))


def _add(parent, tag: str, text=None, **attributes):
    prefix, _, name = tag.rpartition(":")
    element = etree.SubElement(parent, f"{{{NS[prefix or None]}}}{name}", attributes)
    if text is not None:
        element.text = str(text)
    return element


def _address(parent, tag: str, address: dict):
    element = _add(parent, tag)
    for key, child in (("street", "cbc:StreetName"), ("district", "cbc:CitySubdivisionName"),
                       ("city", "cbc:CityName"), ("postal_zone", "cbc:PostalZone")):
        if address.get(key) is not None:
            _add(element, child, address[key])
    if address.get("country") is not None:
        _add(_add(element, "cac:Country"), "cbc:Name", address["country"])
    return element


def _party(parent, party: dict):
    element = _add(parent, "cac:Party")
    identifier = party["identifier"]
    scheme = party.get("scheme") or ("TCKN" if len(identifier) == 11 else "VKN")
    _add(_add(element, "cac:PartyIdentification"), "cbc:ID", identifier, schemeID=scheme)
    if scheme == "VKN" and party.get("name") is not None:
        _add(_add(element, "cac:PartyName"), "cbc:Name", party["name"])
    _address(element, "cac:PostalAddress", party)
    if scheme == "TCKN":
        first, _, family = (party.get("name") or "").rpartition(" ")
        person = _add(element, "cac:Person")
        _add(person, "cbc:FirstName", first)
        _add(person, "cbc:FamilyName", family)
    return element


TODAY = object()  # the default dates: the day the test runs (the platform refuses a note dated in the future)


def despatch_xml(*, number=TODAY, uuid="5f0c7a52-3f43-4b8e-9d55-0c2b1f6e8a10", issue_date=TODAY,
                 issue_time="09:30:00", customization="TR1.2.1", profile="TEMELIRSALIYE", type_code="SEVK",
                 sender=SENDER, receiver=RECEIVER, delivery=DELIVERY, drivers=(DRIVER,), carrier=None,
                 plate="34ABC123", despatch_date=TODAY, despatch_time="10:00:00", lines=LINES,
                 placeholder=True) -> bytes:
    """A DespatchAdvice as a company's ERP writes it: lines are (item name, quantity, unit code), a unit of None
    leaves unitCode out; drivers are (first name, family name, TCKN). The number defaults to EIR<year of the
    issue date>000000001, the dates to today."""
    if issue_date is TODAY:
        issue_date = timezone.localdate().isoformat()
    if number is TODAY:
        number = f"EIR{issue_date[:4]}000000001"
    if despatch_date is TODAY:
        despatch_date = issue_date
    root = etree.Element(f"{{{NS[None]}}}DespatchAdvice", nsmap=NS)
    extension = _add(_add(root, "ext:UBLExtensions"), "ext:UBLExtension")
    if placeholder:
        _add(extension, "ext:ExtensionContent")
    _add(root, "cbc:UBLVersionID", "2.1")
    _add(root, "cbc:CustomizationID", customization)
    _add(root, "cbc:ProfileID", profile)
    _add(root, "cbc:ID", number)
    _add(root, "cbc:CopyIndicator", "false")
    _add(root, "cbc:UUID", uuid)
    _add(root, "cbc:IssueDate", issue_date)
    _add(root, "cbc:IssueTime", issue_time)
    _add(root, "cbc:DespatchAdviceTypeCode", type_code)
    _add(root, "cbc:LineCountNumeric", len(lines))
    signature = _add(root, "cac:Signature")
    _add(signature, "cbc:ID", sender["identifier"], schemeID="VKN_TCKN")
    signatory = _add(signature, "cac:SignatoryParty")
    _add(_add(signatory, "cac:PartyIdentification"), "cbc:ID", sender["identifier"], schemeID="VKN")
    _address(signatory, "cac:PostalAddress", sender)
    _add(_add(_add(signature, "cac:DigitalSignatureAttachment"), "cac:ExternalReference"), "cbc:URI", "#Signature")
    _party(_add(root, "cac:DespatchSupplierParty"), sender)
    _party(_add(root, "cac:DeliveryCustomerParty"), receiver)
    shipment = _add(root, "cac:Shipment")
    _add(shipment, "cbc:ID", "1")
    if drivers or plate:
        stage = _add(shipment, "cac:ShipmentStage")
        if plate:
            _add(_add(_add(stage, "cac:TransportMeans"), "cac:RoadTransport"), "cbc:LicensePlateID", plate,
                 schemeID="PLAKA")
        for first, family, tckn in drivers:
            person = _add(stage, "cac:DriverPerson")
            _add(person, "cbc:FirstName", first)
            _add(person, "cbc:FamilyName", family)
            _add(person, "cbc:Title", "Şoför")
            if tckn is not None:
                _add(person, "cbc:NationalityID", tckn)
    shipment_delivery = _add(shipment, "cac:Delivery")
    if delivery is not None:
        _address(shipment_delivery, "cac:DeliveryAddress", delivery)
    if carrier is not None:
        carrier_party = _add(shipment_delivery, "cac:CarrierParty")
        _add(_add(carrier_party, "cac:PartyIdentification"), "cbc:ID", carrier["identifier"],
             schemeID="TCKN" if len(carrier["identifier"]) == 11 else "VKN")
        if carrier.get("name") is not None:
            _add(_add(carrier_party, "cac:PartyName"), "cbc:Name", carrier["name"])
        _address(carrier_party, "cac:PostalAddress", carrier)
    if despatch_date is not None or despatch_time is not None:
        despatch = _add(shipment_delivery, "cac:Despatch")
        if despatch_date is not None:
            _add(despatch, "cbc:ActualDespatchDate", despatch_date)
        if despatch_time is not None:
            _add(despatch, "cbc:ActualDespatchTime", despatch_time)
    for index, (name, quantity, unit) in enumerate(lines, 1):
        line = _add(root, "cac:DespatchLine")
        _add(line, "cbc:ID", index)
        _add(line, "cbc:DeliveredQuantity", quantity, **({"unitCode": unit} if unit is not None else {}))
        _add(_add(line, "cac:OrderLineReference"), "cbc:LineID", index)
        _add(_add(line, "cac:Item"), "cbc:Name", name)
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)


def line_of(xml: bytes, text: str, start: int = 1) -> int:
    """The number of the first line (from line `start` on) that holds `text`: where a test expects a finding."""
    for number, line in enumerate(xml.decode("utf-8").splitlines(), 1):
        if number >= start and text in line:
            return number
    raise AssertionError(f"{text!r} is not in the XML")


def zipped(files: dict[str, bytes]) -> bytes:
    """A ZIP of the given members."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()
