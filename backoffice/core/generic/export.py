"""Excel export of a list page's current filter.

openpyxl's write-only workbook keeps one row in memory at a time; rows come from the database with
.iterator() in chunks, and the file is built in a spooled temporary file that FileResponse streams,
so a large export costs neither the web process's memory nor one query per row.
"""

import tempfile
from datetime import datetime
from decimal import Decimal
from itertools import islice

from django.http import FileResponse
from django.utils import timezone
from django.utils.encoding import force_str
from openpyxl import Workbook
from openpyxl.styles import Font

from backoffice.core.workbooks import text_cell

CHUNK = 2000
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


def _cell_value(sheet, value):
    if value is None or isinstance(value, (bool, int, float, Decimal)):
        return value
    if isinstance(value, datetime):
        return timezone.localtime(value).replace(tzinfo=None) if timezone.is_aware(value) else value
    if hasattr(value, "isoformat"):  # date, time
        return value
    return text_cell(sheet, force_str(value))  # data, never a formula: someone else's text must not run in Excel


def export_xlsx(table_class, queryset, *, filename, sheet_title, table_kwargs=None):
    """Write every row of `queryset` as the table shows it (visible, exportable columns) to .xlsx."""
    table_kwargs = table_kwargs or {}
    workbook = Workbook(write_only=True)
    sheet = workbook.create_sheet(title=force_str(sheet_title)[:31])

    header_table = table_class([], **table_kwargs)
    names = [column.name for column in header_table.export_columns()]
    bold = Font(bold=True)
    sheet.append([text_cell(sheet, force_str(column.header), bold) for column in header_table.export_columns()])

    rows = queryset.iterator(chunk_size=CHUNK)
    while chunk := list(islice(rows, CHUNK)):
        table = table_class(chunk, **table_kwargs)
        for row in table.rows:
            sheet.append([_cell_value(sheet, row.get_cell_value(name)) for name in names])

    spool = tempfile.SpooledTemporaryFile(max_size=16 * 1024 * 1024)
    workbook.save(spool)
    spool.seek(0)
    return FileResponse(spool, as_attachment=True, filename=filename, content_type=XLSX)
