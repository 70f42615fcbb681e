"""The main pages at a desktop width (1400 px) and a phone's (390 px), with a working day's data and its
worst cases (a long company name, huge amounts): the page never scrolls sideways, and no status badge of a
table is clipped or pushed out of sight (issue 9, point 7).

`SCREENSHOTS=1` (or scripts/screenshots.py) saves every page at both widths into docs/screenshots/."""

import os
from datetime import timedelta
from decimal import Decimal

import pytest
from django.contrib.auth.models import Group
from django.utils import timezone

from backoffice.core.choices import JobStatus, Role, SyncState
from backoffice.core.models import JobRun
from backoffice.core.reports import ReportState
from backoffice.chart_of_accounts.models import Account
from backoffice.current_accounts.models import Address, Bank, CurrentAccount, Mapping
from backoffice.invoices.models import Invoice, InvoiceLine
from backoffice.passenger_lists.models import PassengerList
from backoffice.subcompanies import services as subcompany_services
from backoffice.subcompanies.models import SubCompany, UsageSnapshot
from backoffice.tickets.choices import TicketKind, TicketStatus
from backoffice.tickets.models import EventTicket, EventTicketReportItem, PassengerTicket, ReportRun
from tests.browser.conftest import CHROMIUM, SCREENSHOT_DIR
from tests.conftest import make_user
from tests.subcompanies.conftest import SCALE, new_vkn
from tests.tickets.conftest import VKN

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's Chromium at /usr/bin/chromium"),
    pytest.mark.django_db(transaction=True),
]

WIDTHS = {1400: 900, 390: 844}
TCKN = "10000000146"

# (screenshot name, path or a function of the data giving it, the element that says the page is ready)
PAGES = [
    ("dashboard", "/", "main h1"),
    ("tickets-list", "/tickets/event/", "#object-list tbody tr"),
    ("passenger-tickets-list", "/tickets/passenger/", "#object-list tbody tr"),
    ("ticket-edit", lambda d: f"/tickets/event/{d['ticket'].pk}/edit/", "#ticket-form"),
    ("ticket-new", "/tickets/event/add/", "#ticket-form"),
    ("ticket-detail", lambda d: f"/tickets/event/{d['ticket'].pk}/", "main h1"),
    ("report", lambda d: f"/tickets/reports/event/?date={d['report_date']:%Y-%m-%d}", "main h1"),
    ("passenger-lists", "/passenger-lists/lists/", "#object-list tbody tr"),
    ("subcompanies-list", "/sub-companies/", "#object-list tbody tr"),
    ("subcompany-detail", lambda d: f"/sub-companies/{d['subcompany'].pk}/", "main h1"),
    ("subcompany-products", lambda d: f"/sub-companies/{d['subcompany'].pk}/products/", "main form"),
    ("usage-dashboard", "/sub-companies/usage/", "main h1"),
    ("jobs", "/jobs/", "#object-list tbody tr"),
    ("subcompany-new", "/sub-companies/add/", "main form"),
    ("company", lambda d: f"/companies/{d['company'].pk}/", "main h1"),
    ("company-edit", lambda d: f"/companies/{d['company'].pk}/edit/", "main form"),
    ("members", "/members/", "#object-list tbody tr"),
    ("series", "/series/", "#series-start"),
    ("accounts-list", "/current-accounts/accounts/", "#object-list tbody tr"),
    ("account-detail", lambda d: f"/current-accounts/accounts/{d['account'].pk}/?tab=bank", "#account-tabs"),
    ("account-new", "/current-accounts/accounts/add/", "#account-form"),
    ("accounts-import", "/current-accounts/accounts/import/", "#import-form"),
    ("chart-of-accounts", "/chart-of-accounts/accounts/", "#object-list tbody tr"),
    ("chart-uniform", "/chart-of-accounts/accounts/uniform/", "#uniform-form"),
    ("invoices-list", "/invoices/", "#object-list tbody tr"),
    ("invoice-form", "/invoices/add/", "#invoice-form"),
    ("invoice-detail", lambda d: f"/invoices/{d['invoice'].pk}/", "#invoice-lines"),
    ("invoice-edit", lambda d: f"/invoices/{d['draft_invoice'].pk}/edit/", "#invoice-form"),
    ("invoice-draft", lambda d: f"/invoices/{d['draft_invoice'].pk}/", "#invoice-draft"),
    ("invoice-send-confirm", lambda d: f"/invoices/bulk/send/?pk={d['draft_invoice'].pk}", "#send-confirm"),
    ("dispatch-list", "/dispatch/", "#object-list tbody tr"),
    ("dispatch-form", "/dispatch/add/", "#dispatch-form"),
    ("dispatch-detail", lambda d: f"/dispatch/{d['dispatch_note'].pk}/", "#dispatch-lines"),
    ("dispatch-edit", lambda d: f"/dispatch/{d['dispatch_draft'].pk}/edit/", "#dispatch-form"),
    ("dispatch-send-confirm", lambda d: f"/dispatch/bulk/send/?pk={d['dispatch_draft'].pk}", "#send-confirm"),
    ("dispatch-upload", "/dispatch/upload/", "#ubl-upload-form"),
    ("dispatch-incoming", "/dispatch/incoming/?view=awaiting", "#object-list tbody tr"),
    ("dispatch-incoming-detail", lambda d: f"/dispatch/incoming/{d['incoming'].pk}/", "#incoming-lines"),
    ("dispatch-incoming-partial", lambda d: f"/dispatch/incoming/{d['incoming'].pk}/partial/", "#partial-form"),
    ("dispatch-receipts", "/dispatch/receipts/", "#object-list tbody tr"),
    ("ledger-periods", "/ledger/", "#object-list tbody tr"),
    ("ledger-period", lambda d: f"/ledger/{d['period'].pk}/", "#period-parts"),
    ("ledger-journal-new", "/ledger/journals/add/", "#journal-form"),
    ("ledger-journal-errors", lambda d: f"/ledger/journals/{d['journal'].pk}/", "#journal-findings"),
]

