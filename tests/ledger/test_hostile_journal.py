"""Issue 28 on the journal: a workbook bomb refused on the upload's field in the request (nothing saved), a sheet
the ZIP directory cannot betray refused by the worker with a clear state (never "being checked" for ever), and the
findings report writing the file's own text as text, never as a formula."""

import io
import time
from datetime import date, timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone, translation
from openpyxl import load_workbook

from backoffice.core import jobs, workbooks
from backoffice.core.choices import JobStatus
from backoffice.core.models import JobRun
from backoffice.ledger import checking, services
from backoffice.ledger.choices import CheckState
from backoffice.ledger.models import Finding, Journal
from backoffice.ledger.workbook import TEMPLATE_COLUMNS
from tests.conftest import form_post
from tests.core import hostile_xlsx as hostile
from tests.tickets.conftest import login

from .builders import VKN

pytestmark = pytest.mark.django_db

ADD = reverse("ledger:journal_add")
HEADER = tuple(column.key for column in TEMPLATE_COLUMNS if column.required)
MARCH = date(2025, 3, 1)
Y_LINE = {"fiscal_year_start": date(2025, 1, 1), "fiscal_year_end": date(2025, 12, 31), "batch_id": "0",
          "entity_identifier": VKN}


@pytest.fixture
def web(client, accountant, company):
    return login(client, accountant, company)


def excel_data(content: bytes) -> dict:
    return {"file": SimpleUploadedFile("yevmiye.xlsx", content), "start_date": "2025-03-01",
            "end_date": "2025-03-31", "split_size": "10", "fiscal_year_start": "2025-01-01",
            "fiscal_year_end": "2025-12-31", "batch_id": "0", "entity_identifier": VKN}


@pytest.mark.parametrize("content,words", [
    (hostile.ratio_bomb(HEADER), "a real workbook packs at most 100 times"),
    (hostile.traversal("../../evil.xml", HEADER), "a name no workbook has"),
    (hostile.entities(HEADER), "document type declaration"),
    (hostile.big_styles(HEADER, size=16 * hostile.MB), "styles and settings"),
], ids=["bomb", "traversal", "entities", "styles"])
def test_a_bomb_is_refused_on_the_file_field_in_the_request(web, content, words):
    started = time.monotonic()
    response = form_post(web, ADD, excel_data(content))
    assert time.monotonic() - started < 5
    assert response.status_code == 200
    assert any(words in message for message in response.context["form"].errors["file"])
    assert not Journal.objects.exists()


def test_a_sheet_past_the_row_ceiling_ends_its_check_refused_with_the_reason(company):
    with translation.override("en"):
        journal = services.journal_create(
            company=company, user=None, source=SimpleUploadedFile("yevmiye.xlsx", hostile.far_row(HEADER)),
            start=MARCH, end=date(2025, 3, 31), split_size=10, time_stamp=False, without_tax_detail=False,
            y_line=Y_LINE)
    checking.journal_check(journal.pk)
    journal.refresh_from_db()
    assert journal.check_state == CheckState.UNREADABLE
    assert "more than 20.000 rows (empty rows count too)" in journal.check_message
    assert not journal.archive


def test_the_findings_report_writes_the_files_text_as_text(web, company):
    journal = services.journal_create(
        company=company, user=None, source=SimpleUploadedFile("yevmiye.txt", b"Y\t2025-01-01"), start=MARCH,
        end=date(2025, 3, 31), split_size=10, time_stamp=False, without_tax_detail=False)
    Journal.objects.filter(pk=journal.pk).update(check_state=CheckState.ERRORS, findings_count=2,
                                                 findings_by_rule={"amount": 2})
    for line, found in ((2, '=HYPERLINK("http://example.invalid","x")'), (3, "@SUM(A1)")):
        Finding.objects.create(journal=journal, line=line, field="amount", column=9, rule="amount", found=found,
                               expected="+1")
    response = web.get(reverse("ledger:journal_report", args=[journal.pk]))
    assert response.status_code == 200
    rows = list(load_workbook(io.BytesIO(response.content)).worksheets[1].iter_rows())
    cells = [cell for row in rows[1:] for cell in row]
    assert '=HYPERLINK("http://example.invalid","x")' in [cell.value for cell in cells]
    assert all(cell.data_type != "f" for cell in cells)


