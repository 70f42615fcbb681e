"""Incoming dispatch notes and replies (issue 16): reading an incoming DespatchAdvice, writing a ReceiptAdvice draft,
the pre-check of an uploaded reply (file, schema, each rule with its message and line) and reading a received
reply. Our own fixtures (whole files in tests/dispatch/samples); the public samples of another integrator are tried
too where a mirror of them exists."""

import base64
import io
import os
import subprocess
import warnings
import zipfile
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from functools import cache
from pathlib import Path

import pytest
from django.utils import timezone, translation
from lxml import etree

from backoffice.dispatch import receipt, ubl, ubltr
from backoffice.dispatch.receipt import (IncomingDespatch, Party, check_receipt, read_despatch, read_receipt,
                                         receipt_zip_base64)
from tests.dispatch.receipt_samples import receipt_xml, reply_kind
from tests.dispatch.ubl_samples import RECEIVER, SENDER, despatch_xml, line_of, zipped

UUID = "3f2504e0-4f89-41d3-9a0c-0305e82c3301"
NOTE_UUID = "5f0c7a52-3f43-4b8e-9d55-0c2b1f6e8a10"
LINES = [{"line_id": "1", "name": "Bakır kablo 2,5 mm", "unit_code": "MTR", "received": Decimal("100"),
          "rejected": Decimal("20"), "reason": "Ezilmiş makaralar"},
         {"line_id": "2", "name": "Sigorta kutusu", "unit_code": "C62", "received": 4, "rejected": 0, "reason": ""}]


@pytest.fixture(autouse=True)
def english():
    with translation.override("en"):
        yield


def today() -> date:
    return timezone.localdate()


def draft(**changes) -> bytes:
    """A reply of today to the note EIR<year>000000001 of ubl_samples (SENDER to RECEIVER), line 1 partly
    rejected."""
    year = today().year
    fields = dict(uuid=UUID, number=f"IRY{year}000000001", issue_date=today(), issue_time="11:00:00",
                  despatch_number=f"EIR{year}000000001", despatch_issue_date=today(),
                  supplier=(SENDER["identifier"], SENDER["name"], SENDER["district"], SENDER["city"]),
                  customer=Party(RECEIVER["identifier"], RECEIVER["name"], RECEIVER["district"], RECEIVER["city"],
                                 "Türkiye"),
                  delivery_datetime=timezone.make_aware(datetime.combine(today(), datetime.min.time())),
                  delivery_contact="Zeynep Arslan", lines=LINES)
    fields.update(changes)
    return receipt_xml(**fields)


def check(xml: bytes, *, manual_number=True, name="reply.xml", despatch=None) -> receipt.Receipt:
    return check_receipt(name, xml, manual_number=manual_number, despatch=despatch)


def found(reply) -> list[tuple[int | None, str]]:
    return [(problem.line, problem.message) for problem in reply.problems]


def only(reply, kind="rule") -> tuple[int | None, str]:
    problems = found(reply)
    assert len(problems) == 1 and reply.problems[0].kind == kind, problems
    return problems[0]


def edit(xml: bytes, old: str, new: str, after: str = "") -> bytes:
    """The first `old` (after the first `after`) replaced by `new`."""
    start = xml.index(after.encode())
    assert old.encode() in xml[start:], old
    return xml[:start] + xml[start:].replace(old.encode(), new.encode(), 1)


# --- the draft ----------------------------------------------------------------------------------------------------