# Every page's own checks, run in the browser: the page does not scroll sideways; each badge in a table is
# inside the visible part of its (scrollable) table box and shows its whole text.
LAYOUT_PROBLEMS = """() => {
  const problems = [];
  const root = document.documentElement;
  if (root.scrollWidth > window.innerWidth) {
    const wide = [...document.querySelectorAll("main *")].filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1)
      .slice(0, 3).map((e) => e.tagName + "." + [...e.classList].join("."));
    problems.push("the page scrolls sideways: " + root.scrollWidth + " > " + window.innerWidth + " " + wide.join(", "));
  }
  document.querySelectorAll("main table td .badge").forEach((badge) => {
    if (!badge.offsetParent) { return; }  // hidden (a secondary column on a phone, a collapsed card)
    const box = badge.closest(".table-responsive") || badge.closest("table");
    const outer = box.getBoundingClientRect(), rect = badge.getBoundingClientRect();
    const text = badge.textContent.trim();
    if (rect.right > outer.right + 1 || rect.left < outer.left - 1) {
      problems.push("badge out of sight: " + text + " (" + Math.round(rect.left) + "-" + Math.round(rect.right) + " in " + Math.round(outer.left) + "-" + Math.round(outer.right) + ")");
    } else if (badge.scrollWidth > badge.clientWidth + 1) {
      problems.push("badge clipped: " + text);
    }
  });
  document.querySelectorAll("main input.form-control").forEach((input) => {
    if (!input.offsetParent || input.type === "hidden") { return; }
    if (input.getBoundingClientRect().width < 56) { problems.push("input too narrow: " + input.name); }
  });
  return problems;
}"""


