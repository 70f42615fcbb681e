"""Faturalaştır (issue 33, point 1) and the 7-day watch (point 2): a draft invoice made from approved outgoing
dispatch notes of one customer, at the quantities the receiver accepted, referencing the notes; every refusal on
the page with its message (another customer's note, a note not approved, a note already invoiced without the
confirmation, another company's note); one draft for a double submission; a note freed when its invoice is deleted
or declined; the list's filters and the daily mark."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.urls import reverse
from django.utils import timezone, translation

from backoffice.core import dashboard as core_dashboard
from backoffice.core.choices import SyncState
from backoffice.dispatch import invoicing
from backoffice.dispatch.models import DispatchLine, DispatchNote, ReceivedReply, ReceivedReplyLine
from backoffice.dispatch_inbox import watch
from backoffice.dispatch_inbox.models import IncomingNote
from backoffice.invoices import from_dispatch, services
from backoffice.invoices.choices import InvoiceStatus, Profile, RecordType
from backoffice.invoices.models import DispatchReference, Invoice
from tests.conftest import guard_fields, make_user
from tests.dispatch.builders import receiver
from tests.tickets.conftest import login

pytestmark = pytest.mark.django_db

URL = reverse("invoices:invoice_from_dispatch")
VKN, OTHER_VKN = "4840000006", "1234567890"


@pytest.fixture(autouse=True)
def english():
    with translation.override("en"):
        yield


@pytest.fixture
def web(client, accountant, company):
    return login(client, accountant, company)


def note(company, number, *, identifier=VKN, status=60, days_ago=2, lines=((40, "125.50"), (10, "8")), **fields):
    """A sent note as the mirror keeps it, with its lines (quantity, unit price), VAT 20 %."""
    account = receiver(company, identifier, name=f"Alıcı {identifier}")
    made = DispatchNote.objects.create(
        company=company, remote_id=f"guid-{number}", remote_status=status, sync_state=SyncState.SYNCED,
        despatch_number=number, issue_date=core_dashboard.today() - timedelta(days=days_ago), current_account=account,
        receiver_identifier=identifier, receiver_name=account.name, line_count=len(lines), **fields)
    for position, (quantity, price) in enumerate(lines, start=1):
        DispatchLine.objects.create(note=made, position=position, product_name=f"Ürün {position}",
                                    product_code=f"URN-{position}", quantity=Decimal(quantity),
                                    unit_price=Decimal(price), vat_rate=Decimal(20))
    return made


def partial_answer(made, answers):
    """The receiver's partial acceptance: {line id: (accepted, rejected, reason)}."""
    reply = ReceivedReply.objects.create(company=made.company, remote_id=f"r-{made.pk}", note=made,
                                         receipt_number="YNT2026000000001", answer="partial",
                                         lines_read_at=timezone.now(), received_at=timezone.now())
    for line_id, (accepted, rejected, reason) in answers.items():
        ReceivedReplyLine.objects.create(reply=reply, line_id=str(line_id), accepted=Decimal(accepted),
                                         rejected=Decimal(rejected), reason=reason)
    DispatchNote.objects.filter(pk=made.pk).update(remote_status=90)
    made.refresh_from_db()
    return reply


def page_of(web, *notes, method="get", data=None):
    pks = {"pk": [made.pk for made in notes]}
    if method == "get":
        return web.get(URL, pks)
    return web.post(URL, {**pks, **(data or {})})


def confirm(web, *notes, **data):
    """The page from the list's POST, then its confirmation with the page's one-time key."""
    page = page_of(web, *notes, method="post").content.decode()
    return page_of(web, *notes, method="post", data={**guard_fields(page), "confirm": "1", **data})


