"""The e-ledger through the sandbox over HTTP: a journal checked, zipped and uploaded, its period followed to
the end with its parts and book entries; an upload answered 500 after the platform stored it (not uploaded
twice); the range rules on the platform's word; the certificates, sent again after a failure with isTryAgain,
and a submission whose answer was lost; the previews. Job bodies run here (a real worker runs them in
test_worker.py)."""

import zipfile
from datetime import date

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from backoffice.core import actions
from backoffice.core.choices import SyncState
from backoffice.ledger import checking, mirror, periods, services
from backoffice.ledger.choices import CheckState, PeriodStatus, PreviewType, TaskStatus
from backoffice.ledger.models import Finding, Journal, Part, Period
from backoffice.remote.errors import RemoteError

from .builders import journal_text, month_end

# The database engine matters here (the ledger's periods and parts under constraints): CI's SQLite pass runs these
# too.
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("english"), pytest.mark.database]

UPLOAD_PATH = "/ledger/v1/period"
CERTIFICATES_PATH = "/ledger/v1/sendletterpattentstogib"
MARCH = date(2025, 3, 1)


class Clock:
    """The sandbox's clock moved ahead, so that the period's life goes on without waiting."""

    def __init__(self, sandbox):
        self.sandbox, self.offset = sandbox, 0

    def ahead(self, seconds=600):
        self.offset += seconds
        self.sandbox.configure(clock_offset_seconds=self.offset)


@pytest.fixture
def clock(sandbox):
    return Clock(sandbox)


def customer(company):
    return str(company.customer_unique_id)


def new_journal(company, start=MARCH, text=None, name="yevmiye.txt", entries=3, **fields):
    text = text if text is not None else journal_text(start, entries=entries)
    values = {"split_size": 10, "time_stamp": False, "without_tax_detail": False, **fields}
    return services.journal_create(company=company, user=None, source=SimpleUploadedFile(name, text.encode()),
                                   start=start, end=month_end(start), **values)


def checked(company, **kwargs) -> Journal:
    journal = new_journal(company, **kwargs)
    checking.journal_check(journal.pk)
    journal.refresh_from_db()
    return journal


def follow_to_end(company, clock, *, rounds=6) -> Period:
    for _ in range(rounds):
        clock.ahead()
        mirror.periods_mirror(company)
        if not periods.unsettled_periods().filter(company=company).exists():
            break
    return Period.objects.filter(company=company).latest("pk")


def platform_periods(company):
    return periods.ledger_client(company).periods()["items"]


def test_a_clean_journal_is_zipped_uploaded_and_followed_to_its_parts(sandbox, sandbox_company, clock):
    journal = checked(sandbox_company, entries=6)
    assert journal.check_state == CheckState.PASSED and journal.findings_count == 0
    assert (journal.line_count, journal.entry_count) == (1 + 6 * 3, 6)
    assert str(journal.debit_total) == str(journal.credit_total) == "7500.00"
    with zipfile.ZipFile(journal.archive.open("rb")) as archive:
        [member] = archive.namelist()
        assert archive.read(member).decode() == journal_text(MARCH, entries=6)

    services.journal_upload_request(journal)
    assert services.journal_push(journal.pk) == "Sent to the platform."
    journal.refresh_from_db()
    assert journal.sync_state == SyncState.SYNCED and journal.period is not None
    [item] = platform_periods(sandbox_company)
    assert str(item["Id"]) == journal.remote_id == journal.period.remote_id
    assert (item["FiscalYearStart"][:10], item["FiscalYearEnd"][:10], item["SplitSize"]) == (
        "2025-03-01", "2025-03-31", 10)

    period = follow_to_end(sandbox_company, clock)
    assert period.pk == journal.period_id
    assert period.remote_status == PeriodStatus.READY and period.task_status == TaskStatus.COMPLETED
    assert period.task_percent == 100
    [part] = Part.objects.filter(period=period)
    assert (part.entry_number_start, part.entry_number_end, part.line_number_start, part.line_number_end) == (
        1, 6, 1, 12)
    assert str(part.debit) == str(part.credit) == "7500.00"
    assert sorted(part.book_entries.values_list("generalbook_type", flat=True)) == [1, 2]


