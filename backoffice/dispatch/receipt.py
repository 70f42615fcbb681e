"""Incoming dispatch notes and the replies to them (issue 16): reading the DespatchAdvice the platform gives for an
incoming note, checking a reply a company uploads before it is sent (dispatch inbox contract, "Replies to incoming
notes") and reading a reply received to one of our own notes.

The file and schema layers are ubltr.py's (safe parse, the vendored XSDs with the empty-ExtensionContent
placeholder, readable schema messages); the rules are the UBL-TR ones a reply needs, plus the platform's own
(the note found by cac:DespatchDocumentReference/cbc:ID, RejectReason with every rejected quantity).
Nothing here reaches the network.
"""

from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal

from django.utils import timezone
from django.utils.translation import gettext as _
from lxml import etree

from backoffice.core.payloads import decimal
from backoffice.core.validators import DOCUMENT_NUMBER_RE

from . import ubltr
from .ubltr import (
    DESPATCH_NS,
    GUID_RE,
    NS,
    RECEIPT_NS,
    Checked,
    Problem,
    date_of,
    first,
    line_of,
    party_identifier,
    party_name,
    shown,
    text_of,
)

RECEIPT_TYPE_CODE = "SEVK"
PLACEHOLDER_COUNTER = "000000000"  # a series starts at 1: counter 0 is never a number the platform gives

# What may come before cbc:LineCountNumeric in a ReceiptAdvice (UBL-ReceiptAdvice-2.1.xsd, GİB's copy).
BEFORE_LINE_COUNT = {"UBLExtensions", "UBLVersionID", "CustomizationID", "ProfileID", "ProfileExecutionID", "ID",
                     "CopyIndicator", "UUID", "IssueDate", "IssueTime", "ReceiptAdviceTypeCode", "Note"}


@dataclass
class Party:
    """A party of a note or a reply: its VKN (10 digits) or TCKN (11), its title (or a person's full name) and
    the address parts UBL-TR requires (CitySubdivisionName is the district, CityName the province)."""
    identifier: str
    name: str
    district: str = ""
    city: str = ""
    country: str = ""


@dataclass
class IncomingDespatch:
    """An incoming note as its DespatchAdvice says (what the list does not carry: the lines to answer)."""
    uuid: str = ""
    number: str = ""
    issue_date: date | None = None
    issue_time: str = ""
    profile: str = ""
    sender: Party = field(default_factory=lambda: Party("", ""))
    receiver: Party = field(default_factory=lambda: Party("", ""))
    # {"line_id", "name", "quantity" Decimal | None, "unit_code", "seller_item_id" str | None}
    lines: list[dict] = field(default_factory=list)

    @property
    def id(self) -> str:
        """The platform's id of an incoming note is its UUID (ETTN)."""
        return self.uuid


@dataclass
class Receipt(Checked):
    """A reply (ReceiptAdvice): what the checker found and the fields the list, the send and the reading need."""
    despatch_number: str = ""  # cac:DespatchDocumentReference/cbc:ID: the note answered
    despatch_issue_date: date | None = None
    supplier: Party = field(default_factory=lambda: Party("", ""))  # the note's sender
    customer: Party = field(default_factory=lambda: Party("", ""))  # who answers
    delivery_date: date | None = None
    delivery_time: str = ""
    delivery_contact: str = ""
    line_count: int | None = None  # cbc:LineCountNumeric as stated
    # {"id", "line_id" (the note's line), "name", "received" Decimal | None, "rejected" Decimal | None, "reason",
    #  "unit_code"}
    lines: list[dict] = field(default_factory=list)


# --- an incoming note ---------------------------------------------------------------------------------------------

def unzipped(content: bytes) -> bytes:
    """The XML of a document the platform returned: as it is, or the first XML file of its ZIP (document 3 gives
    an outgoing note's UBL as a ZIP, and the incoming side may do the same). ValueError when the ZIP is unusable."""
    if not content.startswith(b"PK"):
        return content
    archive, members, refusal = ubltr.open_zip(content)
    if archive is None:
        raise ValueError(refusal)
    xml, refusal = ubltr.read_member(archive, members[0])
    if refusal:
        raise ValueError(refusal)
    return xml


