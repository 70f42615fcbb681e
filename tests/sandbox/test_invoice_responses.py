"""The sandbox's answers to incoming commercial invoices over real HTTP (issue 33): the answer's life and the
invoice's status with it, every refusal with its message, the 8-day period and the platform's automatic acceptance,
answers in error sent again, the e-archive cancellation and its refusals, and incoming invoices seeded with the
dispatch notes they invoice, named in their UBL."""

import base64
import uuid
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest
from lxml import etree

from backoffice.core.platform import client_for
from backoffice.remote.errors import RemoteError
from backoffice.remote.invoices import InvoicesClient
from tests.sandbox.test_invoices import UBL, an_archive, an_einvoice, get, save, wait_for
from tests.sandbox.test_tickets import refusal, unbound

RESPONSES = "/v1/invoiceresponse"
CANCEL = "/v1/earchive/cancelinvoice"
ISTANBUL = ZoneInfo("Europe/Istanbul")
ACCEPT, REJECT = 60, 80


def seed(sandbox, customer, **fields) -> dict:
    """An incoming invoice of the given content (invoices/incoming): commercial unless profile says otherwise."""
    return sandbox.control("POST", "invoices/incoming", {"customer": customer["customer_unique_id"], **fields})


def answer_settings(sandbox, customer, **fields) -> dict:
    return sandbox.control("POST", "invoices/responses/settings",
                           {"customer": customer["customer_unique_id"], **fields})


def answering(api, invoice_id, status, reason=None, **more):
    body = {"InvoiceId": invoice_id, "Status": status, **more}
    if reason is not None:
        body["Reason"] = reason
    return api.post("invoice", RESPONSES, json=body)


def answer(api, invoice_id, status, reason=None) -> dict:
    response = answering(api, invoice_id, status, reason)
    assert response.status_code == 200, response.text
    return response.json()


def answer_of(api, invoice_id):
    return api.get("invoice", f"{RESPONSES}/getbyinvoiceid/{invoice_id}")


def the_answer(api, invoice_id) -> dict:
    response = answer_of(api, invoice_id)
    assert response.status_code == 200, response.text
    return response.json()


def invoice_status(api, invoice_id) -> int:
    """The incoming invoice's status as the accounting service reads it (not rate-limited: fit for waiting)."""
    return get(api, invoice_id, is_send=False)["invoiceStatus"]


def detail(response, status=400) -> str:
    return refusal(response, status)["detail"]


def cancelling(api, ids):
    return api.request("PUT", "invoice", CANCEL, json=ids)


def retrying(api, ids):
    return api.request("PUT", "invoice", f"{RESPONSES}/retryinvoiceresponselist", json=ids)


def minute(moment: datetime) -> str:
    """A moment as the platform's messages write it: Türkiye's time, to the minute."""
    return moment.astimezone(ISTANBUL).strftime("%Y-%m-%d %H:%M")


# --- an answer's life ---------------------------------------------------------------------------------------------

def test_an_acceptance_moves_20_50_60_on_the_sandbox_clock_and_the_invoice_61_then_60(sandbox, customer_api):
    api, customer = customer_api()
    answer_settings(sandbox, customer, processing_seconds=30)  # a step every 15 s
    seeded = seed(sandbox, customer)
    assert (seeded["invoiceStatus"], seeded["profile"]) == (70, "TICARIFATURA")
    created = datetime.fromisoformat(seeded["createDateUtc"])
    assert datetime.fromisoformat(seeded["answerDeadline"]) == created + timedelta(days=8)
    invoice_id = seeded["id"]
    assert "henüz yanıtlanmadı" in detail(answer_of(api, invoice_id), 404)

    sent = answer(api, invoice_id, ACCEPT)
    assert sent["id"] != invoice_id and uuid.UUID(sent["id"])
    assert (sent["invoiceId"], sent["invoiceNumber"], sent["customerId"]) == \
        (invoice_id, seeded["invoiceNumber"], customer["customer_unique_id"])
    assert (sent["status"], sent["responseStatus"], sent["reason"], sent["envelopeId"]) == (ACCEPT, 20, "", None)
    assert the_answer(api, invoice_id) == sent

    seen = {}
    for offset in (0, 16, 31):
        sandbox.configure(clock_offset_seconds=offset)
        seen[offset] = (the_answer(api, invoice_id)["responseStatus"], invoice_status(api, invoice_id))
    assert seen == {0: (20, 61), 16: (50, 61), 31: (60, 60)}
    done = the_answer(api, invoice_id)
    assert uuid.UUID(done["envelopeId"]) and done["updatedDate"] > done["createdDate"]
    status = api.get("invoice", f"/v2/inboxinvoice/{invoice_id}/status").json()
    assert status == {"id": invoice_id, "status": 60, "message": ""}
    assert get(api, invoice_id, is_send=False)["updateDateUtc"] == done["updatedDate"]