def test_the_journal_findings_are_kept_with_their_line_and_nothing_is_zipped(sandbox_company):
    text = journal_text(MARCH).replace("\t1250.00\tD\t", "\t1250,00\tD\t", 1)
    journal = checked(sandbox_company, text=text)
    assert journal.check_state == CheckState.ERRORS and not journal.archive
    findings = list(Finding.objects.filter(journal=journal))
    amount = next(f for f in findings if f.field == "amount")
    assert (amount.line, amount.rule, amount.found) == (3, "amount_format", "1250,00")
    assert journal.findings_by_rule["amount_format"] == 1
    with pytest.raises(services.LedgerError, match="no error"):
        services.journal_upload_request(journal)


def test_an_upload_answered_500_after_the_platform_stored_it_is_not_uploaded_twice(sandbox, sandbox_company):
    journal = checked(sandbox_company)
    services.journal_upload_request(journal)
    sandbox.add_fault(path=UPLOAD_PATH, method="POST", error_rate=1, after_apply="error", remaining=1)
    with pytest.raises(RemoteError):
        services.journal_push(journal.pk)
    journal.refresh_from_db()
    assert journal.sync_state == SyncState.QUEUED and journal.known_periods == []
    assert len(platform_periods(sandbox_company)) == 1  # the platform has it

    assert services.journal_push(journal.pk) == "Found on the platform; not sent again."
    journal.refresh_from_db()
    assert journal.sync_state == SyncState.SYNCED and journal.period.remote_id == journal.remote_id
    assert len(platform_periods(sandbox_company)) == 1


def test_a_lost_answer_is_not_taken_for_an_earlier_refused_upload_of_the_same_month(sandbox, sandbox_company, clock):
    refused = checked(sandbox_company)
    services.journal_upload_request(refused)
    services.journal_push(refused.pk)
    period = Period.objects.get(remote_id=Journal.objects.get(pk=refused.pk).remote_id)
    sandbox.control("POST", "ledger/status", {"customer": customer(sandbox_company), "id": int(period.remote_id),
                                              "status": PeriodStatus.ERROR})
    mirror.periods_mirror(sandbox_company)

    again = checked(sandbox_company)
    services.journal_upload_request(again)
    sandbox.add_fault(path=UPLOAD_PATH, method="POST", error_rate=1, after_apply="error", remaining=1)
    with pytest.raises(RemoteError):
        services.journal_push(again.pk)
    assert services.journal_push(again.pk) == "Found on the platform; not sent again."
    again.refresh_from_db()
    assert again.remote_id not in ("", period.remote_id)
    assert len(platform_periods(sandbox_company)) == 2


def test_a_range_the_platform_has_approved_is_refused_even_before_the_mirror_knows(sandbox, sandbox_company):
    journal = checked(sandbox_company)
    services.journal_upload_request(journal)
    # Approved on the platform meanwhile (uploaded from elsewhere): the push reads the periods again first.
    sandbox.control("POST", "ledger/seed", {"customer": customer(sandbox_company), "periods": [
        {"start": "2025-03-01", "end": "2025-03-31", "status": PeriodStatus.APPROVED}]})
    with pytest.raises(RemoteError, match="already approved"):
        services.journal_push(journal.pk)
    journal.refresh_from_db()
    assert journal.sync_state == SyncState.FAILED and "already approved" in journal.last_error
    assert len(platform_periods(sandbox_company)) == 1  # only the seeded one


def test_months_go_in_order(sandbox, sandbox_company):
    sandbox.control("POST", "ledger/seed", {"customer": customer(sandbox_company), "periods": [
        {"start": "2025-01-01", "end": "2025-01-31", "status": PeriodStatus.APPROVED}]})
    mirror.periods_mirror(sandbox_company)
    field, message = services.range_refusal(sandbox_company, MARCH, month_end(MARCH))
    assert field == "start_date" and "February 2025 first" in message
    assert services.range_refusal(sandbox_company, date(2025, 2, 1), date(2025, 2, 28)) is None
    field, message = services.range_refusal(sandbox_company, date(2025, 1, 1), date(2025, 1, 31))
    assert "already approved" in message