def test_the_draft_passes_the_xsd_with_the_placeholder_and_the_checker():
    xml = draft()
    assert b"<ext:ExtensionContent/>" in xml  # the empty place for the integrator's seal
    root = etree.fromstring(xml)
    assert not ubltr.schema(ubltr.RECEIPT_NS).validate(root)  # the bare XSD wants something in ExtensionContent
    assert "ExtensionContent" in str(ubltr.schema(ubltr.RECEIPT_NS).error_log)
    assert ubltr.schema_problems(etree.fromstring(xml)) == []  # with the placeholder it passes
    reply = check(xml)
    assert reply.ok, found(reply)
    assert reply.xml == xml and reply.name == "reply.xml"
    year = today().year
    assert (reply.uuid, reply.number, reply.issue_date, reply.issue_time) == (
        UUID, f"IRY{year}000000001", today(), "11:00:00")
    assert (reply.profile, reply.type_code, reply.despatch_number, reply.despatch_issue_date) == (
        "TEMELIRSALIYE", "SEVK", f"EIR{year}000000001", today())
    assert reply.supplier == Party("9000068418", "Acme Lojistik A.Ş.", "Kadıköy", "İstanbul", "Türkiye")
    assert reply.customer == Party("4840000006", "Tek Kutu Lojistik A.Ş.", "Çankaya", "Ankara", "Türkiye")
    assert (reply.delivery_date, reply.delivery_time, reply.delivery_contact) == (today(), "00:00:00",
                                                                                  "Zeynep Arslan")
    assert reply.line_count == 2
    assert [(line["line_id"], line["received"], line["rejected"], line["reason"], line["unit_code"])
            for line in reply.lines] == [("1", Decimal(100), Decimal(20), "Ezilmiş makaralar", "MTR"),
                                         ("2", Decimal(4), Decimal(0), "", "C62")]


def test_the_draft_writes_what_ubl_tr_and_the_contract_name():
    root = etree.fromstring(draft())
    text = lambda path: root.findtext(path, namespaces=ubltr.NS)  # noqa: E731
    assert [text(path) for path in ("cbc:UBLVersionID", "cbc:CustomizationID", "cbc:ProfileID",
                                    "cbc:ReceiptAdviceTypeCode", "cbc:LineCountNumeric", "cac:Shipment/cbc:ID")] == [
        "2.1", "TR1.2.1", "TEMELIRSALIYE", "SEVK", "2", "1"]
    schemes = [element.get("schemeID") for element in root.iterfind(
        "cac:DespatchSupplierParty/cac:Party/cac:PartyIdentification/cbc:ID", ubltr.NS)]
    assert schemes == ["VKN"]
    # the contact where the contract puts it and where viewers of real replies look
    assert text("cac:Shipment/cac:Delivery/cac:DeliveryParty/cac:Contact/cbc:Name") == "Zeynep Arslan"
    assert text("cac:DeliveryCustomerParty/cac:DeliveryContact/cbc:Name") == "Zeynep Arslan"
    first, second = root.findall("cac:ReceiptLine", ubltr.NS)
    assert [etree.QName(child).localname for child in first] == [
        "ID", "ReceivedQuantity", "RejectedQuantity", "RejectReason", "DespatchLineReference", "Item"]
    assert first.find("cbc:RejectedQuantity", ubltr.NS).get("unitCode") == "MTR"
    # nothing rejected: neither RejectedQuantity nor RejectReason
    assert [etree.QName(child).localname for child in second] == [
        "ID", "ReceivedQuantity", "DespatchLineReference", "Item"]


def test_a_platform_numbered_draft_a_person_and_unknown_address_parts():
    xml = draft(number=None, prefix="ABC",
                customer=("10000000146", "Ayşe Nur Yılmaz"), supplier={"identifier": "9000068418", "name": "Acme"},
                delivery_contact="", delivery_datetime="2020-01-01T08:30:00", issue_time="08:45:00",
                despatch_issue_date="2020-01-01")
    root = etree.fromstring(xml)
    year = today().year
    # The platform overwrites cbc:ID (UseManualReceiptAdviceId false): a number's shape with the counter 0.
    assert root.findtext("cbc:ID", namespaces=ubltr.NS) == f"ABC{year}000000000"
    assert check(xml, manual_number=False).ok, found(check(xml, manual_number=False))
    # as a manual number the placeholder is refused
    line, message = only(check(xml, manual_number=True))
    assert line == line_of(xml, "<cbc:ID>ABC") and "counter 000000000" in message
    person = root.find("cac:DeliveryCustomerParty/cac:Party", ubltr.NS)
    assert person.find("cac:PartyIdentification/cbc:ID", ubltr.NS).get("schemeID") == "TCKN"
    assert [person.findtext(path, namespaces=ubltr.NS) for path in (
        "cac:Person/cbc:FirstName", "cac:Person/cbc:FamilyName", "cac:PartyName/cbc:Name")] == [
        "Ayşe Nur", "Yılmaz", None]
    # "-" and "Türkiye" where the caller knows nothing: the XSD and the "present" rules pass
    address = root.find("cac:DespatchSupplierParty/cac:Party/cac:PostalAddress", ubltr.NS)
    assert [address.findtext(path, namespaces=ubltr.NS) for path in (
        "cbc:CitySubdivisionName", "cbc:CityName", "cac:Country/cbc:Name")] == ["-", "-", "Türkiye"]
    assert root.find("cac:Shipment/cac:Delivery/cac:DeliveryParty", ubltr.NS) is None
    assert root.findtext("cac:Shipment/cac:Delivery/cbc:ActualDeliveryTime", namespaces=ubltr.NS) == "08:30:00"


