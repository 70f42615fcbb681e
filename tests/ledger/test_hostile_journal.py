"""Issue 28 on the journal: a workbook bomb refused on the upload's field in the request (nothing saved), a sheet
the ZIP directory cannot betray refused by the worker with a clear state (never "being checked" for ever), and the
findings report writing the file's own text as text, never as a formula."""

import io
import time
from datetime import date

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from openpyxl import load_workbook

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
], ids=["bomb", "traversal"])
def test_a_bomb_is_refused_on_the_file_field_in_the_request(web, content, words):
    started = time.monotonic()
    response = form_post(web, ADD, excel_data(content))
    assert time.monotonic() - started < 5
    assert response.status_code == 200
    assert any(words in message for message in response.context["form"].errors["file"])
    assert not Journal.objects.exists()


def test_a_sheet_past_the_row_ceiling_ends_its_check_refused_with_the_reason(company):
    journal = services.journal_create(
        company=company, user=None, source=SimpleUploadedFile("yevmiye.xlsx", hostile.far_row(HEADER)),
        start=MARCH, end=date(2025, 3, 31), split_size=10, time_stamp=False, without_tax_detail=False,
        y_line=Y_LINE)
    checking.journal_check(journal.pk)
    journal.refresh_from_db()
    assert journal.check_state == CheckState.UNREADABLE
    assert "more than 30.000 rows (empty rows count too)" in journal.check_message
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