def read_despatch(xml: bytes) -> IncomingDespatch:
    """The incoming note's DespatchAdvice (GET /v2/inboxdespatch/{id}/ubl, decoded, unzipped when zipped). Read as
    it is, whatever its prefixes, with missing parts left empty; ValueError (a translated message) when it is no
    DespatchAdvice."""
    root, _xml = _read_root(xml, DESPATCH_NS, "DespatchAdvice", _(
        "The document is %(root)s, not a UBL-TR dispatch note: its root element must be DespatchAdvice in the "
        "namespace %(namespace)s."))
    note = IncomingDespatch(uuid=text_of(root, "cbc:UUID"), number=text_of(root, "cbc:ID"),
                            issue_date=date_of(text_of(root, "cbc:IssueDate")),
                            issue_time=text_of(root, "cbc:IssueTime"),
                            profile=text_of(root, "cbc:ProfileID"),
                            sender=_read_party(first(root, "cac:DespatchSupplierParty/cac:Party")),
                            receiver=_read_party(first(root, "cac:DeliveryCustomerParty/cac:Party")))
    for line in root.iterfind("cac:DespatchLine", NS):
        quantity = first(line, "cbc:DeliveredQuantity")
        note.lines.append({
            "line_id": text_of(line, "cbc:ID"),
            "name": text_of(line, "cac:Item/cbc:Name"),
            "quantity": decimal((quantity.text or "").strip()) if quantity is not None else None,
            "unit_code": (quantity.get("unitCode") or "").strip() if quantity is not None else "",
            "seller_item_id": text_of(line, "cac:Item/cac:SellersItemIdentification/cbc:ID") or None,
        })
    return note


def _read_root(xml: bytes, namespace: str, element: str, wrong: str):
    """(the root element, the XML) of a document the platform gave, unzipped when zipped; ValueError with the
    parser's message, or with `wrong` (naming %(root)s and %(namespace)s) when it is another document."""
    xml = unzipped(xml)
    root, problem = ubltr.parse_xml(xml)
    if problem:
        raise ValueError(problem.message)
    if root.tag != f"{{{namespace}}}{element}":
        raise ValueError(wrong % {"root": _root_name(root), "namespace": namespace})
    return root, xml


def _root_name(root) -> str:
    """The root element as a reader knows it: Invoice (urn:...:Invoice-2)."""
    name = etree.QName(root)
    return f"{name.localname} ({name.namespace})" if name.namespace else name.localname


def _read_party(party) -> Party:
    identifier = party_identifier(party)[0]
    if not identifier and party is not None:
        # tolerant of files that leave schemeID out: the first identifier of a VKN's or a TCKN's length
        identifier = next((text for element in party.iterfind("cac:PartyIdentification/cbc:ID", NS)
                           if len(text := (element.text or "").strip()) in (10, 11) and text.isdigit()), "")
    return Party(identifier=identifier, name=party_name(party),
                 district=text_of(party, "cac:PostalAddress/cbc:CitySubdivisionName"),
                 city=text_of(party, "cac:PostalAddress/cbc:CityName"),
                 country=text_of(party, "cac:PostalAddress/cac:Country/cbc:Name"))


def _plain(value) -> str:
    """A quantity as UBL writes it: no exponent, no trailing zeros."""
    number = decimal(value)
    return format(number.normalize(), "f") if number is not None else "0"


def receipt_zip_base64(name: str, xml: bytes) -> str:
    """The ReceiptAdvice member of POST/PUT /v1/outboxreceiptadvice: Base64 of a ZIP holding the one XML."""
    return ubltr.zipped_base64(name, xml)


# --- checking an uploaded reply -----------------------------------------------------------------------------------

