"""Issue 28, hostile spreadsheets: each hostile shape read by the product's own entry points (the import reader of
the current accounts and the chart, the journal's check and conversion) in a fresh process, which reports its
time and peak memory: refused (or read) within 10 s and 300 MB, with the refusal said. The process has 2 GB of
address space at most, so that a reader that does not hold the bound fails here instead of taking the machine."""

import io
import json
import os
import resource
import subprocess
import sys
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest
from django.utils import translation
from openpyxl import Workbook, load_workbook

from backoffice.core import workbooks
from backoffice.ledger.workbook import TEMPLATE_COLUMNS

from . import hostile_xlsx as hostile

ROOT = Path(__file__).resolve().parents[2]
SECONDS, PEAK_MB = 10, 300
JOURNAL_HEADER = tuple(column.key for column in TEMPLATE_COLUMNS if column.required)
HEADERS = {"import": ("type", "name"), "journal": JOURNAL_HEADER}

CHILD = r"""
import io, json, os, sys, time
import django
django.setup()
from django.utils import translation
translation.activate("en")
path, kind = sys.argv[1], sys.argv[2]
result = {"message": "", "types": []}
started = time.monotonic()
try:
    with open(path, "rb") as source:
        if kind == "import":
            from backoffice.core import imports
            from backoffice.chart_of_accounts.imports import CHART_SHEET
            checked = imports.read(source, CHART_SHEET)
            result["message"] = "; ".join(error.message for error in checked.errors)
            rows = [[values.get("type", ""), values.get("name", "")] for _number, values in checked.rows]
            # written back as the product writes a workbook (exports, reports), then read as Excel would
            from openpyxl import Workbook, load_workbook
            from backoffice.core import workbooks
            book = Workbook(write_only=True)
            sheet = book.create_sheet()
            for row in rows:
                workbooks.append(sheet, row)
            out = io.BytesIO()
            book.save(out)
            result["types"] = [[cell.value, cell.data_type] for row in load_workbook(out).active.iter_rows()
                               for cell in row]
        else:
            from datetime import date
            from backoffice.ledger import workbook
            workbook.check_size(source)
            with open(os.devnull, "wb") as out:
                workbook.xlsx_to_text(source, out, workbook.YLine(date(2025, 1, 1), date(2025, 12, 31), "0",
                                                                  "1234567890"))
except Exception as exc:
    result["message"] = f"{type(exc).__name__}: {exc}"
result["seconds"] = time.monotonic() - started
# VmHWM: the peak of this program's own memory. Not ru_maxrss, which keeps across exec the peak of the process
# it was forked from (a pytest of 375 MB late in a full run).
with open("/proc/self/status") as status:
    result["peak_mb"] = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) / 1024
print(json.dumps(result))
"""


def _address_space():
    resource.setrlimit(resource.RLIMIT_AS, (2 * 1024 ** 3, 2 * 1024 ** 3))


def measured(data: bytes, kind: str, tmp_path, **env) -> dict:
    """The product's reading of `data` in a fresh process: its answer, seconds and peak memory (MB)."""
    path = tmp_path / "upload.xlsx"
    path.write_bytes(data)
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "backoffice.settings", "DJANGO_DEVELOPMENT": "1",
                   "PYTHONPATH": str(ROOT), **env}
    try:
        done = subprocess.run([sys.executable, "-c", CHILD, str(path), kind], capture_output=True, text=True,
                              env=environment, cwd=ROOT, timeout=60, preexec_fn=_address_space)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the {kind} reader took more than 60 s")
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def assert_bound(result):
    assert result["seconds"] <= SECONDS, result
    assert result["peak_mb"] <= PEAK_MB, result


@pytest.mark.parametrize("kind", ["import", "journal"])
def test_a_bomb_by_ratio_is_refused_on_its_zip_directory(kind, tmp_path):
    result = measured(hostile.ratio_bomb(HEADERS[kind]), kind, tmp_path)
    assert_bound(result)
    assert "a real workbook packs at most 100 times" in result["message"], result


