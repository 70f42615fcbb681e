"""The check of an uploaded UBL-TR DespatchAdvice before anything is sent (issue 15, point 3), on our own
fixtures (ubl_samples.py): the file, the schema with its line and message, and each of the tax authority's rules."""

import base64
import io
import time
import zipfile

import pytest
from django.utils import translation
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree

from backoffice.dispatch import ubl, ubltr
from backoffice.dispatch.ubl import check_upload, despatch_zip
from tests.dispatch.ubl_samples import (CARRIER, DELIVERY, DRIVER, PERSON_RECEIVER, RECEIVER, SENDER, UNKNOWN_DRIVER,
                                        despatch_xml, line_of, zipped)
from tests.properties import examples


@pytest.fixture(autouse=True)
def english():
    with translation.override("en"):
        yield


def check(xml: bytes, *, manual_number=True, name="note.xml") -> ubl.Despatch:
    [despatch] = check_upload(name, xml, manual_number=manual_number)
    return despatch


def found(despatch, kind=None) -> list[tuple[int | None, str]]:
    return [(problem.line, problem.message) for problem in despatch.problems if kind in (None, problem.kind)]


def only(despatch, kind) -> tuple[int | None, str]:
    problems = found(despatch)
    assert len(problems) == 1 and despatch.problems[0].kind == kind, problems
    return problems[0]


# --- a valid draft ------------------------------------------------------------------------------------------------

def test_a_valid_unsigned_draft_passes_and_its_fields_are_read():
    xml = despatch_xml(issue_date="2025-03-14")
    assert b"<ext:ExtensionContent/>" in xml  # the empty place for the seal, as real drafts have
    despatch = check(xml)
    assert despatch.ok, found(despatch)
    assert despatch.xml == xml and despatch.name == "note.xml"
    assert (despatch.number, despatch.uuid, str(despatch.issue_date), despatch.issue_time) == (
        "EIR2025000000001", "5f0c7a52-3f43-4b8e-9d55-0c2b1f6e8a10", "2025-03-14", "09:30:00")
    assert (despatch.profile, despatch.type_code) == ("TEMELIRSALIYE", "SEVK")
    assert (despatch.receiver_identifier, despatch.receiver_name, despatch.receiver_city,
            despatch.receiver_district) == ("4840000006", "Tek Kutu Lojistik A.Ş.", "Ankara", "Çankaya")
    assert (despatch.delivery_city, despatch.delivery_district, despatch.delivery_country) == (
        "Kocaeli", "Gebze", "Türkiye")
    assert despatch.plate == "34ABC123" and despatch.drivers == [DRIVER]
    assert (despatch.carrier_title, despatch.carrier_identifier) == ("", "")
    assert despatch.line_count == 2
    assert [(line["name"], str(line["quantity"]), line["unit"]) for line in despatch.lines] == [
        ("Bakır kablo 2,5 mm", "120", "MTR"), ("Sigorta kutusu", "4", "C62")]


def test_a_note_carried_by_a_company_a_person_receiver_and_an_unknown_driver_pass():
    despatch = check(despatch_xml(carrier=CARRIER, drivers=(), plate=None, receiver=PERSON_RECEIVER))
    assert despatch.ok, found(despatch)
    assert (despatch.carrier_title, despatch.carrier_identifier) == ("Hızlı Nakliyat A.Ş.", "3920000003")
    assert (despatch.receiver_identifier, despatch.receiver_name) == ("10000000146", "Ayşe Yılmaz")
    assert check(despatch_xml(drivers=(UNKNOWN_DRIVER, DRIVER))).ok
    assert check(despatch_xml(profile="HKSIRSALIYE")).ok
    # Still in the provider's client, refused by the tax authority's current rules: refused before it is sent.
    assert not check(despatch_xml(profile="TICARIIRSALIYE")).ok


def test_the_bare_xsd_refuses_the_empty_placeholder_that_the_check_accepts():
    root = etree.fromstring(despatch_xml())
    assert not ubltr.schema().validate(root)
    assert "ExtensionContent" in str(ubltr.schema().error_log)
    assert check(despatch_xml()).ok


def test_a_placeholder_holding_only_a_comment_is_accepted():
    xml = despatch_xml().replace(b"<ext:ExtensionContent/>",
                                    b"<ext:ExtensionContent><!-- the seal goes here --></ext:ExtensionContent>")
    assert check(xml).ok


