"""The Excel side of the journal (backoffice/ledger/workbook.py): the template, its conversion into the text the
checker reads (and the sheet row of every text line), and the findings report."""

import io
from datetime import date, datetime

import pytest
from django.utils import translation
from openpyxl import Workbook, load_workbook

from backoffice.ledger import workbook
from backoffice.ledger.journal import JournalCheck, Options
from backoffice.ledger.workbook import TEMPLATE_COLUMNS, WorkbookError, YLine, xlsx_to_text
from backoffice.ledger.workbook_writer import findings_report, template

START, END = date(2025, 1, 1), date(2025, 1, 31)
Y = YLine(date(2025, 1, 1), date(2025, 12, 31), "0", "1234567890")


@pytest.fixture(autouse=True)
def english():
    with translation.override("en"):
        yield


def convert(data: bytes, **options):
    out = io.BytesIO()
    rows = xlsx_to_text(io.BytesIO(data), out, Y, **options)
    return out.getvalue(), rows


def check(text: bytes):
    # As the product checks an Excel journal: the H totals are the converter's sums, never the sheet's mistake.
    checker = JournalCheck(Options(START, END, derived_totals=True))
    return list(checker.run([text])), checker.summary


def sheet(header, rows) -> bytes:
    book = Workbook()
    ws = book.active
    ws.append(header)
    for row in rows:
        ws.append(row)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


HEADER = ["entryNumberCounter", "enteredBy", "enteredDate", "entryNumber", "entryComment", "accountMainID",
          "accountMainDescription", "accountSubID", "amount", "debitCreditCode", "documentType", "documentNumber",
          "documentDate"]


def entries():
    """Three entries as Excel holds them: dates as dates, amounts as numbers, account ids typed as numbers."""
    return [
        [1, "Ayşe", datetime(2025, 1, 2), "YEV-1", "Satış", 120, "Alıcılar", "120.01", 1180, "D", "invoice",
         "GIB2025000000001", date(2025, 1, 2)],
        [1, "Ayşe", datetime(2025, 1, 2), "YEV-1", "Satış", 600, "Yurt içi satışlar", None, 1000, "C", "invoice",
         "GIB2025000000001", date(2025, 1, 2)],
        [1, "Ayşe", datetime(2025, 1, 2), "YEV-1", "Satış", 391, "Hesaplanan KDV", "", 180.0, "C", "invoice",
         "GIB2025000000001", date(2025, 1, 2)],
        [2, "Ayşe", datetime(2025, 1, 6), "YEV-2", None, 770, "Genel yönetim giderleri", None, 12.5, "D", "voucher"],
        [2, "Ayşe", datetime(2025, 1, 6), "YEV-2", None, 100, "Kasa", None, 12.5, "C", "voucher"],
        [3, "Ayşe", datetime(2025, 1, 9), "YEV-3", None, 153, "Ticari mallar", None, 0.1, "D", "voucher"],
        [3, "Ayşe", datetime(2025, 1, 9), "YEV-3", None, 320, "Satıcılar", None, 0.1, "C", "voucher"],
    ]


def test_the_template_reads_back_and_its_example_is_not_read():
    data = template()
    book = load_workbook(io.BytesIO(data))
    assert book.sheetnames == ["Journal", "Explanation"]
    headers = [cell.value for cell in book["Journal"][1]]
    assert headers[0] == "Entry counter *" and len(headers) == len(TEMPLATE_COLUMNS) == 31
    assert book["Journal"].freeze_panes == "A2"
    # The example entry alone: refused with what to do, not uploaded as the month's first entry (issue 29).
    with pytest.raises(WorkbookError, match="only the template's example entry"):
        convert(data)