def check_receipt(name: str, data: bytes, *, manual_number: bool, despatch: IncomingDespatch | None = None) -> Receipt:
    """The pre-check of an uploaded reply: an .xml, or a .zip holding exactly one. manual_number: the
    16-character number is in the file (UseManualReceiptAdviceId), so cbc:ID is checked too. despatch: the note
    it answers, when known: the reference, the line ids and the quantities are checked against it."""
    files = ubltr.upload_files(name, data)
    if len(files) != 1:
        return Receipt.refused(name, b"", _("The ZIP file must hold exactly one XML file, the reply; it holds "
                                            "%(count)s: %(names)s.")
                               % {"count": len(files), "names": ", ".join(member for member, _xml, _refusal in files)})
    name, data, refusal = files[0]
    if refusal:
        return Receipt.refused(name, data, refusal)
    root, problem = ubltr.parse_xml(data)
    if problem:
        return Receipt(name=name, xml=data, problems=[problem])
    if root.tag == f"{{{DESPATCH_NS}}}DespatchAdvice":
        return Receipt.refused(name, data, _("This is a dispatch note (DespatchAdvice), not a reply to one: a reply "
                                             "is a ReceiptAdvice (root element ReceiptAdvice in the namespace "
                                             "%(namespace)s).") % {"namespace": RECEIPT_NS}, root.sourceline)
    if root.tag != f"{{{RECEIPT_NS}}}ReceiptAdvice":
        return Receipt.refused(name, data, _("The document is %(root)s, not a UBL-TR reply to a dispatch note: its "
                                             "root element must be ReceiptAdvice in the namespace %(namespace)s.")
                               % {"root": _root_name(root), "namespace": RECEIPT_NS}, root.sourceline)
    return _checked(name, data, root, manual_number=manual_number, despatch=despatch)


def read_receipt(xml: bytes) -> Receipt:
    """A reply received to one of our notes (GET /v2/outboxdespatch/{id}/receiptadvice/ubl, decoded): every field
    read whatever the file's faults, which are reported in .problems, not refused. ValueError (translated) when
    it is not XML or not a ReceiptAdvice: then there is nothing to read. A zipped answer is unzipped first."""
    root, xml = _read_root(xml, RECEIPT_NS, "ReceiptAdvice", _(
        "The document is %(root)s, not a UBL-TR reply to a dispatch note: its root element must be ReceiptAdvice in "
        "the namespace %(namespace)s."))
    return _checked("", xml, root, manual_number=True, despatch=None)  # a received reply has its real number


def _checked(name: str, data: bytes, root, *, manual_number: bool, despatch: IncomingDespatch | None) -> Receipt:
    receipt = Receipt(name=name, xml=data)
    _read_fields(receipt, root)  # before the schema check, which adds its placeholder to the tree
    rules = rule_problems(root, manual_number=manual_number, despatch=despatch)
    # A schema fault a rule explains (an element out of place) replaces the schema's bare "not expected" there.
    explained = {problem.line for problem in rules if problem.kind == "schema"}
    schema = [problem for problem in ubltr.schema_problems(root) if problem.line not in explained]
    receipt.problems = sorted(schema + rules, key=lambda problem: problem.line or 0)
    return receipt


