"""The reply to a dispatch note, a UBL-TR 1.2.1 ReceiptAdvice (document 3, 2.9; the facts file's "UBL-TR dispatch
documents"), for dispatch_replies.py and dispatch_receipts.py: what the service reads from an uploaded one, the one
the platform writes itself (partial accept, approve / reject), and its PDF and HTML.

Choices where the documents say "not shown":
- Written replies are unsigned drafts as the written notes are (ext:ExtensionContent empty). They carry what
  GİB's ReceiptAdvice schema requires besides the contract's members: cbc:CopyIndicator false and a cac:Signature
  naming the answering customer, in the schema's order (DeliveryCustomerParty before DespatchSupplierParty).
- The answering customer is the sandbox customer (its VKN and Kadıköy address, dispatch_ubl); the note's sender
  is copied from the note's DespatchSupplierParty as the note has it.
- Quantities are written as UBL writes numbers (no exponent, no trailing zeros) with the note line's unit code.
"""

from lxml import etree

from . import dispatch_ubl as ubl
from .common import blank, document_root
from .dispatch_rules import TURKISH_STATUS_NAMES

RECEIPT_NAMESPACE = "urn:oasis:names:specification:ubl:schema:xsd:ReceiptAdvice-2"
RECEIPT_ADVICE = f"{{{RECEIPT_NAMESPACE}}}ReceiptAdvice"
RECEIPT_NS = {**{prefix: uri for prefix, uri in ubl.NS.items() if prefix}, None: RECEIPT_NAMESPACE}
XPATH_NS = ubl.XPATH_NS
PLACE = "ReceiptAdvice"
KIND_NAMES = {"accept": "Kabul", "reject": "Red", "partial": "Kısmi kabul"}


def read(text, problems):
    """(XML bytes, root) of the ReceiptAdvice field (Base64 of a ZIP holding one ReceiptAdvice XML), or None with
    the problem added."""
    return ubl.read_upload(text, problems, PLACE, RECEIPT_ADVICE)


def facts(root) -> dict:
    """{uuid, number, issueDate, issueTime, despatchNumber, supplier, lines}: lines are what each cac:ReceiptLine
    says, as text (None when missing), in document order."""
    text = ubl.text_of
    lines = []
    for line in root.findall("cac:ReceiptLine", XPATH_NS):
        present = {name: line.find(f"cbc:{name}", XPATH_NS) is not None
                   for name in ("ReceivedQuantity", "RejectedQuantity")}
        lines.append({"id": text(line, "cbc:ID"),
                      "received": text(line, "cbc:ReceivedQuantity") if present["ReceivedQuantity"] else None,
                      "rejected": text(line, "cbc:RejectedQuantity") if present["RejectedQuantity"] else None,
                      "reason": text(line, "cbc:RejectReason"),
                      "lineId": text(line, "cac:DespatchLineReference/cbc:LineID")})
    supplier, _ = ubl.party_of(root.find("cac:DespatchSupplierParty/cac:Party", XPATH_NS))
    return {"uuid": text(root, "cbc:UUID").lower(), "number": text(root, "cbc:ID"),
            "issueDate": text(root, "cbc:IssueDate"), "issueTime": text(root, "cbc:IssueTime"),
            "despatchNumber": text(root, "cac:DespatchDocumentReference/cbc:ID"), "supplier": supplier,
            "lines": lines}


def receipt_xml(reply_id: str, number: str, issued, note, customer, answers: list, delivered, contact) -> bytes:
    """The ReceiptAdvice the platform writes: answers are (note line, received, rejected, reason) for every line of
    the note; issued and delivered are local datetimes, contact the delivery contact (or None)."""
    add = ubl.add
    root = document_root(RECEIPT_ADVICE, RECEIPT_NS, "TEMELIRSALIYE", number, reply_id, issued.date().isoformat(),
                             issued.strftime("%H:%M:%S"))
    add(root, "cbc:ReceiptAdviceTypeCode", "SEVK")
    add(root, "cbc:LineCountNumeric", len(answers))
    reference = add(root, "cac:DespatchDocumentReference")
    add(reference, "cbc:ID", note.number)
    add(reference, "cbc:IssueDate", note.data.get("issueDate"))
    vkn = ubl.company_vkn(customer)
    ubl.add_signature(root, vkn, number)
    ubl.add_party(add(root, "cac:DeliveryCustomerParty"), vkn, customer.name, None, ubl.COMPANY_ADDRESS)
    supplier = _note_supplier(note)
    if supplier is not None:
        add(root, "cac:DespatchSupplierParty").append(supplier)
    else:
        sender = note.data.get("sender") or {}
        ubl.add_party(add(root, "cac:DespatchSupplierParty"), sender.get("vknTckn") or "", sender.get("title") or "",
                      None, ("", "", "Türkiye"))
    shipment = add(root, "cac:Shipment")
    add(shipment, "cbc:ID", "1")
    delivery = add(shipment, "cac:Delivery")
    add(delivery, "cbc:ActualDeliveryDate", delivered.date().isoformat())
    add(delivery, "cbc:ActualDeliveryTime", delivered.strftime("%H:%M:%S"))
    if not blank(contact):
        party = add(delivery, "cac:DeliveryParty")
        add(add(party, "cac:PartyIdentification"), "cbc:ID", vkn, schemeID="VKN")
        add(add(party, "cac:PartyName"), "cbc:Name", customer.name)
        ubl.add_address(party, "cac:PostalAddress", *ubl.COMPANY_ADDRESS)
        add(add(party, "cac:Contact"), "cbc:Name", contact)
    for index, (line, received, rejected, reason) in enumerate(answers, start=1):
        element = add(root, "cac:ReceiptLine")
        add(element, "cbc:ID", index)
        add(element, "cbc:ReceivedQuantity", ubl.plain(received), unitCode=line["unitCode"])
        add(element, "cbc:RejectedQuantity", ubl.plain(rejected), unitCode=line["unitCode"])
        if rejected and not blank(reason):
            add(element, "cbc:RejectReason", reason)
        add(add(element, "cac:DespatchLineReference"), "cbc:LineID", line["id"])
        add(add(element, "cac:Item"), "cbc:Name", line["name"])
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)