def test_the_placeholder_hides_nothing_really_wrong():
    xml = despatch_xml()
    with_text = xml.replace(b"<ext:ExtensionContent/>", b"<ext:ExtensionContent>seal</ext:ExtensionContent>")
    line, message = found(check(with_text), "schema")[0]
    assert line == line_of(with_text, "ExtensionContent")
    assert message == "Element ext:ExtensionContent: text is not allowed here, only elements."
    without_content = xml.replace(b"<ext:ExtensionContent/>", b"")
    assert found(check(without_content), "schema") == [(
        line_of(without_content, "<ext:UBLExtension>"),
        "Element ext:UBLExtension: a required child element is missing. Expected is ext:ExtensionContent.")]
    without_extensions = despatch_xml().replace(b"  <ext:UBLExtensions>\n    <ext:UBLExtension>\n"
                                                   b"      <ext:ExtensionContent/>\n    </ext:UBLExtension>\n"
                                                   b"  </ext:UBLExtensions>\n", b"")
    assert found(check(without_extensions), "schema") == [(
        line_of(without_extensions, "<cbc:UBLVersionID>"),
        "Element cbc:UBLVersionID: this element is not expected here. Expected is ext:UBLExtensions.")]


def test_the_schema_is_compiled_once_per_process():
    assert ubltr.schema() is ubltr.schema()
    before = ubltr.schema.cache_info()
    check(despatch_xml())
    after = ubltr.schema.cache_info()
    assert after.misses == before.misses and after.hits > before.hits


# --- schema breaks: the line and the schema's message ------------------------------------------------------------

def test_an_element_in_the_wrong_order_is_reported_at_its_line():
    xml = despatch_xml(issue_date="2025-03-14").replace(
        b"  <cbc:UUID>5f0c7a52-3f43-4b8e-9d55-0c2b1f6e8a10</cbc:UUID>\n  <cbc:IssueDate>2025-03-14</cbc:IssueDate>\n",
        b"  <cbc:IssueDate>2025-03-14</cbc:IssueDate>\n  <cbc:UUID>5f0c7a52-3f43-4b8e-9d55-0c2b1f6e8a10</cbc:UUID>\n")
    despatch = check(xml)
    assert not despatch.ok
    assert found(despatch, "schema") == [(line_of(xml, "<cbc:IssueDate>"),
                                          "Element cbc:IssueDate: this element is not expected here. "
                                          "Expected is cbc:UUID.")]


def test_an_unknown_element_is_reported_at_its_line():
    xml = despatch_xml().replace(b"  <cbc:IssueTime>", b"  <cbc:Colour>red</cbc:Colour>\n  <cbc:IssueTime>")
    assert found(check(xml), "schema") == [(line_of(xml, "<cbc:Colour>"),
                                            "Element cbc:Colour: this element is not expected here. "
                                            "Expected is cbc:IssueTime.")]


def test_a_missing_required_id_is_reported_where_it_was_expected():
    xml = despatch_xml(number="EIR2025000000001").replace(b"  <cbc:ID>EIR2025000000001</cbc:ID>\n", b"")
    despatch = check(xml, manual_number=False)
    assert found(despatch) == [(line_of(xml, "<cbc:CopyIndicator>"),
                                "Element cbc:CopyIndicator: this element is not expected here. Expected is cbc:ID.")]
    assert despatch.problems[0].kind == "schema"


def test_a_wrong_value_and_a_missing_line_of_the_schema_in_deep_places():
    xml = despatch_xml(issue_date="2025-03-14").replace(b"<cbc:IssueDate>2025-03-14", b"<cbc:IssueDate>2025-13-14")
    assert (line_of(xml, "<cbc:IssueDate>"),
            "Element cbc:IssueDate: '2025-13-14' is not a valid value of the type xs:date.") in found(check(xml))
    xml = despatch_xml().replace(b"<cac:OrderLineReference>", b"<cac:OrderLineRef>", 1).replace(
        b"</cac:OrderLineReference>", b"</cac:OrderLineRef>", 1)
    assert found(check(xml), "schema") == [(line_of(xml, "<cac:OrderLineRef>"),
                                            "Element cac:OrderLineRef: this element is not expected here. "
                                            "Expected is cbc:OutstandingQuantity, cbc:OutstandingReason, "
                                            "cbc:OversupplyQuantity, cac:OrderLineReference.")]