def _read_fields(receipt: Receipt, root) -> None:
    ubltr.read_header(receipt, root, "cbc:ReceiptAdviceTypeCode")
    receipt.despatch_number = text_of(root, "cac:DespatchDocumentReference/cbc:ID")
    receipt.despatch_issue_date = date_of(text_of(root, "cac:DespatchDocumentReference/cbc:IssueDate"))
    receipt.supplier = _read_party(first(root, "cac:DespatchSupplierParty/cac:Party"))
    receipt.customer = _read_party(first(root, "cac:DeliveryCustomerParty/cac:Party"))
    receipt.delivery_date = date_of(text_of(root, "cac:Shipment/cac:Delivery/cbc:ActualDeliveryDate"))
    receipt.delivery_time = text_of(root, "cac:Shipment/cac:Delivery/cbc:ActualDeliveryTime")
    receipt.delivery_contact = (text_of(root, "cac:Shipment/cac:Delivery/cac:DeliveryParty/cac:Contact/cbc:Name")
                                or text_of(root, "cac:DeliveryCustomerParty/cac:DeliveryContact/cbc:Name"))
    count = text_of(root, "cbc:LineCountNumeric")
    receipt.line_count = int(count) if count.isdigit() else None
    receipt.lines = []
    for line in root.iterfind("cac:ReceiptLine", NS):
        received, rejected = first(line, "cbc:ReceivedQuantity"), first(line, "cbc:RejectedQuantity")
        unit = next(((element.get("unitCode") or "").strip() for element in (received, rejected)
                     if element is not None and (element.get("unitCode") or "").strip()), "")
        receipt.lines.append({
            "id": text_of(line, "cbc:ID"),
            "line_id": text_of(line, "cac:DespatchLineReference/cbc:LineID"),
            "name": text_of(line, "cac:Item/cbc:Name"),
            "received": decimal((received.text or "").strip()) if received is not None else None,
            # no RejectedQuantity: nothing rejected
            "rejected": decimal((rejected.text or "").strip()) if rejected is not None else Decimal(0),
            "reason": "; ".join(text for element in line.iterfind("cbc:RejectReason", NS)
                                if (text := (element.text or "").strip())),
            "unit_code": unit,
        })


# --- the rules of a reply -----------------------------------------------------------------------------------------

def rule_type_code(root) -> list[Problem]:
    return ubltr.value_rule(root, "cbc:ReceiptAdviceTypeCode", lambda value: value == RECEIPT_TYPE_CODE,
                            _("cbc:ReceiptAdviceTypeCode must be %(expected)s (found: %(value)s)."),
                            expected=RECEIPT_TYPE_CODE)


def rule_number(root) -> list[Problem]:
    """The number written in the file (UseManualReceiptAdviceId), of the issue date's year, and not the
    placeholder of a reply the platform numbers."""
    return ubltr.number_rule(
        root, _("The reply number (cbc:ID) must have 16 characters: a 3-character prefix, the 4-digit year and a "
                "9-digit counter, e.g. IRY2025000000001 (found: %(value)s)."),
        _("The reply number %(number)s is of the year %(year)s, but the reply is dated %(date)s."),
        refusal=lambda number: _("The reply number %(number)s ends in the counter 000000000, which stands for a "
                                 "number the platform gives: give the reply's own number, or let the platform number "
                                 "it.") % {"number": number} if number.endswith(PLACEHOLDER_COUNTER) else "")


def rule_dates(root) -> list[Problem]:
    """The reply and the delivery it reports are neither in the future nor before the note they answer."""
    note_date = date_of(text_of(root, "cac:DespatchDocumentReference/cbc:IssueDate"))
    today = timezone.localdate()
    problems = []
    for path, future, early in (
            ("cbc:IssueDate", _("The reply is dated %(date)s, in the future."),
             _("The reply is dated %(date)s, before the note it answers (%(note_date)s).")),
            ("cac:Shipment/cac:Delivery/cbc:ActualDeliveryDate",
             _("The delivery (cbc:ActualDeliveryDate) is dated %(date)s, in the future."),
             _("The delivery (cbc:ActualDeliveryDate) is dated %(date)s, before the note it answers "
               "(%(note_date)s)."))):
        element, value = first(root, path), date_of(text_of(root, path))
        if value is None:
            continue  # missing or not a date: the schema says so where it matters
        if value > today:
            problems.append(Problem(element.sourceline, future % {"date": value.isoformat()}, "rule"))
        elif note_date and value < note_date:
            problems.append(Problem(element.sourceline, early % {"date": value.isoformat(),
                                                                 "note_date": note_date.isoformat()}, "rule"))
    return problems


