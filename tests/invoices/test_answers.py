"""Answers to incoming commercial invoices, e-archive cancellation and the check against the goods (issue 33, points 3
to 5), through the sandbox over HTTP: every refusal with its message (an answer after 8 days, a basic invoice, a
rejection without a reason, a cancellation of an e-invoice, a UBL that is not an invoice), the answer's status
followed, an answer whose outcome was lost asked about before it is sent again, an answer in error sent again, the
platform's automatic acceptance shown as such, and an invoice that bills more than was accepted flagged on its page,
in the list and in the answer's confirmation."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.core.files.base import ContentFile
from django.urls import reverse
from django.utils import timezone, translation

from backoffice.core import actions, polling
from backoffice.core.choices import SyncState
from backoffice.core.models import RemoteCall
from backoffice.dispatch_inbox.models import DispatchReply, IncomingLine, IncomingNote, ReplyLine
from backoffice.invoices import answers, documents, matching, mirror
from backoffice.invoices.choices import Answer, InvoiceStatus, MatchState, ResponseStatus
from backoffice.invoices.models import Invoice
from tests.invoices.test_copies import sandbox_sale
from tests.testapp.testing import wait_for
from tests.tickets.conftest import login

pytestmark = [pytest.mark.django_db, pytest.mark.database]

SUPPLIER = "1234567890"
RESPONSE_PATH = "/v1/invoiceresponse"


@pytest.fixture(autouse=True)
def english():
    with translation.override("en"):
        yield


def customer(company) -> str:
    return str(company.customer_unique_id)


def arrived(sandbox, company, **fields) -> Invoice:
    """An incoming invoice seeded on the sandbox, read into the mirror."""
    seeded = sandbox.control("POST", "invoices/incoming", {"customer": customer(company), **fields})
    mirror.invoices_mirror(company.pk, full=True)
    return Invoice.objects.get(company=company, is_send=False, remote_id=seeded["id"].lower())


def quick(sandbox, company, **fields):
    sandbox.control("POST", "invoices/responses/settings", {"customer": customer(company), "processing_seconds": 0.2,
                                                            "error_rate": 0, **fields})


def run(name, invoice):
    """The action's job body, as the worker runs it."""
    return actions.action_run(Invoice, name, [invoice.pk], None if name != "reject" else {"reason": "Fiyat farkı"})


def followed(company, invoice, predicate):
    def settled():
        polling.poll_job(answers.RESPONSES_POLL.name, company.pk)
        polling.poll_job(mirror.INVOICES_POLL.name, company.pk)
        return predicate(Invoice.objects.get(pk=invoice.pk))
    wait_for(settled, timeout=30, interval=0.3, message="the answer followed")
    return Invoice.objects.get(pk=invoice.pk)


def test_an_incoming_commercial_invoice_is_accepted_and_its_answer_followed(sandbox, sandbox_company):
    quick(sandbox, sandbox_company)
    invoice = arrived(sandbox, sandbox_company)
    assert invoice.remote_status == InvoiceStatus.AWAITING_APPROVAL and invoice.profile == "TICARIFATURA"
    assert answers.answer_days_left(invoice) == 8 and answers.answer_refusal(invoice) == ""
    answers.answer_request([invoice], accept=True)
    assert Invoice.objects.get(pk=invoice.pk).pending_action == "accept"
    run("accept", invoice)
    invoice.refresh_from_db()
    assert invoice.response_answer == Answer.ACCEPT and invoice.response_id and invoice.pending_action == ""
    done = followed(sandbox_company, invoice, lambda got: got.response_status == ResponseStatus.DELIVERED
                    and got.remote_status == InvoiceStatus.APPROVED)
    assert answers.answer_refusal(done) == "Already answered: Accepted."


def test_an_answer_whose_outcome_was_lost_is_asked_about_and_not_sent_twice(sandbox, sandbox_company):
    quick(sandbox, sandbox_company)
    invoice = arrived(sandbox, sandbox_company)
    sandbox.add_fault(path=RESPONSE_PATH, method="POST", error_rate=1, after_apply="error", remaining=1)
    answers.answer_request([invoice], accept=False, reason="Fiyat farkı")
    run("reject", invoice)
    invoice.refresh_from_db()
    assert invoice.response_answer == Answer.REJECT and invoice.response_reason == "Fiyat farkı"
    assert RemoteCall.objects.filter(operation="invoice.response_send").count() == 1


