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
from xml.parsers import expat

from django.utils.formats import number_format
from django.utils.translation import gettext as _
from lxml import etree
from openpyxl.cell import WriteOnlyCell
from openpyxl.reader import excel
from openpyxl.reader.excel import ExcelReader
from openpyxl.styles.stylesheet import apply_stylesheet
from openpyxl.utils import column_index_from_string, get_column_letter
from openpyxl.utils.datetime import from_excel, from_ISO8601
from openpyxl.xml.constants import SHARED_STRINGS, SHEET_MAIN_NS

from .conf import tunable

MB = 1024 ** 2
EXCEL_ROWS, EXCEL_COLUMNS = 1_048_576, 16_384  # Excel's own sheet limits
ROW_BYTES = 2 * MB  # the XML of one row (or of what comes before the first): 16,384 cells fit in 1 MB
RATIO_FROM = MB  # parts smaller than this are not judged by their ratio (tiny parts pack oddly)
_ROW, _DATA, _STRING, _SST, _CELL, _VALUE, _INLINE, _TEXT, _RUN = (
    f"{{{SHEET_MAIN_NS}}}{tag}" for tag in ("row", "sheetData", "si", "sst", "c", "v", "is", "t", "r"))
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


class WorkbookRefused(Exception):
    """The upload is refused as a whole; the message is for the user (in their language)."""


@dataclass(frozen=True)
class Limits:
    """How far one kind of upload may go, sized to the largest real file of that kind."""

    sheet_bytes: int  # one worksheet part, unpacked
    part_bytes: int  # the shared strings (held in memory while the sheet is read), or a part no one parses
    unpacked_bytes: int  # every part together
    rows: int  # sheet rows, empty ones included
    columns: int  # a value beyond this column refuses the file
    seconds: float = 9  # wall clock of the whole read, web request or worker (the bound: 10 s)
    members: int = 0  # parts in the ZIP (0: XLSX_MAX_MEMBERS)
    ratio: float = 0  # unpacked / packed of a part over 1 MB (0: XLSX_MAX_RATIO)


def max_members() -> int:
    return int(tunable("XLSX_MAX_MEMBERS", 200))


def max_ratio() -> float:
    return tunable("XLSX_MAX_RATIO", 100)


def max_xml_part() -> int:
    """Any other XML part (styles, the workbook, relations, content types), which openpyxl parses whole: a real
    styles.xml is well under 1 MB; 2 MB of styles take openpyxl about 1.5 s and 60 MB, 16 MB took 15 s and 560 MB."""
    return int(tunable("XLSX_MAX_XML_PART_BYTES", 2 * MB))


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
        if name in READ_WHOLE_BY_NAME or name.endswith(".rels"):  # openpyxl finds these by their names
            _parsed_whole(member)
        _within(member, most)
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
    _no_doctype(source, members)


# The parts openpyxl parses whole on our way to the sheet, by the names it reads them by (and every relations
# part); the workbook part, which the manifest names, is checked once the manifest is read (read_sheet). A part's
# role is never taken from its root element: the file chooses that, and openpyxl does not look at it.
READ_WHOLE_BY_NAME = frozenset({"[Content_Types].xml", "_rels/.rels", "xl/styles.xml"})
PROLOG_BYTES = 64 * 1024  # an XML part's first element starts within this (a real one: within its first 300 bytes)