def test_two_notes_one_answered_in_part_make_one_draft_at_the_accepted_quantities(web, company):
    first = note(company, "IRS2026000000001", days_ago=3)
    second = note(company, "IRS2026000000002", days_ago=1, lines=((100, "2.5"), (5, "40")))
    partial_answer(second, {1: ("80", "20", "Kırık ambalaj"), 2: ("0", "5", "Eksik")})
    page = page_of(web, first, second).content.decode()
    assert "IRS2026000000001" in page and "IRS2026000000002" in page and "Kırık ambalaj" in page
    assert 'data-invoiced="80"' in page and "rejected: not invoiced" in page
    assert "1 line the receiver rejected in full is left out." in page
    response = confirm(web, first, second)
    invoice = Invoice.objects.get(company=company)
    assert response.status_code == 302 and response["Location"] == reverse("invoices:invoice_edit",
                                                                           kwargs={"pk": invoice.pk})
    lines = list(invoice.lines.order_by("position"))
    assert [(line.inventory_service_code, line.quantity) for line in lines] == [
        ("URN-1", 40), ("URN-2", 10), ("URN-1", 80)]  # the second note's second line was rejected in full
    assert lines[2].despatch_source == "IRS2026000000002 · 1"
    assert (lines[2].despatched_quantity, lines[2].accepted_quantity) == (100, 80)
    assert lines[0].accepted_quantity is None  # approved in full: no answer per line
    assert invoice.sync_state == SyncState.LOCAL and invoice.remote_id == "" and invoice.ettn
    assert invoice.record_type == RecordType.EARCHIVE and invoice.profile == Profile.EARSIVFATURA
    assert invoice.hide_despatch_message  # its goods had an e-dispatch note
    assert invoice.note_list() == [f"İrsaliye No: IRS2026000000001 İrsaliye Tarihi: {first.issue_date:%d.%m.%Y}",
                                   f"İrsaliye No: IRS2026000000002 İrsaliye Tarihi: {second.issue_date:%d.%m.%Y}"]
    assert invoice.payable_amount == Decimal("6360.00")  # (40 × 125.50 + 10 × 8 + 80 × 2.50) × 1.20
    assert [(ref.despatch_number, ref.issue_date) for ref in invoice.dispatch_references.all()] == [
        ("IRS2026000000001", first.issue_date), ("IRS2026000000002", second.issue_date)]
    for made in (first, second):
        made.refresh_from_db()
        assert made.invoiced_target == f"invoices.invoice:{invoice.pk}" and made.invoiced_as
    assert not invoicing.to_invoice(DispatchNote.objects.filter(company=company)).exists()
    edit = web.get(response["Location"]).content.decode()
    assert "Dispatch note IRS2026000000002 · 1: 100 dispatched · 80 accepted" in edit
    detail = web.get(reverse("invoices:invoice_detail", kwargs={"pk": invoice.pk})).content.decode()
    assert 'id="invoice-dispatch-notes"' in detail and 'data-despatch-number="IRS2026000000001"' in detail


def test_notes_of_two_customers_are_refused_on_the_page(web, company):
    mine, theirs = note(company, "IRS2026000000001"), note(company, "IRS2026000000002", identifier=OTHER_VKN)
    page = page_of(web, mine, theirs).content.decode()
    assert 'id="from-dispatch-refusal"' in page and "An invoice bills one customer" in page
    assert 'id="from-dispatch-confirm"' not in page
    response = page_of(web, mine, theirs, method="post", data={"confirm": "1"})
    assert response.status_code == 400 and "An invoice bills one customer" in response.content.decode()
    assert not Invoice.objects.exists()


def test_a_note_not_approved_yet_is_refused(web, company):
    waiting = note(company, "IRS2026000000001", status=70)
    page = page_of(web, waiting).content.decode()
    assert "Only notes the receiver approved (or accepted in part) are invoiced here" in page
    assert "IRS2026000000001 (Awaiting approval)" in page
    with pytest.raises(from_dispatch.FromDispatchRefused):
        from_dispatch.invoice_from_notes([waiting])
    assert not Invoice.objects.exists()


def test_a_note_rejected_in_full_has_nothing_to_invoice(company):
    made = note(company, "IRS2026000000001", lines=((3, "10"),))
    partial_answer(made, {1: ("0", "3", "Yanlış ürün")})
    with pytest.raises(from_dispatch.FromDispatchRefused, match="rejected every line"):
        from_dispatch.invoice_from_notes([made])
    assert not Invoice.objects.exists() and not DispatchReference.objects.exists()


def test_a_note_already_invoiced_needs_the_confirmation_naming_the_first_invoice(web, company):
    made = note(company, "IRS2026000000001")
    first = from_dispatch.invoice_from_notes([made])
    page = page_of(web, made).content.decode()
    assert 'id="from-dispatch-before"' in page and f"IRS2026000000001 is billed by invoice {first}" in page
    response = confirm(web, made)
    assert response.status_code == 400 and "Tick this to invoice notes another invoice already bills." in \
        response.content.decode()
    assert Invoice.objects.count() == 1
    with pytest.raises(from_dispatch.FromDispatchRefused, match=f"IRS2026000000001 by invoice {first.ettn[:8]}"):
        from_dispatch.invoice_from_notes([made])
    response = confirm(web, made, again="1")
    assert response.status_code == 302, response.content.decode() and Invoice.objects.count() == 2
    made.refresh_from_db()
    assert made.invoiced_target == f"invoices.invoice:{first.pk}"  # the first invoice is the one shown


def test_a_double_submission_makes_one_draft(web, company):
    made = note(company, "IRS2026000000001")
    fields = guard_fields(page_of(web, made, method="post").content.decode())
    data = {**fields, "confirm": "1"}
    first = page_of(web, made, method="post", data=data)
    second = page_of(web, made, method="post", data=data)
    assert Invoice.objects.count() == 1
    assert second.status_code == 302 and second["Location"] == first["Location"]


