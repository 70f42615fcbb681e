"""The dashboard's blocks of the newer areas (issue 29, section 4): this month's invoices by status with their
totals per currency, incoming dispatch notes waiting for an answer, our notes within their 7-day invoicing window,
the e-ledger's months, the accounts not on the platform yet or refused. Each block with data, its links to the
filtered lists (followed, to see that they list what the block counted), its empty state, company scoping, every
role, and the query budget. "Today" is fixed at 18 March 2026 (Istanbul) so that months and days left are known."""

import re
from datetime import date, datetime, timedelta
from datetime import timezone as dt_timezone
from decimal import Decimal
from html import unescape
from zoneinfo import ZoneInfo

import pytest
from django.urls import reverse

from backoffice.chart_of_accounts.models import Account
from backoffice.core import dashboard
from backoffice.core.choices import SyncState
from backoffice.current_accounts.models import CurrentAccount
from backoffice.dispatch import invoicing as dispatch_invoicing
from backoffice.dispatch.models import DispatchNote
from backoffice.dispatch_inbox.models import IncomingNote
from backoffice.invoices.models import Invoice
from backoffice.ledger.models import Journal, Period
from tests.conftest import make_user
from tests.tickets.conftest import login

# The database engine matters here (aggregates computed by the database): CI's SQLite pass runs these too.
pytestmark = pytest.mark.database

TODAY = date(2026, 3, 18)
ISTANBUL = ZoneInfo("Europe/Istanbul")


@pytest.fixture(autouse=True)
def fixed_today(monkeypatch):
    monkeypatch.setattr(dashboard, "today", lambda: TODAY)


def page_of(client, user, company):
    login(client, user, company, language="tr")
    response = client.get(reverse("core:dashboard"))
    assert response.status_code == 200
    return response.content.decode()


def block(page, element_id):
    """The HTML of one block (its card, up to the next block's column)."""
    start = page.index(f'id="{element_id}"')
    end = page.find('data-block="', start)
    return page[start:end if end != -1 else len(page)]


def links(html):
    return [unescape(href) for href in re.findall(r'href="([^"]+)"', html)]


def listed(client, url):
    response = client.get(url)
    assert response.status_code == 200, url
    return response.content.decode()


# --- data in every block ----------------------------------------------------------------------------------------
def invoice(company, number, *, status, amount, currency="TRY", is_send=True, day=TODAY, **fields):
    return Invoice.objects.create(company=company, invoice_number=number, remote_status=status, is_send=is_send,
                                  issue_date=day, currency_code=currency, payable_amount=Decimal(amount),
                                  sync_state=SyncState.SYNCED if status is not None else SyncState.LOCAL, **fields)


def incoming(company, number, received_at, status=70):
    return IncomingNote.objects.create(company=company, remote_id=f"id-{number}", despatch_number=number,
                                       sender_title=f"Gönderen {number}", remote_status=status,
                                       received_at=received_at, sync_state=SyncState.SYNCED)


def outgoing(company, number, issue_date, status=60):
    return DispatchNote.objects.create(company=company, remote_id=f"id-{number}", despatch_number=number,
                                       receiver_name=f"Alıcı {number}", remote_status=status, issue_date=issue_date,
                                       sync_state=SyncState.SYNCED)


def period(company, month, status, year=2026):
    last = (date(year, month % 12 + 1, 1) if month < 12 else date(year + 1, 1, 1)) - timedelta(days=1)
    return Period.objects.create(company=company, remote_id=f"p-{company.pk}-{month}-{status}", remote_status=status,
                                 fiscal_year_start=date(year, month, 1), fiscal_year_end=last,
                                 sync_state=SyncState.SYNCED)


