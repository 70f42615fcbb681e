"""Issue 33, point 3: an incoming invoice read from its UBL-TR (invoices/ubl.py): the header, the parties, the
dispatch notes it bills (cac:DespatchDocumentReference, else a cbc:Note as integrators write it) and the lines;
and every hostile or wrong file refused with its message. Our own fixtures, written here."""

import io
import time
import zipfile
from dataclasses import FrozenInstanceError
from datetime import date
from decimal import Decimal
from xml.sax.saxutils import escape

import pytest
from django.utils import translation

from backoffice.dispatch import ubltr
from backoffice.invoices.ubl import (DespatchLineRef, DespatchReference, InvoiceLine, Party, UblRefused,
                                     read_invoice, references_in_notes)

UUID = "0b6c4a2e-7d1f-4c55-9a3e-2f8d6b1c9e70"
NUMBER = "TKF2026000000042"
SUPPLIER = ("9000068418", "Acme Elektrik Malzemeleri A.Ş.")
CUSTOMER = ("4840000006", "Tek Kutu Lojistik A.Ş.")
NOTES = [("EIR2026000000101", "2026-12-01"), ("EIR2026000000102", "2026-12-02")]
LINES = [
    dict(id="1", name="Bakır kablo 2,5 mm", code="KBL-25", quantity="100", unit="MTR", price="12.50", amount="1250.00",
         vat="20", refs=[("1", "EIR2026000000101")]),
    dict(id="2", name="Sigorta kutusu", code="SGK-12", quantity="4", unit="C62", price="310.125", amount="1240.50",
         vat="20", refs=[("2", "EIR2026000000101"), ("1", "EIR2026000000102")]),
    dict(id="3", name="Nakliye", code="", quantity="1", unit="C62", price="150", amount="150", vat=None, refs=[]),
]
INVOICE_NS = "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"


@pytest.fixture(autouse=True)
def english():
    with translation.override("en"):
        yield


def party(tag: str, identifier: str, name: str, scheme: str = "VKN") -> str:
    scheme_attribute = f' schemeID="{scheme}"' if scheme else ""
    return (f"<cac:{tag}><cac:Party><cac:PartyIdentification><cbc:ID schemeID=\"MERSISNO\">0900006841800015</cbc:ID>"
            f"</cac:PartyIdentification><cac:PartyIdentification><cbc:ID{scheme_attribute}>{identifier}</cbc:ID>"
            f"</cac:PartyIdentification><cac:PartyName><cbc:Name>{escape(name)}</cbc:Name></cac:PartyName>"
            f"<cac:PostalAddress><cbc:CitySubdivisionName>Kadıköy</cbc:CitySubdivisionName>"
            f"<cbc:CityName>İstanbul</cbc:CityName><cac:Country><cbc:Name>Türkiye</cbc:Name></cac:Country>"
            f"</cac:PostalAddress></cac:Party></cac:{tag}>")


