"""The e-ledger in a real browser, against the sandbox over HTTP and a real RQ worker process, as an accountant
closes March (the acceptance of issue 14): the month's journal filled in the Excel template with 3 errors on 3
rows is checked, each error shown on its row and counted by rule; the file fixed and uploaded again is clean; it
goes to the platform after a confirmation, and the journal page follows its period to the end by itself; the
period shows its part, and the part's journal opens as a preview.
"""

import io
import os
from datetime import date

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext
from openpyxl import load_workbook
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from backoffice.core.choices import JobStatus, Role, SyncState
from backoffice.core.models import JobRun
from backoffice.ledger import workbook, workbook_writer
from backoffice.ledger.choices import CheckState, PeriodStatus
from backoffice.ledger.models import Journal, Part
from tests.browser.conftest import CHROMIUM, screenshot, sign_in
from tests.conftest import make_user
from tests.testapp.testing import output, running_worker

pytestmark = [
    pytest.mark.browser,
    pytest.mark.worker,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's Chromium at /usr/bin/chromium"),
    pytest.mark.django_db(transaction=True),
]

WORKER_ENV = {"LEDGER_FOLLOW_SECONDS": "1", "JOB_RETRY_BASE_SECONDS": "1", "JOB_RETRY_MAX_SECONDS": "2",
              "PLATFORM_READ_TIMEOUT": "5"}
SETTLES = 90_000  # ms: what the worker and the platform do, followed by the page's own refresh
VKN = "1234567890"  # its check digit holds
# The 3 entries of March, 2 rows each (sheet rows 2-7: row 1 holds the headers): (day, amount, document number).
ENTRIES = ((date(2025, 3, 5), 1250.50, "ABC2025000000001"), (date(2025, 3, 14), 3400.00, "ABC2025000000002"),
           (date(2025, 3, 26), 780.25, "ABC2025000000003"))
# The errors: (sheet row, field, value typed, rule the checker names).
ERRORS = ((2, "debitCreditCode", "X", "debit_credit_code"),
          (5, "amount", "12,5,0", "amount_format"),
          (7, "accountMainID", "60000", "main_account"))


@pytest.fixture
def rq_worker():
    with running_worker(WORKER_ENV) as process:
        yield process


def in_turkish(text) -> str:
    with translation.override("tr"):
        return gettext(str(text))


def journal_rows() -> list[dict]:
    """Each entry a sale: 120 Alıcılar debited, 600 Yurt içi satışlar credited, the entry's fields repeated."""
    rows = []
    for counter, (day, amount, number) in enumerate(ENTRIES, start=1):
        entry = {"entryNumberCounter": counter, "enteredBy": "Ayşe Yılmaz", "enteredDate": day,
                 "entryNumber": f"YEV-2025-{counter}", "entryComment": f"Satış faturası {number}", "amount": amount,
                 "documentType": "invoice", "documentNumber": number, "documentDate": day}
        rows.append({**entry, "accountMainID": "120", "accountMainDescription": "Alıcılar",
                     "accountSubID": "120.01", "accountSubDescription": "Örnek Ticaret A.Ş.", "debitCreditCode": "D"})
        rows.append({**entry, "accountMainID": "600", "accountMainDescription": "Yurt içi satışlar",
                     "accountSubID": "600.01", "debitCreditCode": "C"})
    return rows


def journal_workbook(path, errors=()):
    """The template as the page offers it (Turkish headers), its example taken out and March's rows filled in,
    with each (row, field, value) of `errors` typed over."""
    with translation.override("tr"):
        book = load_workbook(io.BytesIO(workbook_writer.template()))
    sheet = book.worksheets[0]
    sheet.delete_rows(2, sheet.max_row)
    rows = journal_rows()
    for row, field, value, _rule in errors:
        rows[row - 2][field] = value
    keys = [column.key for column in workbook.TEMPLATE_COLUMNS]
    for values in rows:
        sheet.append([values.get(key) for key in keys])
    book.save(path)
    return path