def test_an_answer_in_error_is_shown_and_sent_again(sandbox, sandbox_company, client, accountant):
    quick(sandbox, sandbox_company, error_rate=1, error_message="Alıcının posta kutusuna ulaşılamadı.")
    invoice = arrived(sandbox, sandbox_company)
    answers.answer_request([invoice], accept=True)
    run("accept", invoice)
    failed = followed(sandbox_company, invoice, lambda got: got.response_status == ResponseStatus.ERROR)
    assert failed.response_message == "Alıcının posta kutusuna ulaşılamadı."
    web = login(client, accountant, sandbox_company)
    page = web.get(reverse("invoices:invoice_detail", kwargs={"pk": invoice.pk})).content.decode()
    assert 'data-response-status="40"' in page and "Alıcının posta kutusuna ulaşılamadı." in page
    assert "Send the answer again" in page
    quick(sandbox, sandbox_company)
    actions.action_request(Invoice, "answer_retry", [failed])
    actions.action_run(Invoice, "answer_retry", [invoice.pk])
    followed(sandbox_company, invoice, lambda got: got.response_status == ResponseStatus.DELIVERED)


def test_an_invoice_past_its_8_days_is_refused_and_shown_as_accepted_by_the_platform(
        sandbox, sandbox_company, client, accountant):
    late = arrived(sandbox, sandbox_company, created=(timezone.now() - timedelta(days=9)).isoformat())
    assert late.remote_status == InvoiceStatus.AUTO_APPROVED
    assert answers.answer_refusal(late) == ("The platform accepted this invoice itself when its 8 days to answer "
                                            "ended.")
    with pytest.raises(answers.services.InvoiceActionRefused, match="accepted this invoice itself"):
        answers.answer_request([late], accept=True)
    web = login(client, accountant, sandbox_company)
    page = web.get(reverse("invoices:invoice_detail", kwargs={"pk": late.pk})).content.decode()
    assert 'id="invoice-automatic"' in page and 'id="invoice-answer"' not in page
    # one our mirror still holds as waiting while its 8 days are over: refused here, before the platform is asked
    Invoice.objects.filter(pk=late.pk).update(remote_status=InvoiceStatus.AWAITING_APPROVAL)
    late.refresh_from_db()
    deadline = timezone.localtime(answers.answer_ends_at(late)).strftime("%d.%m.%Y %H:%M")
    assert answers.answer_refusal(late) == f"The 8 days to answer this invoice ended on {deadline}."
    page = web.get(reverse("invoices:invoice_answer"), {"pk": late.pk}).content.decode()
    assert f"The 8 days to answer this invoice ended on {deadline}." in page and 'id="answer-form"' not in page


def test_a_basic_invoice_is_not_answered(sandbox, sandbox_company):
    basic = arrived(sandbox, sandbox_company, profile="TEMELFATURA")
    assert answers.answer_refusal(basic) == ("Only a commercial invoice (TICARIFATURA) is answered; a basic invoice "
                                             "is accepted as it arrives.")
    assert answers.answer_days_left(basic) is None


def test_a_rejection_needs_its_reason_on_the_field(sandbox, sandbox_company, client, accountant):
    invoice = arrived(sandbox, sandbox_company)
    web = login(client, accountant, sandbox_company)
    response = web.post(reverse("invoices:invoice_answer"), {"pk": invoice.pk, "confirm": "1", "answer": "reject",
                                                             "reason": "  ", "checked": "on"})
    assert response.status_code == 400
    assert response.context["form"].errors["reason"] == ["Say why the invoice is rejected."]
    response = web.post(reverse("invoices:invoice_answer"), {"pk": invoice.pk, "confirm": "1", "answer": "accept"})
    assert response.status_code == 400 and "checked" in response.context["form"].errors
    assert Invoice.objects.get(pk=invoice.pk).pending_action == ""
    response = web.post(reverse("invoices:invoice_answer"), {"pk": invoice.pk, "confirm": "1", "answer": "reject",
                                                             "reason": "Fiyat farkı", "checked": "on"})
    assert response.status_code == 302 and Invoice.objects.get(pk=invoice.pk).pending_action == "reject"
    again = web.post(reverse("invoices:invoice_answer"), {"pk": invoice.pk, "confirm": "1", "answer": "reject",
                                                          "reason": "Fiyat farkı", "checked": "on"})
    assert again.status_code == 400 and "is on its way" in again.content.decode()  # Back and send: nothing twice


