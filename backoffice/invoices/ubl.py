"""An incoming invoice read from its UBL-TR (issue 33, point 3): the header, the parties, the dispatch notes it
refers to and its lines, for matching against what the company accepted on its answers to those notes.

The file layer is dispatch/ubltr.py's (the size bound, the ZIP helpers, the safe parse that expands no entity,
loads no DTD and refuses any DOCTYPE). The input is the platform's download or a user's file, so it is treated as
hostile: anything that is not a readable UBL-TR Invoice is refused with a translated ValueError (UblRefused)
naming what is wrong, never half read. What is read is kept as the file writes it (an invoice number of 17
characters, an upper-case UUID, a dispatch reference "1"): the platform's integrators are not all strict, and the
matcher decides what a reference is worth.

A dispatch note an invoice bills is named in cac:DespatchDocumentReference; integrators that leave it out write
the notes in a cbc:Note instead ("İrsaliye No: ABC2026000000001 Tarih: 01.12.2026"): those are read when no
reference is there (references_in_notes tells which).
"""

import re
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import NamedTuple

from django.utils.translation import gettext as _
from lxml import etree

from backoffice.core import domains

# UBL-TR's file layer (the size bound, the ZIP helpers, the safe parse, the readers of a party) is the dispatch
# domain's, read through its public module.
ubltr = domains.api("dispatch").ubltr
DESPATCH_NS, GUID_RE, MAX_FILE_BYTES, NS, RECEIPT_NS = (ubltr.DESPATCH_NS, ubltr.GUID_RE, ubltr.MAX_FILE_BYTES,
                                                        ubltr.NS, ubltr.RECEIPT_NS)
date_of, first, party_identifier, party_name, text_of = (ubltr.date_of, ubltr.first, ubltr.party_identifier,
                                                         ubltr.party_name, ubltr.text_of)

INVOICE_NS = "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"
APPLICATION_RESPONSE_NS = "urn:oasis:names:specification:ubl:schema:xsd:ApplicationResponse-2"
INVOICE_TAG = f"{{{INVOICE_NS}}}Invoice"

# Bounds of a number (the models' fields: quantities and prices 18 digits with 6 decimals, amounts 18 with 2).
QUANTITY_DIGITS = 12  # digits before the decimal point of a quantity or a unit price
AMOUNT_DIGITS = 16  # of an amount
MAX_NUMBER_CHARS = 40  # as written, sign and decimals included
XSD_DECIMAL_RE = re.compile(r"^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)$")  # xsd:decimal: no exponent, no NaN
VAT_TAX_TYPE = "0015"  # KDV (code lists, facts file)
IDENTIFIER_RE = re.compile(r"^(?:[0-9]{10}|[0-9]{11})$")  # a VKN or a TCKN
SHOWN_CHARS = 40  # of a value quoted in a message

# --- dispatch notes named in a cbc:Note -----------------------------------------------------------------------------
# A note's number (facts file, "Numbers and identifiers"), standing alone.
NOTE_NUMBER_RE = re.compile(r"(?<![A-Za-z0-9])[A-Z0-9]{3}20[0-9]{2}[0-9]{9}(?![A-Za-z0-9])")
# Words that say which document a number is, in the folded text (_folded): "İrsaliye", "IRSALIYE", "irsaliyeler",
# "İrs." name a dispatch note; the others another document, whose numbers are not taken.
KEYWORD_RE = re.compile(r"(?<!\w)(?:irs(?:aliye|\.)|fatura|sipari[sş]|invoice|order|despatch|dispatch)")
DESPATCH_WORDS = ("irs", "despatch", "dispatch")
# "ABC2026000000001 nolu irsaliye": the word after the number, joined by one of these.
CONNECTOR_RE = re.compile(r"[\s'’]*(?:nolu|no'lu|no’lu|no\.lu|numaral[iı]|say[iı]l[iı])\s+")
NOTE_DATE_RE = re.compile(r"(?<![0-9])(?:([0-9]{1,2})[./-]([0-9]{1,2})[./-]([0-9]{4})"
                          r"|([0-9]{4})-([0-9]{2})-([0-9]{2}))(?![0-9])")