@pytest.fixture
def full(company):
    """A company with something in every block."""
    invoice(company, "ABC2026000000001", status=60, amount="1000.50")
    invoice(company, "ABC2026000000002", status=60, amount="250.25")
    invoice(company, "ABC2026000000003", status=60, amount="100.00", currency="USD")
    invoice(company, "ABC2026000000004", status=40, amount="5000.00")
    invoice(company, "ABC2026000000005", status=None, amount="75.00")
    invoice(company, "XYZ2026000000001", status=70, amount="320.00", is_send=False, day=date(2026, 3, 1))
    invoice(company, "ABC2026000000099", status=40, amount="9.99", day=date(2026, 2, 28))  # last month
    # received 10 March 22:30 UTC = 11 March 01:30 in Istanbul: due 18 March, the last day today
    incoming(company, "GLN2026000000001", datetime(2026, 3, 10, 22, 30, tzinfo=dt_timezone.utc))
    incoming(company, "GLN2026000000002", datetime(2026, 3, 5, 9, 0, tzinfo=ISTANBUL))  # due 12 March: 6 late
    incoming(company, "GLN2026000000003", datetime(2026, 3, 16, 9, 0, tzinfo=ISTANBUL))  # due 23 March: 5 left
    incoming(company, "GLN2026000000004", datetime(2026, 3, 1, 9, 0, tzinfo=ISTANBUL), status=60)  # answered
    outgoing(company, "IRS2026000000001", date(2026, 3, 16))  # 5 days left
    outgoing(company, "IRS2026000000002", date(2026, 3, 1), status=65)  # due 8 March: 10 days late
    outgoing(company, "IRS2026000000003", date(2026, 2, 1))  # ran out 8 February: over 30 days ago
    outgoing(company, "IRS2026000000004", date(2026, 3, 17), status=80)  # rejected: nothing to invoice
    outgoing(company, "IRS2026000000005", date(2026, 3, 17), status=0)  # a draft: not sent
    period(company, 1, 60)
    period(company, 2, 40)
    Journal.objects.create(company=company, start_date=date(2026, 3, 1), end_date=date(2026, 3, 31),
                           source_kind="txt", source_name="mart.txt", source="ledger/journals/mart.txt",
                           check_state="checking")
    CurrentAccount.objects.create(company=company, name="Yeni Cari", identifier="1234567890",
                                  sync_state=SyncState.LOCAL)
    CurrentAccount.objects.create(company=company, name="Reddedilen Cari", identifier="1234567890", code="R1",
                                  sync_state=SyncState.FAILED, last_error="Vergi numarası geçersiz")
    CurrentAccount.objects.create(company=company, name="Platformdaki Cari", identifier="9876543217",
                                  sync_state=SyncState.SYNCED)
    Account.objects.create(company=company, type=0, base_code="120", name="Alıcılar", full_code="120",
                           sync_state=SyncState.FAILED)
    return company


def test_invoices_of_the_month_by_status_with_totals_per_currency(client, accountant, full):
    html = block(page_of(client, accountant, full), "dashboard-invoices")
    assert "Mart 2026" in html
    outgoing_table = html[html.index('data-direction="out"'):html.index('data-direction="in"')]
    # the erroneous status first, then the approved ones with TRY and USD apart, then the one not yet sent
    assert outgoing_table.index("Hata") < outgoing_table.index("Onaylandı") < outgoing_table.index(
        "Henüz platformda değil")
    assert "1.250,75 TRY" in outgoing_table and "100,00 USD" in outgoing_table
    assert "1.350,75" not in outgoing_table  # TRY and USD never added
    assert "6.325,75 TRY" in outgoing_table  # the month's outgoing total in TRY: 1000,50 + 250,25 + 5000 + 75
    assert "9,99" not in html  # last month's invoice
    assert "320,00 TRY" in html[html.index('data-direction="in"'):]


def test_invoice_links_list_what_the_block_counted(client, accountant, full):
    html = block(page_of(client, accountant, full), "dashboard-invoices")
    urls = links(html)
    error_url = next(url for url in urls if "remote_status=40" in url)
    assert "direction=out" in error_url and "date_from=2026-03-01" in error_url and "date_to=2026-03-31" in error_url
    error_list = listed(client, error_url)
    assert "ABC2026000000004" in error_list and "ABC2026000000099" not in error_list
    assert "ABC2026000000001" not in error_list
    unsent_list = listed(client, next(url for url in urls if "on_platform=false" in url))
    assert "ABC2026000000005" in unsent_list and "ABC2026000000004" not in unsent_list


