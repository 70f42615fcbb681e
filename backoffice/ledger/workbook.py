"""The journal as an Excel workbook read: the template's columns (one row per entry line, the entry's header
fields repeated on each of its rows) and the conversion of a filled template into the tax authority's text
(document 3, 2.8). workbook_writer.py writes the template and the findings report.

The conversion streams (core.workbooks: the ZIP checked first, then one row at a time; one entry's lines held at
a time and spilled to disk when an entry is very large) and writes the cells as Excel holds them, without
rounding or guessing: 12.345 stays 12.345 and a date typed as text stays that text, so that the checker
(journal.py) names the row and the problem. Two things are read the Turkish way (issue 29): an amount typed as
text (1.250,75 is 1250.75, core.fields.parse_decimal) and a document type written in Turkish (fatura, çek,
senet/makbuz, diğer, in any case), which becomes the tax authority's code. The template's example entry, left as
it is, is skipped.

Pure: no Django model is imported.
"""

import array
import tempfile
from dataclasses import dataclass
from datetime import date, datetime, time
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from django.utils.encoding import force_str
from django.utils.translation import gettext as _
from openpyxl.utils import get_column_letter

from backoffice.core import workbooks
from backoffice.core.conf import tunable
from backoffice.core.fields import NumberFormatError, parse_decimal
from backoffice.core.imports import Column, Sheet, normal_header

from .journal_rules import CURRENCY_FIELDS, FIELD_LABELS, MEASURE_FIELDS

SPILL_BYTES = 4 * 1024 * 1024  # an entry's lines beyond this go to a temporary file


class WorkbookError(Exception):
    """The workbook as a whole cannot be turned into a journal (not an xlsx, a missing column, ...)."""


TEXT, DATE, NUMBER = "@", "yyyy-mm-dd", "0.00"
COLUMN_FORMATS = {}  # field -> the cell format of its template column


def _column(key, required=False, example="", kind=TEXT):
    """A column of the template, headed with what people call the field (journal_rules.FIELD_LABELS)."""
    COLUMN_FORMATS[key] = kind
    return Column(key, FIELD_LABELS[key], required, example)


TEMPLATE_COLUMNS = (
    _column("entryNumberCounter", True, 1, "0"),
    _column("enteredBy", True, "Ayşe Yılmaz"),
    _column("enteredDate", True, date(2025, 1, 31), DATE),
    _column("entryNumber", True, "YEV-2025-1"),
    _column("entryComment", False, "Satış faturası"),
    _column("accountMainID", True, "120"),
    _column("accountMainDescription", True, "Alıcılar"),
    _column("accountSubID", False, "120.01"),
    _column("accountSubDescription", False, "Örnek Müşteri A.Ş."),
    _column("amount", True, 1000, NUMBER),
    _column("debitCreditCode", True, "D"),
    _column("documentType", True, "invoice"),
    _column("documentTypeDescription"),
    _column("documentNumber", False, "GIB2025000000001"),
    _column("documentReference"),
    _column("documentDate", False, date(2025, 1, 31), DATE),
    _column("paymentMethod"),
    _column("detailComment"),
    _column("amountCurrency"),
    _column("amountOriginalExchangeRateDate", kind=DATE),
    _column("amountOriginalAmount", kind=NUMBER),
    _column("amountOriginalCurrency"),
    _column("amountOriginalExchangeRate", kind="0.0000"),
    _column("amountOriginalExchangeRateSource"),
    _column("amountOriginalExchangeRateComment"),
    _column("measurableCode"),
    _column("measurableCodeDescription"),
    _column("measurableQuantity", kind="General"),
    _column("measurableQualifier"),
    _column("measurableUnitOfMeasure"),
    _column("measurableCostPerUnit", kind="General"),
)
# The example's second line: the credit side of the first.
# (The document type is required on every line: the credit line is of the same invoice.)
_EXAMPLE_CREDIT = {"accountMainID": "600", "accountMainDescription": "Yurt içi satışlar", "accountSubID": "600.01",
                   "accountSubDescription": "", "debitCreditCode": "C"}
_LINE_FIELDS = ("accountMainID", "accountMainDescription", "accountSubDescription", "accountSubID", "amount",
                "debitCreditCode")
_DOCUMENT_FIELDS = ("documentType", "documentTypeDescription", "documentNumber", "documentReference", "documentDate",
                    "paymentMethod", "detailComment")