def excel_journal(company, language="en"):
    with translation.override(language):  # the uploader's: the check speaks it
        return services.journal_create(
            company=company, user=None, source=SimpleUploadedFile("yevmiye.xlsx", hostile.build([], header=HEADER)),
            start=MARCH, end=date(2025, 3, 31), split_size=10, time_stamp=False, without_tax_detail=False,
            y_line=Y_LINE)


def test_a_refusal_read_in_the_worker_is_in_the_uploaders_language(company):
    """The check runs in a worker (whose language is the site's): what it says of the file is in the language of
    whoever uploaded it."""
    turkish, english = excel_journal(company, "tr"), excel_journal(company, "en")
    for journal in (turkish, english):
        Journal.objects.filter(pk=journal.pk).update(source=journal.source.name)
        journal.source.save("yevmiye.xlsx", SimpleUploadedFile("yevmiye.xlsx", hostile.far_row(HEADER)), save=True)
    with translation.override("en"):
        checking.journal_check(turkish.pk)
    with translation.override("tr"):
        checking.journal_check(english.pk)
    turkish.refresh_from_db()
    english.refresh_from_db()
    assert "20.000 satırdan fazla" in turkish.check_message, turkish.check_message
    assert "more than 20.000 rows" in english.check_message


def test_memory_running_out_while_reading_ends_the_check_unreadable(company, monkeypatch):
    """The issue's 900 MB bomb reached a MemoryError in the worker: whatever exhausts memory, the journal ends
    "could not be read" with the reason, never "being checked"."""
    journal = excel_journal(company)

    def exhausted(*_args, **_kwargs):
        raise MemoryError
    monkeypatch.setattr(workbooks, "read_sheet", exhausted)
    with translation.override("en"):
        checking.journal_check(journal.pk)
    journal.refresh_from_db()
    assert journal.check_state == CheckState.UNREADABLE
    assert "could not be read (MemoryError)" in journal.check_message


def test_memory_running_out_while_checking_ends_the_check_unreadable(company, monkeypatch):
    journal = excel_journal(company)

    def exhausted(*_args, **_kwargs):
        raise MemoryError
    monkeypatch.setattr(checking.checker, "JournalCheck", exhausted)
    with translation.override("en"), pytest.raises(MemoryError):  # the runner logs it and fails the run
        checking.journal_check(journal.pk)
    journal.refresh_from_db()
    assert journal.check_state == CheckState.UNREADABLE
    assert "could not be checked (MemoryError)" in journal.check_message


def test_a_check_whose_worker_was_killed_each_time_is_not_asked_for_again(company):
    """The operating system kills the worker (memory): the run is lost, enqueued again LOST_RETRIES times, then
    failed; the sweep then ends the journal unreadable instead of killing a worker every round for ever."""
    killed, lost_once = excel_journal(company), excel_journal(company)
    Journal.objects.filter(pk__in=[killed.pk, lost_once.pk]).update(
        check_state=CheckState.CHECKING, created_at=timezone.now() - timedelta(hours=1))
    JobRun.objects.create(company=company, name="check", target=checking.check_request_target(killed),
                          func_path="backoffice.ledger.checking.journal_check", status=JobStatus.FAILED,
                          lost_count=jobs.LOST_RETRIES)
    JobRun.objects.filter(target=checking.check_request_target(killed)).exclude(status=JobStatus.FAILED).delete()
    with translation.override("en"):
        checking.journal_checks_sweep()
    killed.refresh_from_db()
    lost_once.refresh_from_db()
    assert killed.check_state == CheckState.UNREADABLE
    assert "stopped before its end 4 times" in killed.check_message
    assert list(JobRun.objects.filter(target=checking.check_request_target(killed)).values_list("status", flat=True)) \
        == [JobStatus.FAILED]  # not asked for again
    assert lost_once.check_state == CheckState.CHECKING  # its check (queued at its upload) still on its way
    assert JobRun.objects.filter(target=checking.check_request_target(lost_once), status__in=jobs.ACTIVE).exists()