TURKISH_I = str.maketrans({"İ": "i", "I": "i", "ı": "i"})
WINDOW = 60  # characters from the word (or the last number taken after it) to the next number it names


class UblRefused(ValueError):
    """The file is not a readable UBL-TR invoice; str() is the reason, in the user's language."""


@dataclass(frozen=True)
class Party:
    identifier: str  # VKN (10 digits) or TCKN (11)
    name: str  # cac:PartyName/cbc:Name, or a person's first and family names


class DespatchReference(NamedTuple):
    number: str  # the note's number as written (16 characters when the integrator is strict)
    issue_date: date | None


class DespatchLineRef(NamedTuple):
    line_id: str  # cac:DespatchLineReference/cbc:LineID: the note's line
    document: str  # cac:DespatchLineReference/cac:DocumentReference/cbc:ID: the note, "" when not written


@dataclass(frozen=True)
class InvoiceLine:
    line_id: str
    name: str
    item_code: str  # cac:Item/cac:SellersItemIdentification/cbc:ID, "" when absent
    quantity: Decimal
    unit_code: str  # the unitCode of cbc:InvoicedQuantity, "" when absent
    unit_price: Decimal
    line_amount: Decimal  # cbc:LineExtensionAmount: after the line's discounts, before taxes
    vat_rate: Decimal | None  # the KDV (0015) subtotal's percent; None when the line has none
    despatch_line_refs: tuple[DespatchLineRef, ...]


@dataclass(frozen=True)
class InvoiceUbl:
    uuid: str  # the ETTN, as written
    number: str  # cbc:ID
    issue_date: date
    profile: str  # TICARIFATURA, TEMELFATURA, EARSIVFATURA, ...
    type_code: str  # SATIS, IADE, TEVKIFAT, ...
    currency: str  # cbc:DocumentCurrencyCode
    supplier: Party
    customer: Party
    despatch_references: tuple[DespatchReference, ...]
    lines: tuple[InvoiceLine, ...]
    payable: Decimal  # cac:LegalMonetaryTotal/cbc:PayableAmount
    tax_exclusive: Decimal  # cac:LegalMonetaryTotal/cbc:TaxExclusiveAmount
    references_in_notes: bool = False  # the references were read from cbc:Note, not cac:DespatchDocumentReference


def read_invoice(content: bytes) -> InvoiceUbl:
    """The invoice of a UBL-TR file (the XML, or a ZIP holding it alone); UblRefused (a ValueError, its message
    translated) when it is not one or cannot be read whole."""
    root = _invoice_root(_xml_of(content))
    number = _required(root, "cbc:ID")
    uuid = _required(root, "cbc:UUID")
    if not GUID_RE.match(uuid):
        raise UblRefused(_("cbc:UUID must be a GUID, 8-4-4-4-12 hexadecimal digits (found: %(value)s).")
                         % {"value": _shown(uuid)})
    issued = _required(root, "cbc:IssueDate")
    issue_date = date_of(issued)
    if issue_date is None:
        raise UblRefused(_("cbc:IssueDate must be a date written YYYY-MM-DD (found: %(value)s).")
                         % {"value": _shown(issued)})
    references = _despatch_references(root)
    in_notes = False
    if not references:
        notes = [(element.text or "") for element in root.iterfind("cbc:Note", NS)]
        references = [reference for reference in references_in_notes(notes) if reference.number != number]
        in_notes = bool(references)
    lines = root.findall("cac:InvoiceLine", NS)
    if not lines:
        raise UblRefused(_("The invoice has no line (cac:InvoiceLine)."))
    return InvoiceUbl(
        uuid=uuid, number=number, issue_date=issue_date, profile=_required(root, "cbc:ProfileID"),
        type_code=_required(root, "cbc:InvoiceTypeCode"), currency=_required(root, "cbc:DocumentCurrencyCode"),
        supplier=_party(root, "cac:AccountingSupplierParty", _("The supplier (cac:AccountingSupplierParty)")),
        customer=_party(root, "cac:AccountingCustomerParty", _("The customer (cac:AccountingCustomerParty)")),
        despatch_references=tuple(references),
        lines=tuple(_line(line, index) for index, line in enumerate(lines, 1)),
        payable=_number(root, "cac:LegalMonetaryTotal/cbc:PayableAmount", AMOUNT_DIGITS),
        tax_exclusive=_number(root, "cac:LegalMonetaryTotal/cbc:TaxExclusiveAmount", AMOUNT_DIGITS),
        references_in_notes=in_notes)