def test_the_zip_base64_form_holds_the_xml():
    xml = draft()
    data = base64.b64decode(receipt_zip_base64(f"{UUID}.xml", xml))
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert archive.namelist() == [f"{UUID}.xml"] and archive.read(f"{UUID}.xml") == xml
    assert receipt_zip_base64("a.xml", xml) == receipt_zip_base64("a.xml", xml)  # the same bytes each time


# --- the upload ---------------------------------------------------------------------------------------------------

def test_a_zipped_reply_is_checked_under_its_member_name():
    reply = check(zipped({"yanit/reply-1.xml": draft(), "__MACOSX/._reply-1.xml": b"junk"}), name="upload.zip")
    assert reply.ok, found(reply)
    assert reply.name == "yanit/reply-1.xml" and reply.uuid == UUID


def test_a_zip_with_two_xml_files_or_none_is_refused():
    reply = check(zipped({"a.xml": draft(), "b.xml": draft()}), name="replies.zip")
    assert only(reply, "file") == (None, "The ZIP file must hold exactly one XML file, the reply; it holds 2: "
                                         "a.xml, b.xml.")
    assert only(check(zipped({"a.txt": b"x"}), name="r.zip"), "file")[1] == "The ZIP file holds no XML file."
    assert only(check(b"PK\x03\x04" + b"\x00" * 40, name="r.zip"), "file")[1] == (
        "This ZIP file cannot be opened: it is damaged or incomplete.")
    assert only(check(zipped({"a.xml": b""}), name="r.zip"), "file")[1] == "The file is empty."


def test_a_despatch_advice_uploaded_as_a_reply_is_refused():
    line, message = only(check(despatch_xml()), "file")
    assert line == 2 and message.startswith("This is a dispatch note (DespatchAdvice), not a reply to one")


@pytest.mark.parametrize(("data", "message"), [
    (b"", "The file is empty."),
    (b"<ReceiptAdvice>", "This is not well-formed XML"),
    (b"<Invoice xmlns='urn:oasis:names:specification:ubl:schema:xsd:Invoice-2'/>",
     "The document is Invoice (urn:oasis:names:specification:ubl:schema:xsd:Invoice-2), not a UBL-TR reply "
     "to a dispatch note"),
    (b"<!DOCTYPE r [<!ENTITY a 'x'>]><r>&a;</r>", "The file declares a DOCTYPE"),
])
def test_garbage_and_other_documents(data, message):
    assert only(check(data), "file")[1].startswith(message)


# --- the rules, one at a time -------------------------------------------------------------------------------------

def test_customization_profile_and_type_code():
    line, message = only(check(edit(draft(), "TR1.2.1", "TR1.2")))
    assert message == "cbc:CustomizationID must be TR1.2.1 (found: TR1.2)."
    assert only(check(edit(draft(), "<cbc:ProfileID>TEMELIRSALIYE", "<cbc:ProfileID>TICARIIRSALIYE")))[1] == (
        "cbc:ProfileID must be TEMELIRSALIYE / HKSIRSALIYE / IDISIRSALIYE (found: TICARIIRSALIYE).")
    xml = edit(draft(), ">SEVK<", ">MATBUDAN<")
    assert only(check(xml)) == (line_of(xml, "ReceiptAdviceTypeCode"),
                                "cbc:ReceiptAdviceTypeCode must be SEVK (found: MATBUDAN).")