# --- e-archive cancellation -------------------------------------------------------------------------------------
def test_an_approved_e_archive_invoice_is_cancelled_with_its_reason(sandbox, sandbox_company, client, accountant):
    sandbox.configure(ticket_processing_seconds=1)
    invoice = sandbox_sale(sandbox_company)
    web = login(client, accountant, sandbox_company)
    page = web.get(reverse("invoices:invoice_detail", kwargs={"pk": invoice.pk})).content.decode()
    assert 'id="invoice-cancel"' in page
    response = web.post(reverse("invoices:invoice_cancel"), {"pk": invoice.pk, "confirm": "1", "reason": "",
                                                             "checked": "on"})
    assert response.status_code == 400 and response.context["form"].errors["reason"]
    response = web.post(reverse("invoices:invoice_cancel"), {"pk": invoice.pk, "confirm": "1",
                                                             "reason": "Müşteri siparişi iptal etti", "checked": "on"})
    assert response.status_code == 302
    again = web.post(reverse("invoices:invoice_cancel"), {"pk": invoice.pk, "confirm": "1",
                                                          "reason": "Müşteri siparişi iptal etti", "checked": "on"})
    assert again.status_code == 400 and "on its way" in again.content.decode()  # Back and send: one cancellation
    actions.action_run(Invoice, "earchive_cancel", [invoice.pk], {"reason": "Müşteri siparişi iptal etti"})
    invoice.refresh_from_db()
    assert invoice.remote_status == InvoiceStatus.EARCHIVE_CANCELLED and invoice.pending_action == ""
    assert invoice.cancel_reason == "Müşteri siparişi iptal etti" and invoice.cancelled_at
    assert answers.cancel_refusal(invoice) == "This e-archive invoice is cancelled already."


def test_an_e_invoice_is_not_cancelled_and_a_refusal_keeps_the_platforms_text(sandbox, sandbox_company):
    sandbox.configure(ticket_processing_seconds=1)
    einvoice = sandbox_sale(sandbox_company, einvoice=True)
    assert answers.cancel_refusal(einvoice).startswith("An e-invoice cannot be cancelled")
    with pytest.raises(answers.services.InvoiceActionRefused, match="An e-invoice cannot be cancelled"):
        answers.cancel_request([einvoice], reason="Yanlış")
    earchive = sandbox_sale(sandbox_company)
    sandbox.control("POST", "invoices/status", {"customer": customer(sandbox_company), "ettn": earchive.remote_id,
                                                "status": 40})  # the platform knows better than our mirror
    answers.cancel_request([earchive], reason="Yanlış tutar")
    with pytest.raises(answers.RemoteError):
        actions.action_run(Invoice, "earchive_cancel", [earchive.pk], {"reason": "Yanlış tutar"})
    earchive.refresh_from_db()
    assert earchive.pending_action == "" and earchive.last_error and earchive.remote_status != 100
    assert earchive.cancel_reason == ""


# --- the check against the goods ---------------------------------------------------------------------------------
def received_note(company, number, lines, *, accepted):
    """An incoming note we answered line by line: lines [(name, delivered, unit)], accepted [quantity]."""
    note = IncomingNote.objects.create(company=company, remote_id=f"in-{number}", despatch_number=number,
                                       sender_identifier=SUPPLIER, remote_status=90, sync_state=SyncState.SYNCED,
                                       issue_date=timezone.localdate() - timedelta(days=2),
                                       lines_read_at=timezone.now(), received_at=timezone.now())
    reply = DispatchReply.objects.create(company=company, note=note, way="partial", answer="partial",
                                         remote_status=60, sync_state=SyncState.SYNCED, remote_id=f"r-{number}")
    for position, ((name, delivered, unit), taken) in enumerate(zip(lines, accepted, strict=True), start=1):
        IncomingLine.objects.create(note=note, position=position, line_id=str(position), product_name=name,
                                    quantity=Decimal(delivered), unit_code=unit)
        ReplyLine.objects.create(reply=reply, line_id=str(position), product_name=name, unit_code=unit,
                                 accepted=Decimal(taken), rejected=Decimal(delivered) - Decimal(taken))
    return note


