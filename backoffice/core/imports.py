"""Excel import: a template to fill, and a file read and checked row by row before anything is saved.

A domain declares its sheet (the columns, each a form field) and checks each row with the same forms as
its pages; errors come back per row and cell ("row 7, column C (Tax or national id): ..."), and nothing is
saved while any is left. Headers are matched in Turkish or English, or by the column's key, whatever
their case; columns may come in any order; unknown columns are refused rather than silently dropped.

Files are read by core.workbooks (the ZIP checked first, then one row at a time, empty rows counted);
identifiers typed as numbers by Excel (1234567890 or 1234567890.0) are read back as the digits people typed.

The template's example row is never imported (issue 29: it was, with a code a real account already had): a row
equal, cell for cell, to the example the template ships is skipped and counted, so a row that differs in any
cell (a real one) is always read. The template's second sheet says so.
"""

import io
from dataclasses import dataclass, field

from django.utils import translation
from django.utils.encoding import force_str
from django.utils.translation import gettext as _
from openpyxl import Workbook
from openpyxl.comments import Comment
from openpyxl.styles import Font, PatternFill
from openpyxl.utils import get_column_letter

from . import workbooks
from .conf import tunable

MB = 1024 ** 2
MAX_ROWS = 20_000  # sheet rows, the header and empty rows included
MAX_BYTES = 10 * MB


class ImportFileError(Exception):
    """The file as a whole cannot be read (not an xlsx, no header, a missing column)."""


@dataclass(frozen=True)
class Column:
    key: str  # the form field (with its form's prefix: "address-city")
    label: object  # lazy text: the header in the template
    required: bool = False
    example: object = ""


@dataclass(frozen=True)
class Sheet:
    title: object
    columns: tuple

    def example(self) -> dict:
        """{key: text} of the example row the template ships, as the reader reads it back."""
        return {column.key: _text(force_str(column.example) if column.example != "" else None)
                for column in self.columns}

    def headers(self) -> dict:
        """{normalised header: key} in both languages and as the key itself."""
        known = {}
        for column in self.columns:
            names = {column.key, column.key.replace("-", " ").replace("_", " ")}
            for language in ("tr", "en"):
                with translation.override(language):
                    names.add(force_str(column.label))
            for name in names:
                known[normal_header(name)] = column.key
        return known


@dataclass
class CellError:
    row: int
    column: str  # the letter, "" for the whole row
    header: str
    message: str


@dataclass
class Checked:
    rows: list = field(default_factory=list)  # (row number, {key: value}) of every row read
    errors: list = field(default_factory=list)  # CellError
    columns: dict = field(default_factory=dict)  # {key: column letter in the file}
    labels: dict = field(default_factory=dict)  # {key: its header in the file}
    skipped: list = field(default_factory=list)  # sheet row numbers of the template's example, left unchanged

    @property
    def read_count(self) -> int:
        """The rows read from the file, the example included (empty rows are not rows)."""
        return len(self.rows) + len(self.skipped)

    def refused_rows(self) -> list:
        """The numbers of the rows with a problem (0 and the header's row left out), in order."""
        return sorted({error.row for error in self.errors if error.row})

    def add(self, row, column, header, message):
        self.errors.append(CellError(row, column, header, force_str(message)))


def normal_header(text) -> str:
    """A header as it is compared: trimmed, without the * of required columns, lowercase, dotted and dotless i
    alike (so that "Borç/alacak", "BORÇ/ALACAK", "VERGİ NO" and "VERGI NO" all match)."""
    text = force_str(text or "").strip().replace("İ", "i").lower().replace("ı", "i")
    return " ".join(text.replace("*", "").split())


def is_example(values: dict, example: dict) -> bool:
    """Whether a row read is the template's example, left as shipped: every column the file has holds exactly
    the example's text (strict, so that a real row, which differs somewhere, is never skipped)."""
    return any(example.values()) and bool(values) and all(values[key] == example.get(key, "") for key in values)


def template(sheet: Sheet) -> bytes:
    """The xlsx a user fills: the headers (required ones marked *), an example row shown in grey (skipped on
    import while unchanged), and a second sheet explaining the columns."""
    workbook = Workbook()
    ws = workbook.active
    ws.title = force_str(sheet.title)[:31]
    bold, fill = Font(bold=True), PatternFill("solid", fgColor="DDEBF7")
    grey = Font(italic=True, color="808080")
    for index, column in enumerate(sheet.columns, start=1):
        cell = ws.cell(row=1, column=index, value=force_str(column.label) + (" *" if column.required else ""))
        cell.font, cell.fill = bold, fill
        cell = ws.cell(row=2, column=index, value=force_str(column.example) if column.example != "" else None)
        cell.font = grey
        ws.column_dimensions[get_column_letter(index)].width = max(14, len(force_str(column.label)) + 4)
        # Identifiers and phone numbers stay text: Excel would drop a leading 0 or write 1E+10.
        ws.column_dimensions[get_column_letter(index)].number_format = "@"
    ws.freeze_panes = "A2"
    ws["A2"].comment = Comment(_("Example row: it is not imported while it is left as it is. Overwrite it or add "
                                 "your rows below it."), "E-Belge")
    _instructions(workbook, sheet)
    out = io.BytesIO()
    workbook.save(out)
    return out.getvalue()