def test_schema_messages_carry_prefixes_not_namespaces():
    xml = despatch_xml().replace(b'<cbc:UUID>', b'<cbc:UUID lang="tr">').replace(
        b"<cac:Shipment>", b"<cac:Shipment>\n    <x:Extra xmlns:x=\"urn:example\"/>")
    messages = [message for _, message in found(check(xml), "schema")]
    assert "Element cbc:UUID: the attribute lang is not allowed." in messages
    assert any(message.startswith("Element {urn:example}Extra: this element is not expected here.")
               for message in messages)
    assert not any("{urn:oasis" in message for message in messages)


def test_an_error_past_line_65535_keeps_its_line():
    lines = [("Vida", "1", "C62")] * 9000 + [("Somun", "1", None)]
    xml = despatch_xml(lines=lines)
    line, message = found(check(xml))[-1]
    assert line == line_of(xml, "<cbc:DeliveredQuantity>1</cbc:DeliveredQuantity>") > 65535
    assert message.startswith("Line 9001: the delivered quantity has no unit")


# --- the tax authority's rules ------------------------------------------------------------------------------------

def test_customization_profile_and_type_code():
    xml = despatch_xml(customization="TR1.2")
    assert only(check(xml), "rule") == (line_of(xml, "CustomizationID"),
                                        "cbc:CustomizationID must be TR1.2.1 (found: TR1.2).")
    xml = despatch_xml(profile="TEMELFATURA")
    assert only(check(xml), "rule") == (line_of(xml, "ProfileID"),
                                        "cbc:ProfileID must be TEMELIRSALIYE / HKSIRSALIYE / IDISIRSALIYE "
                                        "(found: TEMELFATURA).")
    xml = despatch_xml(type_code="MATBUDAN")
    assert only(check(xml), "rule") == (line_of(xml, "DespatchAdviceTypeCode"),
                                        "cbc:DespatchAdviceTypeCode must be SEVK (found: MATBUDAN).")


def test_the_uuid_is_a_guid():
    xml = despatch_xml(uuid="5f0c7a52-3f43-4b8e-9d55")
    assert only(check(xml), "rule") == (line_of(xml, "<cbc:UUID>"), "cbc:UUID must be a GUID, 8-4-4-4-12 "
                                        "hexadecimal digits (found: 5f0c7a52-3f43-4b8e-9d55).")
    assert "found: nothing" in only(check(despatch_xml(uuid="")), "rule")[1]


@pytest.mark.parametrize("number", ["EIR202500000001", "eir2025000000001", "EIR1925000000001", "EI-2025000000001"])
def test_a_number_in_the_file_has_the_16_character_form(number):
    xml = despatch_xml(number=number)
    line, message = only(check(xml), "rule")
    assert line == line_of(xml, "<cbc:ID>")
    assert message == ("The note number (cbc:ID) must have 16 characters: a 3-character prefix, the 4-digit year and "
                       f"a 9-digit counter, e.g. EIR2025000000001 (found: {number}).")
    assert check(xml, manual_number=False).ok  # the platform numbers it: what the file says is not used


def test_the_number_is_of_the_issue_dates_year():
    xml = despatch_xml(number="EIR2024000000123", issue_date="2025-01-02")
    assert only(check(xml), "rule") == (line_of(xml, "<cbc:ID>"), "The note number EIR2024000000123 is of the year "
                                        "2024, but the note is dated 2025-01-02.")
    assert check(xml, manual_number=False).ok


def test_the_delivery_address_is_required_with_district_city_country_and_postal_code():
    xml = despatch_xml(delivery=None)
    line, message = only(check(xml), "rule")
    assert line == line_of(xml, "<cac:Delivery>")
    assert message.startswith("The delivery address (cac:Shipment/cac:Delivery/cac:DeliveryAddress) is missing")
    xml = despatch_xml(delivery=dict(DELIVERY, city="", district="  ", postal_zone="99100"))
    start = line_of(xml, "<cac:DeliveryAddress>")
    assert found(check(xml)) == [
        (line_of(xml, "<cbc:CitySubdivisionName>", start),
         "The delivery address has no cbc:CitySubdivisionName (the district)."),
        (line_of(xml, "<cbc:CityName", start), "The delivery address has no cbc:CityName (the city)."),
        (line_of(xml, "<cbc:PostalZone>", start), "The delivery address needs a postal code (cbc:PostalZone) of 5 "
                                                  "digits starting with a province code 01 to 81 (found: 99100).")]
    xml = despatch_xml(delivery=dict(DELIVERY, country=""))
    assert only(check(xml), "rule") == (line_of(xml, "<cbc:Name></cbc:Name>"),
                                        "The delivery address has no cac:Country/cbc:Name (the country).")


