"""The sandbox's dispatch service, incoming notes and replies (document 3, 2.9, 3.3 and 4.5; the wire contract of
issue 16), over real HTTP: notes arriving by the control action, over time and from another sandbox customer, their
list, status, documents and exports; replies uploaded as UBL (post, put, status change), written by the platform
(partial accept, approve / reject), their life moving the note, and the sender's receipt list and documents."""

import base64
import datetime
import io
import time
import uuid
import zipfile

import pytest
from lxml import etree
from openpyxl import load_workbook

from tests.sandbox.test_dispatch import (GENERIC, ISTANBUL, STEP, UBL_NS, XSD, Clock, assert_real_pdf, control,
                                         create, key_of, put, status_of, today, zip_b64)
from tests.sandbox.test_tickets import refusal, unbound

INBOX, INBOX_DOCS = "/v1/inboxdespatch", "/v2/inboxdespatch"
REPLY, REPLY_DOCS = "/v1/outboxreceiptadvice", "/v2/outboxreceiptadvice"
RA_NS = {**UBL_NS, "r": "urn:oasis:names:specification:ubl:schema:xsd:ReceiptAdvice-2"}
SENDER = "1234567890"  # the control action's default sender (a VKN with a valid check digit)
LINES = [{"name": "Un", "quantity": 250, "unit_code": "KGM"}, {"name": "Şeker", "quantity": 10, "unit_code": "C62"}]


def incoming(sandbox, api, **body) -> list[dict]:
    return control(sandbox, api, "incoming", **body)["notes"]


def inbox(api, **params) -> dict:
    response = api.get("dispatch", f"{INBOX}/list", params={"pageIndex": 1, "pageSize": 500, **params})
    assert response.status_code == 200, response.text
    return response.json()


def note_status(api, note_id) -> int:
    response = api.get("dispatch", f"{INBOX_DOCS}/{note_id}/status")
    assert response.status_code == 200, response.text
    return response.json()["status"]


def reply_status(api, reply_id) -> dict:
    response = api.get("dispatch", f"{REPLY_DOCS}/{reply_id}/status")
    assert response.status_code == 200, response.text
    return response.json()


def wrapped(response) -> bytes:
    assert response.status_code == 200, response.text
    return base64.b64decode(response.json()["Response"])


def detail(response) -> str:
    body = refusal(response)
    assert body["title"] == "Validation failed", body
    return body["detail"]


def receipt_xml(reply_id, note_number, lines=(("1", "250", None, None),), number="TASLAK", issue_date=None,
                root="ReceiptAdvice", namespace=RA_NS["r"]) -> bytes:
    """Our own ReceiptAdvice fixture: lines are (LineID, ReceivedQuantity, RejectedQuantity, RejectReason); None
    leaves the element out."""
    issue_date = issue_date or today().isoformat()
    body = ""
    for index, (line_id, received, rejected, reason) in enumerate(lines, start=1):
        body += f"<cac:ReceiptLine><cbc:ID>{index}</cbc:ID>"
        if received is not None:
            body += f'<cbc:ReceivedQuantity unitCode="KGM">{received}</cbc:ReceivedQuantity>'
        if rejected is not None:
            body += f'<cbc:RejectedQuantity unitCode="KGM">{rejected}</cbc:RejectedQuantity>'
        if reason is not None:
            body += f"<cbc:RejectReason>{reason}</cbc:RejectReason>"
        body += (f"<cac:DespatchLineReference><cbc:LineID>{line_id}</cbc:LineID></cac:DespatchLineReference>"
                 "<cac:Item><cbc:Name>Un</cbc:Name></cac:Item></cac:ReceiptLine>")
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<{root} xmlns="{namespace}" xmlns:cac="{UBL_NS['cac']}" xmlns:cbc="{UBL_NS['cbc']}" xmlns:ext="{UBL_NS['ext']}">
  <cbc:UBLVersionID>2.1</cbc:UBLVersionID><cbc:CustomizationID>TR1.2.1</cbc:CustomizationID>
  <cbc:ProfileID>TEMELIRSALIYE</cbc:ProfileID><cbc:ID>{number}</cbc:ID><cbc:UUID>{reply_id}</cbc:UUID>
  <cbc:IssueDate>{issue_date}</cbc:IssueDate><cbc:IssueTime>12:00:00</cbc:IssueTime>
  <cac:DespatchDocumentReference><cbc:ID>{note_number}</cbc:ID><cbc:IssueDate>{issue_date}</cbc:IssueDate>
  </cac:DespatchDocumentReference>
  <cac:DespatchSupplierParty><cac:Party><cac:PartyIdentification><cbc:ID schemeID="VKN">{SENDER}</cbc:ID>
  </cac:PartyIdentification></cac:Party></cac:DespatchSupplierParty>
  {body}