@pytest.fixture
def day(sandbox, make_sandbox_company, settings):
    """A company with a long name, tickets with huge and ordinary amounts in every status, a report, a passenger
    list, sub-companies from the sandbox's usage report, jobs and members."""
    for role in Role:
        Group.objects.get_or_create(name=role.value)
    settings.RATE_LIMIT_SCALE = SCALE
    sandbox.configure(rate_limit_scale=SCALE)
    company = make_sandbox_company(credits=250_000, name="Anadolu Etkinlik Organizasyon ve Turizm Ticaret A.Ş.")
    owner = str(company.customer_unique_id)
    for name, credit, used in (("Ege Gıda Sanayi ve Ticaret Ltd. Şti.", 20_000, 23_500),
                               ("Karadeniz Turizm A.Ş.", 12_000, 4_250)):
        sandbox.control("POST", "crm/sub-customers", {"customer_unique_id": owner, "identifier": new_vkn(),
                                                      "name": name, "credit": credit, "used": used})
    make_user("ayse", Role.ADMINISTRATOR, [company])
    make_user("mehmet", Role.MANAGER, [company])
    make_user("zeynep", Role.ACCOUNTING, [company])

    now = timezone.now()
    rows = [("Gece Konseri — Büyük Salon Özel Gösterim", "Mehmet", "Kaya", TicketStatus.APPROVED, "1840.00"),
            ("Çocuk Tiyatrosu", "Elif", "Şahin", TicketStatus.ERROR, "360.00"),
            ("Caz Akşamı", "Can", "Öztürk", TicketStatus.CANCELLED, "720.50"),
            ("Yılbaşı Galası", "Ayşe", "Yılmaz-Karaosmanoğlu", TicketStatus.DRAFT, "9999999999.99"),
            ("Opera", "Ali", "Demir", None, "125075.00")]
    tickets = []
    for index, (event, first, last, status, payable) in enumerate(rows, start=1):
        tickets.append(EventTicket.objects.create(
            company=company, ticket_number=f"KNS2026{index:09d}", prefix="KNS", ticket_date=now, payment_type="NAKIT",
            customer_first_name=first, customer_last_name=last, event_name=event, event_location="Salon B",
            event_city_id=6, event_city="Ankara", event_municipality="Çankaya", event_organizer_vkn_tckn=VKN,
            seat_number=f"A-{index}", remote_id=f"00000000-0000-0000-0000-00000000000{index}" if status is not None
            else "", remote_status=status, requested_status=TicketStatus.QUEUED,
            sync_state=SyncState.SYNCED if status is not None else SyncState.FAILED, payable_amount=payable,
            total_amount=payable, customer_telephone="0532 123 45 67"))
    ticket = tickets[3]
    ticket.lines.create(position=1, service_description="Loca (10 kişilik)", amount=Decimal("8333333333.33"),
                        vat_rate=Decimal(20), vat_amount=Decimal("1666666666.67"))
    for index, status in enumerate((TicketStatus.APPROVED, TicketStatus.QUEUED), start=1):
        PassengerTicket.objects.create(
            company=company, ticket_number=f"OTB2026{index:09d}", prefix="OTB", ticket_date=now, payment_type="NAKIT",
            customer_first_name="Hasan", customer_last_name="Çelik", identifier=TCKN, vehicle_plate="34ABC123",
            expedition_number="S-1001", expedition_time=now, departure_date=now, departure_location="İstanbul",
            destination="Ankara", seat_number=str(index), remote_status=status, sync_state=SyncState.SYNCED,
            remote_id=f"00000000-0000-0000-0000-0000000001{index:02d}", payable_amount="400.00", total_amount="400.00")
    PassengerList.objects.create(company=company, expedition_number="S-1001", expedition_time=now,
                                 vehicle_plate="34ABC123", passenger_list_number="YL2026000000001",
                                 sync_state=SyncState.SYNCED, ticket_count=2, total_payable_amount="1234567.89")

    report_date = timezone.localdate() - timedelta(days=1)
    run = ReportRun.objects.create(company=company, kind=TicketKind.EVENT, report_date=report_date,
                                   state=ReportState.DONE, is_current=True, pages_done=1, total_pages=1,
                                   total_count=3, item_count=3, finished_at=now)
    for index, (amount, canceled) in enumerate((("1840.00", False), ("9999999999.99", True), ("360.00", False)), 1):
        EventTicketReportItem.objects.create(
            company=company, run=run, report_date=report_date, ticket_number=f"KNS2026{index:09d}",
            execution_date=now, event_date=now, location_city_code="6", location_municipality="Çankaya",
            location_description="Büyük Salon, Atatürk Kültür Merkezi", payment_type="NAKIT",
            total_amount=amount, total_vat=Decimal(amount) / 6, canceled=canceled,
            canceled_date=now if canceled else None, part_index=1, create_date=now)

    subcompany_services.usage_report_refresh(company.pk)
    snapshot = UsageSnapshot.objects.filter(company=company).first()
    assert isinstance(snapshot, UsageSnapshot)
    subcompany = SubCompany.objects.filter(company=company).order_by("name").first()
    assert subcompany is not None, "the sandbox's sub-companies are in the report"
    for status, name, message in ((JobStatus.SUCCEEDED, "event_ticket_push", "4 tickets changed."),
                                  (JobStatus.FAILED, "usage_report_refresh",
                                   "Platform şirketin kimlik bilgilerini kabul etmedi; bir yönetici şirket sayfasında düzeltmeli."),
                                  (JobStatus.QUEUED, "tickets_poll", "")):
        JobRun.objects.create(company=company, name=name, target="KNS2026000000001", status=status, message=message,
                              attempts=1, progress=100 if status == JobStatus.SUCCEEDED else None, started_at=now,
                              finished_at=now if status != JobStatus.QUEUED else None)
    account = accounting_day(company, now)
    invoice = invoicing_day(company, account, now)
    period, journal = ledger_day(company, now)
    dispatch_note = dispatch_day(company, account, now)
    from tests.dispatch.inbox_helpers import incoming_day

    incoming = incoming_day(company, now, ours=dispatch_note)
    from backoffice.dispatch.models import DispatchNote

    return {"company": company, "ticket": ticket, "report_date": report_date, "subcompany": subcompany,
            "account": account, "invoice": invoice, "period": period, "journal": journal,
            "dispatch_note": dispatch_note, "incoming": incoming, "draft_invoice": draft_invoice(company, account, now),
            "dispatch_draft": DispatchNote.objects.get(company=company, remote_status=0)}