def test_the_uuid_is_a_guid():
    xml = draft(uuid="not-a-guid")
    assert only(check(xml)) == (line_of(xml, "<cbc:UUID>"), "cbc:UUID must be a GUID, 8-4-4-4-12 hexadecimal "
                                                            "digits (found: not-a-guid).")


def test_a_manual_number_has_the_16_character_form_of_the_issue_years():
    xml = draft(number="IRY-1")
    line, message = only(check(xml))
    assert line == line_of(xml, "<cbc:ID>IRY-1") and message.startswith("The reply number (cbc:ID) must have 16 "
                                                                         "characters")
    assert check(xml, manual_number=False).ok  # the platform numbers it
    xml = draft(number=f"IRY{today().year - 1}000000001")
    assert "is of the year" in only(check(xml))[1]


def test_the_reference_to_the_note_is_its_number():
    xml = draft(despatch_number="")
    line, message = only(check(xml))  # the XSD allows an empty ID: the platform would find no note
    assert line == line_of(xml, "<cbc:ID></cbc:ID>") and message.startswith("The number of the note answered")
    # the note's UUID (ETTN) names it too, as public samples write it; another note's UUID does not
    assert check(draft(despatch_number=NOTE_UUID)).ok
    assert "must be the number of the note answered (16 characters" in only(check(draft(despatch_number="X1")))[1]
    reference = etree.fromstring(draft()).find("cac:DespatchDocumentReference", ubltr.NS)
    reference.getparent().remove(reference)
    reply = check(etree.tostring(reference.getroottree(), xml_declaration=True, encoding="UTF-8"))
    messages = [message for _line, message in found(reply)]
    assert any("cac:DespatchDocumentReference" in message and "expected" in message.lower() for message in messages)
    assert any(message.startswith("The number of the note answered") for message in messages)


def test_a_rejected_quantity_needs_its_reason():
    xml = draft(lines=[{**LINES[0], "reason": ""}, LINES[1]])
    assert only(check(xml)) == (line_of(xml, "<cbc:RejectReason"), "Line 1: 20 is rejected, so the reason "
                                                                   "(cbc:RejectReason) is required.")
    xml = edit(draft(), "<cbc:RejectReason>Ezilmiş makaralar</cbc:RejectReason>", "")
    assert only(check(xml)) == (line_of(xml, "<cbc:RejectedQuantity"), "Line 1: 20 is rejected, so the reason "
                                                                       "(cbc:RejectReason) is required.")


def test_quantities_are_numbers_of_0_or_more_with_their_unit():
    xml = edit(draft(), '<cbc:ReceivedQuantity unitCode="C62">4<', '<cbc:ReceivedQuantity unitCode="C62">-1<')
    assert only(check(xml)) == (line_of(xml, ">-1<"), "Line 2: cbc:ReceivedQuantity must be a number of 0 or more "
                                                      "(found: -1).")
    xml = edit(draft(), '<cbc:RejectedQuantity unitCode="MTR">20<', '<cbc:RejectedQuantity>20<')
    assert only(check(xml)) == (line_of(xml, "<cbc:RejectedQuantity>"), "Line 1: cbc:RejectedQuantity has no unit "
                                                                        "(unitCode), e.g. C62 for pieces or KGM for "
                                                                        "kilograms.")
    xml = edit(draft(), '<cbc:ReceivedQuantity unitCode="C62">4</cbc:ReceivedQuantity>', "")
    line, message = only(check(xml))
    assert message == "Line 2: the received quantity (cbc:ReceivedQuantity) is missing; write 0 when nothing was " \
                      "received."
    assert line == line_of(xml, "<cac:ReceiptLine>", line_of(xml, "<cac:ReceiptLine>") + 1)  # the second line
    # "abc" is refused by the schema (its decimal type) and by the rule
    xml = edit(draft(), '<cbc:ReceivedQuantity unitCode="C62">4<', '<cbc:ReceivedQuantity unitCode="C62">abc<')
    kinds = sorted(problem.kind for problem in check(xml).problems)
    assert kinds == ["rule", "schema"], found(check(xml))