@pytest.mark.parametrize("start,end,field,words", [
    (date(2025, 3, 2), date(2025, 3, 31), "start_date", "first day of a month"),
    (date(2025, 3, 1), date(2025, 3, 30), "end_date", "last day of a month"),
    (date(2025, 3, 1), date(2025, 2, 28), "end_date", "before the start date"),
    (date(2025, 12, 1), date(2026, 1, 31), "end_date", "within one year"),
])
def test_the_range_is_whole_months_of_one_year(company, start, end, field, words):
    refusal = services.range_refusal(company, start, end)
    assert refusal[0] == field and words in refusal[1]


def test_the_counters_continue_from_the_month_before(sandbox, sandbox_company, clock):
    sandbox.control("POST", "ledger/seed", {"customer": customer(sandbox_company), "periods": [
        {"start": "2025-02-01", "end": "2025-02-28", "status": PeriodStatus.APPROVED, "parts": 1}]})
    mirror.periods_mirror(sandbox_company)
    part = Part.objects.get(period__company=sandbox_company)
    journal = checked(sandbox_company)  # starts again at 1
    counters = Finding.objects.filter(journal=journal, rule="entry_counter")
    assert journal.check_state == CheckState.ERRORS and counters.exists()
    assert counters.first().expected == str(part.entry_number_end + 1)
    good = checked(sandbox_company, text=journal_text(MARCH, first_entry=part.entry_number_end + 1,
                                                      first_line=part.line_number_end + 1))
    assert good.check_state == CheckState.PASSED, list(good.findings.values_list("rule", "expected"))
    services.journal_upload_request(good)
    services.journal_push(good.pk)
    assert follow_to_end(sandbox_company, clock).remote_status == PeriodStatus.READY


def ready_period(sandbox_company, clock) -> Period:
    journal = checked(sandbox_company)
    services.journal_upload_request(journal)
    services.journal_push(journal.pk)
    period = follow_to_end(sandbox_company, clock)
    assert period.remote_status == PeriodStatus.READY
    return period


def send_certificates(period):
    run = services.PERIOD_ACTIONS  # the action's request and job body, as the button and the worker run them
    actions.action_request(Period, "certificates", [period])
    return actions.action_run(Period, "certificates", [period.pk]), run


def test_certificates_go_and_the_period_is_approved(sandbox, sandbox_company, clock):
    period = ready_period(sandbox_company, clock)
    message, _ = send_certificates(period)
    assert message == "Certificates sent for 1 period(s)."
    period.refresh_from_db()
    assert period.remote_status in (PeriodStatus.SENT, PeriodStatus.APPROVED) and not period.pending_action
    assert follow_to_end(sandbox_company, clock).remote_status == PeriodStatus.APPROVED
    with pytest.raises(services.LedgerError, match="converted and checked"):
        actions.action_request(Period, "certificates", [Period.objects.get(pk=period.pk)])


def test_a_failed_submission_is_sent_again_with_is_try_again(sandbox, sandbox_company, clock):
    period = ready_period(sandbox_company, clock)
    sandbox.control("POST", "ledger/settings", {"customer": customer(sandbox_company), "certificates": "fail_once"})
    send_certificates(period)
    period = follow_to_end(sandbox_company, clock)
    assert period.remote_status == PeriodStatus.SUBMISSION_FAILED and period.task_message
    message, _ = send_certificates(period)  # isTryAgain true: the sandbox refuses it otherwise
    assert message == "Certificates sent for 1 period(s)."
    assert follow_to_end(sandbox_company, clock).remote_status == PeriodStatus.APPROVED


def test_a_submission_answered_500_after_it_went_is_not_sent_twice(sandbox, sandbox_company, clock):
    period = ready_period(sandbox_company, clock)
    sandbox.add_fault(path=CERTIFICATES_PATH, method="GET", error_rate=1, after_apply="error", remaining=1)
    message, _ = send_certificates(period)
    # The 500 came after the platform took it: the statuses say so, and it is not sent again (a second
    # submission of a sent period would be refused).
    assert message == "Certificates sent for 1 period(s)."
    period.refresh_from_db()
    assert period.remote_status == PeriodStatus.SENT and not period.last_error