def test_the_parties_postal_addresses_have_district_city_and_country():
    xml = despatch_xml(receiver=dict(RECEIVER, district=""), sender=dict(SENDER, city=""))
    supplier, customer = line_of(xml, "<cac:DespatchSupplierParty>"), line_of(xml, "<cac:DeliveryCustomerParty>")
    assert found(check(xml)) == [
        (line_of(xml, "<cbc:CityName></cbc:CityName>", supplier),
         "Sender (cac:DespatchSupplierParty): the postal address has no cbc:CityName (the city)."),
        (line_of(xml, "<cbc:CitySubdivisionName></cbc:CitySubdivisionName>", customer),
         "Receiver (cac:DeliveryCustomerParty): the postal address has no cbc:CitySubdivisionName (the district).")]


def test_the_sender_and_the_receiver_have_a_valid_vkn_or_tckn():
    xml = despatch_xml(receiver=dict(RECEIVER, identifier="9000068419"))
    assert only(check(xml), "rule") == (
        line_of(xml, "9000068419"),
        "Receiver (cac:DeliveryCustomerParty): This tax number (VKN) is not valid: its check digit does not match.")
    xml = despatch_xml(receiver=dict(RECEIVER, scheme="MERSISNO"))
    assert only(check(xml), "rule") == (
        line_of(xml, "<cac:PartyIdentification>", line_of(xml, "<cac:DeliveryCustomerParty>")),
        "Receiver (cac:DeliveryCustomerParty): no identifier with schemeID VKN or TCKN "
        "(cac:PartyIdentification/cbc:ID).")
    xml = despatch_xml(receiver=dict(PERSON_RECEIVER, identifier="1000000014", scheme="TCKN"))
    assert only(check(xml), "rule")[1] == ("Receiver (cac:DeliveryCustomerParty): A national id (TCKN) has exactly "
                                           "11 digits.")  # checked as its schemeID says


def test_a_carrier_company_or_a_driver_is_required():
    xml = despatch_xml(drivers=(), plate=None)
    assert only(check(xml), "rule") == (
        line_of(xml, "<cac:Shipment>"),
        "Neither a carrier company (cac:Shipment/cac:Delivery/cac:CarrierParty) nor a driver "
        "(cac:Shipment/cac:ShipmentStage/cac:DriverPerson) is given: the tax authority requires one of them.")


def test_the_carrier_company_has_a_title_and_a_valid_vkn_or_tckn():
    xml = despatch_xml(carrier=dict(CARRIER, identifier="4840847212", name=None), drivers=(), plate=None)
    assert found(check(xml)) == [
        (line_of(xml, "<cac:CarrierParty>"),
         "Carrier company (cac:CarrierParty): the name (cac:PartyName/cbc:Name) is missing."),
        (line_of(xml, "4840847212"),
         "Carrier company (cac:CarrierParty): This tax number (VKN) is not valid: its check digit does not match.")]
    xml = despatch_xml(carrier=dict(CARRIER, identifier="12345"), drivers=(), plate=None)
    assert only(check(xml), "rule")[1] == ("Carrier company (cac:CarrierParty): Enter a tax number (VKN, 10 digits) "
                                           "or a national id (TCKN, 11 digits).")