def test_an_invoice_that_bills_more_than_was_accepted_is_flagged(sandbox, sandbox_company, client, accountant):
    received_note(sandbox_company, "GLN2026000000001", [("Çimento (50 kg)", 40, "C62"), ("İnşaat demiri", 1250, "KGM")],
                  accepted=[30, 1250])
    invoice = arrived(sandbox, sandbox_company, despatches=[{"number": "GLN2026000000001",
                                                             "issue_date": timezone.localdate().isoformat()}])
    match = matching.check(invoice)
    invoice.refresh_from_db()
    assert invoice.match_state == MatchState.MISMATCH
    assert [(row["name"], row["invoiced"], row["accepted"], row["problem"]) for row in match.lines] == [
        ("Çimento (50 kg)", "40", "30.000000", "more"), ("İnşaat demiri", "1250", "1250.000000", "")]
    assert match.notes[0]["number"] == "GLN2026000000001" and match.notes[0]["found_by"] == "reference"
    web = login(client, accountant, sandbox_company)
    page = web.get(reverse("invoices:invoice_detail", kwargs={"pk": invoice.pk})).content.decode()
    assert 'data-match="mismatch"' in page and 'data-problem="more"' in page and "bills more than we accepted" in page
    listed = web.get(reverse("invoices:invoice_list"), {"match_state": "mismatch"}).content.decode()
    assert invoice.invoice_number in listed
    assert invoice.invoice_number not in web.get(reverse("invoices:invoice_list"),
                                                 {"match_state": "matched"}).content.decode()
    confirm = web.get(reverse("invoices:invoice_answer"), {"pk": invoice.pk}).content.decode()
    assert "data-mismatch" in confirm and "Çimento (50 kg): 40 Adet invoiced, 30 accepted" in confirm


def test_an_invoice_that_bills_what_was_accepted_matches_by_the_suppliers_notes(sandbox, sandbox_company):
    received_note(sandbox_company, "GLN2026000000002", [("ÇİMENTO (50 KG)", 40, "C62"), ("inşaat demiri", 1250, "KGM")],
                  accepted=[40, 1250])
    invoice = arrived(sandbox, sandbox_company)  # no reference: the supplier's notes of the days before it
    match = matching.check(invoice)
    invoice.refresh_from_db()
    assert invoice.match_state == MatchState.MATCHED, match.lines
    assert match.notes[0]["found_by"] == "supplier"


def test_a_ubl_that_is_not_an_invoice_is_unreadable(sandbox, sandbox_company, settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path)
    invoice = arrived(sandbox, sandbox_company)
    document = documents.INVOICE_DOCUMENTS.get(invoice, "ubl")  # the kept copy, replaced by a dispatch note
    document.file.save("not-an-invoice.xml", ContentFile(b'<DespatchAdvice xmlns="urn:oasis:names:specification:'
                                                         b'ubl:schema:xsd:DespatchAdvice-2"/>'))
    match = matching.check(invoice)
    invoice.refresh_from_db()
    assert invoice.match_state == MatchState.UNREADABLE
    assert "dispatch note" in match.error and "not an invoice" in match.error


def test_a_cancellation_answered_500_after_it_took_effect_is_not_sent_again(sandbox, sandbox_company):
    sandbox.configure(ticket_processing_seconds=1)
    invoice = sandbox_sale(sandbox_company)
    sandbox.add_fault(path="/v1/earchive/cancelinvoice", method="PUT", error_rate=1, after_apply="error", remaining=1)
    answers.cancel_request([invoice], reason="Mükerrer fatura")
    actions.action_run(Invoice, "earchive_cancel", [invoice.pk], {"reason": "Mükerrer fatura"})
    invoice.refresh_from_db()
    assert invoice.remote_status == InvoiceStatus.EARCHIVE_CANCELLED and invoice.cancel_reason == "Mükerrer fatura"
    assert RemoteCall.objects.filter(operation="invoice.earchive_cancel").count() == 1