def filled_template(rows, *, language="en") -> bytes:
    """The template as an accountant fills it: its header and its example entry kept, their rows added below,
    each by the template's own columns ({field: value})."""
    with translation.override(language):
        book = load_workbook(io.BytesIO(template()))
    ws = book.worksheets[0]
    for row in rows:
        ws.append([row.get(column.key) for column in TEMPLATE_COLUMNS])
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def line(counter, main, name, amount, code, kind="voucher", **more):
    return {"entryNumberCounter": counter, "enteredBy": "Ayşe", "enteredDate": datetime(2025, 1, 2 + counter),
            "entryNumber": f"YEV-{counter}", "accountMainID": main, "accountMainDescription": name, "amount": amount,
            "debitCreditCode": code, "documentType": kind, **more}


def test_the_kept_example_entry_is_skipped_and_only_the_users_rows_are_read():
    data = filled_template([line(1, "770", "Genel yönetim giderleri", "1.250,75", "D"),
                            line(1, "100", "Kasa", 1250.75, "C")], language="tr")
    text, rows = convert(data)
    assert check(text)[0] == []
    assert list(rows) == [0, 4, 4, 5] and rows.skipped == [2, 3]
    assert b"YEV-2025-1" not in text and b"Genel y\xc3\xb6netim" in text


def test_an_example_row_changed_or_alone_is_read_as_a_row():
    book = load_workbook(io.BytesIO(template()))
    ws = book.worksheets[0]
    ws.cell(row=3, column=10, value=999)  # the credit row's amount: no longer the example
    out = io.BytesIO()
    book.save(out)
    text, rows = convert(out.getvalue())
    assert rows.skipped == [] and list(rows) == [0, 2, 2, 3]
    assert [f.rule for f in check(text)[0]] == ["entry_balance"]


@pytest.mark.parametrize("typed, written", [("1.250,75", "1250.75"), ("1250,75", "1250.75"), ("5.000", "5000"),
                                            ("5,000", "5.00"), ("1250.75", "1250.75"), (" 12 ", "12"),
                                            (1250.75, "1250.75"), (1000, "1000")])
def test_amounts_typed_the_turkish_way_or_as_numbers(typed, written):
    data = filled_template([line(1, "770", "Giderler", typed, "D"), line(1, "100", "Kasa", typed, "C")])
    text, _rows = convert(data)
    assert check(text)[0] == []
    assert text.decode().split("\n")[2].split("\t")[6] == written


@pytest.mark.parametrize("typed, code", [
    ("fatura", "invoice"), ("FATURA", "invoice"), ("Fatura", "invoice"), ("çek", "check"), ("Çek", "check"),
    ("ÇEK", "check"), ("cek", "check"), ("senet", "voucher"), ("SENET", "voucher"), ("makbuz", "voucher"),
    ("Senet/Makbuz", "voucher"), ("fiş", "voucher"), ("FİŞ", "voucher"), ("diğer", "other"), ("DİĞER", "other"),
    ("Diğer", "other"), ("invoice", "invoice"), ("check", "check"), ("voucher", "voucher"), ("other", "other"),
    ("INVOICE", "invoice")])
def test_document_types_in_turkish_or_as_the_tax_authoritys_codes(typed, code):
    extra = {"documentNumber": "GIB2025000000001", "documentDate": date(2025, 1, 3),
             "documentTypeDescription": "Kira"}
    data = filled_template([line(1, "770", "Giderler", 100, "D", typed, **extra),
                            line(1, "100", "Kasa", 100, "C", typed, **extra)])
    text, _rows = convert(data)
    assert check(text)[0] == []
    assert [row.split("\t")[9] for row in text.decode().split("\n")[2:4]] == [code, code]


def test_an_unknown_document_type_is_refused_on_its_row():
    data = filled_template([line(1, "770", "Giderler", 100, "D"), line(1, "100", "Kasa", 100, "C", "kuş")])
    text, rows = convert(data)
    findings, _ = check(text)
    assert [(f.rule, f.field, f.found, rows[f.line - 1]) for f in findings] == [
        ("document_type", "documentType", "kuş", 5)]


