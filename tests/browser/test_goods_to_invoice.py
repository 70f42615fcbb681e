"""From goods to invoice in a real browser (issue 33), against the sandbox over HTTP and a real RQ worker process, as
an accountant works: two approved dispatch notes of one customer, one answered in part, invoiced together at the
accepted quantities and the invoice approved; an incoming commercial invoice that bills more than we accepted
flagged, and rejected with a reason (first refused without one); an e-archive invoice cancelled. Screenshots in
Turkish at 1,400 and 390 px for docs/README-goods-to-invoice.md (SCREENSHOTS=1)."""

import re
from datetime import timedelta
from decimal import Decimal

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse
from django.utils import timezone

from backoffice.core import dashboard as core_dashboard
from backoffice.core.choices import Role, SyncState
from backoffice.current_accounts.models import Address, CurrentAccount
from backoffice.dispatch.models import DispatchLine, DispatchNote, ReceivedReply, ReceivedReplyLine
from backoffice.dispatch_inbox.models import DispatchReply, IncomingLine, IncomingNote, ReplyLine
from backoffice.invoices import mirror, taxpayers
from backoffice.invoices.choices import InvoiceStatus, MatchState
from backoffice.invoices.models import Invoice
from tests.browser.conftest import WORKER_BROWSER_MARKS, screenshot, sign_in
from tests.browser.conftest import settled as settle
from tests.browser.test_invoices import in_turkish as tr
from tests.browser.test_invoices import rq_worker  # noqa: F401 (the worker these steps run on)
from tests.conftest import make_user
from tests.testapp.testing import output, wait_for

pytestmark = WORKER_BROWSER_MARKS

CUSTOMER_VKN = "4840000006"  # not on the sandbox's taxpayer list: an e-archive customer
SUPPLIER_VKN = "1234567890"
SETTLES = 90_000  # ms


def sent_note(company, account, number, days_ago, lines, status=60):
    note = DispatchNote.objects.create(
        company=company, remote_id=f"guid-{number}".lower(), remote_status=status, sync_state=SyncState.SYNCED,
        despatch_number=number, issue_date=core_dashboard.today() - timedelta(days=days_ago), current_account=account,
        receiver_identifier=account.identifier, receiver_name=account.name, line_count=len(lines))
    for position, (name, quantity, price) in enumerate(lines, start=1):
        DispatchLine.objects.create(note=note, position=position, product_name=name, product_code=f"KRT-{position}",
                                    quantity=Decimal(quantity), unit_price=Decimal(price), vat_rate=Decimal(20))
    return note


def answered_in_part(note, accepted):
    reply = ReceivedReply.objects.create(company=note.company, remote_id=f"r-{note.pk}", note=note, answer="partial",
                                         receipt_number="YNT2026000000001", lines_read_at=timezone.now(),
                                         received_at=timezone.now())
    for line_id, (taken, refused) in enumerate(accepted, start=1):
        ReceivedReplyLine.objects.create(reply=reply, line_id=str(line_id), accepted=Decimal(taken),
                                         rejected=Decimal(refused), reason="Hasarlı koli" if refused else "")
    DispatchNote.objects.filter(pk=note.pk).update(remote_status=90)


def goods_we_accepted(company):
    """An incoming note of the supplier, answered in part by us: 40 sacks sent, 30 accepted."""
    note = IncomingNote.objects.create(company=company, remote_id="in-gln1", despatch_number="GLN2026000000001",
                                       sender_identifier=SUPPLIER_VKN, sender_title="Örnek Yapı Market A.Ş.",
                                       remote_status=90, sync_state=SyncState.SYNCED, lines_read_at=timezone.now(),
                                       issue_date=timezone.localdate() - timedelta(days=2),
                                       received_at=timezone.now() - timedelta(days=2))
    reply = DispatchReply.objects.create(company=company, note=note, way="partial", answer="partial", remote_status=60,
                                         sync_state=SyncState.SYNCED, remote_id="r-gln1")
    for line_id, (name, sent, taken, unit) in enumerate((("Çimento (50 kg)", 40, 30, "C62"),
                                                         ("İnşaat demiri", 1250, 1250, "KGM")), start=1):
        IncomingLine.objects.create(note=note, position=line_id, line_id=str(line_id), product_name=name,
                                    quantity=Decimal(sent), unit_code=unit)
        ReplyLine.objects.create(reply=reply, line_id=str(line_id), product_name=name, unit_code=unit,
                                 accepted=Decimal(taken), rejected=Decimal(sent - taken))


