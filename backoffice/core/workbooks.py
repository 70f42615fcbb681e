"""Every .xlsx the product reads from a user, and every workbook it writes, go through here.

Reading (read_sheet) never lets openpyxl near a file before its ZIP directory has been checked: how many parts,
how far each unpacks (the directory's sizes are what zipfile unpacks at most: a part that lies is cut there
and fails its CRC), the whole, how tightly a part is packed (a real workbook's XML packs 5 to 30 times, a ZIP
bomb about 1,000), and the names (no absolute path, no "..", no backslash). Then the first worksheet is
streamed: openpyxl's own read-only sheet is never made, since it sizes a sheet without <dimension> by reading
it whole; here every row counts toward the ceiling (empty ones, and the gaps between row numbers, too), a row
may not take more than ROW_BYTES of XML, nothing after the rows is read, and the parsed rows are dropped as
they go, so that memory stays flat whatever the sheet.

Writing (text_cell): text that Excel or LibreOffice would take as a formula (=, +, -, @, a tab or CR first)
is written as text with Excel's quote prefix, so someone else's text never runs in the accountant's Excel.
"""

import time
import zipfile
from dataclasses import dataclass
from xml.etree.ElementTree import iterparse

from django.utils.translation import gettext as _
from openpyxl.cell import WriteOnlyCell
from openpyxl.cell.text import Text
from openpyxl.reader.excel import ExcelReader
from openpyxl.styles.stylesheet import apply_stylesheet
from openpyxl.utils import get_column_letter
from openpyxl.worksheet._reader import WorkSheetParser
from openpyxl.xml.constants import SHARED_STRINGS, SHEET_MAIN_NS

from .conf import tunable

MB = 1024 ** 2
EXCEL_ROWS, EXCEL_COLUMNS = 1_048_576, 16_384  # Excel's own sheet limits
ROW_BYTES = 2 * MB  # the XML of one row (or of what comes before the first): 16,384 cells fit in 1 MB
RATIO_FROM = MB  # parts smaller than this are not judged by their ratio (tiny parts pack oddly)
_ROW, _DATA, _STRING = (f"{{{SHEET_MAIN_NS}}}{tag}" for tag in ("row", "sheetData", "si"))
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


class WorkbookRefused(Exception):
    """The upload is refused as a whole; the message is for the user (in their language)."""


@dataclass(frozen=True)
class Limits:
    """How far one kind of upload may go, sized to the largest real file of that kind."""

    sheet_bytes: int  # one worksheet part, unpacked
    part_bytes: int  # any other part (shared strings, styles, ...), unpacked: these are read whole
    unpacked_bytes: int  # every part together
    rows: int  # sheet rows, empty ones included
    columns: int  # a value beyond this column refuses the file
    seconds: float | None = None  # wall clock of the whole read (web requests)
    members: int = 0  # parts in the ZIP (0: XLSX_MAX_MEMBERS)
    ratio: float = 0  # unpacked / packed of a part over 1 MB (0: XLSX_MAX_RATIO)


def max_members() -> int:
    return int(tunable("XLSX_MAX_MEMBERS", 200))


def max_ratio() -> float:
    return tunable("XLSX_MAX_RATIO", 100)


def _not_xlsx():
    return WorkbookRefused(_("This is not an Excel (.xlsx) file. Save it as “Excel Workbook (.xlsx)” and try "
                             "again."))


def _unsafe_name(name: str) -> bool:
    parts = name.split("/")
    return (not name or name.startswith("/") or "\\" in name or "\x00" in name or ".." in parts
            or ":" in parts[0])