def test_a_filled_workbook_becomes_a_journal_that_passes():
    text, rows = convert(sheet(HEADER, entries()))
    findings, summary = check(text)
    assert findings == []
    assert (summary.entries, summary.entry_lines, summary.debit_cents) == (3, 7, 119260)
    assert list(rows) == [0, 2, 2, 3, 4, 5, 5, 6, 7, 7, 8]
    lines = text.decode().split("\n")
    assert lines[2] == ("1\t1\t120\tAlıcılar\t\t120.01\t1180\tD\t2025-01-02\tinvoice\t\tGIB2025000000001\t\t"
                        "2025-01-02\t\t\t")
    assert lines[4].split("\t")[6] == "180" and lines[9].split("\t")[6] == "0.1"
    assert lines[5] == "H\tAyşe\t2025-01-06\tYEV-2\t\t12.50\t12.50\t2"


def test_headers_in_either_language_or_as_field_names_in_any_order_and_case():
    header = [name.upper() for name in reversed(HEADER)]
    header[HEADER.index("amount") * -1 - 1] = "Tutar"  # the Turkish header of amount
    rows = [list(reversed(row + [None] * (len(HEADER) - len(row)))) for row in entries()]
    text, _rows = convert(sheet(header, rows))
    assert check(text)[0] == []


def test_a_wrong_amount_comes_back_as_its_row():
    rows = entries()
    rows[3][8] = "12,5,0"  # row 5 of the sheet: the header is row 1
    text, sheet_rows = convert(sheet(HEADER, rows))
    findings, _ = check(text)
    # Only the sheet's own mistake: the H line's totals are the converter's sums, not judged again.
    assert [(f.rule, f.field, f.found, f.expected, sheet_rows[f.line - 1]) for f in findings] == [
        ("amount_format", "amount", "12,5,0", "digits with a dot before the decimals, e.g. 1250.50", 5)]


def test_numbers_are_written_as_excel_holds_them():
    rows = entries()
    rows[5][8] = rows[6][8] = 12.345  # row 7 and 8: no rounding, the checker names it
    rows[1][2] = "02.01.2025"  # a date typed as text is kept as typed: row 3's posting date
    text, sheet_rows = convert(sheet(HEADER, rows))
    findings, _ = check(text)
    assert [(f.rule, f.field, f.found, f.expected, sheet_rows[f.line - 1]) for f in findings] == [
        ("date_format", "postingDate", "02.01.2025", "2025-01-02", 3),
        ("amount_decimals", "amount", "12.345", "at most 2 decimals", 7),
        ("amount_decimals", "amount", "12.345", "at most 2 decimals", 8)]
    assert "\t12.345\tD\t" in text.decode()


def test_empty_rows_are_skipped_and_cells_cannot_break_a_line():
    rows = entries()
    rows.insert(2, [None] * len(HEADER))
    rows[0][4] = "Satış\tfaturası\nikinci satır"
    text, sheet_rows = convert(sheet(HEADER, rows))
    assert check(text)[0] == []
    assert "Satış faturası ikinci satır" in text.decode()
    assert list(sheet_rows)[:5] == [0, 2, 2, 3, 5]


def test_counters_start_where_asked():
    text, _rows = convert(sheet(HEADER, entries()), first_line_counter=41)
    assert text.split(b"\n")[2].startswith(b"41\t41\t")


@pytest.mark.parametrize("first", [1, 41])
def test_line_numbers_run_on_through_the_period_as_documented(first):
    """The converter writes lineNumber running on (the documented way), as the template's explanation says."""
    text, _rows = convert(sheet(HEADER, entries()), first_line_counter=first)
    numbers = [line.split("\t")[:2] for line in text.decode().split("\n")[1:] if line and not line.startswith("H\t")]
    assert numbers == [[str(n), str(n)] for n in range(first, first + 7)]
    checker = JournalCheck(Options(START, END, derived_totals=True, first_line_counter=first))
    assert list(checker.run([text])) == []
    notes = [row[0] for row in load_workbook(io.BytesIO(template()))["Explanation"].iter_rows(values_only=True)]
    assert any(note and "Line numbers" in note and "running on through the period" in note for note in notes)