def test_each_line_names_the_notes_line_once():
    xml = edit(draft(), "<cbc:LineID>2</cbc:LineID>", "<cbc:LineID></cbc:LineID>")
    assert only(check(xml)) == (line_of(xml, "<cbc:LineID></cbc:LineID>"), "Line 2: the note's line it answers "
                                                                           "(cac:DespatchLineReference/cbc:LineID) "
                                                                           "is missing.")
    xml = edit(draft(), "<cbc:LineID>2</cbc:LineID>", "<cbc:LineID>1</cbc:LineID>")
    assert only(check(xml)) == (line_of(xml, "<cbc:LineID>1</cbc:LineID>", line_of(xml, "<cbc:ID>2</cbc:ID>")),
                                "Line 2 answers the note's line 1 again (line 1 already does).")


def test_line_count_numeric_out_of_its_place_is_said_clearly_and_the_lines_are_still_read():
    """The fault of the public receipt samples: cbc:LineCountNumeric after cac:OrderReference."""
    xml = edit(draft(), "  <cbc:LineCountNumeric>2</cbc:LineCountNumeric>\n", "")
    xml = edit(xml, "  <cac:DespatchDocumentReference>",
               "  <cac:OrderReference>\n    <cbc:ID>SIP-1</cbc:ID>\n    <cbc:IssueDate>"
               f"{today()}</cbc:IssueDate>\n  </cac:OrderReference>\n"
               "  <cbc:LineCountNumeric>2</cbc:LineCountNumeric>\n  <cac:DespatchDocumentReference>")
    line, message = only(check(xml), "schema")  # said once, in place of the schema's bare "not expected"
    assert line == line_of(xml, "<cbc:LineCountNumeric>")
    assert message == ("cbc:LineCountNumeric is out of place: the schema wants it right after "
                       "cbc:ReceiptAdviceTypeCode (and any cbc:Note), before cac:OrderReference and "
                       "cac:DespatchDocumentReference, but here it follows cac:OrderReference. Move it up: the "
                       "platform refuses the file as it is.")
    reply = read_receipt(xml)
    assert not reply.ok and reply.line_count == 2
    assert [(line["line_id"], line["received"], line["rejected"]) for line in reply.lines] == [
        ("1", Decimal(100), Decimal(20)), ("2", Decimal(4), Decimal(0))]


def test_line_count_numeric_counts_the_lines():
    xml = edit(draft(), "<cbc:LineCountNumeric>2<", "<cbc:LineCountNumeric>3<")
    assert only(check(xml)) == (line_of(xml, "LineCountNumeric"), "cbc:LineCountNumeric says 3 lines, but the reply "
                                                                  "has 2 cac:ReceiptLine.")


def test_dates_are_neither_in_the_future_nor_before_the_note():
    tomorrow = today() + timedelta(days=1)
    xml = draft(issue_date=tomorrow, number=None)
    assert only(check(xml, manual_number=False)) == (
        line_of(xml, "<cbc:IssueDate>"), f"The reply is dated {tomorrow}, in the future.")
    xml = draft(delivery_datetime=datetime.combine(today() - timedelta(days=3), datetime.min.time()))
    assert only(check(xml)) == (line_of(xml, "ActualDeliveryDate"),
                                f"The delivery (cbc:ActualDeliveryDate) is dated {today() - timedelta(days=3)}, "
                                f"before the note it answers ({today()}).")


def test_the_parties_identifiers_and_addresses():
    xml = draft(supplier=("9000068419", "Acme"))
    line, message = only(check(xml))
    assert line == line_of(xml, "9000068419") and message.startswith("Sender (cac:DespatchSupplierParty): ")
    xml = edit(draft(), "<cbc:CityName>Ankara</cbc:CityName>", "<cbc:CityName></cbc:CityName>",
               after="<cac:DeliveryCustomerParty>")
    reply = check(xml)
    assert any(message == "Receiver (cac:DeliveryCustomerParty): the postal address has no cbc:CityName (the city)."
               for _line, message in found(reply)), found(reply)


