"""The journal form's rules fed bad input through the page (the message on its field, nothing saved, never a
server error), the journal and period pages, their downloads, roles and tenant scoping (another company's
journal, period or part is a 404)."""

import io
from datetime import date

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from openpyxl import load_workbook

from backoffice.core.choices import SyncState
from backoffice.ledger import checking, services, workbook_writer
from backoffice.ledger.choices import CheckState, PeriodStatus
from backoffice.ledger.models import BookEntry, Finding, Journal, Part, Period
from tests.conftest import form_post
from tests.tickets.conftest import login
from tests.properties import examples

from .builders import VKN, journal_text

pytestmark = pytest.mark.django_db

ADD = reverse("ledger:journal_add")
MARCH = date(2025, 3, 1)


@pytest.fixture
def web(client, accountant, company):
    return login(client, accountant, company)


def upload(name="yevmiye.txt", content=None):
    return SimpleUploadedFile(name, content if content is not None else journal_text(MARCH).encode())


def data(**fields):
    values = {"file": upload(), "start_date": "2025-03-01", "end_date": "2025-03-31", "split_size": "10"}
    values.update(fields)
    return {name: value for name, value in values.items() if value is not None}


def errors_of(response) -> dict:
    return {name: list(errors) for name, errors in response.context["form"].errors.items()}


def test_a_journal_is_kept_and_its_check_asked(web, company):
    response = form_post(web, ADD, data())
    journal = Journal.objects.get(company=company)
    assert response.status_code == 302 and response.url == reverse("ledger:journal_detail", args=[journal.pk])
    assert journal.check_state == CheckState.WAITING and journal.source_kind == "txt"
    assert (journal.start_date, journal.end_date, journal.split_size) == (MARCH, date(2025, 3, 31), 10)


@pytest.mark.parametrize("fields,field,words", [
    ({"file": None}, "file", "required"),
    ({"file": upload("yevmiye.csv")}, "file", ".txt"),
    ({"file": upload(content=b"")}, "file", "empty"),
    ({"start_date": "2025-03-02"}, "start_date", "first day of a month"),
    ({"end_date": "2025-03-30"}, "end_date", "last day of a month"),
    ({"end_date": "2025-02-28"}, "end_date", "before the start date"),
    ({"start_date": "2025-12-01", "end_date": "2026-01-31"}, "end_date", "within one year"),
    ({"start_date": "01.03.2025"}, "start_date", "valid date"),
    ({"split_size": "0"}, "split_size", "1 to 150"),
    ({"split_size": "151"}, "split_size", "1 to 150"),
    ({"split_size": "abc"}, "split_size", "whole number"),
])
def test_every_rule_of_the_form_on_its_field(web, company, fields, field, words):
    response = form_post(web, ADD, data(**fields))
    assert response.status_code == 200
    messages = errors_of(response)
    assert any(words in message for message in messages.get(field, [])), messages
    assert not Journal.objects.exists()


XLSX = {"file": None}


@pytest.mark.parametrize("fields,field,words", [
    ({}, "entity_identifier", "Y line"),
    ({"entity_identifier": "1234567891"}, "entity_identifier", ""),
    ({"entity_identifier": VKN, "batch_id": "A1"}, "batch_id", "digits only"),
    ({"entity_identifier": VKN, "fiscal_year_start": "2025-12-31", "fiscal_year_end": "2025-01-01"},
     "fiscal_year_end", "ends after it starts"),
    ({"entity_identifier": VKN, "fiscal_year_start": "2025-04-01", "fiscal_year_end": "2026-03-31"},
     "fiscal_year_start", "inside the fiscal year"),
])
def test_an_excel_journal_needs_its_y_line(web, fields, field, words):
    values = {"fiscal_year_start": "2025-01-01", "fiscal_year_end": "2025-12-31", "batch_id": "0",
              "entity_identifier": "", **fields}
    response = form_post(web, ADD, data(file=upload("yevmiye.xlsx", workbook_writer.template()), **values))
    assert response.status_code == 200
    messages = errors_of(response)
    assert field in messages and all(words in message for message in messages[field]), messages
    assert not Journal.objects.exists()


def seed_period(company, start, end, status, remote_id="77"):
    return Period.objects.create(company=company, remote_id=remote_id, remote_status=status, fiscal_year_start=start,
                                 fiscal_year_end=end, sync_state=SyncState.SYNCED)