def draft_invoice(company, account, now):
    """A local draft e-invoice (issue 29: saved, not sent) to a long mailbox, with one line."""
    draft = Invoice.objects.create(
        company=company, current_account=account, target_vkn_tckn=account.identifier, target_title=account.name,
        record_type=1, profile="TEMELFATURA", target_alias="urn:mail:efaturapostakutusu@egegidasanayiveticaret.com.tr",
        prefix="ABC", invoice_type="SATIS", issue_date=now.date(), description="Danışmanlık hizmeti",
        currency_code="TRY", payable_amount="1234567.89", tax_exclusive_amount="1028806.58", line_count=1,
        sync_state=SyncState.LOCAL, is_send=True)
    InvoiceLine.objects.create(invoice=draft, position=1, inventory_service_code="HZM-01", quantity="1",
                               unit_price="1028806.58", vat_rate="20", line_extension_amount="1028806.58",
                               vat_amount="205761.32")
    return draft


def accounting_day(company, now):
    """A chart from the uniform plan down to a sub-account, and a current account with its child lists (one bank
    record refused by the platform), as the mirror keeps them."""
    synced = {"sync_state": SyncState.SYNCED, "synced_at": now, "status_read_at": now}
    main = Account.objects.create(company=company, type=0, base_code="120", name="Alıcılar", remote_id="1", **synced)
    group = Account.objects.create(company=company, type=1, base_code="120", code="120", unit_code="01",
                                   name="Yurtiçi Alıcılar", parent=main, remote_id="2", **synced)
    sub = Account.objects.create(company=company, type=2, base_code="120", code="120.01", unit_code="001",
                                 name="Büyük Müşteriler (Havuz)", parent=group, currency_code_id=1,
                                 is_bundle_account=True, remote_id="3", **synced)
    for code, name in (("100", "Kasa"), ("102", "Bankalar"), ("320", "Satıcılar")):
        Account.objects.create(company=company, type=0, base_code=code, name=name)
    account = None
    for index, (name, identifier) in enumerate((("Ege Gıda Sanayi ve Ticaret Ltd. Şti.", VKN),
                                                ("Hasan Çelik", TCKN), ("İzmir Lojistik A.Ş.", "4840000006"))):
        created = CurrentAccount.objects.create(
            company=company, name=name, identifier=identifier, surname="Çelik" if len(identifier) == 11 else "",
            code=f"120.01.{index + 1:03d}", tax_office="Kadıköy", total_balance="1234567.89", remote_id=str(10 + index),
            details_read_at=now, **synced)
        account = account or created
    Address.objects.create(company=company, current_account=account, address_name="Merkez", city="İzmir",
                           sub_division_name="Bornova", country="Türkiye", phone_number="02324567890", is_default=True,
                           remote_id="20", **synced)
    Bank.objects.create(company=company, current_account=account, name="Ana hesap", bank_name="Ziraat Bankası",
                        iban_number="TR330006100519786457841326", is_default=True, remote_id="30", **synced)
    Bank.objects.create(company=company, current_account=account, name="Döviz hesabı", bank_name="İş Bankası",
                        sync_state=SyncState.FAILED, last_error="ibanNumber: The IBAN is not valid.")
    Mapping.objects.create(company=company, current_account=account, account=sub, name="Yurtiçi satışlar",
                           remote_id="40", **synced)
    return account


