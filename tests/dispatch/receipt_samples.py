"""Our own UBL-TR 1.2.1 ReceiptAdvice drafts for tests (a reply to a dispatch note), as ubl_samples.py writes
DespatchAdvice ones: valid by default, unsigned (an empty ext:ExtensionContent where the integrator's seal goes).

    receipt_xml(uuid=..., number=None, ..., lines=[{line_id, name, unit_code, received, rejected, reason}])
    reply_kind(read_receipt(xml), despatch)     "accept", "reject" or "partial", as the platform decides it
"""

from datetime import date, datetime, time

from django.utils import timezone
from lxml import etree

from backoffice.core.payloads import decimal
from backoffice.dispatch import ubltr
from backoffice.dispatch.receipt import PLACEHOLDER_COUNTER, RECEIPT_TYPE_CODE, IncomingDespatch, Party, Receipt
from backoffice.dispatch.ubltr import NS, RECEIPT_NS

PROFILE = "TEMELIRSALIYE"
DEFAULT_PREFIX = "IRY"  # the contract's default series of replies
UNKNOWN = "-"  # an address part nobody told us: not blank, so the tax authority's "present" checks pass
COUNTRY = "Türkiye"

def placeholder_number(issue_date, prefix: str = DEFAULT_PREFIX) -> str:
    """The cbc:ID of a reply the platform numbers (UseManualReceiptAdviceId false): the shape of a real number
    (a validator before the renumbering finds nothing to refuse) with counter 0, which no series ever gives."""
    return f"{prefix}{str(issue_date)[:4]}{PLACEHOLDER_COUNTER}"


def receipt_xml(*, uuid: str, number: str | None, issue_date, issue_time, despatch_number: str, despatch_issue_date,
                supplier, customer, delivery_datetime: datetime | str | None, delivery_contact: str, lines,
                profile: str = PROFILE, prefix: str = DEFAULT_PREFIX) -> bytes:
    """A UBL-TR 1.2.1 ReceiptAdvice draft answering the note despatch_number of supplier (its sender), from
    customer (who answers). supplier and customer: Party, (identifier, name[, district, city, country]) or a dict
    of those names; an unknown district or city is written "-", an unknown country "Türkiye". number None: the
    platform numbers it, placeholder_number() is written. lines: {line_id (the note's line), name, unit_code,
    received, rejected, reason}; RejectedQuantity and RejectReason are written only when rejected > 0.
    Unsigned: ext:ExtensionContent is left empty for the integrator's seal."""
    supplier, customer = _as_party(supplier), _as_party(customer)
    issue_date, despatch_issue_date = _iso_date(issue_date), _iso_date(despatch_issue_date)
    number = number or placeholder_number(issue_date, prefix)
    root = etree.Element(f"{{{RECEIPT_NS}}}ReceiptAdvice", nsmap={None: RECEIPT_NS, **NS})
    _add(_add(_add(root, "ext:UBLExtensions"), "ext:UBLExtension"), "ext:ExtensionContent")
    _add(root, "cbc:UBLVersionID", "2.1")
    _add(root, "cbc:CustomizationID", ubltr.CUSTOMIZATION_ID)
    _add(root, "cbc:ProfileID", profile)
    _add(root, "cbc:ID", number)
    _add(root, "cbc:CopyIndicator", "false")
    _add(root, "cbc:UUID", uuid)
    _add(root, "cbc:IssueDate", issue_date)
    _add(root, "cbc:IssueTime", _iso_time(issue_time))
    _add(root, "cbc:ReceiptAdviceTypeCode", RECEIPT_TYPE_CODE)
    _add(root, "cbc:LineCountNumeric", len(lines))
    reference = _add(root, "cac:DespatchDocumentReference")
    _add(reference, "cbc:ID", despatch_number)
    _add(reference, "cbc:IssueDate", despatch_issue_date)
    # The XSD requires a cac:Signature: who signs (the answering company), the seal itself comes later.
    signature = _add(root, "cac:Signature")
    _add(signature, "cbc:ID", customer.identifier, schemeID="VKN_TCKN")
    signatory = _add(signature, "cac:SignatoryParty")
    _add(_add(signatory, "cac:PartyIdentification"), "cbc:ID", customer.identifier,
         schemeID=_scheme(customer.identifier))
    _address(signatory, customer)
    _add(_add(_add(signature, "cac:DigitalSignatureAttachment"), "cac:ExternalReference"), "cbc:URI",
         f"#Signature_{number}")
    # The XSD's order: the receiving customer first, then the note's sender.
    delivery_customer = _add(root, "cac:DeliveryCustomerParty")
    _party(delivery_customer, customer)
    if delivery_contact:
        # where viewers of real replies show it (the samples of other integrators)...
        _add(_add(delivery_customer, "cac:DeliveryContact"), "cbc:Name", delivery_contact)
    _party(_add(root, "cac:DespatchSupplierParty"), supplier)
    shipment = _add(root, "cac:Shipment")
    _add(shipment, "cbc:ID", "1")
    delivery = _add(shipment, "cac:Delivery")
    if isinstance(delivery_datetime, str):
        delivery_datetime = datetime.fromisoformat(delivery_datetime)
    if delivery_datetime is not None:
        if timezone.is_aware(delivery_datetime):
            delivery_datetime = timezone.localtime(delivery_datetime)
        _add(delivery, "cbc:ActualDeliveryDate", delivery_datetime.date().isoformat())
        _add(delivery, "cbc:ActualDeliveryTime", delivery_datetime.strftime("%H:%M:%S"))
    if delivery_contact:
        # ...and where the platform's contract puts it: the party that took the goods, with its contact
        _party(delivery, customer, tag="cac:DeliveryParty", contact=delivery_contact)
    for index, line in enumerate(lines, 1):
        element = _add(root, "cac:ReceiptLine")
        _add(element, "cbc:ID", index)
        unit_code = line.get("unit_code") or "C62"
        _add(element, "cbc:ReceivedQuantity", _plain(line.get("received")), unitCode=unit_code)
        rejected = decimal(line.get("rejected"))
        if rejected is not None and rejected > 0:
            _add(element, "cbc:RejectedQuantity", _plain(rejected), unitCode=unit_code)
            _add(element, "cbc:RejectReason", line.get("reason") or "")
        _add(_add(element, "cac:DespatchLineReference"), "cbc:LineID", line["line_id"])
        _add(_add(element, "cac:Item"), "cbc:Name", line.get("name") or "")
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)