def test_another_companys_note_is_a_404_and_a_manager_is_refused(client, web, company, other_company):
    theirs = note(other_company, "IRS2026000000009")
    assert page_of(web, theirs).status_code == 404
    assert page_of(web, theirs, method="post", data={"confirm": "1"}).status_code == 404
    manager = login(client, make_user("boss", "manager", [company]), company)
    assert page_of(manager, note(company, "IRS2026000000001")).status_code == 403
    assert not Invoice.objects.exists()


def test_a_deleted_or_declined_invoice_frees_its_notes(company, django_capture_on_commit_callbacks):
    made = note(company, "IRS2026000000001")
    invoice = from_dispatch.invoice_from_notes([made])
    with django_capture_on_commit_callbacks(execute=True):
        invoice.delete()
    made.refresh_from_db()
    assert made.invoiced_as == "" and invoicing.days_left(made) == 5
    again = from_dispatch.invoice_from_notes([made])  # no confirmation needed: nothing bills it now
    Invoice.objects.filter(pk=again.pk).update(remote_status=InvoiceStatus.DECLINED)
    assert from_dispatch.sync_notes(company) == 1
    made.refresh_from_db()
    assert made.invoiced_as == ""
    Invoice.objects.filter(pk=again.pk).update(remote_status=InvoiceStatus.ERROR)  # corrected and sent again
    from_dispatch.sync_notes(company)
    made.refresh_from_db()
    assert made.invoiced_as == f"{again.ettn[:8]}…"


def test_the_number_given_later_is_what_the_note_shows(company):
    made = note(company, "IRS2026000000001")
    invoice = from_dispatch.invoice_from_notes([made])
    Invoice.objects.filter(pk=invoice.pk).update(invoice_number="ABC2026000000007", remote_status=60)
    from_dispatch.sync_notes(company)
    made.refresh_from_db()
    assert made.invoiced_as == "ABC2026000000007"


def test_a_draft_without_a_prefix_is_not_sent(company):
    made = note(company, "IRS2026000000001")
    invoice = from_dispatch.invoice_from_notes([made])
    assert invoice.prefix == ""  # the company never wrote an invoice: nothing to take it from
    assert services.send_refusal(invoice) == "Give the number prefix: edit the draft first."
    Invoice.objects.create(company=company, is_send=True, prefix="FTR", ettn="x")
    made_too = note(company, "IRS2026000000002")
    assert from_dispatch.invoice_from_notes([made_too]).prefix == "FTR"


def test_the_note_page_offers_it_and_shows_the_invoice(web, company):
    made = note(company, "IRS2026000000001")
    detail = reverse("dispatch:dispatchnote_detail", kwargs={"pk": made.pk})
    page = web.get(detail).content.decode()
    assert f'href="{URL}?pk={made.pk}"' in page and 'data-days-left="5"' in page
    invoice = from_dispatch.invoice_from_notes([made])
    page = web.get(detail).content.decode()
    assert 'id="dispatch-invoiced"' in page and reverse("invoices:invoice_detail", kwargs={"pk": invoice.pk}) in page


# --- the 7-day watch ---------------------------------------------------------------------------------------------
def listed(web, **query):
    return web.get(reverse("dispatch:dispatchnote_list"), query).content.decode()


def test_the_list_filters_by_the_days_left_to_invoice(web, company):
    note(company, "IRS2026000000001", days_ago=2)  # 5 days left
    note(company, "IRS2026000000002", days_ago=6)  # runs out tomorrow
    note(company, "IRS2026000000003", days_ago=9)  # 2 days late
    note(company, "IRS2026000000004", days_ago=1, status=80)  # rejected: not to be invoiced
    invoiced = note(company, "IRS2026000000005", days_ago=1)
    from_dispatch.invoice_from_notes([invoiced])

    def numbers(value):
        page = listed(web, invoicing=value)
        return {f"IRS202600000000{n}" for n in range(1, 6) if f"IRS202600000000{n}" in page}

    assert numbers("open") == {"IRS2026000000001", "IRS2026000000002"}
    assert numbers("last_day") == {"IRS2026000000002"}
    assert numbers("overdue") == {"IRS2026000000003"}
    assert numbers("not_invoiced") == {"IRS2026000000001", "IRS2026000000002", "IRS2026000000003"}
    assert numbers("invoiced") == {"IRS2026000000005"}
    page = listed(web)
    assert 'data-days-left="5"' in page and 'data-days-left="-2"' in page and "data-invoiced" in page
    assert "Invoice the notes" in page  # the list's bulk button