def test_an_approved_range_and_a_month_out_of_order_are_refused_on_the_field(web, company):
    seed_period(company, date(2025, 1, 1), date(2025, 1, 31), PeriodStatus.APPROVED)
    response = form_post(web, ADD, data(start_date="2025-01-01", end_date="2025-01-31"))
    assert "already approved" in errors_of(response)["start_date"][0]
    response = form_post(web, ADD, data())
    assert "upload February 2025 first" in errors_of(response)["start_date"][0]
    assert not Journal.objects.exists()


def test_back_and_submit_again_makes_no_second_journal(web, company):
    page = web.get(ADD).content.decode()
    from tests.conftest import guard_fields

    key = guard_fields(page)
    first = web.post(ADD, {**key, **data()})
    second = web.post(ADD, {**key, **data()})
    assert first.status_code == second.status_code == 302
    assert Journal.objects.filter(company=company).count() == 1


def test_managers_read_but_do_not_upload(client, manager, company):
    login(client, manager, company)
    assert client.get(reverse("ledger:period_list")).status_code == 200
    assert client.get(reverse("ledger:journal_list")).status_code == 200
    assert client.get(ADD).status_code == 403


def checked(company, text=None) -> Journal:
    journal = services.journal_create(company=company, user=None, source=upload(
        content=(text if text is not None else journal_text(MARCH)).encode()), start=MARCH, end=date(2025, 3, 31),
        split_size=10, time_stamp=False, without_tax_detail=False)
    checking.journal_check(journal.pk)
    journal.refresh_from_db()
    return journal


def test_the_journal_page_groups_the_errors_and_filters_by_rule(web, company):
    text = journal_text(MARCH).replace("\tD\t", "\tX\t", 1).replace("\t1250.00\tC\t", "\t-5\tC\t", 1)
    journal = checked(company, text)
    assert journal.check_state == CheckState.ERRORS
    page = web.get(reverse("ledger:journal_detail", args=[journal.pk]))
    html = page.content.decode()
    assert page.status_code == 200
    assert 'data-rule="debit_credit_code"' in html and 'data-line="3"' in html
    assert "Upload to the platform" not in html
    only = web.get(reverse("ledger:journal_detail", args=[journal.pk]) + "?rule=debit_credit_code").content.decode()
    assert only.count('<tr data-line=') == Finding.objects.filter(journal=journal, rule="debit_credit_code").count()

    report = web.get(reverse("ledger:journal_report", args=[journal.pk]))
    assert report.status_code == 200 and "attachment" in report["Content-Disposition"]
    book = load_workbook(io.BytesIO(b"".join(report.streaming_content) if report.streaming else report.content))
    cells = [str(cell.value) for sheet in book.worksheets for row in sheet.iter_rows() for cell in row]
    assert "X" in cells and any("debitCreditCode" in cell for cell in cells), cells


def test_a_clean_journal_offers_the_upload_behind_a_confirmation(web, company):
    journal = checked(company)
    assert journal.check_state == CheckState.PASSED
    html = web.get(reverse("ledger:journal_detail", args=[journal.pk])).content.decode()
    assert 'id="journal-upload"' in html and 'id="journal-clean"' in html
    confirm = web.get(reverse("ledger:journal_upload", args=[journal.pk]))
    assert confirm.status_code == 200 and b'id="upload-confirm"' in confirm.content
    journal.refresh_from_db()
    assert journal.sync_state == SyncState.LOCAL  # nothing sent by looking
    response = web.post(reverse("ledger:journal_upload", args=[journal.pk]))
    assert response.status_code == 302
    journal.refresh_from_db()
    assert journal.sync_state == SyncState.QUEUED
    again = web.post(reverse("ledger:journal_upload", args=[journal.pk]), follow=True)
    assert "on its way" in again.content.decode()
    assert Journal.objects.get(pk=journal.pk).sync_state == SyncState.QUEUED


def test_the_template_and_the_period_pages(web, company):
    template = web.get(reverse("ledger:journal_template"))
    assert template.status_code == 200 and load_workbook(io.BytesIO(template.content)).worksheets
    period = seed_period(company, MARCH, date(2025, 3, 31), PeriodStatus.CONVERTING)
    Period.objects.filter(pk=period.pk).update(task_status=2, task_progress=20, task_message="Metin XML'e dönüştürülüyor")
    listing = web.get(reverse("ledger:period_list")).content.decode()
    assert "01.03.2025 – 31.03.2025" in listing and 'data-width="20"' in listing
    detail = web.get(reverse("ledger:period_detail", args=[period.pk])).content.decode()
    assert 'id="period-task"' in detail and "dönüştürülüyor" in detail and 'data-refreshing="true"' in detail


