"""Issue 28 on the Excel imports (current accounts and the chart of accounts, one form): every hostile shape
refused on the file's field within a second or two, in the user's language, nothing saved; a header error stops
the read."""

import io
import time

import pytest
from django.urls import reverse

from backoffice.chart_of_accounts.models import Account
from backoffice.current_accounts.models import CurrentAccount
from tests.conftest import form_post
from tests.core import hostile_xlsx as hostile
from tests.tickets.conftest import login

pytestmark = pytest.mark.django_db

IMPORT = reverse("current_accounts:currentaccount_import")
HEADERS = {"accounts": ("name", "identifier"), "chart": ("type", "name")}
SHAPES = {
    "bomb-by-ratio": (hostile.ratio_bomb, "a real workbook packs at most 100 times"),
    "bomb-by-total": (hostile.total_bomb, "more than the 96 MB allowed"),
    "rows-without-dimension": (hostile.far_row, "more than 20.000 rows (empty rows count too)"),
    "path-traversal": (lambda header: hostile.traversal("../../evil.xml", header), "a name no workbook has"),
}


def upload(content: bytes):
    out = io.BytesIO(content)
    out.name = "hesaplar.xlsx"
    return out


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("kind", ["accounts", "chart"])
def test_a_hostile_workbook_is_refused_on_the_file_field(client, accountant, company, kind, shape):
    web = login(client, accountant, company)
    build, words = SHAPES[shape]
    started = time.monotonic()
    response = form_post(web, IMPORT, {"kind": kind, "file": upload(build(HEADERS[kind]))})
    assert time.monotonic() - started < 5
    assert response.status_code == 200
    assert any(words in message for message in response.context["form"].errors["file"]), \
        response.context["form"].errors
    assert not CurrentAccount.objects.exists() and not Account.objects.exists()


def test_the_refusal_is_in_the_users_language(client, accountant, company):
    web = login(client, accountant, company, language="tr")
    response = form_post(web, IMPORT, {"kind": "chart", "file": upload(hostile.ratio_bomb())})
    message = " ".join(response.context["form"].errors["file"])
    assert "Excel" in message and "packs at most" not in message
    assert not Account.objects.exists()


def test_a_header_error_stops_the_read(client, accountant, company):
    """The rows after an unknown column are not read against the wrong columns: only the header is named."""
    web = login(client, accountant, company)
    content = hostile.build([b'<row r="2"><c r="A2" t="inlineStr"><is><t>muavin</t></is></c></row>'],
                            header=("type", "name", "shoe size"))
    response = form_post(web, IMPORT, {"kind": "chart", "file": upload(content)})
    errors = response.context["errors"]
    assert errors and {error.row for error in errors} == {1}
    assert response.context["checked"].rows == []  # no row was read against the wrong columns
    assert any("Unknown column" in error.message for error in errors)
    assert not Account.objects.exists()


def test_rows_are_named_by_their_row_in_the_sheet_whatever_comes_before_the_header(client, accountant, company):
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    for column, value in enumerate(("type", "name"), start=1):  # the header on row 3, under two empty rows
        sheet.cell(row=3, column=column, value=value)
    sheet.cell(row=5, column=1, value="nonsense")
    sheet.cell(row=5, column=2, value="Kasa")
    out = io.BytesIO()
    book.save(out)
    web = login(client, accountant, company)
    response = form_post(web, IMPORT, {"kind": "chart", "file": upload(out.getvalue())})
    assert {(error.row, error.column) for error in response.context["errors"]} == {(5, "A")}
    assert not Account.objects.exists()