def rule_despatch_reference(root, despatch: IncomingDespatch | None = None) -> list[Problem]:
    """cac:DespatchDocumentReference/cbc:ID names the note answered: its 16-character number, or (as the public
    samples of another integrator write it) its UUID (ETTN); either is accepted and must be the note's."""
    reference = first(root, "cac:DespatchDocumentReference")
    element, value = first(reference, "cbc:ID"), text_of(reference, "cbc:ID")
    line = line_of(element, reference, root)
    if not value:
        return [Problem(line, _("The number of the note answered (cac:DespatchDocumentReference/cbc:ID) is missing: "
                                "the platform finds the note by it."), "rule")]
    by_uuid = bool(GUID_RE.match(value))
    if not by_uuid and not DOCUMENT_NUMBER_RE.match(value):
        return [Problem(line, _("cac:DespatchDocumentReference/cbc:ID must be the number of the note answered (16 "
                                "characters, e.g. EIR2025000000001) or its UUID (found: %(value)s).")
                        % {"value": value}, "rule")]
    answered = (despatch.uuid if by_uuid else despatch.number) if despatch is not None else ""
    same = value.lower() == answered.lower() if by_uuid else value == answered  # a UUID in either case
    if answered and not same:
        return [Problem(line, _("The reply answers the note %(reference)s, but it is being sent for the note "
                                "%(number)s.") % {"reference": value, "number": answered}, "rule")]
    return []


def rule_line_count(root) -> list[Problem]:
    """cbc:LineCountNumeric in its place (after the type code and the notes, before cac:OrderReference and
    cac:DespatchDocumentReference: the public samples of another integrator put it after cac:OrderReference,
    which the schema refuses) and equal to the number of cac:ReceiptLine."""
    element = first(root, "cbc:LineCountNumeric")
    if element is None:
        return []
    problems = []
    previous = element.getprevious()
    while previous is not None and not isinstance(previous.tag, str):  # comments
        previous = previous.getprevious()
    if previous is not None and etree.QName(previous).localname not in BEFORE_LINE_COUNT:
        # a schema fault, said better than the schema's message at this line (which _checked leaves out)
        problems.append(Problem(element.sourceline,
                                _("cbc:LineCountNumeric is out of place: the schema wants it right after "
                                  "cbc:ReceiptAdviceTypeCode (and any cbc:Note), before cac:OrderReference and "
                                  "cac:DespatchDocumentReference, but here it follows %(previous)s. Move it up: the "
                                  "platform refuses the file as it is.") % {"previous": ubltr.readable(previous.tag)},
                                "schema"))
    stated, count = (element.text or "").strip(), len(root.findall("cac:ReceiptLine", NS))
    if stated.isdigit() and int(stated) != count:
        problems.append(Problem(element.sourceline,
                                _("cbc:LineCountNumeric says %(stated)s lines, but the reply has %(count)s "
                                  "cac:ReceiptLine.") % {"stated": stated, "count": count}, "rule"))
    return problems


def rule_lines(root, despatch: IncomingDespatch | None = None) -> list[Problem]:
    """Each cac:ReceiptLine names the note's line it answers (cac:DespatchLineReference/cbc:LineID, once), says
    what was received (cbc:ReceivedQuantity >= 0, with its unitCode), and gives a cbc:RejectReason with any
    cbc:RejectedQuantity > 0. With the note: the line exists there and received + rejected stay within what it
    delivered."""
    problems, answered = [], {}
    delivered = {line["line_id"]: line for line in despatch.lines} if despatch is not None else None
    for index, line in enumerate(root.iterfind("cac:ReceiptLine", NS), 1):
        reference = first(line, "cac:DespatchLineReference/cbc:LineID")
        line_id = text_of(line, "cac:DespatchLineReference/cbc:LineID")
        if not line_id:
            problems.append(Problem(line_of(reference, first(line, "cac:DespatchLineReference"), line),
                                    _("Line %(index)s: the note's line it answers (cac:DespatchLineReference/"
                                      "cbc:LineID) is missing.") % {"index": index}, "rule"))
        elif line_id in answered:
            problems.append(Problem(reference.sourceline,
                                    _("Line %(index)s answers the note's line %(line)s again (line %(first)s "
                                      "already does).") % {"index": index, "line": line_id,
                                                           "first": answered[line_id]}, "rule"))
        else:
            answered[line_id] = index
        amounts = _line_amounts(line, index, problems)
        if delivered is not None and line_id:
            problems += _against_note(line, index, line_id, amounts, despatch.number, delivered, reference)
    return problems