def example_entry() -> tuple[dict, dict]:
    """The template's example entry: its debit and its credit row, {field: value}."""
    debit = {column.key: column.example for column in TEMPLATE_COLUMNS}
    return debit, {**debit, **_EXAMPLE_CREDIT}


# Document types as accountants write them (issue 29), after _folded(): the tax authority's codes themselves, and
# the Turkish names. A name not here is written as typed, and the checker names its row.
DOCUMENT_TYPE_NAMES = {"invoice": "invoice", "check": "check", "voucher": "voucher", "other": "other",
                       "fatura": "invoice", "cek": "check", "senet": "voucher", "makbuz": "voucher",
                       "senet/makbuz": "voucher", "fis": "voucher", "diger": "other"}
# Amount fields read the Turkish way when typed as text; the exchange rate only when it has a comma (a dot with
# three digits after it is ambiguous in a rate, so it is left to the checker as typed).
AMOUNT_FIELDS = ("amount", "amountOriginalAmount", "measurableQuantity", "measurableCostPerUnit")
RATE_FIELDS = ("amountOriginalExchangeRate",)
_FOLD = str.maketrans("ıçğöşü", "icgosu")


def _folded(text: str) -> str:
    """Lowercase the Turkish way (İ is i, I is ı), then without Turkish letters: "ÇEK", "Çek", "cek" alike."""
    text = " ".join(text.replace("İ", "i").replace("I", "ı").lower().split())
    return text.replace(" / ", "/").translate(_FOLD)


def document_type(text: str) -> str:
    """The tax authority's code of a document type written in Turkish or English, or the text as typed."""
    return DOCUMENT_TYPE_NAMES.get(_folded(text), text) if text else text


def turkish_amount(value, *, rate=False):
    """A cell of an amount field as the journal writes it: a number as Excel holds it; text typed the Turkish
    way (1.250,75) as 1250.75; anything else as typed, for the checker to name."""
    if not isinstance(value, str):
        return _cell(value)
    text = _cell(value)
    if not text or (rate and "," not in text):
        return text
    try:
        number = parse_decimal(text)
    except (NumberFormatError, InvalidOperation):
        return text
    if not number.is_finite():
        return text
    if number.as_tuple().exponent < -2 and number == number.quantize(Decimal("0.01")):
        number = number.quantize(Decimal("0.01"))  # 5,000 is five: written 5.00, not a 3-decimal 5.000
    return format(number, "f")


def max_xlsx_unpacked() -> int:
    return int(tunable("LEDGER_MAX_XLSX_UNPACKED_BYTES", 64 * 1024 ** 2))


def limits() -> workbooks.Limits:
    """The largest journal workbook: LEDGER_XLSX_MAX_ROWS (20,000) rows of the template's 31 columns, every cell
    filled, unpack to about 40 MB with inline text (LEDGER_MAX_XLSX_UNPACKED_BYTES: 64 MB; Excel's shared strings
    make it smaller) and are read and converted in about 5 s at about 100 MB (core.workbooks reads the cells
    itself, some 6 µs a cell); the shared strings stay under LEDGER_XLSX_MAX_PART_BYTES (16 MB: read in about 7 s
    at most), any other XML part under core.workbooks.max_xml_part(), and the read of anything else stops at
    LEDGER_XLSX_READ_SECONDS (9 s): the bound of any upload, 10 s and 300 MB, holds in the worker too. A larger
    journal is uploaded as the tax authority's text, which is read in 1 MB blocks at about a million lines a
    second."""
    unpacked = max_xlsx_unpacked()
    part = int(tunable("LEDGER_XLSX_MAX_PART_BYTES", 16 * 1024 ** 2))
    return workbooks.Limits(sheet_bytes=unpacked, part_bytes=part, unpacked_bytes=unpacked,
                            rows=int(tunable("LEDGER_XLSX_MAX_ROWS", 20_000)),
                            columns=int(tunable("LEDGER_XLSX_MAX_COLUMNS", 64)),
                            seconds=tunable("LEDGER_XLSX_READ_SECONDS", 9))


def check_size(source) -> None:
    """Refuse an xlsx on its ZIP directory (core.workbooks.inspect), before anything is unpacked: in the upload's
    request, and again in the worker."""
    try:
        workbooks.inspect(source, limits())
    except workbooks.WorkbookRefused as exc:
        raise WorkbookError(str(exc)) from None