def test_another_companys_records_are_404(web, other_company):
    journal = checked(other_company)
    period = seed_period(other_company, MARCH, date(2025, 3, 31), PeriodStatus.READY)
    part = Part.objects.create(company=other_company, period=period, remote_id="5", index_number=1)
    BookEntry.objects.create(company=other_company, part=part, remote_id="9", generalbook_type=1)
    for url in (reverse("ledger:journal_detail", args=[journal.pk]), reverse("ledger:journal_upload", args=[journal.pk]),
                reverse("ledger:journal_report", args=[journal.pk]), reverse("ledger:journal_source", args=[journal.pk]),
                reverse("ledger:period_detail", args=[period.pk]), reverse("ledger:part_preview", args=[part.pk, 1])):
        assert web.get(url).status_code == 404, url
    assert web.post(reverse("ledger:journal_upload", args=[journal.pk])).status_code == 404
    assert web.post(reverse("ledger:period_parts", args=[period.pk])).status_code == 404


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=st.one_of(st.binary(max_size=3000), st.text(max_size=2000).map(lambda t: t.encode("utf-16")),
                         st.text(max_size=2000).map(lambda t: t.encode("cp1254", errors="replace"))),
       excel=st.booleans())
def test_no_file_breaks_the_check(company, content, excel):
    """Whatever the file (random bytes, another encoding, an .xlsx that is not one), the check ends with a state
    the page shows, never a job left "being checked" or a server error."""
    name = "yevmiye.xlsx" if excel else "yevmiye.txt"
    journal = services.journal_create(
        company=company, user=None, source=upload(name, content or b"\0"), start=MARCH, end=date(2025, 3, 31),
        split_size=10, time_stamp=False, without_tax_detail=False,
        y_line={"fiscal_year_start": date(2025, 1, 1), "fiscal_year_end": date(2025, 12, 31), "batch_id": "0",
                "entity_identifier": VKN} if excel else None)
    checking.journal_check(journal.pk)
    journal.refresh_from_db()
    assert journal.check_state in (CheckState.ERRORS, CheckState.UNREADABLE)
    assert journal.check_message or journal.findings_count
    assert not journal.archive


def test_odd_requests_get_pages_not_errors(web, company):
    journal = checked(company)
    huge = web.get(reverse("ledger:journal_detail", args=[journal.pk]) + "?page=99999999999999999999999")
    assert huge.status_code == 200
    journal.archive.storage.delete(journal.archive.name)  # the ZIP gone from the storage
    page = web.get(reverse("ledger:journal_detail", args=[journal.pk]))
    assert page.status_code == 200 and "ZIP is missing" in page.content.decode()
    assert "ZIP is missing" in web.get(reverse("ledger:journal_upload", args=[journal.pk])).content.decode()
    answer = web.post(reverse("ledger:journal_upload", args=[journal.pk]), follow=True)
    assert answer.status_code == 200 and Journal.objects.get(pk=journal.pk).sync_state == SyncState.LOCAL
    response = form_post(web, ADD, data(start_date="0001-01-01", end_date="0001-01-31"))
    assert "between 2000 and 2099" in errors_of(response)["start_date"][0]


def test_an_xlsx_that_is_not_one_is_said_so(company):
    journal = services.journal_create(
        company=company, user=None, source=upload("yevmiye.xlsx", b"PK\x03\x04 not really"), start=MARCH,
        end=date(2025, 3, 31), split_size=10, time_stamp=False, without_tax_detail=False,
        y_line={"fiscal_year_start": date(2025, 1, 1), "fiscal_year_end": date(2025, 12, 31), "batch_id": "0",
                "entity_identifier": VKN})
    checking.journal_check(journal.pk)
    journal.refresh_from_db()
    assert journal.check_state == CheckState.UNREADABLE and "Excel" in journal.check_message


def test_a_company_switched_in_another_tab_saves_nothing(web, company, other_company, accountant):
    from backoffice.core.models import Membership
    from tests.conftest import guard_fields

    Membership.objects.get_or_create(user=accountant, company=other_company)
    key = guard_fields(web.get(ADD).content.decode())
    web.post(reverse("core:switch_company"), {"company": other_company.pk, "next": "/"})  # the other tab
    response = web.post(ADD, {**key, **data()})
    assert response.status_code in (200, 400) and "in another tab" in response.content.decode()
    assert not Journal.objects.exists()