def test_a_large_entry_goes_through_a_temporary_file(monkeypatch):
    monkeypatch.setattr(workbook, "SPILL_BYTES", 100)
    small, rows_small = convert(sheet(HEADER, entries()))
    monkeypatch.undo()
    assert convert(sheet(HEADER, entries())) == (small, rows_small)


def test_a_missing_column_names_it():
    header = [name for name in HEADER if name not in ("amount", "debitCreditCode")]
    with pytest.raises(WorkbookError, match="Required column missing: “Amount”, “Debit or credit \\(D/C\\)”"):
        convert(sheet(header, []))


def test_unknown_and_repeated_columns_and_files_that_are_no_workbook():
    with pytest.raises(WorkbookError, match="Unknown column “Notlar” \\(column N\\)"):
        convert(sheet(HEADER + ["Notlar"], entries()))
    with pytest.raises(WorkbookError, match="appears twice"):
        convert(sheet(HEADER + ["Amount"], entries()))
    with pytest.raises(WorkbookError, match="not an Excel"):
        convert(b"Y\t2025-01-01\n")
    with pytest.raises(WorkbookError, match="empty"):
        convert(sheet([], []))


def test_the_findings_report():
    text, sheet_rows = convert(sheet(HEADER, [row if i != 3 else row[:8] + ["12,5,0"] + row[9:]
                                              for i, row in enumerate(entries())]))
    findings, summary = check(text)
    out = io.BytesIO()
    findings_report(out, findings, summary.by_rule | {"entry_balance": 5}, source_rows=sheet_rows)
    book = load_workbook(io.BytesIO(out.getvalue()))
    assert book.sheetnames == ["Summary", "Errors"]
    assert [[cell.value for cell in row] for row in book["Summary"].iter_rows()] == [
        ["Rule", "Errors"],
        ["An entry's debit equals its credit.", 5],
        ["Amounts are written with digits and a dot before the decimals, with no thousands separator: 1250.50.", 1],
        ["In all", 6]]
    errors = book["Errors"]
    assert errors.freeze_panes == "A2" and errors["A1"].font.bold
    assert [[cell.value for cell in row] for row in errors.iter_rows()] == [
        ["Row", "Field", "Rule", "Found", "Expected"],
        [5, "Amount (amount)", "Amounts are written with digits and a dot before the decimals, with no thousands "
                               "separator: 1250.50.", "12,5,0", "digits with a dot before the decimals, e.g. 1250.50"]]
    out = io.BytesIO()
    findings_report(out, findings, summary.by_rule)  # a text journal: the line numbers
    assert [cell.value for cell in load_workbook(io.BytesIO(out.getvalue()))["Errors"]["A"]] == ["Line", 7]


@pytest.mark.parametrize("amount,rule", [("-5", "amount_positive"), ("12,5,0", "amount_format")])
def test_a_wrong_amount_is_reported_once_on_its_own_row(amount, rule):
    rows = entries()
    rows[3][8] = amount
    text, sheet_rows = convert(sheet(HEADER, rows))
    findings, _ = check(text)
    assert [(f.rule, f.field, sheet_rows[f.line - 1]) for f in findings] == [(rule, "amount", 5)]


def test_an_entry_of_credit_rows_only_is_unbalanced_and_nothing_else():
    rows = entries()
    rows[3][9] = "C"  # the debit row of the second entry (sheet row 5, its first) turned into a credit
    text, sheet_rows = convert(sheet(HEADER, rows))
    findings, _ = check(text)
    assert [(f.rule, sheet_rows[f.line - 1]) for f in findings] == [("entry_balance", 5)]