def _instructions(workbook, sheet: Sheet) -> None:
    """The template's second sheet: what each column takes, and what happens to the example row."""
    notes = workbook.create_sheet(_("Explanation")[:31])
    bold = Font(bold=True)
    notes.append([_("Fill the first sheet, one row per record. Row 2 is an example: it is not imported while it is "
                    "left as it is; overwrite it or add your rows below it.")])
    notes.append([_("Columns marked * are required. Headers may be in Turkish or English, in any order.")])
    notes.append([])
    notes.append([_("Column"), _("Required"), _("Example")])
    for cell in notes[notes.max_row]:
        cell.font = bold
    for column in sheet.columns:
        workbooks.append(notes, [force_str(column.label), _("yes") if column.required else "",
                                 force_str(column.example)])
    notes.column_dimensions["A"].width = 34
    notes.column_dimensions["C"].width = 30


def _text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value).strip()


def limits() -> workbooks.Limits:
    """The largest real import: 20,000 rows of the widest template (23 columns) unpack to about 40 MB."""
    return workbooks.Limits(sheet_bytes=int(tunable("IMPORT_XLSX_MAX_SHEET_BYTES", 64 * MB)),
                            part_bytes=int(tunable("IMPORT_XLSX_MAX_PART_BYTES", 16 * MB)),
                            unpacked_bytes=int(tunable("IMPORT_XLSX_MAX_UNPACKED_BYTES", 96 * MB)),
                            rows=MAX_ROWS, columns=int(tunable("IMPORT_XLSX_MAX_COLUMNS", 64)),
                            seconds=tunable("IMPORT_XLSX_READ_SECONDS", 8))


def read(upload, sheet: Sheet) -> Checked:
    """Every row of the first worksheet as {key: text}, with the file's own problems as errors (a header error
    stops the read: its rows would be read against the wrong columns)."""
    checked = Checked()
    if getattr(upload, "size", 0) > MAX_BYTES:
        raise ImportFileError(_("The file is larger than %(size)s MB; split it.") % {"size": MAX_BYTES // 1024 ** 2})
    rows = None
    try:
        rows = workbooks.read_sheet(upload, limits())
        header, number = next(rows, None), 1
        while header is not None and not any(_text(value) for value in header):
            header, number = next(rows, None), number + 1
        if header is None:
            raise ImportFileError(_("The file is empty: fill in the template's first sheet."))
        keys = _header_keys(header, sheet, checked, number)
        if checked.errors:
            return checked
        example = sheet.example()
        for number, values in enumerate(rows, start=number + 1):  # the sheet's own row numbers
            texts = [_text(value) for value in values]
            if not any(texts):
                continue
            row = {key: texts[index] if index < len(texts) else "" for index, key in keys.items()}
            if is_example(row, example):
                checked.skipped.append(number)
                continue
            checked.rows.append((number, {key: texts[index] for index, key in keys.items() if index < len(texts)}))
    except workbooks.WorkbookRefused as exc:
        raise ImportFileError(str(exc)) from None
    finally:
        if rows is not None:
            rows.close()
    if not checked.rows and not checked.errors:
        if checked.skipped:
            raise ImportFileError(_("The file holds only the template's example row, which is not imported: add "
                                    "your rows below it (or overwrite it)."))
        raise ImportFileError(_("The file has a header but no rows to import."))
    return checked


def _header_keys(header, sheet: Sheet, checked: Checked, row: int = 1) -> dict:
    known, keys = sheet.headers(), {}
    for index, value in enumerate(header):
        text = _text(value)
        if not text:
            continue
        key = known.get(normal_header(text))
        if key is None:
            checked.add(row, get_column_letter(index + 1), text, _("Unknown column: use the headers of the template."))
        elif key in keys.values():
            checked.add(row, get_column_letter(index + 1), text, _("This column appears twice."))
        else:
            keys[index] = key
            checked.columns[key], checked.labels[key] = get_column_letter(index + 1), text
    for column in sheet.columns:
        if column.required and column.key not in keys.values():
            checked.add(row, "", force_str(column.label), _("This required column is missing."))
    return keys


def summary(checked: Checked) -> str:
    """What the read found, for the import page: rows read, the example skipped, the rows refused."""
    text = _("%(read)s row(s) read") % {"read": checked.read_count}
    if checked.skipped:
        text += "; " + _("the template's example (row %(rows)s) skipped") % {
            "rows": ", ".join(str(number) for number in checked.skipped)}
    refused = checked.refused_rows()
    if refused:
        shown = ", ".join(str(number) for number in refused[:50]) + (" …" if len(refused) > 50 else "")
        text += "; " + _("%(count)s row(s) refused: %(rows)s") % {"count": len(refused), "rows": shown}
    return text + "."


def form_errors(checked: Checked, number: int, form, keys=None) -> None:
    """A bound form's errors as the cell errors of row `number`; keys: {form field: column key} where they differ
    (e.g. {"currency_code_id": "currency"})."""
    for name, messages in form.errors.items():
        key = form.add_prefix((keys or {}).get(name, name)) if name != "__all__" else ""
        for message in messages:
            checked.add(number, checked.columns.get(key, ""), checked.labels.get(key, ""), message)


def error_on(checked: Checked, number: int, key: str, message) -> None:
    checked.add(number, checked.columns.get(key, ""), checked.labels.get(key, ""), message)