def test_a_rejection_settles_in_real_time_to_declined_with_its_reason(sandbox, customer_api):
    api, customer = customer_api()
    answer_settings(sandbox, customer, processing_seconds=0.2)
    invoice_id = seed(sandbox, customer)["id"]
    sent = answer(api, invoice_id, REJECT, "  Teslim edilen miktar faturadakinden az.  ")
    assert (sent["status"], sent["reason"]) == (REJECT, "Teslim edilen miktar faturadakinden az.")
    done = wait_for(lambda: the_answer(api, invoice_id), lambda got: got["responseStatus"] == 60)
    assert (done["status"], done["message"]) == (REJECT, "")
    assert wait_for(lambda: invoice_status(api, invoice_id), lambda got: got == 80) == 80


# --- refusals -----------------------------------------------------------------------------------------------------

def test_a_body_that_is_not_the_answer_model_is_422_and_bad_values_are_named_on_their_field(sandbox, customer_api):
    api, customer = customer_api()
    invoice_id = seed(sandbox, customer)["id"]
    errors = unbound(api.post("invoice", RESPONSES, json={"invoiceId": invoice_id, "Status": ACCEPT}))
    assert "spells it InvoiceId" in errors["invoiceId"][0]
    assert "Status" in unbound(answering(api, invoice_id, "60"))

    rejected = detail(answering(api, invoice_id, REJECT))
    assert rejected.startswith("Reason: Red gerekçesi zorunludur") and "a rejection needs its reason" in rejected
    assert "a rejection needs its reason" in detail(answering(api, invoice_id, REJECT, "   "))
    assert detail(answering(api, invoice_id, 1)).startswith("Status: ") and \
        "must be 60 accept or 80 reject; got 1" in detail(answering(api, invoice_id, 1))
    assert "is not a GUID" in detail(answering(api, "FTR-1", ACCEPT))
    both = detail(api.post("invoice", RESPONSES, json={}))
    assert "InvoiceId: " in both and "Status: " in both
    assert invoice_status(api, invoice_id) == 70  # nothing was answered
    assert answer_of(api, invoice_id).status_code == 404


def test_only_an_incoming_commercial_invoice_is_answered(sandbox, customer_api):
    api, customer = customer_api()
    unknown = str(uuid.uuid4())
    assert f"no incoming invoice with id {unknown}" in detail(answering(api, unknown, ACCEPT), 404)
    outgoing = save(api, an_archive())["generalInfoModel"]["ettn"]
    text = detail(answering(api, outgoing, ACCEPT), 404)
    assert "giden bir fatura" in text and "it is an outgoing invoice" in text
    basic = seed(sandbox, customer, profile="TEMELFATURA")
    assert basic["invoiceStatus"] == 60 and basic["answerDeadline"] is None
    text = detail(answering(api, basic["id"], ACCEPT))
    assert text.startswith("InvoiceId: Yalnız TICARIFATURA") and "this one is TEMELFATURA" in text
    assert invoice_status(api, basic["id"]) == 60
    assert answer_of(api, unknown).status_code == 404


def test_a_second_answer_is_refused_with_the_text_of_the_first(sandbox, customer_api):
    api, customer = customer_api()
    answer_settings(sandbox, customer, processing_seconds=3600)
    invoice_id = seed(sandbox, customer)["id"]
    first = answer(api, invoice_id, REJECT, "Eksik teslimat")
    for status, reason in ((ACCEPT, None), (REJECT, "Başka bir gerekçe")):
        text = detail(answering(api, invoice_id, status, reason))
        assert text.startswith("InvoiceId: Fatura zaten yanıtlandı (already answered): RED (80)")
        assert f"yanıt (answer) {first['id']}" in text and "gerekçe (reason): Eksik teslimat" in text
    assert the_answer(api, invoice_id) == first


# --- the 8-day period ---------------------------------------------------------------------------------------------