def _line_amounts(line, index: int, problems: list) -> dict:
    """{path: quantity} of a reply line's received and rejected quantities that are numbers of 0 or more; what is
    wrong with them (and a rejection without its reason) is added to problems."""
    amounts = {}
    for path, required in (("cbc:ReceivedQuantity", True), ("cbc:RejectedQuantity", False)):
        element = first(line, path)
        if element is None:
            if required:
                problems.append(Problem(line.sourceline, _("Line %(index)s: the received quantity "
                                                           "(cbc:ReceivedQuantity) is missing; write 0 when "
                                                           "nothing was received.") % {"index": index}, "rule"))
            continue
        value = (element.text or "").strip()
        amount = decimal(value)
        if amount is None or amount < 0:
            problems.append(Problem(element.sourceline, _("Line %(index)s: %(element)s must be a number of 0 or "
                                                          "more (found: %(value)s).")
                                    % {"index": index, "element": path, "value": shown(value)}, "rule"))
        else:
            amounts[path] = amount
        if not (element.get("unitCode") or "").strip():
            problems.append(Problem(element.sourceline, _("Line %(index)s: %(element)s has no unit (unitCode), "
                                                          "e.g. C62 for pieces or KGM for kilograms.")
                                    % {"index": index, "element": path}, "rule"))
    rejected = amounts.get("cbc:RejectedQuantity", Decimal(0))
    if rejected > 0 and not any((element.text or "").strip() for element in line.iterfind("cbc:RejectReason", NS)):
        problems.append(Problem(line_of(first(line, "cbc:RejectReason"), first(line, "cbc:RejectedQuantity")),
                                _("Line %(index)s: %(rejected)s is rejected, so the reason "
                                  "(cbc:RejectReason) is required.")
                                % {"index": index, "rejected": _plain(rejected)}, "rule"))
    return amounts


def _against_note(line, index: int, line_id: str, amounts: dict, number: str, delivered: dict,
                  reference) -> list[Problem]:
    """The reply line against the note's line it answers (delivered: the note's lines by id): that line exists,
    and what was received and rejected stays within what it delivered."""
    if line_id not in delivered:
        return [Problem(reference.sourceline, _("Line %(index)s: the note %(number)s has no line "
                                                "%(line)s (cac:DespatchLineReference/cbc:LineID).")
                        % {"index": index, "number": number, "line": line_id}, "rule")]
    quantity = delivered[line_id]["quantity"]
    received = amounts.get("cbc:ReceivedQuantity", Decimal(0))
    rejected = amounts.get("cbc:RejectedQuantity", Decimal(0))
    if quantity is not None and received + rejected > quantity:
        return [Problem(line.sourceline, _("Line %(index)s: received %(received)s and rejected "
                                           "%(rejected)s exceed the delivered quantity %(delivered)s "
                                           "%(unit)s of the note's line %(line)s.")
                        % {"index": index, "received": _plain(received), "rejected": _plain(rejected),
                           "delivered": _plain(quantity), "unit": delivered[line_id]["unit_code"],
                           "line": line_id}, "rule")]
    return []


def rule_problems(root, *, manual_number: bool, despatch: IncomingDespatch | None = None) -> list[Problem]:
    problems = [problem for rule in (ubltr.rule_customization, ubltr.rule_profile, rule_type_code, ubltr.rule_uuid,
                                     rule_dates, rule_line_count, ubltr.rule_party_identifiers,
                                     ubltr.rule_party_addresses)
                for problem in rule(root)]
    problems += rule_despatch_reference(root, despatch) + rule_lines(root, despatch)
    if manual_number:
        problems += rule_number(root)
    return problems