def test_the_daily_check_marks_what_runs_out_tomorrow(web, company):
    today = core_dashboard.today()
    tomorrow_last = note(company, "IRS2026000000001", days_ago=6)
    later = note(company, "IRS2026000000002", days_ago=2)
    assert "1 dispatch note(s)" in invoicing.deadlines_mark(today)
    assert "0 dispatch note(s)" in invoicing.deadlines_mark(today)  # marked once
    assert DispatchNote.objects.get(pk=tomorrow_last.pk).deadline_marked_on == today
    assert DispatchNote.objects.get(pk=later.pk).deadline_marked_on is None
    assert listed(web).count("data-deadline-marked") == 1


def incoming(company, number, *, days_ago, status=70):
    return IncomingNote.objects.create(company=company, remote_id=f"in-{number}", remote_status=status,
                                       despatch_number=number, sync_state=SyncState.SYNCED,
                                       received_at=timezone.now() - timedelta(days=days_ago, hours=1))


def test_incoming_notes_filtered_and_marked_by_the_days_left_to_answer(web, company):
    incoming(company, "GLN2026000000001", days_ago=1)
    incoming(company, "GLN2026000000002", days_ago=6)
    incoming(company, "GLN2026000000003", days_ago=9)
    incoming(company, "GLN2026000000004", days_ago=6, status=60)  # answered

    def numbers(value):
        page = web.get(reverse("dispatch_inbox:incomingnote_list"), {"answer_due": value}).content.decode()
        return {f"GLN202600000000{n}" for n in range(1, 5) if f"GLN202600000000{n}" in page}

    assert numbers("open") == {"GLN2026000000001", "GLN2026000000002"}
    assert numbers("last_day") == {"GLN2026000000002"}
    assert numbers("overdue") == {"GLN2026000000003"}
    assert "1 incoming dispatch note(s)" in watch.answer_deadlines_mark(core_dashboard.today())
    assert IncomingNote.objects.filter(deadline_marked_on__isnull=False).get().despatch_number == "GLN2026000000002"
    page = web.get(reverse("dispatch_inbox:incomingnote_list"), {"answer_due": "last_day"}).content.decode()
    assert "data-deadline-marked" in page


def test_a_partial_acceptance_whose_reply_is_not_read_is_not_invoiced(web, company):
    made = note(company, "IRS2026000000001", status=90)  # partly accepted; the reply's lines not read yet
    page = page_of(web, made).content.decode()
    assert "lines are not read yet: IRS2026000000001" in page and 'id="from-dispatch-confirm"' not in page
    with pytest.raises(from_dispatch.FromDispatchRefused, match="not read yet"):
        from_dispatch.invoice_from_notes([made])
    assert not Invoice.objects.exists()


def test_notes_invoiced_elsewhere_leave_the_watch_and_come_back(web, company):
    old = note(company, "IRS2026000000001", days_ago=40)  # invoiced before the back office, in another program
    ours = note(company, "IRS2026000000002", days_ago=1)
    invoice = from_dispatch.invoice_from_notes([ours])
    bulk = reverse("dispatch:dispatchnote_bulk", kwargs={"action": "invoiced_elsewhere"})
    response = web.post(bulk, {"pk": [old.pk, ours.pk], "confirm": "1"})
    assert response.status_code == 302
    old.refresh_from_db()
    ours.refresh_from_db()
    assert old.invoiced_as == invoicing.ELSEWHERE and old.invoiced_target == ""
    assert ours.invoiced_target == f"invoices.invoice:{invoice.pk}"  # an invoice of ours is not overwritten
    assert "Invoiced elsewhere" in listed(web, invoicing="invoiced")
    assert "IRS2026000000001" not in listed(web, invoicing="overdue")
    from_dispatch.sync_notes(company)  # the daily reconciliation leaves the user's word alone
    old.refresh_from_db()
    assert old.invoiced_as == invoicing.ELSEWHERE
    back = reverse("dispatch:dispatchnote_bulk", kwargs={"action": "not_invoiced_elsewhere"})
    web.post(back, {"pk": [old.pk, ours.pk], "confirm": "1"})
    old.refresh_from_db()
    ours.refresh_from_db()
    assert old.invoiced_as == "" and ours.invoiced_target == f"invoices.invoice:{invoice.pk}"
    assert "IRS2026000000001" in listed(web, invoicing="overdue")


def test_the_mark_shows_only_while_the_last_day_is_ahead(company):
    made = note(company, "IRS2026000000001", days_ago=6)
    invoicing.deadlines_mark(core_dashboard.today())
    made.refresh_from_db()
    assert invoicing.marked(made)
    assert not invoicing.marked(made, core_dashboard.today() + timedelta(days=3))  # late now: no "by tomorrow"