def test_several_invoices_are_answered_by_one_job_and_a_refused_one_does_not_take_the_others_down(
        sandbox, sandbox_company):
    quick(sandbox, sandbox_company)
    first = arrived(sandbox, sandbox_company)
    second = arrived(sandbox, sandbox_company)
    answers.answer_request([first, second], accept=True)
    actions.action_run(Invoice, "accept", [first.pk, second.pk])
    assert set(Invoice.objects.filter(pk__in=[first.pk, second.pk]).values_list("response_answer", flat=True)) == {
        Answer.ACCEPT}
    # one the platform accepted itself meanwhile, while our mirror still shows it waiting: the platform refuses it,
    # the one answered before it in the same job is done
    third = arrived(sandbox, sandbox_company)
    late = arrived(sandbox, sandbox_company, created=(timezone.now() - timedelta(days=9)).isoformat())
    Invoice.objects.filter(pk=late.pk).update(remote_status=InvoiceStatus.AWAITING_APPROVAL,
                                              created_on_platform=timezone.now())
    late.refresh_from_db()
    answers.answer_request([third, late], accept=False, reason="Fiyat farkı")
    with pytest.raises(answers.RemoteError):
        actions.action_run(Invoice, "reject", [third.pk, late.pk], {"reason": "Fiyat farkı"})
    third.refresh_from_db()
    late.refresh_from_db()
    assert third.response_answer == Answer.REJECT and third.pending_action == "" and not third.last_error
    assert late.response_answer == "" and late.last_error


def test_one_invoice_that_cannot_be_checked_does_not_stop_the_others(sandbox, sandbox_company, client, accountant):
    IncomingNote.objects.create(company=sandbox_company, remote_id="not-on-the-platform",
                                despatch_number="GLN2026000000009", sender_identifier=SUPPLIER, remote_status=60,
                                sync_state=SyncState.SYNCED, issue_date=timezone.localdate())
    broken = arrived(sandbox, sandbox_company, despatches=[{"number": "GLN2026000000009",
                                                            "issue_date": timezone.localdate().isoformat()}])
    received_note(sandbox_company, "GLN2026000000003", [("Çimento (50 kg)", 40, "C62"), ("İnşaat demiri", 1250, "KGM")],
                  accepted=[40, 1250])
    fine = arrived(sandbox, sandbox_company, despatches=[{"number": "GLN2026000000003",
                                                          "issue_date": timezone.localdate().isoformat()}])
    assert "2 invoice(s) checked" in matching.invoices_match(sandbox_company.pk)
    assert Invoice.objects.get(pk=broken.pk).match_state == MatchState.UNREADABLE
    assert Invoice.objects.get(pk=fine.pk).match_state == MatchState.MATCHED
    web = login(client, accountant, sandbox_company)
    page = web.get(reverse("invoices:invoice_detail", kwargs={"pk": broken.pk})).content.decode()
    assert 'data-match="unreadable"' in page and "Check again" in page


def test_the_cancel_page_refuses_an_e_invoice_by_name(sandbox, sandbox_company, client, accountant):
    sandbox.configure(ticket_processing_seconds=1)
    einvoice = sandbox_sale(sandbox_company, einvoice=True)
    web = login(client, accountant, sandbox_company)
    page = web.get(reverse("invoices:invoice_cancel"), {"pk": einvoice.pk}).content.decode()
    assert "An e-invoice cannot be cancelled" in page and 'id="cancel-form"' not in page
    response = web.post(reverse("invoices:invoice_cancel"), {"pk": einvoice.pk, "confirm": "1", "reason": "Yanlış",
                                                             "checked": "on"})
    assert response.status_code == 400 and "An e-invoice cannot be cancelled" in response.content.decode()
    assert Invoice.objects.get(pk=einvoice.pk).pending_action == ""


def test_another_companys_invoice_is_a_404_on_the_answer_and_cancel_pages(sandbox, sandbox_company, client, accountant,
                                                                           other_company):
    invoice = arrived(sandbox, sandbox_company)
    web = login(client, accountant, other_company)  # the company switched in another tab
    for name in ("invoices:invoice_answer", "invoices:invoice_cancel"):
        assert web.get(reverse(name), {"pk": invoice.pk}).status_code == 404
        assert web.post(reverse(name), {"pk": invoice.pk, "confirm": "1", "answer": "accept", "reason": "x",
                                        "checked": "on"}).status_code == 404
    assert Invoice.objects.get(pk=invoice.pk).pending_action == ""