@pytest.mark.parametrize("kind,env,words", [
    ("import", {}, "more than the 96 MB allowed"),
    # the journal's 1 GB is scaled down here: building a gigabyte in a test would take longer than its check
    ("journal", {"LEDGER_MAX_XLSX_UNPACKED_BYTES": str(64 * 1024 ** 2)}, "more than the 64 MB allowed"),
])
def test_a_bomb_by_total_is_refused_on_its_zip_directory(kind, env, words, tmp_path):
    result = measured(hostile.total_bomb(HEADERS[kind]), kind, tmp_path, **env)
    assert_bound(result)
    assert words in result["message"], result


@pytest.mark.parametrize("shape", [hostile.empty_rows, hostile.far_row], ids=["empty-rows", "a-row-far-down"])
@pytest.mark.parametrize("kind,words", [("import", "more than 20.000 rows"),
                                        ("journal", "more than 20.000 rows")])
def test_rows_without_dimension_count_empty_ones_and_stop_at_the_ceiling(shape, kind, words, tmp_path):
    result = measured(shape(HEADERS[kind]), kind, tmp_path)
    assert_bound(result)
    assert words in result["message"] and "empty rows count too" in result["message"], result


def test_formula_text_is_read_as_text_and_written_back_as_text(tmp_path):
    result = measured(hostile.formula_text(), "import", tmp_path)
    assert_bound(result)
    written = {value: data_type for value, data_type in result["types"]}
    # (the import trims a cell, so the tab and CR shapes arrive as "TAB" and "CR": the writer's own test has them)
    for text in ('=HYPERLINK("http://example.invalid","x")', "+1+1", "-2+3", "@SUM(A1)", "=1+1"):
        assert written.get(text) == "s", (text, result["types"])
    assert "f" not in written.values()
    assert written.get("2") == "s"  # the real formula's value as Excel kept it, never the formula


@pytest.mark.parametrize("name", ["../../evil.xml", "/etc/evil.xml", "xl\\..\\..\\evil.xml"])
@pytest.mark.parametrize("kind", ["import", "journal"])
def test_a_part_named_out_of_the_archive_is_refused(kind, name, tmp_path):
    result = measured(hostile.traversal(name, HEADERS[kind]), kind, tmp_path)
    assert_bound(result)
    assert "a name no workbook has" in result["message"], result


@pytest.mark.parametrize("part", [hostile.SHEET, "xl/styles.xml"], ids=["in-the-sheet", "in-the-styles"])
@pytest.mark.parametrize("kind", ["import", "journal"])
def test_a_doctype_with_entities_is_refused_before_any_parser_expands_them(kind, part, tmp_path):
    """A few KB declaring entities that expand to 400 MB (899 MB of peak memory before): refused on its prolog."""
    result = measured(hostile.entities(HEADERS[kind], part), kind, tmp_path)
    assert_bound(result)
    assert f"document type declaration ({part})" in result["message"], result


@pytest.mark.parametrize("kind", ["import", "journal"])
def test_styles_past_their_limit_are_refused_on_the_zip_directory(kind, tmp_path):
    """openpyxl parses styles whole (16 MB took 15 s and 560 MB): a styles part over 2 MB is refused unread."""
    result = measured(hostile.big_styles(HEADERS[kind], size=16 * hostile.MB), kind, tmp_path)
    assert_bound(result)
    assert "more than the 2 MB a workbook's styles and settings take" in result["message"], result


@pytest.mark.slow
@pytest.mark.parametrize("shape", [
    lambda header: hostile.big_styles(header, size=1_900_000),  # just under the styles' limit
    hostile.big_strings,  # a million shared strings, just under their 16 MB
    hostile.wide,  # every cell of the rows and columns allowed: the most cells a sheet under the limits has
], ids=["styles-under-the-limit", "shared-strings-under-the-limit", "every-cell-filled"])
@pytest.mark.parametrize("kind", ["import", "journal"])
def test_the_largest_workbook_the_limits_let_through_is_read_or_refused_within_the_bound(kind, shape, tmp_path):
    """What passes the ZIP directory's checks is read within the bound, or refused by the read's own clock (on a
    machine slow enough) with a message; never more than 10 s or 300 MB. Slow (up to 10 s on a busy machine): the
    largest file the limits let through, read in a process of its own so that its time and memory are its own."""
    result = measured(shape(HEADERS[kind]), kind, tmp_path)
    assert_bound(result)
    assert "could not be read" not in result["message"], result  # read as a workbook, not failed as damaged