def test_an_answer_after_8_days_is_refused_and_the_platform_accepted_the_invoice_itself(sandbox, customer_api):
    api, customer = customer_api()
    received = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(days=9)
    seeded = seed(sandbox, customer, created=received.isoformat())
    ended = received + timedelta(days=8)
    text = detail(answering(api, seeded["id"], ACCEPT))
    assert text.startswith(f"InvoiceId: 8 günlük yanıt süresi {minute(ended)} tarihinde doldu")
    assert f"the 8-day answer period ended on {minute(ended)}" in text
    got = get(api, seeded["id"], is_send=False)
    assert got["invoiceStatus"] == 65 and datetime.fromisoformat(got["updateDateUtc"]) == ended
    none = detail(answer_of(api, seeded["id"]), 404)
    assert f"the invoice was accepted automatically on {minute(ended)}" in none
    status = api.get("invoice", f"/v2/inboxinvoice/{seeded['id']}/status").json()
    assert status["status"] == 65 and "otomatik kabul edildi" in status["message"]


def test_the_platform_accepts_by_itself_once_the_sandbox_clock_passes_the_8_days(sandbox, customer_api):
    api, customer = customer_api()
    seeded = seed(sandbox, customer)
    sandbox.configure(clock_offset_seconds=8 * 86400 - 60)
    assert invoice_status(api, seeded["id"]) == 70
    sandbox.configure(clock_offset_seconds=8 * 86400 + 60)
    got = get(api, seeded["id"], is_send=False)
    assert got["invoiceStatus"] == 65 and got["updateDateUtc"] == seeded["answerDeadline"]
    assert "the 8-day answer period ended" in detail(answering(api, seeded["id"], REJECT, "Geç kaldık"))
    assert "accepted automatically" in detail(answer_of(api, seeded["id"]), 404)


def test_an_answer_given_in_time_is_not_overtaken_by_the_automatic_acceptance(sandbox, customer_api):
    api, customer = customer_api()
    answer_settings(sandbox, customer, processing_seconds=86400)  # a step every 12 hours
    seeded = seed(sandbox, customer, created=(datetime.now(timezone.utc) - timedelta(days=7, hours=23)).isoformat())
    answer(api, seeded["id"], ACCEPT)
    sandbox.configure(clock_offset_seconds=7200)  # the period is over, the answer still on its way
    assert invoice_status(api, seeded["id"]) == 61 and the_answer(api, seeded["id"])["responseStatus"] == 20


# --- answers in error and the retry -------------------------------------------------------------------------------

def test_an_answer_in_error_carries_its_message_and_is_sent_again_all_or_none(sandbox, customer_api):
    api, customer = customer_api()
    answer_settings(sandbox, customer, processing_seconds=0.2, error_rate=1,
                    error_message="Alıcının posta kutusuna ulaşılamadı.")
    failing = seed(sandbox, customer)["id"]
    answer(api, failing, REJECT, "Fiyat farkı")
    failed = wait_for(lambda: the_answer(api, failing), lambda got: got["responseStatus"] == 40)
    assert failed["message"] == "Alıcının posta kutusuna ulaşılamadı." and failed["envelopeId"] is None
    got = get(api, failing, is_send=False)
    assert (got["invoiceStatus"], got["message"]) == (82, "Alıcının posta kutusuna ulaşılamadı.")
    assert "retryinvoiceresponselist" in detail(answering(api, failing, REJECT, "Yine"))

    answer_settings(sandbox, customer, processing_seconds=3600, error_rate=0)
    running = seed(sandbox, customer)["id"]
    answer(api, running, ACCEPT)
    unanswered = seed(sandbox, customer)["id"]
    text = detail(retrying(api, [failing, running, unanswered]))
    assert text.startswith("Hiçbir yanıt yeniden gönderilmedi (nothing was sent again)")
    assert f"({running}): yanıtı hata durumunda değil" in text and "not in error (40): status 20" in text
    assert f"({unanswered}): yanıtı yok" in text and f"({failing})" not in text
    unknown = str(uuid.uuid4())
    assert unknown in detail(retrying(api, [failing, unknown]), 404)
    assert the_answer(api, failing)["responseStatus"] == 40  # all or none
    assert "body" in unbound(retrying(api, []))  # a non-empty array of ids, else 422

    answer_settings(sandbox, customer, processing_seconds=0.2)
    assert retrying(api, [failing]).status_code == 200
    again = wait_for(lambda: the_answer(api, failing), lambda got: got["responseStatus"] == 60)
    assert (again["id"], again["message"], again["reason"]) == (failed["id"], "", "Fiyat farkı")
    got = get(api, failing, is_send=False)
    assert (got["invoiceStatus"], got["message"]) == (80, "")
    assert "not in error (40): status 60" in detail(retrying(api, [failing]))


# --- e-archive cancellation ---------------------------------------------------------------------------------------

def approved(api, body) -> str:
    ettn = save(api, body)["generalInfoModel"]["ettn"]
    wait_for(lambda: get(api, ettn)["invoiceStatus"], lambda status: status == 60)
    return ettn