# --- against the note answered ------------------------------------------------------------------------------------

def note(**changes) -> IncomingDespatch:
    return read_despatch(despatch_xml(lines=(("Bakır kablo 2,5 mm", "120", "MTR"), ("Sigorta kutusu", "4", "C62")),
                                      **changes))


def test_with_the_note_the_lines_and_quantities_are_checked():
    despatch = note()
    assert check(draft(), despatch=despatch).ok
    xml = draft(lines=[{**LINES[0], "received": 101}, LINES[1]])
    assert only(check(xml, despatch=despatch)) == (
        line_of(xml, "<cac:ReceiptLine>"),
        "Line 1: received 101 and rejected 20 exceed the delivered quantity 120 MTR of the note's line 1.")
    xml = draft(lines=[LINES[0], {**LINES[1], "line_id": "7"}])
    assert only(check(xml, despatch=despatch)) == (
        line_of(xml, "<cbc:LineID>7"), f"Line 2: the note EIR{today().year}000000001 has no line 7 "
                                       "(cac:DespatchLineReference/cbc:LineID).")
    other = note(number=f"EIR{today().year}000000002")
    assert only(check(draft(), despatch=other))[1] == (
        f"The reply answers the note EIR{today().year}000000001, but it is being sent for the note "
        f"EIR{today().year}000000002.")


def test_reply_kind_follows_the_contract():
    despatch = note()
    whole = [{**line, "rejected": 0} for line in LINES]
    assert reply_kind(read_receipt(draft(lines=whole)), despatch) == "accept"
    nothing = [{**line, "received": 0, "rejected": 1, "reason": "Yanlış ürün"} for line in LINES]
    assert reply_kind(read_receipt(draft(lines=nothing)), despatch) == "reject"
    # a note line the reply leaves out counts as wholly received
    assert reply_kind(read_receipt(draft(lines=nothing[:1])), despatch) == "partial"
    assert reply_kind(read_receipt(draft()), despatch) == "partial"


# --- reading ------------------------------------------------------------------------------------------------------

def test_read_despatch_reads_the_incoming_note():
    despatch = note()
    year = today().year
    assert (despatch.id, despatch.uuid, despatch.number, despatch.issue_date, despatch.issue_time,
            despatch.profile) == (NOTE_UUID, NOTE_UUID, f"EIR{year}000000001", today(), "09:30:00", "TEMELIRSALIYE")
    assert despatch.sender == Party("9000068418", "Acme Lojistik A.Ş.", "Kadıköy", "İstanbul", "Türkiye")
    assert (despatch.receiver.identifier, despatch.receiver.name) == ("4840000006", "Tek Kutu Lojistik A.Ş.")
    assert despatch.lines == [
        {"line_id": "1", "name": "Bakır kablo 2,5 mm", "quantity": Decimal(120), "unit_code": "MTR",
         "seller_item_id": None},
        {"line_id": "2", "name": "Sigorta kutusu", "quantity": Decimal(4), "unit_code": "C62",
         "seller_item_id": None}]


def test_read_despatch_whatever_the_prefixes_and_with_parts_missing():
    xml = despatch_xml(lines=(("Vida", "1.5", None),), receiver={**RECEIVER, "name": None})
    # other prefixes for the same namespaces, the root prefixed too
    xml = (xml.replace(b"cbc:", b"b:").replace(b"xmlns:cbc=", b"xmlns:b=").replace(b"cac:", b"a:")
           .replace(b"xmlns:cac=", b"xmlns:a=").replace(b"<DespatchAdvice xmlns=", b"<irs:DespatchAdvice xmlns:irs=")
           .replace(b"</DespatchAdvice>", b"</irs:DespatchAdvice>"))
    assert b"<irs:DespatchAdvice" in xml and b"<b:ID>" in xml
    xml = xml.replace(b'<b:ID schemeID="VKN">4840000006</b:ID>', b"<b:ID>4840000006</b:ID>")
    despatch = read_despatch(xml)
    assert despatch.number == f"EIR{today().year}000000001"
    assert despatch.receiver == Party("4840000006", "", "Çankaya", "Ankara", "Türkiye")  # no schemeID, no name
    assert despatch.lines == [{"line_id": "1", "name": "Vida", "quantity": Decimal("1.5"), "unit_code": "",
                               "seller_item_id": None}]