def test_incoming_notes_waiting_with_days_left_in_istanbul_dates(client, manager, full):
    html = block(page_of(client, manager, full), "dashboard-dispatch-incoming")
    assert "GLN2026000000004" not in html  # answered
    # the oldest first; received just after midnight in Istanbul counts from that Istanbul day
    assert html.index("GLN2026000000002") < html.index("GLN2026000000001") < html.index("GLN2026000000003")
    assert 'data-days-left="-6"' in html and "6 gün gecikti" in html and "table-danger" in html
    assert 'data-days-left="0"' in html and "bugün son gün" in html
    assert 'data-days-left="5"' in html and "5 gün kaldı" in html
    assert "1 gecikmiş" in html
    url = next(url for url in links(html) if "view=awaiting" in url)
    waiting = listed(client, url)
    assert "GLN2026000000001" in waiting and "GLN2026000000004" not in waiting


def test_outgoing_notes_in_their_invoicing_window(client, accountant, full):
    html = block(page_of(client, accountant, full), "dashboard-dispatch-invoicing")
    assert "7 günlük fatura düzenleme süresi" in html
    assert "IRS2026000000002" in html and "IRS2026000000001" in html
    assert html.index("IRS2026000000002") < html.index("IRS2026000000001")  # the fewest days left first
    assert 'data-days-left="-10"' in html and "10 gün gecikti" in html and 'data-days-left="5"' in html
    for gone in ("IRS2026000000003", "IRS2026000000004", "IRS2026000000005"):
        assert gone not in html  # ran out long ago, rejected, a draft
    assert "Faturalaştır" in html  # how a note leaves the list
    url = next(url for url in links(html) if "view=to_invoice" in url)
    notes = listed(client, url)
    assert "IRS2026000000001" in notes and "IRS2026000000002" in notes
    assert "IRS2026000000003" not in notes and "IRS2026000000004" not in notes and "IRS2026000000005" not in notes


def test_an_invoiced_note_leaves_the_window(full):
    """Whether a note is invoiced is decided in one place (dispatch.invoicing.not_invoiced): what the invoices domain
    told the watch."""
    notes = DispatchNote.objects.filter(company=full)
    assert list(dispatch_invoicing.not_invoiced(notes)) == list(notes)
    window = dispatch_invoicing.invoicing_window(notes, TODAY)
    assert {note.despatch_number for note in window} == {"IRS2026000000001", "IRS2026000000002"}
    note = notes.get(despatch_number="IRS2026000000002")
    assert dispatch_invoicing.set_invoiced(full, {note.pk: ("ABC2026000000001", "invoices.invoice:1")}) == 1
    window = dispatch_invoicing.invoicing_window(notes, TODAY)
    assert {note.despatch_number for note in window} == {"IRS2026000000001"}


def test_ledger_months_with_their_state_and_the_next_month_due(client, accountant, full):
    html = block(page_of(client, accountant, full), "dashboard-ledger")
    assert "2026" in html

    def state(month):
        return re.search(rf'data-month="2026-{month:02d}" data-state="(\w+)"', html).group(1)

    assert [state(month) for month in (1, 2, 3, 4, 12)] == ["approved", "refused", "checking", "not_ended",
                                                            "not_ended"]
    assert "Onaylandı" in html and "Reddedildi" in html and "Denetleniyor" in html
    next_due = html[html.index('id="ledger-next-due"'):]
    assert "Şubat 2026" in next_due[:600]
    january = Period.objects.get(company=full, fiscal_year_start=date(2026, 1, 1))
    assert reverse("ledger:period_detail", args=[january.pk]) in html
    # uploaded again after the refusal: the month is uploaded, and March (being checked) is not due
    period(full, 2, 30)
    html = block(page_of(client, accountant, full), "dashboard-ledger")
    assert re.search(r'data-month="2026-02" data-state="uploaded"', html)
    assert "Nisan 2026" in html[html.index('id="ledger-next-due"'):][:600]