def test_the_previews_of_a_part(sandbox, sandbox_company, clock):
    period = ready_period(sandbox_company, clock)
    part = period.parts.get()
    for kind in (PreviewType.JOURNAL, PreviewType.LEDGER, PreviewType.CERTIFICATE):
        content, content_type = services.preview_fetch(part, kind)
        assert "text/html" in content_type and b"<html" in content.lower()
    with pytest.raises(services.LedgerError, match="approved"):
        services.preview_fetch(part, PreviewType.APPROVED_CERTIFICATE)
    sandbox.control("POST", "ledger/status", {"customer": customer(sandbox_company), "id": int(period.remote_id),
                                              "status": PeriodStatus.APPROVED})
    mirror.periods_mirror(sandbox_company)
    content, _ = services.preview_fetch(Part.objects.get(pk=part.pk), PreviewType.APPROVED_CERTIFICATE)
    assert content


def test_the_platforms_own_check_refuses_what_ours_would(sandbox, sandbox_company, clock):
    """The sandbox's checker is written apart from ours: a journal ours passes, it passes too; one that breaks a
    rule (sent around our check) it refuses with the line."""
    journal = checked(sandbox_company)
    bad = journal_text(MARCH).replace("\t1250.00\t1250.00\t2\t", "\t1250.00\t1250.01\t2\t")
    with journal.archive.open("wb") as handle, zipfile.ZipFile(handle, "w") as archive:
        archive.writestr("yevmiye.txt", bad)
    services.journal_upload_request(journal)
    services.journal_push(journal.pk)
    period = follow_to_end(sandbox_company, clock)
    assert period.remote_status == PeriodStatus.ERROR
    assert "Satır 5: totalCredit" in period.task_message, period.task_message  # the second entry's H line


def test_the_excel_template_filled_the_turkish_way_passes_both_checks(sandbox, sandbox_company, clock):
    """The template as it is downloaded, its example entry kept (and skipped) and one entry of the user's below it
    typed the Turkish way (1.250,75; "Fatura"), is a journal the platform accepts."""
    import io

    from openpyxl import load_workbook

    from backoffice.ledger import workbook, workbook_writer

    book = load_workbook(io.BytesIO(workbook_writer.template()))
    keys = [column.key for column in workbook.TEMPLATE_COLUMNS]
    entry = {"entryNumberCounter": 1, "enteredBy": "Ayşe Yılmaz", "enteredDate": date(2025, 1, 20),
             "entryNumber": "YEV-1", "amount": "1.250,75", "documentType": "Fatura",
             "documentNumber": "ABC2025000000007", "documentDate": date(2025, 1, 20)}
    for side in ({"accountMainID": "120", "accountMainDescription": "Alıcılar", "debitCreditCode": "D"},
                 {"accountMainID": "600", "accountMainDescription": "Yurt içi satışlar", "debitCreditCode": "C"}):
        book.worksheets[0].append([{**entry, **side}.get(key) for key in keys])
    filled = io.BytesIO()
    book.save(filled)
    january = date(2025, 1, 1)
    journal = services.journal_create(
        company=sandbox_company, user=None, source=SimpleUploadedFile("sablon.xlsx", filled.getvalue()),
        start=january, end=month_end(january), split_size=10, time_stamp=False, without_tax_detail=False,
        y_line={"fiscal_year_start": january, "fiscal_year_end": date(2025, 12, 31), "batch_id": "0",
                "entity_identifier": "1234567890"})
    checking.journal_check(journal.pk)
    journal.refresh_from_db()
    assert journal.check_state == CheckState.PASSED, list(journal.findings.values_list("rule", "field"))
    text = journal.text.open("rb").read().decode()
    assert "YEV-2025-1" not in text and "\t1250.75\tD\t" in text and "\tinvoice\t" in text
    services.journal_upload_request(journal)
    services.journal_push(journal.pk)
    period = follow_to_end(sandbox_company, clock)
    assert period.remote_status == PeriodStatus.READY, period.task_message


def test_counters_start_at_1_with_the_fiscal_year_whatever_the_month(sandbox, sandbox_company, clock):
    april = date(2025, 4, 1)
    text = journal_text(april, year_start=april)  # a fiscal year of April to March
    journal = checked(sandbox_company, start=april, text=text)
    assert journal.check_state == CheckState.PASSED and not journal.check_message
    services.journal_upload_request(journal)
    services.journal_push(journal.pk)
    assert follow_to_end(sandbox_company, clock).remote_status == PeriodStatus.READY