def invoice_line(line: dict) -> str:
    refs = "".join(f"<cac:DespatchLineReference><cbc:LineID>{line_id}</cbc:LineID><cac:DocumentReference>"
                   f"<cbc:ID>{document}</cbc:ID><cbc:IssueDate>2026-12-01</cbc:IssueDate></cac:DocumentReference>"
                   f"</cac:DespatchLineReference>" for line_id, document in line["refs"])
    taxes = ("<cac:TaxTotal><cbc:TaxAmount currencyID=\"TRY\">0</cbc:TaxAmount><cac:TaxSubtotal>"
             "<cbc:TaxableAmount currencyID=\"TRY\">1</cbc:TaxableAmount><cbc:TaxAmount currencyID=\"TRY\">0"
             "</cbc:TaxAmount><cbc:Percent>10</cbc:Percent><cac:TaxCategory><cac:TaxScheme><cbc:Name>GV. STOPAJI"
             "</cbc:Name><cbc:TaxTypeCode>0003</cbc:TaxTypeCode></cac:TaxScheme></cac:TaxCategory></cac:TaxSubtotal>")
    if line["vat"] is not None:
        taxes += (f"<cac:TaxSubtotal><cbc:TaxableAmount currencyID=\"TRY\">{line['amount']}</cbc:TaxableAmount>"
                  f"<cbc:TaxAmount currencyID=\"TRY\">1</cbc:TaxAmount><cbc:Percent>{line['vat']}</cbc:Percent>"
                  f"<cac:TaxCategory><cac:TaxScheme><cbc:Name>KDV</cbc:Name><cbc:TaxTypeCode>0015</cbc:TaxTypeCode>"
                  f"</cac:TaxScheme></cac:TaxCategory></cac:TaxSubtotal>")
    taxes += "</cac:TaxTotal>"
    code = (f"<cac:SellersItemIdentification><cbc:ID>{line['code']}</cbc:ID></cac:SellersItemIdentification>"
            if line["code"] else "")
    return (f"<cac:InvoiceLine><cbc:ID>{line['id']}</cbc:ID>"
            f"<cbc:InvoicedQuantity unitCode=\"{line['unit']}\">{line['quantity']}</cbc:InvoicedQuantity>"
            f"<cbc:LineExtensionAmount currencyID=\"TRY\">{line['amount']}</cbc:LineExtensionAmount>{refs}{taxes}"
            f"<cac:Item><cbc:Name>{escape(line['name'])}</cbc:Name>{code}</cac:Item>"
            f"<cac:Price><cbc:PriceAmount currencyID=\"TRY\">{line['price']}</cbc:PriceAmount></cac:Price>"
            f"</cac:InvoiceLine>")


def invoice_xml(*, references=NOTES, notes=("Teslimat depo 2'ye yapılmıştır.",), lines=LINES,
                profile="TICARIFATURA", payable="3124.60", tax_exclusive="2640.50", supplier=SUPPLIER,
                customer=CUSTOMER, root="Invoice", namespace=INVOICE_NS) -> bytes:
    """A TICARIFATURA (SATIS) of SUPPLIER to CUSTOMER, in the order UBL-TR writes an invoice."""
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<{root} xmlns="{namespace}" '
        'xmlns:cac="urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2" '
        'xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2" '
        'xmlns:ext="urn:oasis:names:specification:ubl:schema:xsd:CommonExtensionComponents-2">\n'
        "<ext:UBLExtensions><ext:UBLExtension><ext:ExtensionContent/></ext:UBLExtension></ext:UBLExtensions>\n"
        "<cbc:UBLVersionID>2.1</cbc:UBLVersionID><cbc:CustomizationID>TR1.2</cbc:CustomizationID>\n"
        f"<cbc:ProfileID>{profile}</cbc:ProfileID><cbc:ID>{NUMBER}</cbc:ID>"
        f"<cbc:CopyIndicator>false</cbc:CopyIndicator><cbc:UUID>{UUID}</cbc:UUID>\n"
        "<cbc:IssueDate>2026-12-03</cbc:IssueDate><cbc:IssueTime>10:15:00</cbc:IssueTime>\n"
        "<cbc:InvoiceTypeCode>SATIS</cbc:InvoiceTypeCode>\n"
        + "".join(f"<cbc:Note>{escape(note)}</cbc:Note>\n" for note in notes)
        + "<cbc:DocumentCurrencyCode>TRY</cbc:DocumentCurrencyCode>"
        f"<cbc:LineCountNumeric>{len(lines)}</cbc:LineCountNumeric>\n"
        + "".join(f"<cac:DespatchDocumentReference><cbc:ID>{number}</cbc:ID><cbc:IssueDate>{issued}</cbc:IssueDate>"
                  "</cac:DespatchDocumentReference>\n" for number, issued in references)
        + party("AccountingSupplierParty", *supplier) + "\n" + party("AccountingCustomerParty", *customer) + "\n"
        + "<cac:TaxTotal><cbc:TaxAmount currencyID=\"TRY\">484.10</cbc:TaxAmount></cac:TaxTotal>\n"
        "<cac:LegalMonetaryTotal>"
        "<cbc:LineExtensionAmount currencyID=\"TRY\">2640.50</cbc:LineExtensionAmount>"
        f"<cbc:TaxExclusiveAmount currencyID=\"TRY\">{tax_exclusive}</cbc:TaxExclusiveAmount>"
        "<cbc:TaxInclusiveAmount currencyID=\"TRY\">3124.60</cbc:TaxInclusiveAmount>"
        f"<cbc:PayableAmount currencyID=\"TRY\">{payable}</cbc:PayableAmount></cac:LegalMonetaryTotal>\n"
        + "".join(invoice_line(line) + "\n" for line in lines)
        + f"</{root}>\n"
    ).encode()