</{root}>""".encode("utf-8")


def reply_body(xml, **fields) -> dict:
    body = {"ReceiptAdvice": zip_b64({"yanit.xml": xml}) if xml is not None else None, "Prefix": None,
            "UseManualReceiptAdviceId": False, "Status": 0}
    body.update(fields)
    return body


def post_reply(api, body):
    return api.post("dispatch", REPLY, json=body)


def reply(api, note, lines=(("1", "250", None, None), ("2", "10", None, None)), **fields) -> dict:
    reply_id = str(uuid.uuid4())
    response = post_reply(api, reply_body(receipt_xml(reply_id, note["despatchNumber"], lines), **fields))
    assert response.status_code == 200, response.text
    assert response.json()["id"] == reply_id
    return response.json()


def change(api, ids, status):
    return put(api, f"{REPLY_DOCS}/updatestatuslist", json={"Ids": list(ids), "Status": status})


def wait_for(condition, what, seconds=15):
    """Poll until condition() is truthy (the sandbox's real clock, short delays): its value."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def company_vkn(api) -> str:
    """The customer's own VKN, as its notes' DespatchSupplierParty shows it."""
    xml = etree.fromstring(wrapped(api.get("dispatch", f"/v2/outboxdespatch/{create(api)['id']}/ubl")))
    return xml.findtext("cac:DespatchSupplierParty/cac:Party/cac:PartyIdentification/cbc:ID", namespaces=UBL_NS)


@pytest.fixture
def clock(sandbox, api):
    control(sandbox, api, "settings", processing_seconds=STEP, approve_seconds=STEP, error_rate=0)
    return Clock(sandbox)


# --- incoming notes -----------------------------------------------------------------------------------------------

def test_incoming_notes_list_status_and_documents(sandbox, api):
    first = incoming(sandbox, api, lines=LINES, sender_title="Örnek Ticaret A.Ş.")[0]
    others = incoming(sandbox, api, count=2, sender_vkn="4840000006")
    assert first["status"] == 70 and first["despatchNumber"] == f"GLN{today().year}000000001"
    assert [note["despatchNumber"] for note in others] == [f"GLN{today().year}00000000{n}" for n in (2, 3)]
    page = inbox(api)
    assert [item["id"] for item in page["items"]] == [first["id"]] + [note["id"] for note in others]
    item = page["items"][0]
    assert set(item) == {"id", "despatchNumber", "status", "createdDate", "issueDate", "issueTime", "senderVknTckn",
                         "senderTitle", "profile", "lineCount", "payableAmount", "currencyCode", "receiptAdviceId",
                         "receiptNumber"}
    assert (item["senderVknTckn"], item["senderTitle"], item["profile"], item["lineCount"]) == (
        SENDER, "Örnek Ticaret A.Ş.", "TEMELIRSALIYE", 2)
    assert item["createdDate"].endswith("Z") and item["issueDate"] == today().isoformat()
    assert (item["receiptAdviceId"], item["receiptNumber"], item["currencyCode"]) == (None, None, "TRY")
    assert item["payableAmount"] == 200
    assert api.get("dispatch", f"{INBOX_DOCS}/{first['id'].upper()}/status").json() == first
    # Filters: the number, the sender (targetVknTckn names the other party), status, isDesc, names as spelled.
    assert [i["id"] for i in inbox(api, despatchNumber=first["despatchNumber"])["items"]] == [first["id"]]
    assert inbox(api, targetVknTckn="4840000006")["totalCount"] == 2
    assert inbox(api, targetVknTckn=SENDER)["totalCount"] == 1
    # Another letter case would leave the list unfiltered: refused, naming the spelling (issue 28).
    assert "TargetVknTckn: unknown query parameter; this operation spells it targetVknTckn" in detail(api.get(
        "dispatch", f"{INBOX}/list", params={"pageIndex": 1, "pageSize": 10, "TargetVknTckn": SENDER}))
    assert inbox(api, status=61)["totalCount"] == 0 and inbox(api, status=70)["totalCount"] == 3
    assert inbox(api, isDesc="true")["items"][0]["id"] == others[-1]["id"]
    response = api.get("dispatch", f"{INBOX}/list", params={"pageIndex": 2, "pageSize": 2})
    assert {key: value for key, value in response.json().items() if key != "items"} == {
        "pageIndex": 2, "pageSize": 2, "totalCount": 3, "totalPages": 2, "hasNextPage": False,
        "hasPreviousPage": True}
    later = (datetime.datetime.now(ISTANBUL) + datetime.timedelta(hours=1)).strftime("%Y-%m-%d %H:%M:%S")
    earlier = (datetime.datetime.now(ISTANBUL) - datetime.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S")
    assert inbox(api, startDate=earlier)["totalCount"] == 3 and inbox(api, endDate=earlier)["totalCount"] == 0
    bad = api.get("dispatch", f"{INBOX}/list", params={"pageIndex": 1, "pageSize": 10, "endDate": later})
    assert refusal(bad)["detail"].startswith("endDate: ")
    for params, name in (({"pageIndex": 1, "pageSize": 501}, "pageSize"), ({"pageSize": 10}, "pageIndex"),
                         ({"pageIndex": 1, "pageSize": 10, "status": "x"}, "status")):
        assert refusal(api.get("dispatch", f"{INBOX}/list", params=params))["detail"].startswith(f"{name}: ")
    # The UBL: DespatchLines with IDs 1, 2, quantities and units; the sender and this customer.
    xml = etree.fromstring(wrapped(api.get("dispatch", f"{INBOX_DOCS}/{first['id']}/ubl")))
    lines = xml.findall("cac:DespatchLine", UBL_NS)
    assert [(line.findtext("cbc:ID", namespaces=UBL_NS), line.findtext("cbc:DeliveredQuantity", namespaces=UBL_NS),
             line.find("cbc:DeliveredQuantity", UBL_NS).get("unitCode"),
             line.findtext("cac:Item/cbc:Name", namespaces=UBL_NS)) for line in lines] == [
        ("1", "250", "KGM", "Un"), ("2", "10", "C62", "Şeker")]
    assert xml.findtext("cac:DespatchSupplierParty/cac:Party/cac:PartyIdentification/cbc:ID",
                        namespaces=UBL_NS) == SENDER
    assert xml.findtext("cbc:UUID", namespaces=UBL_NS) == first["id"]
    for path in ("pdf", "pdf/true", "pdf/False"):
        assert_real_pdf(wrapped(api.get("dispatch", f"{INBOX_DOCS}/{first['id']}/{path}")))
    page_html = wrapped(api.get("dispatch", f"{INBOX_DOCS}/{first['id']}/html/true")).decode("utf-8")
    assert first["despatchNumber"] in page_html and "Şeker" in page_html and "Onay bekliyor (70)" in page_html
    assert "Firma tasarımı" in wrapped(api.get("dispatch", f"{INBOX_DOCS}/{first['id']}/html")).decode("utf-8")
    assert refusal(api.get("dispatch", f"{INBOX_DOCS}/{uuid.uuid4()}/status"), 404)["title"] == "Not Found"
    assert refusal(api.get("dispatch", f"{INBOX_DOCS}/{first['id']}/receiptadvice/ubl"), 404)


def test_another_customers_incoming_note_is_404(sandbox, customer_api):
    owner, _ = customer_api()
    stranger, _ = customer_api()
    note = incoming(sandbox, owner)[0]
    for path in ("status", "ubl", "pdf/true", "html/false"):
        assert refusal(stranger.get("dispatch", f"{INBOX_DOCS}/{note['id']}/{path}"), 404)
    assert inbox(stranger)["totalCount"] == 0
    partial = {"despatchAdviceUUID": note["id"], "actualDeliveryDateTime": f"{today()}T00:00:00",
               "deliveryContact": "Ali", "prefix": "IRY", "items": [{"lineId": "1", "acceptedQuantity": 1}]}
    assert refusal(stranger.post("dispatch", f"{REPLY}/partialaccept", json=partial), 404)
    assert note["id"] in detail(stranger.post("dispatch", f"{REPLY}/approvereject",
                                              params={"ids": note["id"], "isApprove": "true", "prefix": "IRY"}))


def test_control_incoming_checks_its_body(sandbox, api):
    notes = incoming(sandbox, api, status=65, created="2025-01-02T10:00:00+03:00", lines=[{"name": "Su",
                                                                                           "quantity": 1}])
    item = inbox(api)["items"][0]
    assert (item["id"], item["status"], item["issueDate"], item["issueTime"]) == (
        notes[0]["id"], 65, "2025-01-02", "10:00:00")
    assert item["despatchNumber"] == "GLN2025000000001"
    for body, message in (({"count": 0}, "count must be"), ({"sender_vkn": "1234567891"}, "sender_vkn"),
                          ({"status": 40}, "status must be"), ({"lines": [{"name": "Su", "quantity": 0}]}, "lines[0]"),
                          ({"created": "dün"}, "created must be")):
        with pytest.raises(RuntimeError, match=message.replace("[", r"\[")):
            incoming(sandbox, api, **body)


# --- replies uploaded as UBL --------------------------------------------------------------------------------------

def test_a_draft_reply_puts_the_note_in_61_and_its_life_ends_in_60(sandbox, api, clock):
    note = incoming(sandbox, api, lines=LINES)[0]
    answer = reply(api, note)
    assert answer["receiptAdviceNumber"] == f"IRY{today().year}000000001" and answer["status"] == 0
    assert note_status(api, note["id"]) == 61  # document 3, 3.3: a draft reply
    status = reply_status(api, answer["id"])
    assert status == {"id": answer["id"], "receiptNumber": answer["receiptAdviceNumber"],
                      "inboxDespatchNumber": note["despatchNumber"], "status": 0, "message": ""}
    item = inbox(api)["items"][0]
    assert (item["receiptAdviceId"], item["receiptNumber"]) == (answer["id"], answer["receiptAdviceNumber"])
    # The stored XML carries the platform's number; the reply is found by its note too.
    stored = etree.fromstring(wrapped(api.get("dispatch", f"{INBOX_DOCS}/{note['id']}/receiptadvice/ubl")))
    assert stored.findtext("cbc:ID", namespaces=RA_NS) == answer["receiptAdviceNumber"]
    assert wrapped(api.get("dispatch", f"{REPLY_DOCS}/{answer['id']}/ubl")) == etree.tostring(
        stored, xml_declaration=True, encoding="UTF-8")
    # A new reply to a note that is no longer awaiting one is refused.
    again = post_reply(api, reply_body(receipt_xml(str(uuid.uuid4()), note["despatchNumber"])))
    assert f"{note['despatchNumber']}: the note is not awaiting an answer (status 61)" in detail(again)
    assert change(api, [answer["id"]], 20).status_code == 200
    assert (reply_status(api, answer["id"])["status"], note_status(api, note["id"])) == (20, 61)
    clock.forward()
    delivered = reply_status(api, answer["id"])
    assert delivered["status"] == 50 and (delivered["envelopeStatus"], delivered["envelopeMessage"]) == (
        1000, "Zarf kuyruğa eklendi")
    assert note_status(api, note["id"]) == 61
    clock.forward()
    assert (reply_status(api, answer["id"])["status"], note_status(api, note["id"])) == (60, 60)
    for path in ("pdf", "pdf/true", "zip/true", "zip/false", "html/false"):
        assert wrapped(api.get("dispatch", f"{REPLY_DOCS}/{answer['id']}/{path}"))
    page_html = wrapped(api.get("dispatch", f"{REPLY_DOCS}/{answer['id']}/html/true")).decode("utf-8")
    assert answer["receiptAdviceNumber"] in page_html and "Kabul" in page_html
    with zipfile.ZipFile(io.BytesIO(wrapped(api.get("dispatch", f"{REPLY_DOCS}/{answer['id']}/zip/true")))) as archive:
        assert archive.namelist() == [f"{answer['receiptAdviceNumber']}.xml", f"{answer['receiptAdviceNumber']}.html"]
    # Document 3, 4.5: Get ZIP takes isStandartXslt; the path without it is no operation.
    assert api.get("dispatch", f"{REPLY_DOCS}/{answer['id']}/zip").status_code == 404


@pytest.mark.parametrize("lines, note_status_queued, note_status_done", [
    ((("1", "0", "250", "Islak"), ("2", "0", "10", "Eksik")), 81, 80),  # every line rejected whole
    ((("1", "200", "50", "Islak"),), 91, 90),  # line 2 not named: wholly received
    ((("1", "200", None, None), ("2", "10", "0", None)), 61, 60),  # short but nothing rejected: an acceptance
])
def test_the_reply_kind_decides_the_notes_statuses(sandbox, api, lines, note_status_queued, note_status_done):
    control(sandbox, api, "settings", processing_seconds=0, approve_seconds=STEP)
    clock = Clock(sandbox)
    note = incoming(sandbox, api, lines=LINES)[0]
    answer = reply(api, note, lines, Status=20)
    assert answer["status"] == 20
    assert (reply_status(api, answer["id"])["status"], note_status(api, note["id"])) == (50, note_status_queued)
    clock.forward()
    assert (reply_status(api, answer["id"])["status"], note_status(api, note["id"])) == (60, note_status_done)


def test_an_error_reply_is_drafted_again_changed_by_put_and_sent(sandbox, api, clock):
    control(sandbox, api, "settings", error_rate=1)
    note = incoming(sandbox, api, lines=LINES)[0]
    answer = reply(api, note, (("1", "0", "250", "Islak"), ("2", "0", "10", "Eksik")), Status=20)
    assert note_status(api, note["id"]) == 81
    clock.forward(2 * STEP)
    failed = reply_status(api, answer["id"])
    assert failed["status"] == 40 and "GİB" in failed["message"] and "envelopeId" not in failed
    assert note_status(api, note["id"]) == 82
    # Put while in error: the XML replaced, the kind recomputed (a partial acceptance now), the number kept.
    changed = receipt_xml(answer["id"], note["despatchNumber"], (("1", "240", "10", "Islak"),))
    response = put(api, f"{REPLY}/{answer['id'].upper()}", json=reply_body(changed))
    assert response.status_code == 200, response.text
    assert response.json() == {**answer, "status": 0}
    assert (reply_status(api, answer["id"])["message"], note_status(api, note["id"])) == ("", 61)
    xml = etree.fromstring(wrapped(api.get("dispatch", f"{REPLY_DOCS}/{answer['id']}/ubl")))
    assert xml.findtext("cac:ReceiptLine/cbc:ReceivedQuantity", namespaces=RA_NS) == "240"
    assert "UUID" in detail(put(api, f"{REPLY}/{answer['id']}", json=reply_body(
        receipt_xml(str(uuid.uuid4()), note["despatchNumber"]))))
    control(sandbox, api, "settings", error_rate=0)
    assert change(api, [answer["id"]], 20).status_code == 200
    assert note_status(api, note["id"]) == 91
    refused = refusal(put(api, f"{REPLY}/{answer['id']}", json=reply_body(changed)))
    assert refused["title"] == "Update refused" and "queued (20)" in refused["detail"]
    clock.forward(2 * STEP)
    assert (reply_status(api, answer["id"])["status"], note_status(api, note["id"])) == (60, 90)
    assert refusal(put(api, f"{REPLY}/{uuid.uuid4()}", json=reply_body(changed)), 404)


def test_reply_status_change_is_all_or_none(sandbox, api, clock):
    notes = incoming(sandbox, api, count=2)
    draft = reply(api, notes[0], (("1", "40", None, None),))["id"]
    queued = reply(api, notes[1], (("1", "40", None, None),), Status=20)["id"]
    body = refusal(change(api, [draft, queued], 20))
    assert body["title"] == "Status change refused" and queued in body["detail"] and draft not in body["detail"]
    assert reply_status(api, draft)["status"] == 0
    assert "only replies in error (40)" in refusal(change(api, [draft], 0))["detail"]
    assert "must be 0 (draft) or 20" in refusal(change(api, [draft], 40))["detail"]
    assert refusal(change(api, [], 20))["detail"].startswith("Ids: ")
    assert refusal(change(api, [draft, str(uuid.uuid4())], 20), 404)
    response = put(api, f"{REPLY_DOCS}/updatestatuslist", json={"ids": [draft], "status": 20})
    assert response.status_code == 200 and response.json() is None
    assert reply_status(api, draft)["status"] == 20
    assert list(unbound(change(api, [draft], "20"))) == ["Status"]


def test_manual_numbers_prefixes_and_a_used_uuid(sandbox, api):
    notes = incoming(sandbox, api, count=3)
    year = today().year
    manual = reply_body(receipt_xml(str(uuid.uuid4()), notes[0]["despatchNumber"], (("1", "40", None, None),),
                                    number=f"YNT{year}000000007"), UseManualReceiptAdviceId=True)
    assert post_reply(api, manual).json()["receiptAdviceNumber"] == f"YNT{year}000000007"
    used = reply_body(receipt_xml(str(uuid.uuid4()), notes[1]["despatchNumber"], (("1", "40", None, None),),
                                  number=f"YNT{year}000000007"), UseManualReceiptAdviceId=True)
    assert f"cbc:ID: YNT{year}000000007 already exists" in detail(post_reply(api, used))
    prefixed = reply_body(receipt_xml(str(uuid.uuid4()), notes[1]["despatchNumber"], (("1", "40", None, None),)),
                          Prefix="ABC")
    lowered = {name.lower(): value for name, value in prefixed.items()}  # not as document 3 spells them
    assert sorted(unbound(post_reply(api, lowered))) == ["prefix", "receiptadvice", "status",
                                                         "usemanualreceiptadviceid"]
    response = post_reply(api, prefixed)
    assert response.status_code == 200 and response.json()["receiptAdviceNumber"] == f"ABC{year}000000001"
    reply_id = response.json()["id"]
    again = reply_body(receipt_xml(reply_id, notes[2]["despatchNumber"], (("1", "40", None, None),)))
    assert "ReceiptAdvice: UUID already used" in detail(post_reply(api, again))


@pytest.mark.parametrize("make, message", [
    (lambda n: reply_body(None, ReceiptAdvice="değil base64!"), "ReceiptAdvice: ReceiptAdvice is not Base64"),
    (lambda n: reply_body(None, ReceiptAdvice=base64.b64encode(b"zip degil").decode()), "is not a readable ZIP"),
    (lambda n: reply_body(b"<ReceiptAdvice><a></ReceiptAdvice>"), "is not well-formed XML"),
    (lambda n: reply_body(receipt_xml(uuid.uuid4(), n, root="DespatchAdvice", namespace=UBL_NS["d"])),
     "ReceiptAdvice: yanit.xml is not a UBL ReceiptAdvice: its root element is DespatchAdvice"),
    (lambda n: reply_body(None, ReceiptAdvice=None), "ReceiptAdvice: The ReceiptAdvice field is required"),
    (lambda n: reply_body(receipt_xml(uuid.uuid4(), "GLN2020999999999")),
     "ReceiptAdvice: no incoming note numbered GLN2020999999999"),
    (lambda n: reply_body(receipt_xml("yok", n)), "ReceiptAdvice: cbc:UUID must be a GUID"),
    (lambda n: reply_body(receipt_xml(uuid.uuid4(), n, (("1", "200", "50", None),))),
     "ReceiptLine[1]: RejectReason required"),
    (lambda n: reply_body(receipt_xml(uuid.uuid4(), n, (("2", "5", None, None), ("1", "200", "60", "Islak")))),
     "ReceiptLine[2]: received 200 + rejected 60 exceeds the delivered quantity 250"),
    (lambda n: reply_body(receipt_xml(uuid.uuid4(), n, (("9", "1", None, None),))),
     "ReceiptLine[1]: cac:DespatchLineReference/cbc:LineID 9 is not a line of note"),
    (lambda n: reply_body(receipt_xml(uuid.uuid4(), n, (("1", None, "1", "x"),))),
     "ReceiptLine[1]: cbc:ReceivedQuantity is required"),
    (lambda n: reply_body(receipt_xml(uuid.uuid4(), n, (("1", "1", None, None), ("1", "1", None, None)))),
     "ReceiptLine[2]: line 1 of note"),
    (lambda n: reply_body(receipt_xml(uuid.uuid4(), n), Prefix="IR"), "Prefix: No prefix found"),
    (lambda n: reply_body(receipt_xml(uuid.uuid4(), n), Status=40), "Status: Status must be 0 (draft) or 20"),
    (lambda n: reply_body(receipt_xml(uuid.uuid4(), n, number="IRY25-1"), UseManualReceiptAdviceId=True),
     "ReceiptAdvice: cbc:ID: 'IRY25-1' is not a dispatch note number"),
    (lambda n: reply_body(receipt_xml(uuid.uuid4(), n, issue_date="2099-01-01")), "is in the future"),
])
def test_ubl_reply_refusals_name_the_problem(sandbox, api, make, message):
    note = incoming(sandbox, api, lines=LINES)[0]
    text = detail(post_reply(api, make(note["despatchNumber"])))
    assert message in text, text
    assert note_status(api, note["id"]) == 70 and inbox(api)["items"][0]["receiptAdviceId"] is None


def test_a_reply_body_that_does_not_fit_the_model_is_422(sandbox, api):
    assert list(unbound(post_reply(api, {"ReceiptAdvice": "x", "Ettn": "y"}))) == ["Ettn"]
    assert list(unbound(post_reply(api, {"ReceiptAdvice": "x", "Status": "20"}))) == ["Status"]


# --- replies the platform writes ----------------------------------------------------------------------------------

def partial_body(note_id, **changes) -> dict:
    body = {"despatchAdviceUUID": note_id, "actualDeliveryDateTime": f"{today().isoformat()}T00:00:00",
            "deliveryContact": "Depo Sorumlusu Ayşe Yılmaz", "prefix": "KBL",
            "items": [{"lineId": "1", "acceptedQuantity": 240, "rejectedQuantity": 10, "rejectReason": "Yırtık"}]}
    body.update(changes)
    return body


def test_partial_accept_writes_and_queues_the_reply(sandbox, api, clock):
    note = incoming(sandbox, api, lines=LINES)[0]
    response = api.post("dispatch", f"{REPLY}/partialaccept", json=partial_body(note["id"].upper()))
    assert response.status_code == 200, response.text
    answer = response.json()
    assert set(answer) == {"id", "receiptAdviceNumber", "status"} and answer["status"] == 20
    assert uuid.UUID(answer["id"]) and answer["receiptAdviceNumber"] == f"KBL{today().year}000000001"
    assert note_status(api, note["id"]) == 91
    xml = etree.fromstring(wrapped(api.get("dispatch", f"{REPLY_DOCS}/{answer['id']}/ubl")))
    text = lambda path, element=xml: element.findtext(path, namespaces=RA_NS)  # noqa: E731
    assert etree.QName(xml).namespace == RA_NS["r"]
    assert (text("cbc:CustomizationID"), text("cbc:ProfileID"), text("cbc:ReceiptAdviceTypeCode")) == (
        "TR1.2.1", "TEMELIRSALIYE", "SEVK")
    assert (text("cbc:ID"), text("cbc:UUID"), text("cac:DespatchDocumentReference/cbc:ID")) == (
        answer["receiptAdviceNumber"], answer["id"], note["despatchNumber"])
    assert text("cac:DespatchSupplierParty/cac:Party/cac:PartyIdentification/cbc:ID") == SENDER
    delivery = xml.find("cac:Shipment/cac:Delivery", RA_NS)
    assert (text("cbc:ActualDeliveryDate", delivery), text("cbc:ActualDeliveryTime", delivery)) == (
        today().isoformat(), "00:00:00")
    assert text("cac:DeliveryParty/cac:Contact/cbc:Name", delivery) == "Depo Sorumlusu Ayşe Yılmaz"
    lines = [(text("cac:DespatchLineReference/cbc:LineID", line), text("cbc:ReceivedQuantity", line),
              text("cbc:RejectedQuantity", line), text("cbc:RejectReason", line))
             for line in xml.findall("cac:ReceiptLine", RA_NS)]
    assert lines == [("1", "240", "10", "Yırtık"), ("2", "10", "0", None)]  # line 2 not named: accepted whole
    assert xml.find("cac:ReceiptLine/cbc:ReceivedQuantity", RA_NS).get("unitCode") == "KGM"
    if XSD.exists():  # GİB's ReceiptAdvice schema, with the unsigned draft's placeholder for the seal
        schema = etree.XMLSchema(etree.parse(str(XSD.with_name("UBL-ReceiptAdvice-2.1.xsd"))))
        etree.SubElement(xml.find("ext:UBLExtensions/ext:UBLExtension/ext:ExtensionContent", RA_NS),
                         "{urn:example:placeholder}Seal")
        assert schema.validate(xml), schema.error_log
    clock.forward(2 * STEP)
    assert (reply_status(api, answer["id"])["status"], note_status(api, note["id"])) == (60, 90)
    again = api.post("dispatch", f"{REPLY}/partialaccept", json=partial_body(note["id"]))
    assert f"{note['id']}: the note is not awaiting an answer (status 90)" in detail(again)


def test_partial_accept_names_every_problem_at_once(sandbox, api):
    note = incoming(sandbox, api, lines=LINES, created=f"{today().isoformat()}T00:00:00+03:00")[0]
    yesterday = (today() - datetime.timedelta(days=1)).isoformat()
    body = partial_body(note["id"], actualDeliveryDateTime=f"{yesterday}T12:00:00", deliveryContact=" ", prefix="ab",
                        items=[{"lineId": "1", "acceptedQuantity": 250, "rejectedQuantity": 1},
                               {"lineId": "7", "acceptedQuantity": 1}, {"lineId": "2", "acceptedQuantity": -1}])
    text = detail(api.post("dispatch", f"{REPLY}/partialaccept", json=body))
    for part in ("actualDeliveryDateTime: ", "is before the note's issue date", "deliveryContact: ",
                 "prefix: No prefix found", "items[2].acceptedQuantity: ", "items[0]: rejectReason required",
                 "items[0]: received 250 + rejected 1 exceeds the delivered quantity 250",
                 "items[1]: lineId 7 is not a line of note"):
        assert part in text, text
    future = (datetime.datetime.now(ISTANBUL) + datetime.timedelta(hours=2)).isoformat()
    for changes, part in (({"items": []}, "items: At least one item"), ({"despatchAdviceUUID": None},
                                                                        "despatchAdviceUUID: "),
                          ({"actualDeliveryDateTime": future}, "is in the future"),
                          ({"actualDeliveryDateTime": "yarın"}, "is not an ISO date and time"),
                          ({"prefix": None}, "prefix: prefix is required")):
        assert part in detail(api.post("dispatch", f"{REPLY}/partialaccept", json=partial_body(note["id"], **changes)))
    assert refusal(api.post("dispatch", f"{REPLY}/partialaccept", json=partial_body(str(uuid.uuid4()))), 404)
    assert list(unbound(api.post("dispatch", f"{REPLY}/partialaccept", json=partial_body(
        note["id"], items=[{"lineId": 1, "acceptedQuantity": 1}])))) == ["items[0].lineId"]
    assert note_status(api, note["id"]) == 70


def test_approve_and_reject_are_all_or_none(sandbox, api, clock):
    notes = incoming(sandbox, api, count=3, lines=LINES)
    ids = [note["id"] for note in notes]
    reply(api, notes[2])  # a draft reply: the note is 61 now
    approve = lambda **params: api.post("dispatch", f"{REPLY}/approvereject", params=params)  # noqa: E731
    text = detail(approve(ids=ids, isApprove="true", prefix="ONY"))
    assert f"{ids[2]}: the note is not awaiting an answer (status 61)" in text and ids[0] not in text
    assert [note_status(api, note_id) for note_id in ids] == [70, 70, 61]  # none answered
    text = detail(approve(ids=ids[0], isApprove="false", prefix="ONY"))
    assert "reason: required when rejecting" in text
    assert "isApprove: " in detail(approve(ids=ids[0], prefix="ONY"))
    assert "prefix: " in detail(approve(ids=ids[0], isApprove="true"))
    assert "ids: " in detail(approve(isApprove="true", prefix="ONY"))
    assert "actualDeliveryDate: " in detail(approve(ids=ids[0], isApprove="true", prefix="ONY",
                                                    actualDeliveryDate="2999-01-01T00:00:00"))
    text = detail(approve(Ids=f"{ids[0]},{ids[1]}", IsApprove="False", Prefix="RED", Reason="Hasarlı teslimat"))
    assert "Ids: unknown query parameter; this operation spells it ids" in text and "IsApprove: " in text
    assert [note_status(api, note_id) for note_id in ids[:2]] == [70, 70]
    response = approve(ids=f"{ids[0]},{ids[1]}", isApprove="False", prefix="RED", reason="Hasarlı teslimat")
    assert response.status_code == 200 and response.json() is None, response.text
    assert [note_status(api, note_id) for note_id in ids[:2]] == [81, 81]
    item = inbox(api)["items"][0]
    xml = etree.fromstring(wrapped(api.get("dispatch", f"{REPLY_DOCS}/{item['receiptAdviceId']}/ubl")))
    assert item["receiptNumber"].startswith(f"RED{today().year}")
    assert [(line.findtext("cbc:ReceivedQuantity", namespaces=RA_NS), line.findtext(
        "cbc:RejectedQuantity", namespaces=RA_NS), line.findtext("cbc:RejectReason", namespaces=RA_NS))
        for line in xml.findall("cac:ReceiptLine", RA_NS)] == [("0", "250", "Hasarlı teslimat"),
                                                               ("0", "10", "Hasarlı teslimat")]
    clock.forward(2 * STEP)
    assert [note_status(api, note_id) for note_id in ids[:2]] == [80, 80]
    other = incoming(sandbox, api)[0]["id"]
    response = api.post("dispatch", f"{REPLY}/approvereject?ids={other}&isApprove=true&prefix=ONY")
    assert response.status_code == 200 and note_status(api, other) == 61
    clock.forward(2 * STEP)
    assert note_status(api, other) == 60


def test_reply_status_control_moves_the_note(sandbox, api):
    note = incoming(sandbox, api, lines=LINES)[0]
    answer = reply(api, note, (("1", "0", "250", "Islak"), ("2", "0", "10", "Eksik")))
    forced = control(sandbox, api, "reply-status", id=answer["id"], status=40, message="Zarf reddedildi")
    assert (forced["status"], forced["message"]) == (40, "Zarf reddedildi") and "envelopeId" not in forced
    assert note_status(api, note["id"]) == 82
    forced = control(sandbox, api, "reply-status", id=answer["id"], status=60)
    assert forced["status"] == 60 and forced["envelopeStatus"] == 1000 and reply_status(api, answer["id"]) == forced
    assert note_status(api, note["id"]) == 80
    with pytest.raises(RuntimeError, match="status must be one of"):
        control(sandbox, api, "reply-status", id=answer["id"], status=70)
    with pytest.raises(RuntimeError, match="no dispatch reply"):
        control(sandbox, api, "reply-status", id=str(uuid.uuid4()), status=60)


# --- between two sandbox customers --------------------------------------------------------------------------------

def test_a_note_between_two_customers_and_its_reply_back_to_the_sender(sandbox, customer_api):
    sender, _ = customer_api()
    receiver, receiver_customer = customer_api()
    for party in (sender, receiver):
        control(sandbox, party, "settings", processing_seconds=0.1, approve_seconds=0.1)
    receiver_vkn = company_vkn(receiver)
    sent = create(sender, status=20, addressBook__identificationNumber=receiver_vkn, addressBook__alias=GENERIC,
                  addressBook__name=receiver_customer["name"])
    # The receiver's own calls bring the note in, whether or not the sender calls again.
    item = wait_for(lambda: next(iter(inbox(receiver)["items"]), None), "the note to arrive")
    assert (item["id"], item["despatchNumber"], item["status"]) == (sent["id"], sent["despatchAdviceNumber"], 70)
    sender_vkn = company_vkn(sender)
    assert (item["senderVknTckn"], item["lineCount"]) == (sender_vkn, 1)
    assert wrapped(receiver.get("dispatch", f"{INBOX_DOCS}/{sent['id']}/ubl")) == wrapped(
        sender.get("dispatch", f"/v2/outboxdespatch/{sent['id']}/ubl"))
    assert status_of(sender, sent["id"])["status"] == 60
    receipts = sender.get("dispatch", "/v1/outboxdespatch/receiptadvice/list", params={"pageIndex": 1,
                                                                                        "pageSize": 10})
    assert receipts.json()["totalCount"] == 0
    assert refusal(sender.get("dispatch", f"/v2/outboxdespatch/{sent['id']}/receiptadvice/ubl"), 404)
    # A partial acceptance of the 12 pieces, settled by the sender's calls.
    response = receiver.post("dispatch", f"{REPLY}/partialaccept", json=partial_body(
        sent["id"], items=[{"lineId": "1", "acceptedQuantity": 10, "rejectedQuantity": 2, "rejectReason": "Ezik"}]))
    assert response.status_code == 200, response.text
    answer = response.json()

    def received():
        page = sender.get("dispatch", "/v1/outboxdespatch/receiptadvice/list",
                          params={"pageIndex": 1, "pageSize": 10, "receiptNumber": answer["receiptAdviceNumber"]})
        assert page.status_code == 200, page.text
        return next(iter(page.json()["items"]), None)

    receipt = wait_for(received, "the reply to come back")
    assert receipt == {"id": answer["id"], "receiptNumber": answer["receiptAdviceNumber"], "status": 60,
                       "createdDate": receipt["createdDate"], "despatchId": sent["id"],
                       "despatchNumber": sent["despatchAdviceNumber"], "senderVknTckn": receiver_vkn,
                       "senderTitle": receiver_customer["name"], "kind": "partial"}
    assert receipt["createdDate"].endswith("Z")
    assert status_of(sender, sent["id"])["status"] == 90
    assert note_status(receiver, sent["id"]) == 90
    xml = etree.fromstring(wrapped(sender.get("dispatch", f"/v2/outboxdespatch/{sent['id']}/receiptadvice/ubl")))
    assert xml.findtext("cbc:UUID", namespaces=RA_NS) == answer["id"]
    assert xml.findtext("cac:ReceiptLine/cbc:RejectedQuantity", namespaces=RA_NS) == "2"
    assert xml.findtext("cac:DespatchSupplierParty/cac:Party/cac:PartyIdentification/cbc:ID",
                        namespaces=RA_NS) == sender_vkn
    assert_real_pdf(wrapped(sender.get("dispatch", f"/v2/outboxdespatch/{sent['id']}/receiptadvice/pdf/true")))
    page_html = wrapped(sender.get("dispatch", f"/v2/outboxdespatch/{sent['id']}/receiptadvice/html")).decode()
    assert "Kısmi kabul" in page_html and "Ezik" in page_html
    listed = sender.get("dispatch", "/v1/outboxdespatch/receiptadvice/list",
                        params={"pageIndex": 1, "pageSize": 10, "status": 60, "isDesc": "true"}).json()
    assert listed["totalCount"] == 1
    later = (datetime.datetime.now(ISTANBUL) + datetime.timedelta(hours=1)).strftime("%Y-%m-%d %H:%M:%S")
    assert refusal(sender.get("dispatch", "/v1/outboxdespatch/receiptadvice/list", params={
        "pageIndex": 1, "pageSize": 10, "endDate": later}))["detail"].startswith("endDate: ")
    assert refusal(receiver.get("dispatch", f"/v2/outboxdespatch/{sent['id']}/receiptadvice/ubl"), 404)


def test_a_rejection_between_customers_moves_the_senders_note_to_80(sandbox, customer_api):
    sender, _ = customer_api()
    receiver, receiver_customer = customer_api()
    receiver_vkn = company_vkn(receiver)
    sent = create(sender, addressBook__identificationNumber=receiver_vkn, addressBook__alias=GENERIC,
                  addressBook__name=receiver_customer["name"])
    control(sandbox, sender, "status", id=sent["id"], status=60)  # forced approval delivers too
    assert note_status(receiver, sent["id"]) == 70
    control(sandbox, receiver, "settings", processing_seconds=0, approve_seconds=0)
    response = receiver.post("dispatch", f"{REPLY}/approvereject",
                             params={"ids": sent["id"], "isApprove": "false", "prefix": "RED", "reason": "Geç"})
    assert response.status_code == 200, response.text
    wait_for(lambda: status_of(sender, sent["id"])["status"] == 80, "the sender's note to be rejected")
    receipt = sender.get("dispatch", "/v1/outboxdespatch/receiptadvice/list",
                         params={"pageIndex": 1, "pageSize": 10}).json()["items"][0]
    assert (receipt["kind"], receipt["despatchId"]) == ("reject", sent["id"])


# --- arrivals over time and exports -------------------------------------------------------------------------------

def test_notes_arrive_over_time(sandbox, api, clock):
    settings = control(sandbox, api, "settings", arrival_seconds=STEP, arrival_lines=2)
    assert (settings["arrival_seconds"], settings["arrival_lines"]) == (STEP, 2)
    assert inbox(api)["totalCount"] == 0
    clock.forward(3 * STEP + 1)
    page = inbox(api)
    assert page["totalCount"] == 3 and {item["lineCount"] for item in page["items"]} == {2}
    assert len({item["despatchNumber"] for item in page["items"]}) == 3
    clock.forward(1000 * STEP)
    assert inbox(api)["totalCount"] == 3 + 50  # at most 50 at once
    control(sandbox, api, "settings", arrival_seconds=0)
    clock.forward(10 * STEP)
    assert inbox(api)["totalCount"] == 53
    assert "arrival_seconds" not in control(sandbox, api, "settings", reset=True)
    with pytest.raises(RuntimeError, match="arrival_lines must be"):
        control(sandbox, api, "settings", arrival_lines=0)


def test_inbox_exports(sandbox, api):
    sandbox.configure(export_ready_seconds=0)
    first = incoming(sandbox, api)[0]
    second = incoming(sandbox, api, sender_vkn="4840000006", status=60)[0]

    def exported(filters):
        response = api.post("dispatch", f"{INBOX}/export", json=filters)
        assert response.status_code == 200, response.text
        content = api.get("dispatch", f"{INBOX}/export/{response.json()['exportId']}/download").content
        with zipfile.ZipFile(io.BytesIO(content)) as archive:
            assert archive.namelist() == ["gelen-irsaliyeler.xlsx"]
            book = load_workbook(io.BytesIO(archive.read("gelen-irsaliyeler.xlsx")), read_only=True)
        rows = [list(row) for row in book.active.iter_rows(values_only=True)]
        assert rows[0][:3] == ["ETTN", "İrsaliye No", "Durum"]
        return [row[0] for row in rows[1:]]

    assert exported({}) == [first["id"], second["id"]]
    assert exported({"targetVknTckn": "4840000006"}) == [second["id"]]
    assert exported({"status": 70}) == [first["id"]]
    assert exported({"ids": [second["id"].upper()]}) == [second["id"]]
    assert exported({"isArchived": True}) == []
    day = today().isoformat()
    assert exported({"startDate": day, "endDate": day}) == [first["id"], second["id"]]  # the creation date
    assert exported({"endDate": "2020-01-01"}) == []
    history = api.get("dispatch", f"{INBOX}/export/history").json()
    assert len(history) == 7 and history[0]["fileName"].startswith("gelen-irsaliyeler-")
    assert refusal(api.post("dispatch", f"{INBOX}/export", json={"status": 30}))["detail"].startswith("status: ")
    assert refusal(api.get("dispatch", f"{INBOX}/export/{uuid.uuid4()}/download"), 404)
    # The outgoing notes' exports are their own.
    assert api.get("dispatch", "/v1/outboxdespatch/export/history").json() == []
    assert key_of(api)


# --- after review -----------------------------------------------------------------------------------------------
def test_partial_accept_refuses_quantities_that_are_no_json_numbers(sandbox, api):
    """NaN and Infinity, which Python's json reads, are refused on the field: never a 500."""
    import json

    note = incoming(sandbox, api, lines=LINES)[0]
    for value in ("NaN", "Infinity", "-Infinity"):
        body = json.dumps(partial_body(note["id"])).replace('"acceptedQuantity": 240', f'"acceptedQuantity": {value}')
        response = api.post("dispatch", f"{REPLY}/partialaccept", data=body,
                             headers={"Content-Type": "application/json"})
        assert list(unbound(response)) == ["items[0].acceptedQuantity"], value
    assert note_status(api, note["id"]) == 70


def test_a_list_that_names_no_reply_and_ids_in_capitals(sandbox, api):
    """Shapes document 3 does not show, as settings of the customer: the list without the notes' replies, status
    answers with ids in capitals (the reply itself is still found by the note: Get UBL by inbox despatch)."""
    note = incoming(sandbox, api, lines=LINES)[0]
    assert control(sandbox, api, "settings", list_names_replies=False, upper_case_ids=True)["upper_case_ids"] is True
    response = api.post("dispatch", f"{REPLY}/partialaccept", json=partial_body(note["id"]))
    assert response.status_code == 200, response.text
    reply_id = response.json()["id"]
    [item] = inbox(api)["items"]
    assert item["id"] == note["id"] and item["receiptAdviceId"] is None and item["receiptNumber"] is None
    assert api.get("dispatch", f"{INBOX_DOCS}/{note['id']}/status").json()["id"] == note["id"].upper()
    assert reply_status(api, reply_id)["id"] == reply_id.upper()
    xml = wrapped(api.get("dispatch", f"{INBOX_DOCS}/{note['id']}/receiptadvice/ubl"))
    assert etree.fromstring(xml).findtext("cbc:UUID", namespaces=RA_NS) == reply_id
    with pytest.raises(RuntimeError, match="must be true or false"):
        control(sandbox, api, "settings", list_names_replies="no")