@pytest.mark.slow
def test_an_excel_journal_checked_fixed_uploaded_and_followed_to_its_preview(live_server, browser_page, sandbox,
                                                                             make_sandbox_company, rq_worker,
                                                                             tmp_path):
    """Slow (over 10 s): a journal checked, fixed, uploaded and followed in a real browser through a real worker."""
    for role in Role:
        Group.objects.get_or_create(name=role.value)
    company = make_sandbox_company(name="Ege Gıda Ticaret A.Ş.")  # no period on the platform yet
    # Each step of the period's life on the platform (uploaded, converting, checked) takes a second.
    sandbox.control("POST", "ledger/settings", {"customer": str(company.customer_unique_id), "step_seconds": 1})
    make_user("ayse", Role.ACCOUNTING, [company])
    page = browser_page
    url = live_server.url

    def settled(selector, message):
        try:
            page.wait_for_selector(selector, state="attached", timeout=SETTLES)
        except PlaywrightTimeout:
            raise AssertionError(f"timed out waiting for {message} ({selector})\n--- worker output ---\n"
                                 f"{output(rq_worker)[-5000:]}") from None

    def fill_journal_form(path):
        page.set_input_files("#id_file", str(path))
        page.fill("#id_start_date", "2025-03-01")
        page.fill("#id_end_date", "2025-03-31")
        page.fill("#id_fiscal_year_start", "2025-01-01")
        page.fill("#id_fiscal_year_end", "2025-12-31")
        page.fill("#id_batch_id", "0")
        page.fill("#id_entity_identifier", VKN)

    sign_in(page, live_server, "ayse")

    # 1. Defter (the E-ledger menu) -> New journal: the March journal with its 3 errors.
    menu = page.locator(f".app-nav a.nav-link[href='{reverse('ledger:period_list')}']")
    assert menu.inner_text().strip() == in_turkish("E-ledger")
    menu.click()
    page.wait_for_url(f"{url}{reverse('ledger:period_list')}")
    page.click(f".nav-tabs a.nav-link[href='{reverse('ledger:journal_add')}']")
    page.wait_for_selector("#journal-form")
    fill_journal_form(journal_workbook(tmp_path / "yevmiye-mart-hatali.xlsx", ERRORS))
    with page.expect_navigation():
        page.click("#journal-submit")
    first = Journal.objects.get(company=company)
    assert page.url == f"{url}{reverse('ledger:journal_detail', args=[first.pk])}"

    # 2. Checked by the worker; the page, refreshing itself, shows each error on its row, counted by rule.
    settled(f"#journal-check[data-state='{CheckState.ERRORS}']", "the worker's check")
    findings = page.locator("#journal-findings tbody tr")
    assert findings.count() == len(ERRORS), page.locator("#journal-findings").inner_text()
    shown = {(row.get_attribute("data-row"), row.get_attribute("data-field"), row.get_attribute("data-rule"))
             for row in findings.all()}
    assert shown == {(str(row), field, rule) for row, field, _value, rule in ERRORS}
    for row, _field, value, _rule in ERRORS:
        cells = page.locator(f"#journal-findings tr[data-row='{row}'] td")
        assert cells.nth(0).inner_text().strip() == str(row)  # the sheet's row, not the text's line
        assert cells.nth(3).inner_text().strip() == value
    counts = {item.get_attribute("data-rule"): item.locator(".badge").inner_text().strip()
              for item in page.locator("#journal-rules li[data-rule]").all()}
    assert counts == {rule: "1" for *_, rule in ERRORS}
    assert page.locator("#journal-upload").count() == 0  # nothing goes with an error in it
    page.locator("#journal-rules").scroll_into_view_if_needed()
    screenshot(page, "ledger-journal-errors")

    # 3. The file fixed, uploaded again from the journal's "Upload a corrected file": clean this time.
    with page.expect_navigation():
        page.click("#journal-again")
    page.wait_for_selector("#journal-form")
    # The corrected file is for the same month: the link opens the form on it.
    assert (page.input_value("#id_start_date"), page.input_value("#id_end_date")) == ("2025-03-01", "2025-03-31")
    fill_journal_form(journal_workbook(tmp_path / "yevmiye-mart.xlsx"))
    with page.expect_navigation():
        page.click("#journal-submit")
    journal = Journal.objects.exclude(pk=first.pk).get(company=company)
    settled(f"#journal-check[data-state='{CheckState.PASSED}']", "the corrected journal's check")
    page.wait_for_selector("#journal-clean")
    assert page.locator("#journal-findings").count() == 0
    journal.refresh_from_db()
    assert (journal.line_count, journal.entry_count, str(journal.debit_total), str(journal.credit_total)) == (
        1 + 3 * 3, 3, "5430.75", "5430.75")

    # 4. Uploaded after its confirmation; the journal page follows the period to the end without a reload.
    page.click("#journal-upload")
    page.wait_for_selector("#upload-confirm")
    with page.expect_navigation(url=f"{url}{reverse('ledger:journal_detail', args=[journal.pk])}"):
        page.click("#upload-confirm")
    page.evaluate("() => { window.ledgerPageKept = true; }")  # gone if the page were loaded again
    settled(f"#journal-sync-state[data-state='{SyncState.SYNCED}']", "the worker's upload")
    settled(f"#journal-period-status[data-status='{PeriodStatus.READY}']", "the period to be converted and checked")
    assert page.evaluate("() => window.ledgerPageKept === true")
    assert page.locator("#journal-period .progress-bar[data-width='100']").count() == 1
    journal.refresh_from_db()
    period = journal.period
    assert period.remote_status == PeriodStatus.READY and period.remote_id == journal.remote_id
    assert page.locator("#journal-detail[data-refreshing]").count() == 0  # the page stopped refreshing
    # Followed by the worker's follow job every second, none of its runs failing on the way.
    assert not JobRun.objects.filter(name="periods_follow", company=company, status=JobStatus.FAILED).exists()

    # 5. The period: its one part with the journal's counters and totals, and the part's journal as a preview.
    with page.expect_navigation(url=f"{url}{reverse('ledger:period_detail', args=[period.pk])}"):
        page.click(f"#journal-period a[href='{reverse('ledger:period_detail', args=[period.pk])}']")
    page.wait_for_selector(f"#period-status[data-status='{PeriodStatus.READY}']")
    part = Part.objects.get(period=period)
    assert (part.entry_number_start, part.entry_number_end, part.line_number_start, part.line_number_end) == (
        1, 3, 1, 6)
    assert page.locator("#period-parts tbody tr[data-part]").count() == 1
    assert page.locator("#period-task-progress").inner_text().strip() == "100%"
    screenshot(page, "ledger-period")

    with page.expect_navigation(url=f"{url}{reverse('ledger:part_preview', args=[part.pk, 1])}"):
        page.click("#period-parts tr[data-part='1'] a[data-preview='1']")
    frame = page.locator("#preview-frame")
    journal_html = frame.get_attribute("srcdoc")
    assert "Yevmiye Defteri" in journal_html and "YEV-2025-3" in journal_html and "1.250,50" in journal_html
    # The frame shows the platform's page (run without script, in its own origin).
    heading = page.frame_locator("#preview-frame").locator("h1")
    heading.wait_for()
    assert heading.inner_text() == "Yevmiye Defteri"
    screenshot(page, "ledger-preview")
    assert rq_worker.poll() is None, output(rq_worker)