def _add(parent, tag: str, text=None, **attributes):
    prefix, _colon, name = tag.rpartition(":")
    element = etree.SubElement(parent, f"{{{NS[prefix]}}}{name}", {key: str(value) for key, value in
                                                                     attributes.items()})
    if text is not None:
        element.text = str(text)
    return element


def _as_party(value) -> Party:
    if isinstance(value, Party):
        return value
    if isinstance(value, dict):
        return Party(**{key: value[key] for key in ("identifier", "name", "district", "city", "country")
                        if value.get(key) is not None})
    return Party(*value)


def _scheme(identifier: str) -> str:
    return "TCKN" if len(identifier) == 11 else "VKN"


def _address(parent, party: Party) -> None:
    address = _add(parent, "cac:PostalAddress")
    _add(address, "cbc:CitySubdivisionName", party.district or UNKNOWN)  # the district (ilçe)
    _add(address, "cbc:CityName", party.city or UNKNOWN)  # the province (il)
    _add(_add(address, "cac:Country"), "cbc:Name", party.country or COUNTRY)


def _party(parent, party: Party, *, tag: str = "cac:Party", contact: str = "") -> None:
    element = _add(parent, tag)
    _add(_add(element, "cac:PartyIdentification"), "cbc:ID", party.identifier, schemeID=_scheme(party.identifier))
    person = _scheme(party.identifier) == "TCKN"
    if not person:
        _add(_add(element, "cac:PartyName"), "cbc:Name", party.name)
    _address(element, party)
    if contact:
        _add(_add(element, "cac:Contact"), "cbc:Name", contact)
    if person:  # a person is named by first and family name (UBL-TR), not by a title
        first, _space, family = party.name.strip().rpartition(" ")
        holder = _add(element, "cac:Person")
        _add(holder, "cbc:FirstName", first or family)
        _add(holder, "cbc:FamilyName", family)


def _iso_date(value) -> str:
    return value.isoformat() if isinstance(value, date) else str(value)


def _iso_time(value) -> str:
    return value.strftime("%H:%M:%S") if isinstance(value, (time, datetime)) else str(value)


def _plain(value) -> str:
    """A quantity as UBL writes it: no exponent, no trailing zeros."""
    number = decimal(value)
    return format(number.normalize(), "f") if number is not None else "0"


def reply_kind(receipt: Receipt, despatch: IncomingDespatch | None = None) -> str:
    """"accept", "reject" or "partial", as the platform decides it from the lines (contract, "Statuses"): a note
    line the reply does not name counts as wholly received."""
    lines = receipt.lines
    answered = {line["line_id"] for line in lines}
    unnamed = [line for line in despatch.lines if line["line_id"] not in answered] if despatch else []
    if all(not (line["rejected"] or 0) for line in lines):
        return "accept"
    if not unnamed and all(not (line["received"] or 0) for line in lines):
        return "reject"
    return "partial"