def test_each_driver_has_names_and_a_valid_tckn():
    xml = despatch_xml(drivers=(DRIVER, ("", "Kaya", "12345678951"), ("Ali", "", None)))
    third = line_of(xml, "<cac:DriverPerson>", line_of(xml, "<cbc:FirstName></cbc:FirstName>"))
    assert found(check(xml)) == [
        (line_of(xml, "<cbc:FirstName></cbc:FirstName>"),
         "Driver 2 (cac:DriverPerson): the first name (cbc:FirstName) is missing."),
        (line_of(xml, "12345678951"),
         "Driver 2 (cac:DriverPerson): This national id (TCKN) is not valid: its check digits do not match."),
        (third, "Driver 3 (cac:DriverPerson): the national id (cbc:NationalityID) is missing; enter 11111111111 when "
                "it is unknown."),
        (line_of(xml, "<cbc:FamilyName></cbc:FamilyName>"),
         "Driver 3 (cac:DriverPerson): the family name (cbc:FamilyName) is missing.")]
    xml = despatch_xml(drivers=(("Ali", "Kaya", "1111111111"),))
    assert only(check(xml), "rule")[1] == "Driver 1 (cac:DriverPerson): A national id (TCKN) has exactly 11 digits."


def test_drivers_need_the_plate():
    xml = despatch_xml(plate=None)
    assert only(check(xml), "rule") == (line_of(xml, "<cac:ShipmentStage>"), "Drivers are given but no vehicle plate "
                                        "(cac:ShipmentStage/cac:TransportMeans/cac:RoadTransport/cbc:LicensePlateID): "
                                        "the tax authority requires it.")


@pytest.mark.parametrize("plate, scheme, message", [
    ("34 ABC 123", "PLAKA", "The plate 34 ABC 123 is not written as the tax authority wants"),
    ("99ABC123", "PLAKA", "The plate 99ABC123 is not written as the tax authority wants"),
    ("34abc123", "PLAKA", "The plate 34abc123 is not written as the tax authority wants"),
    ("34ABC123", "PLATE", "The plate 34ABC123 needs schemeID PLAKA, or YABANCIPLAKA for a foreign vehicle "
                          "(found: PLATE)."),
])
def test_a_plate_is_written_as_the_tax_authority_wants(plate, scheme, message):
    xml = despatch_xml(plate=plate).replace(b'schemeID="PLAKA"', f'schemeID="{scheme}"'.encode())
    line, found_message = only(check(xml), "rule")
    assert line == line_of(xml, "<cbc:LicensePlateID") and found_message.startswith(message)
    assert check(despatch_xml(plate="B-XY-1234").replace(b'schemeID="PLAKA"', b'schemeID="YABANCIPLAKA"')).ok


def test_the_despatch_date_and_time_are_given():
    xml = despatch_xml(despatch_date=None, despatch_time=None)
    line = line_of(xml, "<cac:Delivery>")
    assert [(problem.line, problem.kind) for problem in check(xml).problems] == [(line, "rule"), (line, "rule")]
    assert found(check(xml))[0][1].startswith("The despatch date (cac:Shipment/cac:Delivery/cac:Despatch/"
                                              "cbc:ActualDespatchDate) must be a date YYYY-MM-DD (found: nothing)")
    xml = despatch_xml(despatch_time=None)
    assert only(check(xml), "rule") == (line_of(xml, "<cac:Despatch>"), "The despatch time "
                                        "(cac:Shipment/cac:Delivery/cac:Despatch/cbc:ActualDespatchTime) is missing.")


def test_each_line_has_a_quantity_above_zero_a_unit_and_a_name():
    xml = despatch_xml(lines=(("Kablo", "0", "MTR"), ("Kutu", "-2", "C62"), ("Vida", "5", None), ("", "1", "C62")))
    assert found(check(xml)) == [
        (line_of(xml, ">0<"), "Line 1: the delivered quantity (cbc:DeliveredQuantity) must be greater than 0 "
                              "(found: 0)."),
        (line_of(xml, ">-2<"), "Line 2: the delivered quantity (cbc:DeliveredQuantity) must be greater than 0 "
                               "(found: -2)."),
        (line_of(xml, ">5<"), "Line 3: the delivered quantity has no unit (unitCode), e.g. C62 for pieces or KGM "
                              "for kilograms."),
        (line_of(xml, "<cbc:Name></cbc:Name>"), "Line 4: the item has no name (cac:Item/cbc:Name).")]


def test_a_note_without_lines_is_refused_by_the_schema_and_the_rule():
    despatch = check(despatch_xml(lines=()))
    assert sorted(problem.kind for problem in despatch.problems) == ["rule", "schema"]
    assert found(despatch, "rule")[0][1] == "The note has no line (cac:DespatchLine)."
    assert "Expected is cac:DespatchLine" in found(despatch, "schema")[0][1]