def invoicing_day(company, account, now):
    """Outgoing and incoming invoices in several states and currencies; the first one written here, with lines."""
    synced = {"sync_state": SyncState.SYNCED, "synced_at": now, "status_read_at": now, "detail_read_at": now}
    first = None
    for index, (status, posted, currency, payable) in enumerate((
            (60, 1, "TRY", "118450.00"), (20, 0, "USD", "2450.75"), (40, 0, "TRY", "980.00"), (60, 0, "EUR", "12000.00"))):
        invoice = Invoice.objects.create(
            company=company, remote_id=f"6f1c0a4e-0000-4000-8000-00000000010{index}", invoice_number=f"ABC202600000000{index + 1}",
            current_account=account, target_vkn_tckn=account.identifier, target_title=account.name, prefix="ABC",
            issue_date=now.date(), description="Danışmanlık hizmeti", currency_code=currency, remote_status=status,
            record_status=posted, payable_amount=payable, tax_exclusive_amount="100.00", line_count=1,
            status_message="Hata: alıcı etiketi bulunamadı." if status == 40 else "",
            exchange_rate="32.5" if currency != "TRY" else None, **synced)
        first = first or invoice
    for position, (code, quantity, price, vat, withholding) in enumerate((
            ("HZM-01", "3", "1250.50", "20", ""), ("URN-02", "12", "37.50", "10", "602")), start=1):
        InvoiceLine.objects.create(invoice=first, position=position, inventory_service_code=code, quantity=quantity,
                                   unit_price=price, vat_rate=vat, withholding_code=withholding,
                                   line_extension_amount="3751.50", vat_amount="750.30")
    Invoice.objects.create(company=company, remote_id="6f1c0a4e-0000-4000-8000-000000000200", is_send=False,
                           invoice_number="GLN2026000000042", record_type=1, profile="TICARIFATURA",
                           target_vkn_tckn="4840000006", target_title="İzmir Lojistik A.Ş.", issue_date=now.date(),
                           remote_status=70, payable_amount="5400.00", **synced)
    return first