def test_the_month_befores_parts_are_read_from_the_platform_for_the_counters(sandbox, sandbox_company):
    sandbox.control("POST", "ledger/seed", {"customer": customer(sandbox_company), "periods": [
        {"start": "2025-02-01", "end": "2025-02-28", "status": PeriodStatus.APPROVED, "parts": 1}]})
    assert not Period.objects.filter(company=sandbox_company).exists()  # nothing read here yet
    journal = checked(sandbox_company)
    part = Part.objects.get(period__company=sandbox_company)
    assert Finding.objects.get(journal=journal, rule="entry_counter").expected == str(part.entry_number_end + 1)


def test_counters_not_known_are_said_so(company):
    journal = checked(company)  # no platform to ask: the check goes on and says what it could not compare
    assert journal.check_state == CheckState.PASSED and "not compared" in journal.check_message


def test_a_month_after_a_refused_one_and_a_month_before_an_uploaded_one_are_refused(sandbox, sandbox_company):
    sandbox.control("POST", "ledger/seed", {"customer": customer(sandbox_company), "periods": [
        {"start": "2025-01-01", "end": "2025-01-31", "status": PeriodStatus.ERROR},
        {"start": "2025-06-01", "end": "2025-06-30", "status": PeriodStatus.READY}]})
    mirror.periods_mirror(sandbox_company)
    assert "upload January 2025 first" in services.range_refusal(sandbox_company, date(2025, 2, 1),
                                                                  date(2025, 2, 28))[1]
    refusal = services.range_refusal(sandbox_company, date(2025, 1, 1), date(2025, 1, 31))
    assert "already on the platform" in refusal[1] and "01.06.2025" in refusal[1]


def test_is_try_again_comes_from_the_platform_not_an_old_mirror(sandbox, sandbox_company, clock):
    period = ready_period(sandbox_company, clock)
    sandbox.control("POST", "ledger/status", {"customer": customer(sandbox_company), "id": int(period.remote_id),
                                              "status": PeriodStatus.SUBMISSION_FAILED})
    assert Period.objects.get(pk=period.pk).remote_status == PeriodStatus.READY  # the mirror does not know yet
    message, _ = send_certificates(period)
    assert message == "Certificates sent for 1 period(s)."  # isTryAgain=true: the sandbox refuses false here
    assert Period.objects.get(pk=period.pk).remote_status in (PeriodStatus.SENT, PeriodStatus.APPROVED)


def test_a_period_the_platform_leaves_working_is_followed_for_a_week_only(sandbox, sandbox_company):
    from datetime import timedelta

    from django.utils import timezone

    ids = sandbox.control("POST", "ledger/seed", {"customer": customer(sandbox_company), "periods": [
        {"start": "2025-01-01", "end": "2025-01-31", "status": PeriodStatus.CONVERTING}]})["ids"]
    mirror.periods_mirror(sandbox_company)
    assert periods.unsettled_periods().filter(remote_id=str(ids[0])).exists()
    Period.objects.filter(remote_id=str(ids[0])).update(synced_at=timezone.now() - timedelta(days=8))
    mirror.periods_mirror(sandbox_company)  # listed again, unchanged: not a change of the platform's
    assert not periods.unsettled_periods().filter(remote_id=str(ids[0])).exists()


def test_a_journal_with_line_numbers_running_on_passes_both_checks(sandbox, sandbox_company, clock):
    """lineNumber running on through the period (the documented way) is checked with no finding here and accepted
    by the platform; 1, 2, 3... within each entry is the builders' own way, taken by the tests above."""
    rows = journal_text(MARCH, entries=4, first_line=11).splitlines()
    for index, row in enumerate(rows):
        if not row.startswith(("Y\t", "H\t")):
            _number, counter, rest = row.split("\t", 2)
            rows[index] = f"{counter}\t{counter}\t{rest}"
    journal = checked(sandbox_company, text="\n".join(rows) + "\n")
    assert journal.check_state == CheckState.PASSED and journal.findings_count == 0
    services.journal_upload_request(journal)
    services.journal_push(journal.pk)
    period = follow_to_end(sandbox_company, clock)
    assert period.remote_status == PeriodStatus.READY, period.task_message
    assert (period.parts.get().line_number_start, period.parts.get().line_number_end) == (11, 18)