# --- the conversion ------------------------------------------------------------------------------------------------
@dataclass
class YLine:
    fiscal_year_start: date
    fiscal_year_end: date
    batch_id: str
    entity_identifier: str


def _headers() -> dict:
    """{normalised header: field} in Turkish and English and as the field's name (core.imports' matching)."""
    return Sheet(_("Journal"), TEMPLATE_COLUMNS).headers()


def _cell(value) -> str:
    """A cell as the journal text writes it: dates yyyy-mm-dd, numbers exactly as Excel holds them, text as
    typed (a tab or line break inside a cell, which the text cannot hold, becomes a space)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, datetime):
        return value.date().isoformat() if value.time() == time(0) else value.isoformat(sep=" ")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value.is_integer():
            return str(int(value))
        return format(Decimal(repr(value)), "f")  # 12.345 stays 12.345: no rounding here
    text = str(value).strip()
    if "\t" in text or "\n" in text or "\r" in text:
        text = " ".join(text.replace("\t", " ").splitlines())
    return text


def _decimal(text: str) -> Decimal:
    """An amount cell's value for the entry's totals: 0 when it cannot be read (its line gets the finding)."""
    try:
        value = Decimal(text)
    except InvalidOperation:
        return Decimal(0)
    return value if value.is_finite() else Decimal(0)


def _total(value: Decimal) -> str:
    """An H total: exact when its lines are (2 decimals); a line with more is named by the checker, on its row."""
    return str(value.quantize(Decimal("0.01"), ROUND_HALF_UP))


class _Lines:
    """One entry's lines, in memory while small, on disk beyond SPILL_BYTES."""

    def __init__(self):
        self.buffer, self.size, self.spill = [], 0, None

    def add(self, data: bytes):
        if self.spill is not None:
            self.spill.write(data)
            return
        self.buffer.append(data)
        self.size += len(data)
        if self.size > SPILL_BYTES:
            self.spill = tempfile.TemporaryFile()
            self.spill.writelines(self.buffer)
            self.buffer = []

    def copy_to(self, out):
        if self.spill is None:
            out.writelines(self.buffer)
            return
        self.spill.seek(0)
        while block := self.spill.read(1024 * 1024):
            out.write(block)
        self.spill.close()


class SheetRows(array.array):
    """The sheet row of each text line, and the rows skipped as the template's example (`skipped`)."""

    def __init__(self, *args):
        self.skipped = []


def _row_cells(values, keys) -> dict:
    """A row's cells by field, as the journal text writes them (amounts and document types read the Turkish way)."""
    cells = {}
    for index, key in keys.items():
        if index >= len(values):
            continue
        value = values[index]
        if key in AMOUNT_FIELDS or key in RATE_FIELDS:
            cells[key] = turkish_amount(value, rate=key in RATE_FIELDS)
        elif key == "documentType":
            cells[key] = document_type(_cell(value))
        else:
            cells[key] = _cell(value)
    return cells


def _example_rows() -> tuple:
    """The template's example entry (its debit and credit rows) as _row_cells reads them back."""
    keys = dict(enumerate(column.key for column in TEMPLATE_COLUMNS))
    return tuple(_row_cells([values[column.key] for column in TEMPLATE_COLUMNS], keys) for values in example_entry())


def _same(cells, example, keys) -> bool:
    return all(cells.get(key, "") == example.get(key, "") for key in keys.values())


def _without_example(numbered, keys, skipped):
    """The non-empty rows, without the template's example entry: its two rows, one after the other, each exactly
    as the template ships it in every column the file has (strict: a real row differs somewhere). One of them
    alone, or changed, is read as a row of the journal."""
    debit, credit = _example_rows()
    held = None
    for number, cells in numbered:
        if not any(cells.values()):
            continue
        if held is not None:
            if _same(cells, credit, keys):
                skipped.extend((held[0], number))
                held = None
                continue
            yield held
            held = None
        if _same(cells, debit, keys):
            held = (number, cells)
            continue
        yield number, cells
    if held is not None:
        yield held