def test_read_despatch_refuses_what_is_no_despatch_advice():
    with pytest.raises(ValueError, match="not a UBL-TR dispatch note: its root element must be DespatchAdvice"):
        read_despatch(draft())
    with pytest.raises(ValueError, match="not well-formed XML"):
        read_despatch(b"<DespatchAdvice")


def test_read_receipt_reports_problems_without_refusing():
    xml = edit(draft(lines=[{**LINES[0], "reason": ""}, LINES[1]]), ">SEVK<", ">X<")
    reply = read_receipt(xml)
    assert reply.name == "" and reply.xml == xml
    assert [message for _line, message in found(reply)] == [
        "cbc:ReceiptAdviceTypeCode must be SEVK (found: X).",
        "Line 1: 20 is rejected, so the reason (cbc:RejectReason) is required."]
    assert reply.lines[0]["rejected"] == Decimal(20) and reply.lines[0]["reason"] == ""
    with pytest.raises(ValueError, match="not a UBL-TR reply to a dispatch note"):
        read_receipt(despatch_xml())


# --- whole files: ours always, the public samples of another integrator where a mirror of them exists -------------

SAMPLES = Path(__file__).parent / "samples"  # ours, in the public samples' shapes (README.txt there)
# github.com/izibiz/api-documentation, read in place where this machine has a mirror of it (its files are never
# copied into the project). IZIBIZ_MIRROR names another mirror, or a missing path to leave them out.
MIRROR = Path(os.environ.get("IZIBIZ_MIRROR", "/work/.mirror/izibiz+api-documentation/repo"))
MIRRORED = "source/resource/xml/"


@cache
def _mirrored() -> frozenset[str]:
    """The sample files the mirror's HEAD holds, listed once at collection: none without a mirror, so a fresh clone
    collects our own samples only and skips nothing."""
    if not MIRROR.exists():
        return frozenset()
    try:
        listing = subprocess.run(["git", "-C", str(MIRROR), "ls-tree", "--name-only", "HEAD", MIRRORED],
                                 check=True, capture_output=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError) as error:
        warnings.warn(f"the mirror {MIRROR} cannot be listed, its samples are left out: {error}", stacklevel=1)
        return frozenset()
    return frozenset(Path(line).name for line in listing.decode().splitlines())


def samples(ours: dict, public: dict) -> list:
    """(source, name, expected) for each of our files, then for each public one the mirror holds."""
    mirrored = _mirrored()
    return ([pytest.param("ours", name, expected, id=f"ours/{name}") for name, expected in ours.items()]
            + [pytest.param("izibiz", name, expected, id=f"izibiz/{name}") for name, expected in public.items()
               if name in mirrored])


def sample(source: str, name: str) -> bytes:
    if source == "ours":
        return (SAMPLES / name).read_bytes()
    return subprocess.run(["git", "-C", str(MIRROR), "show", f"HEAD:{MIRRORED}{name}"], check=True,
                          capture_output=True, timeout=30).stdout


@dataclass(frozen=True)
class Reply:
    """What a reply sample holds besides the shape they share (4 lines, 20 received on line 1)."""
    contact: str  # cac:DeliveryCustomerParty/cac:DeliveryContact
    first_rejected: tuple = (Decimal(0), "")  # line 1's RejectedQuantity and RejectReason
    others: tuple = ()  # the problems found besides LineCountNumeric's, in order


@dataclass(frozen=True)
class Note:
    sender: str
    receiver: str
    first_item: str  # line 1's cac:SellersItemIdentification


# the public replies' delivery predates the note they answer
EARLY = "The delivery (cbc:ActualDeliveryDate) is dated 2020-04-21, before the note it answers (2020-05-22)."
OUR_REPLIES = {"reply_accepted.xml": Reply("Elif Demirtaş"),
               "reply_damaged.xml": Reply("Elif Demirtaş", (Decimal(2), "2 metre boru ezik geldi")),
               "reply_short_and_over.xml": Reply("Elif Demirtaş"),
               "reply_late_complaint.xml": Reply("Elif Demirtaş")}