def inspect(source, limits: Limits) -> None:
    """Refuse the file on its ZIP directory alone (nothing is unpacked): WorkbookRefused says why."""
    most = limits.members or max_members()
    try:
        # The count first, from the directory's last record: zipfile would hold every entry of a huge directory.
        end = zipfile._EndRecData(source)
        count = end[zipfile._ECD_ENTRIES_TOTAL] if end else 0
        if count <= most:
            with zipfile.ZipFile(source) as archive:
                members = archive.infolist()
    except Exception:  # zipfile raises many kinds for what is no ZIP
        raise _not_xlsx() from None
    finally:
        source.seek(0)
    if end is None:
        raise _not_xlsx()
    if count > most:
        raise WorkbookRefused(_("The Excel file has %(count)s parts, more than the %(max)s a workbook has: save it "
                                "again in Excel as .xlsx.") % {"count": count, "max": most})
    names, total, ratio = set(), 0, limits.ratio or max_ratio()
    for member in members:
        name = member.filename
        if _unsafe_name(name) or name in names:
            raise WorkbookRefused(_("The Excel file holds a part with a name no workbook has (%(name)s): save it "
                                    "again in Excel as .xlsx.") % {"name": name[:80]})
        names.add(name)
        most = limits.sheet_bytes if name.startswith("xl/worksheets/") and not name.endswith(".rels") \
            else limits.part_bytes
        if member.file_size > most:
            raise WorkbookRefused(_("A part of the Excel file (%(name)s) unpacks to %(size)s MB, more than the "
                                    "%(max)s MB allowed: split the file.") % {
                "name": name[:80], "size": member.file_size // MB, "max": most // MB})
        if member.file_size > RATIO_FROM and member.file_size > ratio * max(member.compress_size, 1):
            raise WorkbookRefused(_("A part of the Excel file (%(name)s) unpacks to %(ratio)s times its packed size; "
                                    "a real workbook packs at most %(max)s times. Save it again in Excel as "
                                    ".xlsx.") % {"name": name[:80],
                                                 "ratio": member.file_size // max(member.compress_size, 1),
                                                 "max": int(ratio)})
        total += member.file_size
    if total > limits.unpacked_bytes:
        raise WorkbookRefused(_("The Excel file unpacks to %(size)s MB, more than the %(max)s MB allowed: split "
                                "it.") % {"size": total // MB, "max": limits.unpacked_bytes // MB})


class _Metered:
    """The sheet's XML as iterparse reads it, refused once a row (or what comes before the first) passes
    ROW_BYTES, or the read passes its deadline."""

    def __init__(self, raw, deadline):
        self.raw, self.deadline, self.since_row = raw, deadline, 0

    def read(self, size=-1):
        data = self.raw.read(size if size and size > 0 else 64 * 1024)
        self.since_row += len(data)
        if self.since_row > ROW_BYTES:
            raise WorkbookRefused(_("A row of the sheet takes more than %(size)s MB: this is no workbook made from "
                                    "the template.") % {"size": ROW_BYTES // MB})
        _check_deadline(self.deadline)
        return data


def _check_deadline(deadline):
    if deadline is not None and time.monotonic() > deadline[0]:
        raise WorkbookRefused(_("Reading the Excel file took longer than %(seconds)s seconds: split it.")
                              % {"seconds": f"{deadline[1]:g}"})


def _strings(archive, path) -> list:
    """The shared strings (openpyxl's read_string_table, with each parsed string dropped from the tree)."""
    strings = []
    with archive.open(path) as source:
        root = None
        for event, node in iterparse(source, events=("start", "end")):
            if root is None:
                root = node
            elif event == "end" and node.tag == _STRING:
                strings.append(Text.from_tree(node).content.replace("x005F_", ""))
                root.clear()
    return strings


def _too_many_rows(limits):
    return WorkbookRefused(_("The sheet has more than %(count)s rows (empty rows count too): split it.")
                           % {"count": f"{limits.rows:,}".replace(",", ".")})


def read_sheet(source, limits: Limits):
    """The first worksheet's rows, one tuple of values per sheet row from row 1 (an empty row is ()), as a
    generator; WorkbookRefused (also raised before the first row) says why the file is refused."""
    deadline = (time.monotonic() + limits.seconds, limits.seconds) if limits.seconds else None
    inspect(source, limits)
    try:
        reader = ExcelReader(source, read_only=True, data_only=True)
        reader.read_manifest()
        strings = reader.package.find(SHARED_STRINGS)
        if strings is not None:
            reader.shared_strings = _strings(reader.archive, strings.PartName[1:])
        reader.read_workbook()
        apply_stylesheet(reader.archive, reader.wb)
        path = next((rel.target for _sheet, rel in reader.parser.find_sheets()
                     if rel.target in reader.valid_files and "chartsheet" not in rel.Type), None)
    except WorkbookRefused:
        raise
    except Exception:  # openpyxl raises many kinds for a file that is no xlsx
        raise _not_xlsx() from None
    _check_deadline(deadline)
    if path is None:
        reader.archive.close()
        raise WorkbookRefused(_("The file is empty: fill in the template's first sheet."))
    wb = reader.wb
    parser = WorkSheetParser(None, reader.shared_strings, data_only=True, epoch=wb.epoch,
                             date_formats=wb._date_formats, timedelta_formats=wb._timedelta_formats)
    return _rows(reader.archive, path, parser, limits, deadline)


def _rows(archive, path, parser, limits, deadline):
    try:
        with archive.open(path) as raw:
            source = _Metered(raw, deadline)
            data, expected, seen = None, 1, 0
            for event, element in iterparse(source, events=("start", "end")):
                if event == "start":
                    if element.tag == _DATA:
                        data = element
                    continue
                if element.tag == _DATA:
                    return  # nothing after the rows is read
                if element.tag != _ROW or data is None:
                    continue
                number, cells = parser.parse_row(element)
                parser.row_dimensions.clear()
                data.clear()  # the rows parsed so far leave the tree
                source.since_row = 0
                seen += 1
                if number > limits.rows or seen > limits.rows:
                    raise _too_many_rows(limits)
                while expected < number:  # rows left out of the XML are empty rows
                    expected += 1
                    yield ()
                if number < expected:  # a row number given twice: openpyxl too keeps the first
                    continue
                expected += 1
                yield _values(cells, limits)
                if deadline is not None and not seen % 512:
                    _check_deadline(deadline)
    except WorkbookRefused:
        raise
    except Exception as exc:  # a damaged part inside the file: openpyxl's own errors say little
        raise WorkbookRefused(_("The Excel file could not be read (%(error)s). Open it in Excel, save it again as "
                                ".xlsx and upload it again.") % {"error": exc.__class__.__name__}) from None
    finally:
        archive.close()


def _values(cells, limits) -> tuple:
    values = {}
    for cell in cells:
        if cell["value"] is None:
            continue
        if cell["column"] > limits.columns:
            raise WorkbookRefused(_("The sheet has values beyond column %(letter)s: use the template's columns.")
                                  % {"letter": get_column_letter(min(limits.columns, EXCEL_COLUMNS))})
        values[cell["column"]] = cell["value"]
    if not values:
        return ()
    row = [None] * max(values)
    for column, value in values.items():
        row[column - 1] = value
    return tuple(row)


# --- writing -------------------------------------------------------------------------------------------------
def formula_like(value) -> bool:
    return isinstance(value, str) and value.startswith(FORMULA_START)


def neutralise(cell):
    """A cell whose text looks like a formula holds it as text (Excel's quote prefix: shown as typed, and kept text
    when edited)."""
    if formula_like(cell.value):
        cell.data_type = "s"
        cell.quotePrefix = True
    return cell


def text_cell(sheet, value, font=None):
    """A value for a write-only sheet's append(): the value itself, or a text cell when it looks like a formula
    or carries a font."""
    if font is None and not formula_like(value):
        return value
    cell = WriteOnlyCell(sheet, value=value)
    if font is not None:
        cell.font = font
    return neutralise(cell)


def append(sheet, values, font=None) -> None:
    """One row of a workbook the product writes (write-only or not): formula-like text stays text."""
    if getattr(sheet.parent, "write_only", False):
        sheet.append([text_cell(sheet, value, font) for value in values])
        return
    sheet.append(list(values))
    for cell in sheet[sheet.max_row]:
        neutralise(cell)
        if font is not None:
            cell.font = font