def dispatch_day(company, account, now):
    """Outgoing dispatch notes in several states, the first with its lines and driver, one refused, one read from
    the platform's list."""
    from backoffice.dispatch.models import DispatchDriver, DispatchLine, DispatchNote

    synced = {"sync_state": SyncState.SYNCED, "synced_at": now, "status_read_at": now}
    first = None
    for index, (status, payable) in enumerate(((60, "6024.00"), (50, "118450.75"), (40, "980.00"), (0, "0.00"))):
        note = DispatchNote.objects.create(
            company=company, remote_id=f"7a2d0a4e-0000-4000-8000-00000000030{index}",
            despatch_number=f"IRS202600000000{index + 1}", prefix="IRS", current_account=account,
            receiver_identifier=account.identifier, receiver_name=account.name, target_alias="urn:mail:irsaliyepk@ege.com.tr",
            receiver_city="İzmir", receiver_district="Bornova", delivery_city="İzmir", delivery_district="Bornova",
            issue_date=now.date(), issue_time=now.time(), shipment_date=now, plate_number="35EGE2026",
            local_reference_id=f"ERP-SVK-{index + 1:05d}", remote_status=status, requested_status=20 if status else 0,
            payable_amount=payable, total_amount=payable, line_count=1,
            status_message="Alıcı posta kutusu bulunamadı." if status == 40 else "",
            envelope_id="b1f0c2d4-1111-4000-8000-000000000001" if status >= 50 else "",
            envelope_status="1000" if status >= 50 else "", **synced)
        first = first or note
    DispatchLine.objects.create(note=first, position=1, product_name="Çimento 50 kg", product_code="CIM-50",
                                quantity="40", unit_code="C62", unit_price="125.50", vat_rate="20",
                                line_amount="5020.00", vat_amount="1004.00")
    DispatchDriver.objects.create(note=first, position=1, name="Ayşe", surname="Yılmaz", tckn=TCKN)
    DispatchNote.objects.create(company=company, despatch_number="", local_reference_id="ERP-SVK-00009",
                                receiver_identifier=account.identifier, receiver_name=account.name,
                                issue_date=now.date(), sync_state=SyncState.FAILED,
                                last_error="addressBook.alias: Alıcının posta kutusu bulunamadı.")
    return first


def ledger_day(company, now):
    """E-ledger periods in several states (January and February approved, March ready with its parts, April being
    converted) and a May journal whose check found errors."""
    from datetime import date

    from backoffice.ledger.models import BookEntry, Finding, Journal, Part, Period

    synced = {"sync_state": SyncState.SYNCED, "synced_at": now}
    ready = None
    for month, status, task, progress in ((1, 60, 3, 100), (2, 60, 3, 100), (3, 30, 3, 100), (4, 20, 2, 20)):
        last = (date(2025, month + 1, 1) - date.resolution)
        period = Period.objects.create(company=company, remote_id=str(1200 + month), remote_status=status,
                                       fiscal_year_start=date(2025, month, 1), fiscal_year_end=last, split_size=10,
                                       task_status=task, task_progress=progress, parts_read_at=now,
                                       task_message="Metin XML'e dönüştürülüyor" if status == 20 else "", **synced)
        if status == 30:
            ready = period
    for index in range(1, 4):
        part = Part.objects.create(company=company, period=ready, remote_id=str(50 + index), index_number=index,
                                   period_covered_start=date(2025, 3, 1 + (index - 1) * 10),
                                   period_covered_end=date(2025, 3, 10 * index), entry_number_start=1 + 4000 * (index - 1),
                                   entry_number_end=4000 * index, line_number_start=1 + 9000 * (index - 1),
                                   line_number_end=9000 * index, debit="4812345.67", credit="4812345.67")
        for kind in (1, 2):
            BookEntry.objects.create(company=company, part=part, remote_id=f"{part.remote_id}{kind}",
                                     generalbook_type=kind, status=10)
    journal = Journal.objects.create(
        company=company, start_date=date(2025, 5, 1), end_date=date(2025, 5, 31), source_kind="xlsx",
        source_name="mayis-yevmiye.xlsx", check_state="errors", check_progress=100, line_count=1204,
        entry_count=401, debit_total="912450.00", credit_total="912437.50", first_date=date(2025, 5, 2),
        last_date=date(2025, 5, 30), entity_identifier="1234567890", findings_count=3,
        findings_by_rule={"debit_credit_code": 1, "amount_format": 1, "main_account": 1})
    for line, row, field, column, rule, found, expected in (
            (14, 10, "debitCreditCode", 8, "debit_credit_code", "X", "D, C"),
            (212, 142, "amount", 7, "amount_format", "12,50", "12.50"),
            (905, 604, "accountMainID", 3, "main_account", "12001", "3 ya da 4 karakter")):
        Finding.objects.create(journal=journal, line=line, row=row, field=field, column=column, rule=rule,
                               found=found, expected=expected)
    return ready, journal


