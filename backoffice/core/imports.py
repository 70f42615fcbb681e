"""Excel import: a template to fill, and a file read and checked row by row before anything is saved.

A domain declares its sheet (the columns, each a form field) and checks each row with the same forms as
its pages; errors come back per row and cell ("row 7, column C (Tax or national id): ..."), and nothing is
saved while any is left. Headers are matched in Turkish or English, or by the column's key, whatever
their case; columns may come in any order; unknown columns are refused rather than silently dropped.

Files are read with openpyxl's read-only mode (one row at a time); identifiers typed as numbers by Excel
(1234567890 or 1234567890.0) are read back as the digits people typed.
"""

import io
from dataclasses import dataclass, field

from django.utils import translation
from django.utils.encoding import force_str
from django.utils.translation import gettext as _
from openpyxl import Workbook, load_workbook
from openpyxl.styles import Font, PatternFill
from openpyxl.utils import get_column_letter

MAX_ROWS = 20_000
MAX_BYTES = 10 * 1024 * 1024


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

    def add(self, row, column, header, message):
        self.errors.append(CellError(row, column, header, force_str(message)))


def normal_header(text) -> str:
    """A header as it is compared: trimmed, without the * of required columns, lowercase, dotted and dotless i
    alike (so that "Borç/alacak", "BORÇ/ALACAK", "VERGİ NO" and "VERGI NO" all match)."""
    text = force_str(text or "").strip().replace("İ", "i").lower().replace("ı", "i")
    return " ".join(text.replace("*", "").split())


def template(sheet: Sheet) -> bytes:
    """The xlsx a user fills: the headers (required ones marked *) and an example row."""
    workbook = Workbook()
    ws = workbook.active
    ws.title = force_str(sheet.title)[:31]
    bold, fill = Font(bold=True), PatternFill("solid", fgColor="DDEBF7")
    for index, column in enumerate(sheet.columns, start=1):
        cell = ws.cell(row=1, column=index, value=force_str(column.label) + (" *" if column.required else ""))
        cell.font, cell.fill = bold, fill
        ws.cell(row=2, column=index, value=force_str(column.example) if column.example != "" else None)
        ws.column_dimensions[get_column_letter(index)].width = max(14, len(force_str(column.label)) + 4)
        # Identifiers and phone numbers stay text: Excel would drop a leading 0 or write 1E+10.
        ws.column_dimensions[get_column_letter(index)].number_format = "@"
    ws.freeze_panes = "A2"
    out = io.BytesIO()
    workbook.save(out)
    return out.getvalue()


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


def read(upload, sheet: Sheet) -> Checked:
    """Every row of the first worksheet as {key: text}, with the file's own problems as errors."""
    checked = Checked()
    if getattr(upload, "size", 0) > MAX_BYTES:
        raise ImportFileError(_("The file is larger than %(size)s MB; split it.") % {"size": MAX_BYTES // 1024 ** 2})
    try:
        workbook = load_workbook(upload, read_only=True, data_only=True)
    except Exception:  # openpyxl raises many kinds for a file that is no xlsx
        raise ImportFileError(_("This is not an Excel (.xlsx) file. Save it as “Excel Workbook (.xlsx)” and try "
                                "again.")) from None
    try:
        rows = workbook.worksheets[0].iter_rows(values_only=True)
        header = next(rows, None)
        while header is not None and not any(_text(value) for value in header):
            header = next(rows, None)
        if header is None:
            raise ImportFileError(_("The file is empty: fill in the template's first sheet."))
        keys = _header_keys(header, sheet, checked)
        number = 1
        for number, values in enumerate(rows, start=2):
            texts = [_text(value) for value in values]
            if not any(texts):
                continue
            if len(checked.rows) >= MAX_ROWS:
                raise ImportFileError(_("The file has more than %(count)s rows; split it.") % {"count": MAX_ROWS})
            checked.rows.append((number, {key: texts[index] for index, key in keys.items() if index < len(texts)}))
    finally:
        workbook.close()
    if not checked.rows and not checked.errors:
        raise ImportFileError(_("The file has a header but no rows to import."))
    return checked


def _header_keys(header, sheet: Sheet, checked: Checked) -> dict:
    known, keys = sheet.headers(), {}
    for index, value in enumerate(header):
        text = _text(value)
        if not text:
            continue
        key = known.get(normal_header(text))
        if key is None:
            checked.add(1, get_column_letter(index + 1), text, _("Unknown column: use the headers of the template."))
        elif key in keys.values():
            checked.add(1, get_column_letter(index + 1), text, _("This column appears twice."))
        else:
            keys[index] = key
            checked.columns[key], checked.labels[key] = get_column_letter(index + 1), text
    for column in sheet.columns:
        if column.required and column.key not in keys.values():
            checked.add(1, "", force_str(column.label), _("This required column is missing."))
    return keys


def form_errors(checked: Checked, number: int, form) -> None:
    """A bound form's errors as the cell errors of row `number`."""
    for name, messages in form.errors.items():
        key = form.add_prefix(name) if name != "__all__" else ""
        for message in messages:
            checked.add(number, checked.columns.get(key, ""), checked.labels.get(key, ""), message)


def error_on(checked: Checked, number: int, key: str, message) -> None:
    checked.add(number, checked.columns.get(key, ""), checked.labels.get(key, ""), message)