def test_an_approved_e_archive_invoice_is_cancelled_and_cancelling_it_again_is_done(sandbox, api):
    sandbox.configure(ticket_processing_seconds=0.3)
    ettn = approved(api, an_archive())
    before = get(api, ettn)["updateDateUtc"]
    response = cancelling(api, [ettn.upper()])
    assert (response.status_code, response.json()) == (200, None)
    after = get(api, ettn)
    assert after["invoiceStatus"] == 100 and after["updateDateUtc"] > before
    assert api.get("invoice", f"/v2/earchive/{ettn}/status").json()["status"] == 100
    assert cancelling(api, [ettn]).status_code == 200  # sent again after a lost answer: already done
    assert get(api, ettn)["updateDateUtc"] == after["updateDateUtc"]


def test_a_cancellation_is_refused_all_or_none_with_the_platforms_text_per_invoice(sandbox, customer_api):
    api, customer = customer_api()
    sandbox.configure(ticket_processing_seconds=0.3)
    archive, einvoice = approved(api, an_archive()), approved(api, an_einvoice())
    incoming = seed(sandbox, customer, profile="TEMELFATURA")["id"]
    sandbox.configure(ticket_processing_seconds=3600)
    queued = save(api, an_archive())["generalInfoModel"]["ettn"]
    text = detail(cancelling(api, [archive, einvoice, incoming, queued]))
    assert text.startswith("Hiçbir fatura iptal edilmedi (nothing was cancelled): ")
    assert f"({einvoice}): e-Fatura iptal edilemez" in text and "an e-invoice cannot be cancelled" in text
    assert f"({incoming}): gelen bir fatura" in text and "an incoming invoice" in text
    assert f"({queued}): onaylanmamış e-Arşiv faturası iptal edilemez, durum 20 kuyrukta (queued)" in text
    assert f"({archive})" not in text
    unknown = str(uuid.uuid4())
    assert f"no invoice with id {unknown}" in detail(cancelling(api, [archive, unknown]), 404)
    assert get(api, archive)["invoiceStatus"] == 60  # all or none
    assert "body" in unbound(cancelling(api, {"ids": [archive]}))


# --- incoming invoices of a test's choosing -----------------------------------------------------------------------

def test_the_ubl_of_a_seeded_incoming_invoice_names_its_dispatch_notes_and_goods(sandbox, customer_api):
    api, customer = customer_api()
    seeded = seed(sandbox, customer, supplier_vkn="1234567890", supplier_title="Örnek Ticaret A.Ş.",
                  invoice_number="ORN2025000000012", issue_date="2025-03-12",
                  lines=[{"name": "Çimento (50 kg)", "quantity": 40, "unit_code": "C62", "unit_price": 185.5,
                          "vat_rate": 20},
                         {"name": "İnşaat demiri", "quantity": 1250.5, "unit_code": "KGM", "unit_price": 21.4}],
                  despatches=[{"number": "IRS2025000000007", "issue_date": "2025-03-10"},
                              {"number": "IRS2025000000009", "issue_date": "2025-03-11"}])
    assert seeded["invoiceNumber"] == "ORN2025000000012"
    response = api.get("invoice", f"/v2/inboxinvoice/{seeded['id']}/ubl")
    assert response.status_code == 200, response.text
    root = etree.fromstring(base64.b64decode(response.json()["Response"]))
    assert root.tag == f"{{{UBL['inv']}}}Invoice"
    assert (root.findtext("cbc:ProfileID", namespaces=UBL), root.findtext("cbc:ID", namespaces=UBL),
            root.findtext("cbc:UUID", namespaces=UBL), root.findtext("cbc:IssueDate", namespaces=UBL)) == \
        ("TICARIFATURA", "ORN2025000000012", seeded["id"], "2025-03-12")
    references = root.findall("cac:DespatchDocumentReference", UBL)
    assert [(ref.findtext("cbc:ID", namespaces=UBL), ref.findtext("cbc:IssueDate", namespaces=UBL))
            for ref in references] == [("IRS2025000000007", "2025-03-10"), ("IRS2025000000009", "2025-03-11")]
    children = list(root)
    assert children.index(references[-1]) < children.index(root.find("cac:Signature", UBL))  # UBL 2.1's order
    supplier = root.find("cac:AccountingSupplierParty/cac:Party", UBL)
    assert supplier.findtext("cac:PartyIdentification/cbc:ID", namespaces=UBL) == "1234567890"
    assert supplier.findtext("cac:PartyName/cbc:Name", namespaces=UBL) == "Örnek Ticaret A.Ş."
    lines = [(line.find("cbc:InvoicedQuantity", UBL).get("unitCode"),
              Decimal(line.findtext("cbc:InvoicedQuantity", namespaces=UBL)),
              Decimal(line.findtext("cac:Price/cbc:PriceAmount", namespaces=UBL)),
              line.findtext("cac:Item/cbc:Name", namespaces=UBL),
              Decimal(line.findtext("cbc:LineExtensionAmount", namespaces=UBL)))
             for line in root.findall("cac:InvoiceLine", UBL)]
    assert lines == [("C62", Decimal("40"), Decimal("185.5"), "Çimento (50 kg)", Decimal("7420.00")),
                     ("KGM", Decimal("1250.5"), Decimal("21.4"), "İnşaat demiri", Decimal("26760.70"))]
    assert Decimal(root.findtext("cac:LegalMonetaryTotal/cbc:PayableAmount", namespaces=UBL)) == Decimal("41016.84")
    listed = get(api, seeded["id"], is_send=False)
    assert (listed["currentAccountIdentifier"], listed["invoiceTotalsModel"]["payableAmount"]) == \
        ("1234567890", 41016.84)