def test_ledger_next_month_offers_the_upload_to_those_who_may(client, accountant, manager, company):
    period(company, 1, 60)
    html = block(page_of(client, accountant, company), "dashboard-ledger")
    upload = next(url for url in links(html) if "start_date=" in url)
    assert upload == reverse("ledger:journal_add") + "?start_date=2026-02-01&end_date=2026-02-28"
    form = listed(client, upload)
    assert 'value="2026-02-01"' in form and 'value="2026-02-28"' in form
    html = block(page_of(client, manager, company), "dashboard-ledger")  # managers read, they do not upload
    assert "Şubat 2026" in html and not any("start_date=" in url for url in links(html))


def test_accounts_not_on_the_platform_or_refused(client, accountant, full):
    html = block(page_of(client, accountant, full), "dashboard-platform")
    current = html[html.index('data-source="current_accounts"'):html.index('data-source="chart_of_accounts"')]
    chart = html[html.index('data-source="chart_of_accounts"'):]
    assert "Başarısız: <strong>1</strong>" in current and "Yerelde kayıtlı: <strong>1</strong>" in current
    assert "Başarısız: <strong>1</strong>" in chart
    refused = listed(client, next(url for url in links(current) if "sync_state=failed" in url))
    assert "Reddedilen Cari" in refused and "Yeni Cari" not in refused and "Platformdaki Cari" not in refused
    assert "Alıcılar" in listed(client, next(url for url in links(chart) if "sync_state=failed" in url))


# --- empty states, scoping, roles, queries ----------------------------------------------------------------------
def test_empty_states_say_what_will_show(client, accountant, company):
    page = page_of(client, accountant, company)
    assert "Bu ay tarihli fatura yok" in block(page, "dashboard-invoices")
    assert "Yanıt bekleyen gelen irsaliye yok" in block(page, "dashboard-dispatch-incoming")
    assert "Faturalanmayı bekleyen gönderilmiş irsaliye yok" in block(page, "dashboard-dispatch-invoicing")
    ledger = block(page, "dashboard-ledger")
    assert "Ocak 2026" in ledger[ledger.index('id="ledger-next-due"'):][:600]
    assert ledger.count('data-state="not_uploaded"') == 2 and ledger.count('data-state="not_ended"') == 10
    assert "platformda" in block(page, "dashboard-platform")
    assert "table-danger" not in page


def test_only_the_active_company_rows(client, other_company, full):
    user = make_user("ikili", "accounting", [full, other_company])
    page = page_of(client, user, other_company)
    for number in ("GLN2026000000001", "IRS2026000000001", "1.250,75"):
        assert number not in page
    assert "Bu ay tarihli fatura yok" in page and 'data-state="approved"' not in page
    assert "Reddedilen" not in page and "Başarısız: <strong>" not in page
    assert "IRS2026000000001" in page_of(client, user, full)


@pytest.mark.parametrize("role", ["accounting", "manager", "administrator"])
def test_every_role_sees_the_blocks(client, role, full):
    page = page_of(client, make_user(f"rol-{role}", role, [full]), full)
    for element in ("dashboard-invoices", "dashboard-dispatch-incoming", "dashboard-dispatch-invoicing",
                    "dashboard-ledger", "dashboard-platform"):
        assert f'id="{element}"' in page


def test_the_dashboard_stays_under_15_queries(client, administrator, full, django_assert_max_num_queries):
    login(client, administrator, full, language="tr")
    client.get(reverse("core:dashboard"))  # notes the session's activity, written at most once a minute
    with django_assert_max_num_queries(14):  # an administrator's page, the fullest: the last calls too
        response = client.get(reverse("core:dashboard"))
    assert response.status_code == 200 and "1.250,75 TRY" in response.content.decode()
    assert b'data-days-left="-10"' in response.content and b'data-state="refused"' in response.content