# --- the upload: ZIPs and bad files -------------------------------------------------------------------------------

def test_a_zip_of_three_notes_one_broken():
    first = despatch_xml(number="EIR2025000000001", issue_date="2025-03-14")
    second = despatch_xml(number="EIR2025000000002", issue_date="2025-03-14",
                          uuid="0b5c7d1e-2222-4b8e-9d55-0c2b1f6e8a10")
    broken = despatch_xml(number="EIR2025000000003", issue_date="2025-03-14")[:-40]
    data = zipped({"notes/1.xml": first, "notes/2.XML": second, "notes/3.xml": broken,
                   "notes/readme.txt": b"not a note", "__MACOSX/notes/._1.xml": b"\x00\x05\x16\x07",
                   "notes/": b""})
    despatches = check_upload("notes.zip", data, manual_number=True)
    assert [despatch.name for despatch in despatches] == ["notes/1.xml", "notes/2.XML", "notes/3.xml"]
    assert [despatch.ok for despatch in despatches] == [True, True, False]
    assert [despatch.number for despatch in despatches[:2]] == ["EIR2025000000001", "EIR2025000000002"]
    [problem] = despatches[2].problems
    assert problem.kind == "file" and problem.line == broken.count(b"\n") + 1  # the end of the data
    assert problem.message.startswith("This is not well-formed XML: ")


def test_an_empty_zip_a_zip_without_xml_and_a_broken_zip():
    empty = io.BytesIO()
    zipfile.ZipFile(empty, "w").close()
    for data in (empty.getvalue(), zipped({"a.txt": b"x"})):
        [despatch] = check_upload("upload.zip", data, manual_number=False)
        assert (despatch.name, found(despatch, "file")) == ("upload.zip", [(None, "The ZIP file holds no XML file.")])
    for data in (zipped({"a.xml": despatch_xml()})[:100], b"PK\x03\x04" + b"\x00" * 50):
        [despatch] = check_upload("upload.zip", data, manual_number=False)
        assert found(despatch, "file") == [(None, "This ZIP file cannot be opened: it is damaged or incomplete.")]


def test_a_zip_member_that_is_empty_or_corrupt_is_reported_and_the_others_are_checked():
    data = bytearray(zipped({"a.xml": despatch_xml(), "b.xml": b"", "c.xml": despatch_xml()}))
    data[data.index(b"c.xml") + 10] ^= 0xFF  # inside c.xml's compressed data
    despatches = check_upload("upload.zip", bytes(data), manual_number=True)
    assert [(despatch.name, despatch.ok) for despatch in despatches] == [("a.xml", True), ("b.xml", False),
                                                                           ("c.xml", False)]
    assert found(despatches[1]) == [(None, "The file is empty.")]
    assert despatches[2].problems[0].kind == "file"


def test_too_many_or_too_big_files():
    [despatch] = check_upload("big.xml", b" " * (10 * 1024 * 1024 + 1), manual_number=False)
    assert found(despatch, "file") == [(None, "The file is larger than 10 MB.")]
    many = zipped({f"{index}.xml": b"<x/>" for index in range(101)})
    [despatch] = check_upload("many.zip", many, manual_number=False)
    assert found(despatch, "file") == [(None, "The ZIP file holds more than 100 XML files; upload at most 100 at a "
                                              "time.")]
    bomb = zipped({"a.xml": b" " * (10 * 1024 * 1024 + 1), "b.xml": despatch_xml()})
    assert len(bomb) < 100_000
    despatches = check_upload("bomb.zip", bomb, manual_number=True)
    assert [found(despatch) for despatch in despatches] == [[(None, "The file is larger than 10 MB.")], []]


def test_a_doctype_with_an_entity_is_refused_and_not_expanded():
    xml = despatch_xml().replace(
        b"<?xml version='1.0' encoding='UTF-8'?>\n",
        b"<?xml version='1.0' encoding='UTF-8'?>\n<!DOCTYPE DespatchAdvice [<!ENTITY secret SYSTEM "
        b"\"file:///etc/passwd\"><!ENTITY word \"EXPANDED\">]>\n").replace(
        b"<cbc:Name>Sigorta kutusu</cbc:Name>", b"<cbc:Name>&word;&secret;</cbc:Name>")
    assert b"<!DOCTYPE" in xml
    despatch = check(xml)
    assert found(despatch, "file") == [(1, "The file declares a DOCTYPE: UBL-TR documents have none, and it is "
                                           "refused for safety (its entities are not expanded).")]
    assert despatch.lines == [] and despatch.number == ""
    root = etree.fromstring(xml, ubltr._parser())  # the parser itself leaves them as references
    assert b"EXPANDED" not in etree.tostring(root) and b"root:" not in etree.tostring(root)