# --- the writer, in this process ------------------------------------------------------------------------------
@pytest.mark.parametrize("write_only", [True, False])
def test_the_writer_keeps_formula_like_text_as_text_shown_as_typed(write_only):
    book = Workbook(write_only=write_only)
    sheet = book.create_sheet() if write_only else book.active
    texts = ["=1+1", "+1", "-1", "@A1", "\tx", "\rx", "plain", "a=b"]
    workbooks.append(sheet, texts + [12, None])
    out = io.BytesIO()
    book.save(out)
    cells = list(load_workbook(out).active.iter_rows())[0]
    assert [cell.value for cell in cells[:8]] == texts and cells[8].value == 12
    assert [cell.data_type for cell in cells[:8]] == ["s"] * 8
    assert [bool(cell.quotePrefix) for cell in cells[:8]] == [True] * 6 + [False, False]


def test_refusals_are_in_the_users_language():
    with translation.override("tr"):
        with pytest.raises(workbooks.WorkbookRefused) as refused:
            workbooks.inspect(io.BytesIO(hostile.ratio_bomb()), workbooks.Limits(64 << 20, 16 << 20, 96 << 20,
                                                                                 20_000, 64))
    assert "Excel" in str(refused.value) and "packs at most" not in str(refused.value)


def test_a_zip_of_too_many_parts_is_refused_before_its_directory_is_read():
    data = hostile.build(extra=[(f"xl/media/{index}.bin", [b""]) for index in range(250)])
    with translation.override("en"):
        with pytest.raises(workbooks.WorkbookRefused, match="parts, more than the 200 a workbook has"):
            workbooks.inspect(io.BytesIO(data), workbooks.Limits(64 << 20, 16 << 20, 96 << 20, 20_000, 64))
        with pytest.raises(workbooks.WorkbookRefused, match="not an Excel"):
            workbooks.inspect(io.BytesIO(b"PK\x03\x04 not really"), workbooks.Limits(1, 1, 1, 1, 1))


IMPORT_LIMITS = workbooks.Limits(64 << 20, 16 << 20, 96 << 20, 20_000, 64)


@pytest.mark.parametrize("body,words", [
    ([b'<row r="2"><c r="BM2"><v>1</v></c></row>'], "values beyond column BL"),  # column 65
    ([b'<row r="2">' + b"<c/>" * (800 * 1024) + b"</row>"], "A row of the sheet takes more than 2 MB"),
], ids=["a-value-past-the-columns", "a-row-of-millions-of-cells"])
def test_a_row_too_wide_is_refused_while_reading(body, words):
    limits = replace(IMPORT_LIMITS, ratio=10_000)  # past the ratio's guard, as a row that packs loosely would be
    with translation.override("en"), pytest.raises(workbooks.WorkbookRefused, match=words):
        list(workbooks.read_sheet(io.BytesIO(hostile.build(body)), limits))


def test_a_read_past_its_time_is_refused(settings):
    from backoffice.core import imports
    from backoffice.chart_of_accounts.imports import CHART_SHEET

    settings.IMPORT_XLSX_READ_SECONDS = 1e-9
    with translation.override("en"), pytest.raises(imports.ImportFileError, match="took longer than"):
        imports.read(io.BytesIO(hostile.empty_rows(rows=5000)), CHART_SHEET)