def sign_in(page, url, username):
    page.goto(f"{url}/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", f"pass-{username}")
    page.click("button[type=submit]")
    page.wait_for_url(f"{url}/")


@pytest.mark.slow
@pytest.mark.parametrize("width", list(WIDTHS))
def test_main_pages_fit_the_screen(live_server, browser_page, day, width):
    """Slow (over 10 s): every main page opened and measured in a real browser at this width."""
    page = browser_page
    page.set_viewport_size({"width": width, "height": WIDTHS[width]})
    sign_in(page, live_server.url, "ayse")
    problems = {}
    for name, path, ready in PAGES:
        page.goto(live_server.url + (path(day) if callable(path) else path))
        page.wait_for_selector(ready, state="attached")
        page.wait_for_load_state("load")
        found = page.evaluate(LAYOUT_PROBLEMS)
        if found:
            problems[name] = found
        SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOT_DIR / f"{name}-{width}.png"), full_page=True)
    assert not problems, "\n".join(f"{name}: {found}" for name, found in problems.items())


# Every control of the page's main form is the topmost element at its centre: nothing covers it.
COVERED_CONTROLS = """() => [...document.querySelectorAll("main form input:not([type=hidden]), main form button, main form select")]
  .filter((e) => e.offsetParent)
  .filter((e) => { const r = e.getBoundingClientRect();
                   const top = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
                   return top !== e && !e.contains(top) && !(top && top.tagName === "LABEL" && top.control === e); })
  .map((e) => e.name || e.textContent.trim())"""


@pytest.mark.parametrize("width", list(WIDTHS))
def test_products_form_after_an_error(live_server, browser_page, day, width):
    """The products form sent without a product comes back with the message on the field; every checkbox
    can still be ticked and nothing covers the submit button."""
    page = browser_page
    page.set_viewport_size({"width": width, "height": WIDTHS[width]})
    sign_in(page, live_server.url, "ayse")
    page.goto(f"{live_server.url}/sub-companies/{day['subcompany'].pk}/products/")
    page.click("main form button[type=submit]")
    page.wait_for_selector("#id_product_types_errors")
    SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOT_DIR / f"subcompany-products-error-{width}.png"), full_page=True)
    boxes = page.locator("main form input[name=product_types]")
    for index in range(boxes.count()):
        boxes.nth(index).scroll_into_view_if_needed()
        assert page.evaluate(COVERED_CONTROLS) == []
    boxes.first.check()
    assert boxes.first.is_checked()
    assert page.evaluate(LAYOUT_PROBLEMS) == []