def _within(member, most: int) -> None:
    if member.file_size > most:
        raise WorkbookRefused(_("A part of the Excel file (%(name)s) unpacks to %(size)s MB, more than the "
                                "%(max)s MB allowed: split the file.") % {
            "name": member.filename[:80], "size": member.file_size // MB, "max": most // MB})


def _parsed_whole(member) -> None:
    if member.file_size > max_xml_part():
        raise WorkbookRefused(_("A part of the Excel file (%(name)s) unpacks to %(size)s MB, more than the %(max)s "
                                "MB a workbook's styles and settings take: copy the sheet's values into a new "
                                "workbook and upload that.") % {
            "name": member.filename[:80], "size": number_format(member.file_size / MB, 1),
            "max": number_format(max_xml_part() / MB, 0 if not max_xml_part() % MB else 1)})


class _Prolog(Exception):
    """The root element started: the prolog, where a DOCTYPE could be, is over."""


def _no_doctype(source, members) -> None:
    """Refuse a part that declares a DOCTYPE (internal entities expand a few KB into gigabytes in a parser that
    resolves them; no workbook has one), whatever the part's name says it is. Only each part's first PROLOG_BYTES are
    read: an XML part (.xml, .rels) whose first element has not started by then, or that expat cannot read there
    (UTF-32, which lxml would read past this check), is refused too."""
    def doctype(*_args):
        raise WorkbookRefused(_("The Excel file holds a part with a document type declaration (%(name)s), which no "
                                "workbook has: save it again in Excel as .xlsx.") % {"name": member.filename[:80]})

    def root(*_args):
        raise _Prolog

    try:
        with zipfile.ZipFile(source) as archive:
            for member in members:
                parser = expat.ParserCreate()
                parser.StartDoctypeDeclHandler = parser.EntityDeclHandler = doctype
                parser.StartElementHandler = root
                with archive.open(member) as part:
                    head = part.read(PROLOG_BYTES)
                    rest = bool(part.read(1))
                try:
                    parser.Parse(head, not rest)
                except _Prolog:
                    continue
                except expat.ExpatError:
                    if member.filename.endswith((".xml", ".rels")):
                        raise _unreadable_part(member) from None
                    continue  # no XML (an image, a binary part): nobody parses it
                if member.filename.endswith((".xml", ".rels")) or head.lstrip().startswith(b"<"):
                    raise _unreadable_part(member)  # more than PROLOG_BYTES before its first element
    except WorkbookRefused:
        raise
    except Exception:  # a part that fails its CRC or does not unpack
        raise _not_xlsx() from None
    finally:
        source.seek(0)


def _unreadable_part(member):
    return WorkbookRefused(_("A part of the Excel file (%(name)s) is not XML as Excel writes it: save the file again "
                             "in Excel as .xlsx.") % {"name": member.filename[:80]})


class _Metered:
    """A part's XML as the parser reads it, refused once a row (or what comes before the first) passes ROW_BYTES,
    or the read passes its deadline."""

    def __init__(self, raw, deadline, most=ROW_BYTES):
        self.raw, self.deadline, self.most, self.since_row = raw, deadline, most, 0

    def read(self, size=-1):
        data = self.raw.read(size if size and size > 0 else 64 * 1024)
        self.since_row += len(data)
        if self.since_row > self.most:
            raise WorkbookRefused(_("A row of the sheet takes more than %(size)s MB: this is no workbook made from "
                                    "the template.") % {"size": self.most // MB})
        _check_deadline(self.deadline)
        return data


def _check_deadline(deadline):
    if deadline is not None and time.monotonic() > deadline[0]:
        raise WorkbookRefused(_("Reading the Excel file took longer than %(seconds)s seconds: split it.")
                              % {"seconds": f"{deadline[1]:g}"})


def _elements(source, tag, parent):
    """The tag's elements as they end, each dropped from the tree once the caller is done with it, with everything
    before it (memory stays flat). An element of the tag outside `parent` refuses the file: wrapping rows in
    something else would keep what lies between them. lxml, with no entity resolved and no DTD or network read
    (inspect refused a DOCTYPE already), comments and processing instructions left out as openpyxl leaves them."""
    for _event, element in etree.iterparse(source, events=("end",), tag=tag, resolve_entities=False, load_dtd=False,
                                           no_network=True, huge_tree=False, remove_comments=True, remove_pis=True):
        above = element.getparent()
        if element.tag != parent and (above is None or above.tag != parent):
            raise WorkbookRefused(_("The Excel file could not be read (%(error)s). Open it in Excel, save it again "
                                    "as .xlsx and upload it again.") % {"error": "misplaced element"})
        yield element
        element.clear(keep_tail=False)
        while element.getprevious() is not None:
            del above[0]


def _text(node) -> str:
    """An <si> or <is>: its plain text, or its runs' texts (phonetic guides left out), as openpyxl reads it."""
    if len(node) == 1 and node[0].tag == _TEXT:  # the usual shape, read without a search
        return node[0].text or ""
    plain = node.findtext(_TEXT)
    runs = [run.findtext(_TEXT) or "" for run in node.iterfind(_RUN)]
    return (plain or "") + "".join(runs) if runs else plain or ""


def _strings(archive, path, deadline) -> list:
    """The shared strings, streamed."""
    strings = []
    with archive.open(path) as raw:
        source = _Metered(raw, deadline)
        for element in _elements(source, _STRING, _SST):
            strings.append(_text(element).replace("x005F_", ""))
            source.since_row = 0
            if not len(strings) % 4096:
                _check_deadline(deadline)
    return strings


def _too_many_rows(limits):
    return WorkbookRefused(_("The sheet has more than %(count)s rows (empty rows count too): split it.")
                           % {"count": f"{limits.rows:,}".replace(",", ".")})


def workbook_part(reader: ExcelReader) -> str:
    """The workbook part's name in the archive, found as the reader's read_workbook() finds it. openpyxl names it
    only with a private helper (openpyxl 3.1, requirements.txt), used here alone: its size is checked before the
    reader parses it."""
    return excel._find_workbook_part(reader.package).PartName[1:]


def read_sheet(source, limits: Limits):
    """The first worksheet's rows, one tuple of values per sheet row from row 1 (an empty row is ()), as a
    generator; WorkbookRefused (also raised before the first row) says why the file is refused."""
    deadline = (time.monotonic() + limits.seconds, limits.seconds)
    inspect(source, limits)
    try:
        # keep_links=False: openpyxl would parse an external link's part whole once per reference to it
        reader = ExcelReader(source, read_only=True, data_only=True, keep_links=False)
        reader.read_manifest()  # [Content_Types].xml: under max_xml_part() (inspect)
        _parsed_whole(reader.archive.getinfo(workbook_part(reader)))
        strings = reader.package.find(SHARED_STRINGS)
        if strings is not None:  # whatever its name, the shared strings' own limit
            _within(reader.archive.getinfo(strings.PartName[1:]), limits.part_bytes)
            reader.shared_strings = _strings(reader.archive, strings.PartName[1:], deadline)
        reader.read_workbook()
        apply_stylesheet(reader.archive, reader.wb)
        path = next((rel.target for _sheet, rel in reader.parser.find_sheets()
                     if rel.target in reader.valid_files and "chartsheet" not in rel.Type), None)
        if path is not None:
            _within(reader.archive.getinfo(path), limits.sheet_bytes)
    except WorkbookRefused:
        raise
    except Exception:  # openpyxl raises many kinds for a file that is no xlsx
        raise _not_xlsx() from None
    _check_deadline(deadline)
    if path is None:
        reader.archive.close()
        raise WorkbookRefused(_("The file is empty: fill in the template's first sheet."))
    wb = reader.wb
    cells = _Cells(reader.shared_strings, wb.epoch, wb._date_formats, wb._timedelta_formats, limits)
    return _rows(reader.archive, path, cells, limits, deadline)


def _rows(archive, path, cells, limits, deadline):
    try:
        with archive.open(path) as raw:
            source = _Metered(raw, deadline)
            expected, seen, number = 1, 0, 0
            for element in _elements(source, (_ROW, _DATA), _DATA):
                if element.tag == _DATA:
                    return  # nothing after the rows is read
                number = _row_number(element.get("r"), number)
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
                yield cells.row(element)
                if not seen % 512:
                    _check_deadline(deadline)
    except WorkbookRefused:
        raise
    except Exception as exc:  # a damaged part inside the file
        raise WorkbookRefused(_("The Excel file could not be read (%(error)s). Open it in Excel, save it again as "
                                ".xlsx and upload it again.") % {"error": exc.__class__.__name__}) from None
    finally:
        archive.close()


def _row_number(given, previous: int) -> int:
    """A row's r, as openpyxl reads it (a whole number written "12.0" too); none: the one after the previous."""
    if not given:
        return previous + 1
    try:
        return int(given)
    except ValueError:
        number = float(given)
        if not number.is_integer():
            raise
        return int(number)


class _Cells:
    """A row's values as openpyxl's read-only, data-only reader gives them (numbers, shared and inline text, booleans,
    dates by their style, a formula's cached value), read straight from the XML: openpyxl's own cell parser makes
    objects for every cell and took 10 s for the largest journal, past the bound."""

    def __init__(self, strings, epoch, date_formats, timedelta_formats, limits):
        self.strings, self.epoch, self.limits = strings, epoch, limits
        self.date_formats, self.timedelta_formats = date_formats, timedelta_formats
        self.columns = {}  # "AB" -> 28

    def row(self, element) -> tuple:
        values, column = {}, 0
        for cell in element.iterchildren(_CELL):
            reference = cell.get("r")
            column = self._column(reference) if reference else column + 1
            value = self._value(cell)
            if value is None:
                continue
            if column > self.limits.columns:
                raise WorkbookRefused(_("The sheet has values beyond column %(letter)s: use the template's columns.")
                                      % {"letter": get_column_letter(min(self.limits.columns, EXCEL_COLUMNS))})
            values[column] = value  # a column given twice: the last, as openpyxl
        if not values:
            return ()
        row = [None] * max(values)
        for index, value in values.items():
            row[index - 1] = value
        return tuple(row)

    def _column(self, reference: str) -> int:
        letters = reference.rstrip("0123456789")
        column = self.columns.get(letters)
        if column is None:
            column = column_index_from_string(letters)  # ValueError for what is no column
            if len(self.columns) < EXCEL_COLUMNS:
                self.columns[letters] = column
        return column

    def _value(self, cell):
        kind = cell.get("t", "n")
        if kind == "inlineStr":
            inline = cell.find(_INLINE)
            return _text(inline) if inline is not None else None
        value = cell.findtext(_VALUE) or None
        if value is None:
            return None
        if kind == "n":
            number = float(value) if "." in value or "E" in value or "e" in value else int(value)
            style = int(cell.get("s") or 0)
            if style in self.date_formats:
                try:
                    return from_excel(number, self.epoch, timedelta=style in self.timedelta_formats)
                except (OverflowError, ValueError):
                    return "#VALUE!"
            return number
        if kind == "s":
            return self.strings[int(value)]
        if kind == "b":
            return bool(int(value))
        if kind == "d":
            return from_ISO8601(value)
        return value  # str (a formula's text), e (an error such as #N/A)


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