def _note_supplier(note):
    """The cac:Party of the note's DespatchSupplierParty, copied (None when the note's XML has none)."""
    if not note.blob:
        return None
    party = ubl.parse_stored(bytes(note.blob)).find("cac:DespatchSupplierParty/cac:Party", XPATH_NS)
    return etree.fromstring(etree.tostring(party)) if party is not None else None


# --- PDF and HTML ------------------------------------------------------------------------------------------------

COLUMNS = ("Sıra", "Mal / Hizmet", "Teslim Alınan", "Reddedilen", "Red Nedeni")


def summary(root, status: int, layout: str, kind: str | None) -> tuple[list, list]:
    text = ubl.text_of
    supplier_id, supplier = ubl.party_of(root.find("cac:DespatchSupplierParty/cac:Party", XPATH_NS))
    customer_id, customer = ubl.party_of(root.find("cac:DeliveryCustomerParty/cac:Party", XPATH_NS))
    delivery = root.find("cac:Shipment/cac:Delivery", XPATH_NS)
    header = [("Belge", "e-İrsaliye Yanıtı"), ("Yanıt No", text(root, "cbc:ID")), ("ETTN", text(root, "cbc:UUID")),
              ("Düzenleme Tarihi", f"{text(root, 'cbc:IssueDate')} {text(root, 'cbc:IssueTime')}".strip()),
              ("İrsaliye No", text(root, "cac:DespatchDocumentReference/cbc:ID")),
              ("İrsaliyeyi Gönderen", f"{supplier} ({supplier_id})"), ("Yanıtlayan", f"{customer} ({customer_id})")]
    delivered = f"{text(delivery, 'cbc:ActualDeliveryDate')} {text(delivery, 'cbc:ActualDeliveryTime')}".strip()
    if delivered:
        header.append(("Teslim Tarihi", delivered))
    contact = text(delivery, "cac:DeliveryParty/cac:Contact/cbc:Name")
    if contact:
        header.append(("Teslim Alan", contact))
    if kind:
        header.append(("Yanıt", KIND_NAMES.get(kind, kind)))
    header += [("Durum", f"{TURKISH_STATUS_NAMES.get(status, status)} ({status})"), ("Tasarım", layout)]
    rows = []
    for line in root.findall("cac:ReceiptLine", XPATH_NS):
        quantities = []
        for name in ("ReceivedQuantity", "RejectedQuantity"):
            element = line.find(f"cbc:{name}", XPATH_NS)
            quantities.append(f"{(element.text or '').strip()} {element.get('unitCode', '')}".strip()
                              if element is not None else "")
        rows.append([text(line, "cac:DespatchLineReference/cbc:LineID") or text(line, "cbc:ID"),
                     text(line, "cac:Item/cbc:Name"), *quantities, text(line, "cbc:RejectReason")])
    return header, rows


def pdf(root, status: int, layout: str, kind: str | None = None) -> bytes:
    header, rows = summary(root, status, layout, kind)
    return ubl.drawn_pdf("e-Irsaliye Yaniti", header, ("Sira", "Mal / Hizmet", "Alinan", "Reddedilen", "Neden"), rows)


def html(root, status: int, layout: str, kind: str | None = None) -> str:
    header, rows = summary(root, status, layout, kind)
    return ubl.drawn_html("e-İrsaliye Yanıtı", header, layout, COLUMNS, rows)