# --- the file -----------------------------------------------------------------------------------------------------

def _xml_of(content: bytes) -> bytes:
    """The XML itself, or the one XML of a ZIP (ubltr's ZIP helpers, as the dispatch readers use them: members
    read within the size bound whatever their headers say)."""
    if not content:
        raise UblRefused(_("The file is empty."))
    if len(content) > MAX_FILE_BYTES:
        raise UblRefused(_("The file is larger than %(size)s MB.") % {"size": MAX_FILE_BYTES // 2**20})
    if content[:4] not in (b"PK\x03\x04", b"PK\x05\x06"):
        return content
    archive, members, refusal = ubltr.open_zip(content)
    if archive is None:
        raise UblRefused(refusal)
    if len(members) != 1:
        raise UblRefused(_("The ZIP file must hold exactly one XML file, the invoice; it holds %(count)s: "
                           "%(names)s.") % {"count": len(members),
                                            "names": ", ".join(_shown(info.filename) for info in members[:5])})
    xml, refusal = ubltr.read_member(archive, members[0])
    if refusal:
        raise UblRefused(refusal)
    return xml


def _invoice_root(xml: bytes):
    root, problem = ubltr.parse_xml(xml)
    if problem:
        raise UblRefused(problem.message)
    if root.tag == INVOICE_TAG:
        return root
    other = {
        f"{{{DESPATCH_NS}}}DespatchAdvice": _("This is a dispatch note (DespatchAdvice), not an invoice: an invoice's "
                                              "root element is Invoice in the namespace %(namespace)s."),
        f"{{{RECEIPT_NS}}}ReceiptAdvice": _("This is a reply to a dispatch note (ReceiptAdvice), not an invoice: an "
                                            "invoice's root element is Invoice in the namespace %(namespace)s."),
        f"{{{APPLICATION_RESPONSE_NS}}}ApplicationResponse": _(
            "This is an answer to an invoice (ApplicationResponse), not an invoice: an invoice's root element is "
            "Invoice in the namespace %(namespace)s."),
    }.get(root.tag)
    if other:
        raise UblRefused(other % {"namespace": INVOICE_NS})
    name = etree.QName(root)
    shown = f"{name.localname} ({name.namespace})" if name.namespace else name.localname
    raise UblRefused(_("The document is %(root)s, not a UBL-TR invoice: its root element must be Invoice in the "
                       "namespace %(namespace)s.") % {"root": _shown(shown, 200), "namespace": INVOICE_NS})


# --- the parts ----------------------------------------------------------------------------------------------------

def _shown(value: str, limit: int = SHOWN_CHARS) -> str:
    """A value of the file as a message quotes it: cut short, "nothing" when empty."""
    return ubltr.shown(value if len(value) <= limit else value[:limit] + "…")


def _required(element, path: str, index: int | None = None) -> str:
    value = text_of(element, path)
    if not value:
        raise UblRefused(_missing(path, index))
    return value


def _missing(path: str, index: int | None) -> str:
    if index is None:
        return _("The invoice is incomplete: %(element)s is missing.") % {"element": path}
    return _("Invoice line %(index)s is incomplete: %(element)s is missing.") % {"index": index, "element": path}


def _number(element, path: str, digits: int, index: int | None = None, required: bool = True) -> Decimal | None:
    """The xsd:decimal at `path`, 0 or more, with at most `digits` digits before the point; None when absent and
    not required."""
    found = first(element, path)
    text = (found.text or "").strip() if found is not None else ""
    if not text:
        if required:
            raise UblRefused(_missing(path, index))
        return None
    if len(text) > MAX_NUMBER_CHARS or not XSD_DECIMAL_RE.match(text):
        problem = _("%(element)s must be a decimal number such as 1250.50 (found: %(value)s).")
    else:
        value = Decimal(text)
        if value < 0:
            problem = _("%(element)s must not be negative (found: %(value)s).")
        elif value and value.adjusted() >= digits:
            problem = _("%(element)s is too large for an invoice: at most %(digits)s digits before the decimal point "
                        "(found: %(value)s).")
        else:
            return value
    problem = problem % {"element": path, "value": _shown(text), "digits": digits}
    if index is not None:
        problem = _("Invoice line %(index)s: %(problem)s") % {"index": index, "problem": problem}
    raise UblRefused(problem)


def _party(root, path: str, label: str) -> Party:
    party = first(root, f"{path}/cac:Party")
    if party is None:
        raise UblRefused(_missing(f"{path}/cac:Party", None))
    identifier, element = party_identifier(party)
    if element is None:
        # tolerant of files that leave schemeID out (as the dispatch readers are): an identifier of a VKN's or a
        # TCKN's shape
        identifier = next((text for found in party.iterfind("cac:PartyIdentification/cbc:ID", NS)
                           if IDENTIFIER_RE.match(text := (found.text or "").strip())), "")
    if not IDENTIFIER_RE.match(identifier):
        raise UblRefused(_("%(party)s has no VKN (10 digits) or TCKN (11 digits) in cac:PartyIdentification/cbc:ID "
                           "(found: %(value)s).") % {"party": label, "value": _shown(identifier)})
    return Party(identifier=identifier, name=party_name(party))


def _despatch_references(root) -> list[DespatchReference]:
    references = {}  # as a set, in the file's order (a hostile file may repeat one many times)
    for element in root.iterfind("cac:DespatchDocumentReference", NS):
        reference = DespatchReference(text_of(element, "cbc:ID"), date_of(text_of(element, "cbc:IssueDate")))
        if reference.number:
            references.setdefault(reference)
    return list(references)


def _line(line, index: int) -> InvoiceLine:
    quantity = first(line, "cbc:InvoicedQuantity")
    refs = {}
    for element in line.iterfind("cac:DespatchLineReference", NS):
        ref = DespatchLineRef(text_of(element, "cbc:LineID"), text_of(element, "cac:DocumentReference/cbc:ID"))
        if any(ref):
            refs.setdefault(ref)
    return InvoiceLine(
        line_id=_required(line, "cbc:ID", index),
        name=text_of(line, "cac:Item/cbc:Name"),
        item_code=text_of(line, "cac:Item/cac:SellersItemIdentification/cbc:ID"),
        quantity=_number(line, "cbc:InvoicedQuantity", QUANTITY_DIGITS, index),
        unit_code=(quantity.get("unitCode") or "").strip(),
        unit_price=_number(line, "cac:Price/cbc:PriceAmount", QUANTITY_DIGITS, index),
        line_amount=_number(line, "cbc:LineExtensionAmount", AMOUNT_DIGITS, index),
        vat_rate=_vat_rate(line, index),
        despatch_line_refs=tuple(refs))


def _vat_rate(line, index: int) -> Decimal | None:
    for subtotal in line.iterfind("cac:TaxTotal/cac:TaxSubtotal", NS):
        if text_of(subtotal, "cac:TaxCategory/cac:TaxScheme/cbc:TaxTypeCode") != VAT_TAX_TYPE:
            continue
        rate = _number(subtotal, "cbc:Percent", 3, index, required=False)
        if rate is not None and rate > 100:
            raise UblRefused(_("Invoice line %(index)s: %(problem)s") % {"index": index, "problem": _(
                "The VAT rate (cbc:Percent) must be from 0 to 100 (found: %(value)s).") % {"value": rate}})
        return rate
    return None


# --- dispatch notes named in a note -------------------------------------------------------------------------------

def _folded(text: str) -> str:
    """The text in lower case, Turkish dotted and dotless i alike (İRSALİYE, IRSALIYE and ırsalıye read as
    irsaliye), one character for one so that positions stay those of the text."""
    # İ (U+0130) is the one character whose lower() is two characters long: mapped first, so lengths are kept
    return text.translate(TURKISH_I).lower()


def references_in_notes(notes) -> list[DespatchReference]:
    """The dispatch notes the invoice's cbc:Note texts name: the 16-character numbers near the word İrsaliye
    (after it, "İrsaliye No: A, B", or just before it, "A nolu irsaliye"), each with the first date written after
    it ("Tarih: 01.12.2026"). A number nearer another document's word (Fatura, Sipariş) is not taken."""
    references = {}  # by number, the first one found
    for note in notes:
        for reference in _note_references(note):
            references.setdefault(reference.number, reference)
    return list(references.values())


def _note_references(text: str) -> list[DespatchReference]:
    folded = _folded(text)
    events = sorted([(match.start(), "keyword", match) for match in KEYWORD_RE.finditer(folded)]
                    + [(match.start(), "number", match) for match in NOTE_NUMBER_RE.finditer(text)],
                    key=lambda event: event[0])
    # stops[i]: where the date of a number at i ends: the next number or another document's word ("İrsaliye
    # Tarihi" goes on); found in one pass from the end, as a hostile note may hold many numbers
    stops, stop = [len(text)] * len(events), len(text)
    for position in range(len(events) - 1, -1, -1):
        stops[position] = stop
        if events[position][1] == "number" or not _despatch_word(events[position][2]):
            stop = events[position][0]
    found, anchor, previous_end = [], None, 0  # anchor: where the İrsaliye context ends (the word, a number taken)
    for position, (start, kind, match) in enumerate(events):
        if kind == "keyword":
            anchor = match.end() if _despatch_word(match) else None
            previous_end = match.end()
            continue
        named_after = _word_after(folded, match, events[position + 1] if position + 1 < len(events) else None)
        if named_after is None and anchor is not None and start - anchor <= WINDOW:
            anchor = match.end()  # "İrsaliye No: A, B": B is taken after A
            date_written = _note_date(text, match.end(), min(stops[position], match.end() + WINDOW))
        elif named_after:
            # "01.12.2026 tarihli A nolu irsaliye": the date before the number
            date_written = _note_date(text, max(previous_end, start - WINDOW), start, last=True)
        else:
            previous_end = match.end()
            continue
        previous_end = match.end()
        found.append(DespatchReference(match.group(), date_written))
    return found


def _word_after(folded: str, number, following) -> bool | None:
    """True or False when the number is followed by "nolu irsaliye" or "nolu fatura" (and so on): the word after
    decides; None when no such word follows it."""
    if following is None or following[1] != "keyword":
        return None
    joined = CONNECTOR_RE.fullmatch(folded, number.end(), following[0])
    return _despatch_word(following[2]) if joined else None


def _despatch_word(keyword) -> bool:
    return keyword.group().startswith(DESPATCH_WORDS)


def _note_date(text: str, start: int, end: int, last: bool = False) -> date | None:
    """The first date written between start and end (the last one with last): 01.12.2026, 01/12/2026 or
    2026-12-01; None when there is none or it is no date."""
    matches = list(NOTE_DATE_RE.finditer(text, start, end))
    if not matches:
        return None
    match = matches[-1] if last else matches[0]
    day, month, year = match.group(1, 2, 3) if match.group(1) else reversed(match.group(4, 5, 6))
    try:
        return date(int(year), int(month), int(day))
    except ValueError:
        return None