@pytest.mark.slow
def test_goods_invoiced_checked_answered_and_cancelled(live_server, browser_page, sandbox, make_sandbox_company,
                                                       rq_worker):  # noqa: F811
    for role in Role:
        Group.objects.get_or_create(name=role.value)
    sandbox.configure(ticket_processing_seconds=2)
    company = make_sandbox_company(name="Marmara Kırtasiye A.Ş.")
    sandbox.control("POST", "invoices/responses/settings", {"customer": str(company.customer_unique_id),
                                                            "processing_seconds": 1, "error_rate": 0})
    make_user("selin", Role.ACCOUNTING, [company])
    account = CurrentAccount.objects.create(company=company, name="Ayşe Yılmaz Ltd.", identifier=CUSTOMER_VKN,
                                            remote_id="11", sync_state=SyncState.SYNCED)
    Address.objects.create(company=company, current_account=account, address_name="Merkez", city="İstanbul",
                           sub_division_name="Kadıköy", country="Türkiye", is_default=True, remote_id="21",
                           sync_state=SyncState.SYNCED)
    taxpayers.taxpayers_refresh()
    first = sent_note(company, account, "IRS2026000000001", 5, [("A4 fotokopi kağıdı", 100, "95.50")])
    second = sent_note(company, account, "IRS2026000000002", 6, [("Klasör", 50, "40"), ("Zımba", 10, "120")])
    answered_in_part(second, [(45, 5), (10, 0)])
    page = browser_page
    url = live_server.url

    def settled(selector, message):
        settle(page, rq_worker, selector, message)

    def both_widths(name, shown):
        """The page at 1,400 px, and on a phone scrolled to what it is about (`shown`)."""
        screenshot(page, f"{name}-1400")
        page.set_viewport_size({"width": 390, "height": 844})
        page.locator(shown).first.scroll_into_view_if_needed()
        screenshot(page, f"{name}-390")
        page.set_viewport_size({"width": 1400, "height": 900})
        page.evaluate("window.scrollTo(0, 0)")

    page.set_viewport_size({"width": 1400, "height": 900})
    sign_in(page, live_server, "selin")

    # 1. The watch: both notes are to be invoiced, the second on its last day; invoiced together.
    page.goto(f"{url}{reverse('dispatch:dispatchnote_list')}?invoicing=open")
    assert page.locator("#object-list [data-days-left='1']").count() == 1  # 6 days ago: runs out tomorrow
    both_widths("goods-to-invoice-watch", "#object-list")
    for note in (first, second):
        page.check(f"#object-list input[name=pk][value='{note.pk}']")
    page.click("button[data-bulk-action=invoice]")
    page.wait_for_selector("#from-dispatch-form")
    lines = page.locator("[data-note='IRS2026000000002'] tr[data-line='1']")
    assert lines.get_attribute("data-invoiced") == "45"  # the accepted quantity, the note's 50 beside it
    both_widths("goods-to-invoice-confirm", "[data-note]")
    page.click("#from-dispatch-confirm")
    page.wait_for_url(re.compile(r".*/invoices/\d+/edit/$"))
    invoice = Invoice.objects.get(company=company, is_send=True)
    assert page.locator("[data-despatch-source]").count() == 3
    page.fill("#id_prefix", "FTR")
    page.click("#invoice-save")
    page.wait_for_url(re.compile(r".*/invoices/\d+/$"))
    detail_url = f"{url}{reverse('invoices:invoice_detail', args=[invoice.pk])}"
    assert page.locator("#invoice-dispatch-notes [data-despatch-number]").count() == 2
    page.click("#invoice-send")
    page.wait_for_selector("#send-confirm")
    page.check("#send-checked")
    with page.expect_navigation(url=detail_url):
        page.click("#send-confirm-button")
    settled(f"#invoice-status[data-status='{InvoiceStatus.APPROVED}']", "the platform to approve the invoice")
    invoice.refresh_from_db()
    # 100 × 95.50 + 45 × 40 + 10 × 120 = 12,550.00, VAT 20 %
    assert invoice.payable_amount == Decimal("15060.00") and invoice.invoice_number.startswith("FTR")
    page.goto(f"{url}{reverse('dispatch:dispatchnote_detail', args=[second.pk])}")
    settled(f"#dispatch-invoiced:has-text('{invoice.invoice_number}')", "the note to name its invoice's number")

    # 2. An incoming commercial invoice billing 40 sacks of which we accepted 30: flagged, rejected with a reason.
    goods_we_accepted(company)
    sandbox.control("POST", "invoices/incoming", {
        "customer": str(company.customer_unique_id), "supplier_vkn": SUPPLIER_VKN,
        "despatches": [{"number": "GLN2026000000001", "issue_date": timezone.localdate().isoformat()}]})
    mirror.mirror_request(company)  # the list's reading, and the check of what it brought, by the worker
    page.goto(f"{url}{reverse('invoices:invoice_list')}?match_state=mismatch")
    try:
        incoming = wait_for(lambda: Invoice.objects.filter(company=company, is_send=False,
                                                           match_state=MatchState.MISMATCH).first(),
                            timeout=SETTLES / 1000, interval=0.5, message="the incoming invoice checked by the worker")
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n{output(rq_worker)[-5000:]}") from None
    page.reload()
    assert incoming.invoice_number in page.locator("#object-list").inner_text()
    page.goto(f"{url}{reverse('invoices:invoice_detail', args=[incoming.pk])}")
    page.wait_for_selector("#invoice-match[data-match=mismatch] tr[data-problem=more]")
    assert page.locator("#invoice-answer-due").count() == 1
    page.click("#invoice-answer")
    page.wait_for_selector("#answer-form")
    assert "Çimento (50 kg): 40 Adet faturalandı, 30 kabul edildi" in page.locator("[data-mismatch]").inner_text()
    page.check("#id_answer_1")  # reject
    page.check("#id_checked")
    page.click("#answer-confirm")
    page.wait_for_selector("#id_reason_errors")
    assert page.locator("#id_reason_errors").inner_text() == tr("Say why the invoice is rejected.")
    assert Invoice.objects.get(pk=incoming.pk).pending_action == ""
    both_widths("goods-to-invoice-answer", "#answer-form")  # the reason asked for on its field
    page.fill("#id_reason", "Kabul edilen 30 torba çimentodan fazlası faturalanmış")
    page.check("#id_checked")
    # Enter in a field moves to the next one and sends nothing: the answer goes by its button alone
    answer_url = page.url
    for field, then in (("#id_answer_1", "id_reason"), ("#id_checked", "id_checked")):
        page.focus(field)
        page.keyboard.press("Enter")
        assert page.evaluate("document.activeElement.id") == then and page.url == answer_url
    assert Invoice.objects.get(pk=incoming.pk).pending_action == ""
    page.click("#answer-confirm")
    page.wait_for_url(re.compile(r".*/invoices/.*"))
    page.goto(f"{url}{reverse('invoices:invoice_detail', args=[incoming.pk])}")
    settled(f"#invoice-status[data-status='{InvoiceStatus.DECLINED}']", "the rejection to reach the supplier")
    settled("#invoice-response[data-response-status='60']", "the answer delivered")
    both_widths("goods-to-invoice-rejected", "#invoice-response")

    # 3. The approved e-archive invoice cancelled, with the reason.
    page.goto(detail_url)
    page.click("#invoice-cancel")
    page.wait_for_selector("#cancel-form")
    page.fill("#id_reason", "Müşteri siparişi iptal etti")
    page.check("#id_checked")
    cancel_url = page.url
    page.focus("#id_checked")
    page.keyboard.press("Enter")  # the last field: Enter stays there and sends nothing
    assert page.evaluate("document.activeElement.id") == "id_checked" and page.url == cancel_url
    assert Invoice.objects.get(pk=invoice.pk).pending_action == ""
    both_widths("goods-to-invoice-cancel", "#cancel-invoices")
    page.click("#cancel-confirm")
    page.goto(detail_url)
    settled(f"#invoice-status[data-status='{InvoiceStatus.EARCHIVE_CANCELLED}']", "the cancellation")
    assert "Müşteri siparişi iptal etti" in page.locator("#invoice-cancelled").inner_text()
    # The cancelled invoice frees its notes: they are to be invoiced again.
    page.goto(f"{url}{reverse('dispatch:dispatchnote_detail', args=[second.pk])}")
    assert page.locator("#dispatch-invoiced").count() == 0 and page.locator("#dispatch-invoice").count() == 1
    assert rq_worker.poll() is None, output(rq_worker)