PUBLIC_REPLIES = {"irsaliyeyanit_fazlaeksik_ornek.xml": Reply("Ahmet Mehmet", others=(EARLY,)),
                  "irsaliyeyanit_hasarli_ornek.xml": Reply("Ahmet Mehmet", (Decimal(2), "2 tane ürün hasarlıdır"),
                                                           others=(EARLY,)),
                  "irsaliyeyanit_kabul_ornek.xml": Reply("Ahmet Mehmet", others=(EARLY,)),
                  "irsaliyeyanit_sikayet_ornek.xml": Reply("Ahmet Mehmet", others=(EARLY,))}
OUR_NOTES = {name: Note("7310000014", "7310000022", "GB-050")
             for name in ("note_basic.xml", "note_partial.xml", "note_other_parties.xml")}
PUBLIC_NOTES = {name: Note("4840847211", "4840847211", "EF1")
                for name in ("irsaliye_temel_ornek.xml", "irsaliye_kismi_ornek.xml", "irsaliye_farklitaraf_ornek.xml")}


@pytest.mark.parametrize(("source", "name", "expected"), samples(OUR_REPLIES, PUBLIC_REPLIES))
def test_the_receipt_samples(source, name, expected):
    """The fault of the public replies (cbc:LineCountNumeric after cac:OrderReference) said once and clearly, their
    reference to the note by its UUID accepted, and every line read all the same."""
    xml = sample(source, name)
    reply = check(xml, name=name)
    messages = [message for _line, message in found(reply)]
    out_of_place = [problem for problem in reply.problems
                    if problem.message.startswith("cbc:LineCountNumeric is out of place")]
    assert len(out_of_place) == 1 and "follows cac:OrderReference" in out_of_place[0].message, messages
    assert (out_of_place[0].kind, out_of_place[0].line) == ("schema", line_of(xml, "<cbc:LineCountNumeric>"))
    assert [problem.message for problem in reply.problems if problem is not out_of_place[0]] == list(
        expected.others), messages
    # they refer to the note by its UUID, which is accepted
    assert receipt.GUID_RE.match(reply.despatch_number), reply.despatch_number
    assert not any("DespatchDocumentReference/cbc:ID" in message for message in messages), messages
    read = read_receipt(xml)
    assert found(read) == found(reply)  # a received reply: the same faults, reported and not refused
    assert read.line_count == 4 and [line["line_id"] for line in read.lines] == ["1", "2", "3", "4"]
    assert read.lines[0]["received"] == Decimal(20) and read.delivery_contact == expected.contact
    assert (read.lines[0]["rejected"], read.lines[0]["reason"]) == expected.first_rejected


@pytest.mark.parametrize(("source", "name", "expected"), samples(OUR_NOTES, PUBLIC_NOTES))
def test_the_despatch_samples_are_read_and_refused_as_replies(source, name, expected):
    xml = sample(source, name)
    despatch = read_despatch(xml)
    assert receipt.GUID_RE.match(despatch.uuid) and receipt.DOCUMENT_NUMBER_RE.match(despatch.number)
    # the sender and the receiver, not the buyer, seller or originator some notes add
    assert (despatch.sender.identifier, despatch.receiver.identifier) == (expected.sender, expected.receiver)
    assert [line["line_id"] for line in despatch.lines] == ["1", "2", "3", "4"]
    assert all(line["line_id"] and line["quantity"] > 0 and line["unit_code"] and line["name"]
               for line in despatch.lines)
    assert despatch.lines[0]["seller_item_id"] == expected.first_item
    line, message = only(check(xml, name=name), "file")
    assert line == line_of(xml, "<DespatchAdvice") and message.startswith("This is a dispatch note (DespatchAdvice)")
    # a real note's shape: the schema of a note finds nothing in it
    assert not [problem for problem in ubl.check_xml(name, xml, manual_number=True).problems
                if problem.kind == "schema"]