def xlsx_to_text(source, out, y: YLine, first_line_counter: int = 1) -> array.array:
    """The journal text of a workbook in the template (its first sheet), written to `out` (binary, UTF-8, \\n).

    Consecutive rows with the same entry counter make one entry; its H line's totals are the sums of its D and
    C rows. Returns the sheet row of each text line: item k is the row of line k+1 (the Y line 0, an H line the
    row of its entry's first line); its `skipped` holds the rows of the template's example entry, not read."""
    try:
        rows = workbooks.read_sheet(source, limits())  # raises WorkbookRefused while reading too
    except workbooks.WorkbookRefused as exc:
        raise WorkbookError(str(exc)) from None
    rows_of = SheetRows("I", [0])
    try:
        number, header = 0, None
        for number, values in enumerate(rows, start=1):
            if any(_cell(value) for value in values):
                header = values
                break
        if header is None:
            raise WorkbookError(_("The file is empty: fill in the template's first sheet."))
        keys = _header_keys(header)
        out.write("\t".join(["Y", y.fiscal_year_start.isoformat(), y.fiscal_year_end.isoformat(), y.batch_id,
                             y.entity_identifier]).encode() + b"\n")
        counter = first_line_counter
        entry = None  # (key, first row, header fields, lines, sheet rows, debit, credit)
        numbered = ((number, _row_cells(values, keys)) for number, values in enumerate(rows, start=number + 1))
        for number, cells in _without_example(numbered, keys, rows_of.skipped):
            key = cells.get("entryNumberCounter", "")
            if entry is None or key != entry[0]:
                if entry is not None:
                    _write_entry(out, entry, rows_of)
                entry = [key, number, cells, _Lines(), array.array("I"), Decimal(0), Decimal(0)]
            entry[3].add(_entry_line(cells, counter))
            entry[4].append(number)
            amount = _decimal(cells.get("amount", ""))
            code = cells.get("debitCreditCode", "")
            if code == "D":
                entry[5] += amount
            elif code == "C":
                entry[6] += amount
            counter += 1
        if entry is not None:
            _write_entry(out, entry, rows_of)
        elif rows_of.skipped:
            raise WorkbookError(_("The file holds only the template's example entry, which is not read: add your "
                                  "entries below it (or overwrite it)."))
    except workbooks.WorkbookRefused as exc:  # found while reading (the rows' ceiling, a damaged part)
        raise WorkbookError(str(exc)) from None
    finally:
        rows.close()
    return rows_of


def _header_keys(header) -> dict:
    """{column index: field} of the header row; a missing required column, an unknown or a repeated one is an
    error that names it."""
    known, keys = _headers(), {}
    for index, value in enumerate(header):
        text = _cell(value)
        if not text:
            continue
        key = known.get(normal_header(text))
        if key is None:
            raise WorkbookError(_("Unknown column “%(column)s” (column %(letter)s): use the headers of the "
                                  "template.") % {"column": text, "letter": get_column_letter(index + 1)})
        if key in keys.values():
            raise WorkbookError(_("The column “%(column)s” appears twice.") % {"column": text})
        keys[index] = key
    missing = [force_str(column.label) for column in TEMPLATE_COLUMNS
               if column.required and column.key not in keys.values()]
    if missing:
        raise WorkbookError(_("Required column missing: %(columns)s.") % {"columns": ", ".join(
            f"“{name}”" for name in missing)})
    return keys


def _entry_line(cells, counter) -> bytes:
    """The row's own entry date is its postingDate: a row whose date differs from its entry's first row is named.
    lineNumber runs on through the period like lineNumberCounter (the tax authority's way; the checker also
    accepts 1, 2, 3... within each entry, which some programs write)."""
    get = cells.get
    fields = [str(counter), str(counter), *(get(name, "") for name in _LINE_FIELDS), get("enteredDate", ""),
              *(get(name, "") for name in _DOCUMENT_FIELDS)]
    text = "".join(value + "\t" for value in fields)
    currency = [get(name, "") for name in CURRENCY_FIELDS]
    measure = [get(name, "") for name in MEASURE_FIELDS]
    if any(measure):  # the currency fields are skipped with tabs when empty
        text += "\t".join(currency + measure)
    elif any(currency):
        text += "\t".join(currency)
    return text.encode() + b"\n"


def _write_entry(out, entry, rows_of):
    key, first_row, cells, lines, sheet_rows, debit, credit = entry
    get = cells.get
    out.write("\t".join(["H", get("enteredBy", ""), get("enteredDate", ""), get("entryNumber", ""),
                         get("entryComment", ""), _total(debit), _total(credit), key]).encode() + b"\n")
    lines.copy_to(out)
    rows_of.append(first_row)
    rows_of.extend(sheet_rows)