def zipped(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def edit(xml: bytes, old: str, new: str) -> bytes:
    """Every `old` replaced by `new`."""
    assert old.encode() in xml, old
    return xml.replace(old.encode(), new.encode())


def refused(content: bytes) -> str:
    with pytest.raises(UblRefused) as caught:
        read_invoice(content)
    assert isinstance(caught.value, ValueError)
    return str(caught.value)


# --- an invoice read ----------------------------------------------------------------------------------------------

def test_a_commercial_invoice_with_two_dispatch_notes_and_three_lines():
    invoice = read_invoice(invoice_xml())
    assert (invoice.uuid, invoice.number, invoice.issue_date, invoice.profile, invoice.type_code,
            invoice.currency) == (UUID, NUMBER, date(2026, 12, 3), "TICARIFATURA", "SATIS", "TRY")
    # the VKN with schemeID, not the MERSİS number before it
    assert invoice.supplier == Party("9000068418", "Acme Elektrik Malzemeleri A.Ş.")
    assert invoice.customer == Party("4840000006", "Tek Kutu Lojistik A.Ş.")
    assert invoice.despatch_references == (("EIR2026000000101", date(2026, 12, 1)),
                                           ("EIR2026000000102", date(2026, 12, 2)))
    assert not invoice.references_in_notes
    assert (invoice.payable, invoice.tax_exclusive) == (Decimal("3124.60"), Decimal("2640.50"))
    assert invoice.lines == (
        InvoiceLine("1", "Bakır kablo 2,5 mm", "KBL-25", Decimal(100), "MTR", Decimal("12.50"), Decimal("1250.00"),
                    Decimal(20), (DespatchLineRef("1", "EIR2026000000101"),)),
        InvoiceLine("2", "Sigorta kutusu", "SGK-12", Decimal(4), "C62", Decimal("310.125"), Decimal("1240.50"),
                    Decimal(20), (DespatchLineRef("2", "EIR2026000000101"), DespatchLineRef("1", "EIR2026000000102"))),
        # no KDV subtotal (only a stopaj one): no VAT rate; no item code; no dispatch line
        InvoiceLine("3", "Nakliye", "", Decimal(1), "C62", Decimal(150), Decimal(150), None, ()),
    )
    assert all(isinstance(line.quantity, Decimal) and isinstance(line.unit_price, Decimal) for line in invoice.lines)
    with pytest.raises(FrozenInstanceError):
        invoice.number = "X"


def test_a_zip_holding_the_invoice_reads_the_same():
    xml = invoice_xml()
    assert read_invoice(zipped({"fatura/TKF2026000000042.xml": xml, "__MACOSX/._a.xml": b"junk"})) == read_invoice(xml)


def test_a_repeated_reference_a_person_and_a_missing_scheme_id():
    xml = invoice_xml(references=NOTES + NOTES[:1], customer=("10000000146", "Ayşe Nur Yılmaz"))
    xml = edit(xml, '<cbc:ID schemeID="VKN">10000000146</cbc:ID>', "<cbc:ID>10000000146</cbc:ID>")
    invoice = read_invoice(xml)
    assert [reference.number for reference in invoice.despatch_references] == [
        "EIR2026000000101", "EIR2026000000102"]
    # no schemeID: the identifier of a TCKN's shape (not the 16-digit MERSİS number)
    assert invoice.customer == Party("10000000146", "Ayşe Nur Yılmaz")


def test_numbers_as_integrators_write_them():
    line = dict(LINES[0], quantity=" 100.000000 ", price="+12.5", amount="1250.", vat="20.00")
    invoice = read_invoice(invoice_xml(lines=[line], payable=".5", tax_exclusive="0"))
    assert (invoice.lines[0].quantity, invoice.lines[0].unit_price, invoice.lines[0].line_amount,
            invoice.lines[0].vat_rate) == (Decimal(100), Decimal("12.5"), Decimal(1250), Decimal(20))
    assert (invoice.payable, invoice.tax_exclusive) == (Decimal("0.5"), Decimal(0))
    # the largest an amount may be
    assert read_invoice(invoice_xml(payable="9" * 16 + ".99")).payable == Decimal("9" * 16 + ".99")


# --- dispatch notes named in a note -------------------------------------------------------------------------------

def test_a_note_only_reference():
    invoice = read_invoice(invoice_xml(references=[], notes=(
        "Teslimat depo 2'ye yapılmıştır.", "İrsaliye No: EIR2026000000101 Tarih: 01.12.2026")))
    assert invoice.despatch_references == (DespatchReference("EIR2026000000101", date(2026, 12, 1)),)
    assert invoice.references_in_notes
    # a DespatchDocumentReference wins over the notes
    invoice = read_invoice(invoice_xml(references=NOTES[1:], notes=("İrsaliye No: EIR2026000000101",)))
    assert invoice.despatch_references == (("EIR2026000000102", date(2026, 12, 2)),)
    assert not invoice.references_in_notes
    # no reference and no note naming one
    invoice = read_invoice(invoice_xml(references=[]))
    assert invoice.despatch_references == () and not invoice.references_in_notes


@pytest.mark.parametrize(("notes", "expected"), [
    (["İrsaliye No: EIR2026000000101 Tarih: 01.12.2026"], [("EIR2026000000101", date(2026, 12, 1))]),
    # upper case in both Turkish and ASCII, the abbreviation, no date
    (["İRSALİYE NO: EIR2026000000101"], [("EIR2026000000101", None)]),
    (["IRSALIYE NO:EIR2026000000101 TARIH:2026-12-01"], [("EIR2026000000101", date(2026, 12, 1))]),
    (["irs.no EIR2026000000101"], [("EIR2026000000101", None)]),
    # several after one word, each with its date; the same number in two notes once
    (["İrsaliye No: EIR2026000000101 Tarih: 01.12.2026, EIR2026000000102 Tarih: 02/12/2026",
      "irsaliye EIR2026000000101"],
     [("EIR2026000000101", date(2026, 12, 1)), ("EIR2026000000102", date(2026, 12, 2))]),
    # "İrsaliye Tarihi" after the number still gives its date
    (["İrsaliye No: EIR2026000000101 İrsaliye Tarihi: 01.12.2026"], [("EIR2026000000101", date(2026, 12, 1))]),
    # the word after the number, and the date before it
    (["01.12.2026 tarihli EIR2026000000101 nolu irsaliye"], [("EIR2026000000101", date(2026, 12, 1))]),
    (["EIR2026000000101 numaralı İrsaliyeye istinaden"], [("EIR2026000000101", None)]),
    # another document's number is not taken
    (["İrsaliye No: EIR2026000000101 Sipariş No: SIP2026000000007"], [("EIR2026000000101", None)]),
    (["SIP2026000000007 nolu sipariş, İrsaliye: EIR2026000000101"], [("EIR2026000000101", None)]),
    (["İrsaliye No: EIR2026000000101 Tarih: 01.12.2026 Fatura Tarihi: 03.12.2026"],
     [("EIR2026000000101", date(2026, 12, 1))]),
    (["İade faturası ABC2026000000009, iade irsaliyesi EIR2026000000101 nolu fatura ile"], []),
    # no word: a number alone, far from the word, not a note number, an impossible date
    (["EIR2026000000101"], []),
    (["İrsaliye ile teslim edilen malların bedeli aşağıdaki banka hesabına yatırılacaktır; EIR2026000000101"], []),
    (["İrsaliye No: EIR26000000101, XEIR2026000000101, EIR2026000000101X"], []),
    (["İrsaliye No: EIR2026000000101 Tarih: 31.02.2026"], [("EIR2026000000101", None)]),
])
def test_dispatch_notes_named_in_notes(notes, expected):
    assert references_in_notes(notes) == expected


def test_the_invoice_s_own_number_in_a_note_is_not_a_dispatch_note():
    invoice = read_invoice(invoice_xml(references=[], notes=(f"İrsaliye No: {NUMBER}, EIR2026000000101",)))
    assert invoice.despatch_references == (("EIR2026000000101", None),)


# --- refused ------------------------------------------------------------------------------------------------------

INVOICE_ROOT = ("its root element must be Invoice in the namespace "
                "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2.")
AN_INVOICE = ("an invoice's root element is Invoice in the namespace "
              "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2.")


def test_a_dispatch_note_is_refused():
    despatch = invoice_xml(root="DespatchAdvice", namespace=ubltr.DESPATCH_NS)
    assert refused(despatch) == f"This is a dispatch note (DespatchAdvice), not an invoice: {AN_INVOICE}"
    assert refused(zipped({"irsaliye.xml": despatch})).startswith("This is a dispatch note (DespatchAdvice)")


@pytest.mark.parametrize(("root", "namespace", "message"), [
    ("ReceiptAdvice", ubltr.RECEIPT_NS,
     f"This is a reply to a dispatch note (ReceiptAdvice), not an invoice: {AN_INVOICE}"),
    ("ApplicationResponse", "urn:oasis:names:specification:ubl:schema:xsd:ApplicationResponse-2",
     f"This is an answer to an invoice (ApplicationResponse), not an invoice: {AN_INVOICE}"),
    ("CreditNote", "urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2",
     "The document is CreditNote (urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2), not a UBL-TR "
     f"invoice: {INVOICE_ROOT}"),
    ("Invoice", "urn:example:not-ubl", f"The document is Invoice (urn:example:not-ubl), not a UBL-TR invoice: "
                                       f"{INVOICE_ROOT}"),
])
def test_other_documents_are_refused(root, namespace, message):
    assert refused(invoice_xml(root=root, namespace=namespace)) == message


def test_an_invoice_without_namespace_is_refused():
    assert refused(b"<Invoice><ID>1</ID></Invoice>") == (
        f"The document is Invoice, not a UBL-TR invoice: {INVOICE_ROOT}")
    # a UTF-16 file with its BOM is read as XML (and refused here only for its missing namespace)
    assert refused("<Invoice/>".encode("utf-16")).startswith("The document is Invoice, not a UBL-TR invoice")


LAUGHS = (b'<?xml version="1.0"?>\n<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;">'
          b'<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;">]>\n<Invoice xmlns="' + INVOICE_NS.encode()
          + b'"><Note>&lol3;</Note></Invoice>')
EXTERNAL = (b'<?xml version="1.0"?>\n<!DOCTYPE Invoice [<!ENTITY secret SYSTEM "file:///etc/passwd">]>\n'
            b'<Invoice xmlns="' + INVOICE_NS.encode() + b'"><Note>&secret;</Note></Invoice>')
NETWORK = (b'<?xml version="1.0"?>\n<!DOCTYPE Invoice SYSTEM "http://127.0.0.1:9/invoice.dtd">\n'
           b'<Invoice xmlns="' + INVOICE_NS.encode() + b'"/>')
DOCTYPE = ("The file declares a DOCTYPE: UBL-TR documents have none, and it is refused for safety (its entities are "
           "not expanded).")


@pytest.mark.parametrize(("content", "message"), [
    (b"", "The file is empty."),
    (b"x" * (ubltr.MAX_FILE_BYTES + 1), "The file is larger than 10 MB."),
    (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", "This is not well-formed XML: "),
    (b"<Invoice>", "This is not well-formed XML: "),
    (b"\xff\xfe\x00\x00garbage", "This is not well-formed XML"),
    (b'<?xml version="1.0" encoding="x-nope"?><Invoice/>', "This is not well-formed XML: Unsupported encoding"),
    (b"<a>" * 300 + b"</a>" * 300, "This is not well-formed XML: Excessive depth"),
    (LAUGHS, DOCTYPE),
    (EXTERNAL, DOCTYPE),
    (NETWORK, DOCTYPE),
    (zipped({"a.xml": invoice_xml(), "b.xml": invoice_xml()}),
     "The ZIP file must hold exactly one XML file, the invoice; it holds 2: a.xml, b.xml."),
    (zipped({"a.txt": b"x"}), "The ZIP file holds no XML file."),
    (zipped({"a.xml": b""}), "The file is empty."),
    (zipped({"a.xml": LAUGHS}), DOCTYPE),
    (b"PK\x03\x04" + b"\x00" * 40, "This ZIP file cannot be opened: it is damaged or incomplete."),
])
def test_hostile_files_are_refused(content, message):
    assert refused(content).startswith(message)


def test_a_zip_bomb_is_refused_unread():
    bomb = zipped({"fatura.xml": b"<Invoice>" + b" " * (ubltr.MAX_FILE_BYTES + 10) + b"</Invoice>"})
    assert len(bomb) < 100_000
    assert refused(bomb) == "The file is larger than 10 MB."


@pytest.mark.parametrize(("old", "new", "message"), [
    ("<cbc:UUID>" + UUID, "<cbc:UUID>", "The invoice is incomplete: cbc:UUID is missing."),
    ("<cbc:ID>" + NUMBER + "</cbc:ID>", "", "The invoice is incomplete: cbc:ID is missing."),
    ("<cbc:IssueDate>2026-12-03</cbc:IssueDate>", "", "The invoice is incomplete: cbc:IssueDate is missing."),
    ("<cbc:ProfileID>TICARIFATURA</cbc:ProfileID>", "", "The invoice is incomplete: cbc:ProfileID is missing."),
    ("<cbc:InvoiceTypeCode>SATIS</cbc:InvoiceTypeCode>", "",
     "The invoice is incomplete: cbc:InvoiceTypeCode is missing."),
    ("<cbc:DocumentCurrencyCode>TRY</cbc:DocumentCurrencyCode>", "",
     "The invoice is incomplete: cbc:DocumentCurrencyCode is missing."),
    ("AccountingSupplierParty>", "SellerSupplierParty>",
     "The invoice is incomplete: cac:AccountingSupplierParty/cac:Party is missing."),
    ("<cbc:PayableAmount currencyID=\"TRY\">3124.60</cbc:PayableAmount>", "",
     "The invoice is incomplete: cac:LegalMonetaryTotal/cbc:PayableAmount is missing."),
    ("<cbc:TaxExclusiveAmount currencyID=\"TRY\">2640.50</cbc:TaxExclusiveAmount>",
     "<cbc:TaxExclusiveAmount currencyID=\"TRY\"> </cbc:TaxExclusiveAmount>",
     "The invoice is incomplete: cac:LegalMonetaryTotal/cbc:TaxExclusiveAmount is missing."),
    ("<cbc:UUID>" + UUID, "<cbc:UUID>not-a-guid",
     "cbc:UUID must be a GUID, 8-4-4-4-12 hexadecimal digits (found: not-a-guid)."),
    ("<cbc:IssueDate>2026-12-03", "<cbc:IssueDate>03.12.2026",
     "cbc:IssueDate must be a date written YYYY-MM-DD (found: 03.12.2026)."),
    ("<cbc:IssueDate>2026-12-03", "<cbc:IssueDate>2026-02-30",
     "cbc:IssueDate must be a date written YYYY-MM-DD (found: 2026-02-30)."),
    ('<cbc:ID schemeID="VKN">9000068418</cbc:ID>', '<cbc:ID schemeID="VKN">ABC</cbc:ID>',
     "The supplier (cac:AccountingSupplierParty) has no VKN (10 digits) or TCKN (11 digits) in "
     "cac:PartyIdentification/cbc:ID (found: ABC)."),
    ('<cbc:ID schemeID="VKN">4840000006</cbc:ID>', '<cbc:ID schemeID="TAX">4840000006X</cbc:ID>',
     "The customer (cac:AccountingCustomerParty) has no VKN (10 digits) or TCKN (11 digits) in "
     "cac:PartyIdentification/cbc:ID (found: nothing)."),
])
def test_missing_and_malformed_parts_are_refused(old, new, message):
    assert refused(edit(invoice_xml(), old, new)) == message


def test_an_invoice_without_lines_is_refused():
    assert refused(invoice_xml(lines=[])) == "The invoice has no line (cac:InvoiceLine)."


@pytest.mark.parametrize(("changes", "message"), [
    (dict(id=""), "Invoice line 2 is incomplete: cbc:ID is missing."),
    (dict(quantity=""), "Invoice line 2 is incomplete: cbc:InvoicedQuantity is missing."),
    (dict(price=""), "Invoice line 2 is incomplete: cac:Price/cbc:PriceAmount is missing."),
    (dict(amount=""), "Invoice line 2 is incomplete: cbc:LineExtensionAmount is missing."),
    (dict(quantity="4,5"), "Invoice line 2: cbc:InvoicedQuantity must be a decimal number such as 1250.50 "
                           "(found: 4,5)."),
    (dict(quantity="1e3"), "Invoice line 2: cbc:InvoicedQuantity must be a decimal number such as 1250.50 "
                           "(found: 1e3)."),
    (dict(quantity="NaN"), "Invoice line 2: cbc:InvoicedQuantity must be a decimal number such as 1250.50 "
                           "(found: NaN)."),
    (dict(price="Infinity"), "Invoice line 2: cac:Price/cbc:PriceAmount must be a decimal number such as 1250.50 "
                             "(found: Infinity)."),
    (dict(price="0x10"), "Invoice line 2: cac:Price/cbc:PriceAmount must be a decimal number such as 1250.50 "
                         "(found: 0x10)."),
    (dict(quantity="1" * 45), "Invoice line 2: cbc:InvoicedQuantity must be a decimal number such as 1250.50 "
                              f"(found: {'1' * 40}…)."),
    (dict(quantity="-4"), "Invoice line 2: cbc:InvoicedQuantity must not be negative (found: -4)."),
    (dict(quantity="1000000000000"), "Invoice line 2: cbc:InvoicedQuantity is too large for an invoice: at most 12 "
                                     "digits before the decimal point (found: 1000000000000)."),
    (dict(amount="12345678901234567.5"), "Invoice line 2: cbc:LineExtensionAmount is too large for an invoice: at "
                                         "most 16 digits before the decimal point (found: 12345678901234567.5)."),
    (dict(vat="abc"), "Invoice line 2: cbc:Percent must be a decimal number such as 1250.50 (found: abc)."),
    (dict(vat="120"), "Invoice line 2: The VAT rate (cbc:Percent) must be from 0 to 100 (found: 120)."),
])
def test_a_bad_line_is_refused_with_its_place(changes, message):
    lines = [LINES[0], dict(LINES[1], **changes), LINES[2]]
    assert refused(invoice_xml(lines=lines)) == message


@pytest.mark.parametrize(("payable", "message"), [
    ("3.124,60", "cac:LegalMonetaryTotal/cbc:PayableAmount must be a decimal number such as 1250.50 "
                 "(found: 3.124,60)."),
    ("-1", "cac:LegalMonetaryTotal/cbc:PayableAmount must not be negative (found: -1)."),
    ("1" + "0" * 16, "cac:LegalMonetaryTotal/cbc:PayableAmount is too large for an invoice: at most 16 digits before "
                     "the decimal point (found: 10000000000000000)."),
])
def test_bad_totals_are_refused(payable, message):
    assert refused(invoice_xml(payable=payable)) == message



def test_a_note_naming_a_great_many_numbers_is_read_in_linear_time():
    note = "İrsaliye No: " + ", ".join(f"EIR2026{index:09d} Tarih: 01.12.2026 fatura" for index in range(40_000))
    started = time.monotonic()
    invoice = read_invoice(invoice_xml(references=[], notes=(note,)))
    assert time.monotonic() - started < 5  # a quadratic reading takes minutes
    assert invoice.despatch_references == (("EIR2026000000000", date(2026, 12, 1)),)