def test_an_entity_bomb_is_refused_quickly():
    levels = "".join(f'<!ENTITY e{n} "{f"&e{n - 1};" * 10}">' for n in range(1, 10))
    xml = f'<?xml version="1.0"?><!DOCTYPE d [<!ENTITY e0 "lol">{levels}]><d>&e9;</d>'.encode()
    started = time.monotonic()
    [despatch] = check_upload("bomb.xml", xml, manual_number=False)
    assert despatch.problems[0].kind == "file"
    assert time.monotonic() - started < 2


@pytest.mark.parametrize("data, message", [
    (b"\x00\x01\x02garbage\xff\xfe", "This is not well-formed XML: "),
    (b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj", "This is not well-formed XML: "),
    (b"<Invoice xmlns='urn:oasis:names:specification:ubl:schema:xsd:Invoice-2'/>",
     "The document is {urn:oasis:names:specification:ubl:schema:xsd:Invoice-2}Invoice, not a UBL-TR dispatch note: "
     "its root element must be DespatchAdvice in the namespace "
     "urn:oasis:names:specification:ubl:schema:xsd:DespatchAdvice-2."),
    (b"<DespatchAdvice/>", "The document is DespatchAdvice, not a UBL-TR dispatch note: its root element must be "
                           "DespatchAdvice in the namespace "
                           "urn:oasis:names:specification:ubl:schema:xsd:DespatchAdvice-2."),
    (b"", "The file is empty."),
])
def test_garbage_other_documents_and_empty_files(data, message):
    [despatch] = check_upload("upload.xml", data, manual_number=True)
    [problem] = despatch.problems
    assert problem.kind == "file" and problem.message.startswith(message) and not despatch.ok


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cut=st.integers(min_value=0), length=st.integers(min_value=1, max_value=200),
       junk=st.binary(max_size=20), as_zip=st.booleans(), manual_number=st.booleans())
def test_no_upload_makes_the_check_raise(cut, length, junk, as_zip, manual_number):
    xml = despatch_xml()
    cut %= len(xml)
    data = xml[:cut] + junk + xml[cut + length:]
    if as_zip:
        data = zipped({"a.xml": data})[: len(data) + 200 - length]
    despatches = check_upload("upload.zip" if as_zip else "upload.xml", data, manual_number=manual_number)
    assert despatches and all(isinstance(problem.message, str) for d in despatches for problem in d.problems)


# --- despatchAdviceZip --------------------------------------------------------------------------------------------

def test_despatch_zip_holds_the_uploaded_xml_named_after_its_uuid():
    despatch = check(despatch_xml())
    with zipfile.ZipFile(io.BytesIO(base64.b64decode(despatch_zip(despatch)))) as archive:
        assert archive.namelist() == ["5f0c7a52-3f43-4b8e-9d55-0c2b1f6e8a10.xml"]
        assert archive.read(archive.namelist()[0]) == despatch.xml
    assert despatch_zip(despatch) == despatch_zip(despatch)  # the same note, the same ZIP
    despatch = check(despatch_xml(uuid="not a guid"), name="folder/irsaliye 7.xml")
    with zipfile.ZipFile(io.BytesIO(base64.b64decode(despatch_zip(despatch)))) as archive:
        assert archive.namelist() == ["irsaliye_7.xml"]
    with zipfile.ZipFile(io.BytesIO(base64.b64decode(ubltr.zipped_base64("ERP-1.xml", b"<x/>")))) as archive:
        assert archive.namelist() == ["ERP-1.xml"] and archive.read("ERP-1.xml") == b"<x/>"


def test_checking_one_note_is_quick_once_the_schema_is_cached():
    xml = despatch_xml(lines=[("Vida", "1", "C62")] * 50)
    check(xml)
    started = time.perf_counter()
    for _ in range(20):
        check(xml)
    assert (time.perf_counter() - started) / 20 < 0.05