def _xml_part(root: str, size: int):
    yield b'<?xml version="1.0"?><%s xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">' % root.encode()
    for _ in range(size // 100_000):
        yield b"<x>" + b"%0194d" % 7 * 500 + b"</x>"
    yield b"</%s>" % root.encode()


def test_big_parts_nobody_parses_pass_as_in_a_real_workbook():
    """A pivot cache or a drawing of a few MB (real workbooks have them) is never parsed: only its prolog is read."""
    data = hostile.build(extra=[("xl/pivotCache/pivotCacheRecords1.xml", _xml_part("pivotCacheRecords", 3 << 20)),
                                ("xl/drawings/drawing1.xml", _xml_part("wsDr", 3 << 20))])
    with translation.override("en"):
        assert list(workbooks.read_sheet(io.BytesIO(data), replace(IMPORT_LIMITS, ratio=10_000))) == [
            ("type", "name")]


def test_the_workbook_part_is_held_to_its_limit_under_whatever_name_the_manifest_gives_it():
    data = hostile.build()
    for name, old, new in (("[Content_Types].xml", b"/xl/workbook.xml", b"/xl/book.dat"),
                           ("_rels/.rels", b"xl/workbook.xml", b"xl/book.dat")):
        data = hostile._edited(data, name, lambda xml, old=old, new=new: xml.replace(old, new))
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        book, rels = archive.read("xl/workbook.xml"), archive.read("xl/_rels/workbook.xml.rels")
    data = hostile._replaced(data, "xl/_rels/book.dat.rels", [rels])
    data = hostile._replaced(data, "xl/book.dat", [book.replace(b"</workbook>", b"".join(
        _xml_part("x", 3 << 20)) + b"</workbook>")])
    with translation.override("en"), pytest.raises(workbooks.WorkbookRefused, match=r"\(xl/book.dat\) unpacks to "
                                                                                      r"2.8 MB, more than the 2 MB"):
        list(workbooks.read_sheet(io.BytesIO(data), replace(IMPORT_LIMITS, ratio=10_000)))


@pytest.mark.parametrize("shape,words", [
    (hostile.renamed_root, "([Content_Types].xml) unpacks to 15"),  # a part's role by its name, not its root
    (hostile.wrapped_rows, "misplaced element"),
    (hostile.utf32_part, "(xl/styles.xml) is not XML as Excel writes it"),
    (hostile.long_prolog, "(xl/worksheets/sheet1.xml) is not XML as Excel writes it"),
    (hostile.external_links, ""),  # read: openpyxl is not let to parse the link once per reference
], ids=["manifest-root-renamed", "rows-wrapped", "utf-32-part", "long-prolog", "external-links"])
@pytest.mark.parametrize("kind", ["import", "journal"])
def test_what_a_review_found_past_the_first_checks_holds_the_bound(kind, shape, words, tmp_path):
    result = measured(shape(HEADERS[kind]), kind, tmp_path)
    assert_bound(result)
    assert words in result["message"], result
    if not words:
        assert "could not be read" not in result["message"] and "Excel" not in result["message"], result


def test_the_reader_reads_cells_as_openpyxl_does():
    """The reader reads cells itself (issue 28: openpyxl's cell parser was too slow for the bound); what openpyxl's
    read-only, data-only reader gives for the same sheet is what it gives, odd shapes included."""
    rows = [
        b'<row r="2.0"><c r="A2"><v>5</v></c><c r="B2" t="inlineStr"><is><t>a<!--x-->b</t></is></c></row>',
        b'<row><c r="A3" t="b"><v>1</v></c><c r="B3" t="e"><v>#N/A</v></c><c r="C3" t="str"><f>1&amp;2</f>'
        b'<v>12</v></c></row>',
        b'<row r="4"><c t="inlineStr"><is><r><t>zengin </t></r><r><t>metin</t></r><rPh sb="0" eb="1"><t>x</t></rPh></is></c>'
        b'<c><v>1.5E3</v></c><c r="E4"><v>-7</v></c><c r="E4"><v>8</v></c></row>',
        b'<row r="6"><c r="A6" t="d"><v>2026-03-05T10:30:00</v></c><c r="B6" t="inlineStr"><is><t>x005F_y</t></is></c>'
        b'</row>',
    ]
    data = hostile.build(rows)
    ours = list(workbooks.read_sheet(io.BytesIO(data), IMPORT_LIMITS))
    theirs = [tuple(value for value in row) for row in load_workbook(io.BytesIO(data), read_only=True,
                                                                        data_only=True).active.values]

    def trimmed(row):
        row = list(row)
        while row and row[-1] is None:
            row.pop()
        return tuple(row)
    assert [trimmed(row) for row in ours] == [trimmed(row) for row in theirs]
    # an empty style (openpyxl's read-only cell fails on it): the plain number
    odd = hostile.build([b'<row r="2"><c r="A2" s=""><v>5</v></c></row>'])
    assert list(workbooks.read_sheet(io.BytesIO(odd), IMPORT_LIMITS))[1] == (5,)