def test_an_invoice_without_dispatch_notes_has_no_reference_and_numbers_count_per_customer(sandbox, customer_api):
    api, customer = customer_api()
    first, second = seed(sandbox, customer, profile=0), seed(sandbox, customer, profile=0)
    year = datetime.now(ISTANBUL).year
    assert (first["invoiceNumber"], second["invoiceNumber"]) == (f"TDR{year}000000001", f"TDR{year}000000002")
    root = etree.fromstring(base64.b64decode(api.get("invoice", f"/v2/inboxinvoice/{first['id']}/ubl")
                                             .json()["Response"]))
    assert root.find("cac:DespatchDocumentReference", UBL) is None
    assert [line.findtext("cac:Item/cbc:Name", namespaces=UBL) for line in root.findall("cac:InvoiceLine", UBL)] == \
        ["Çimento (50 kg)", "İnşaat demiri"]


@pytest.mark.parametrize("fields,message", [
    ({"profile": "IHRACAT"}, "profile must be TICARIFATURA or TEMELFATURA"),
    ({"supplier_vkn": "12345"}, "supplier_vkn must be 10 digits"),
    ({"created": "dün"}, "created must be an ISO date and time"),
    ({"lines": []}, "lines must be a non-empty array"),
    ({"lines": [{"name": "Kum", "quantity": 0, "unit_price": 1}]}, "lines[0].quantity must be a number (above 0)"),
    ({"lines": [{"name": "Kum", "quantity": 1, "unit_price": 1, "unit_code": "adet"}]}, "UN/ECE unit code"),
    ({"despatches": [{"number": "IRS2025000000001", "issue_date": "10.03.2025"}]},
     "despatches[0].issue_date must be a date"),
])
def test_the_seed_control_refuses_what_it_cannot_make(sandbox, customer_api, fields, message):
    _, customer = customer_api()
    with pytest.raises(RuntimeError, match=r"400") as failure:
        seed(sandbox, customer, **fields)
    assert message in str(failure.value)


# --- the back office's client (remote/invoices.py) through the real transport --------------------------------------

def test_the_client_answers_reads_the_answer_retries_and_cancels(sandbox, sandbox_company):
    customer = {"customer_unique_id": str(sandbox_company.customer_unique_id)}
    answer_settings(sandbox, customer, processing_seconds=0.2)
    client = client_for(sandbox_company, InvoicesClient)
    invoice_id = seed(sandbox, customer)["id"]
    assert client.response_of(invoice_id) is None
    with pytest.raises(ValueError, match="reason"):
        client.send_response(invoice_id, accept=False)
    sent = client.send_response(invoice_id, accept=False, reason="Miktar farkı")
    assert (sent["invoiceId"], sent["status"], sent["responseStatus"], sent["reason"]) == \
        (invoice_id, REJECT, 20, "Miktar farkı")
    done = wait_for(lambda: client.response_of(invoice_id), lambda got: got["responseStatus"] == 60)
    assert done["id"] == sent["id"]
    with pytest.raises(RemoteError, match="already answered"):
        client.send_response(invoice_id, accept=True)
    with pytest.raises(RemoteError, match="not in error"):
        client.retry_responses([invoice_id])
    basic = seed(sandbox, customer, profile="TEMELFATURA")["id"]
    with pytest.raises(RemoteError, match="an incoming invoice"):
        client.earchive_cancel([basic])
