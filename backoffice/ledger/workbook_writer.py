"""The workbooks of the journal we hand out: the template accountants fill (the columns of workbook.py, an
example entry and a sheet of explanations) and the checker's findings as an Excel report.
"""

import io

from django.utils.encoding import force_str
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from openpyxl import Workbook
from openpyxl.styles import Font, PatternFill
from openpyxl.utils import get_column_letter

from backoffice.core.workbooks import text_cell

from .journal_rules import RULES, field_label
from .workbook import COLUMN_FORMATS, TEMPLATE_COLUMNS, example_entry

EXPLANATIONS = (
    gettext_lazy("One row per entry line. The entry's fields (counter, entered by, date, number, comment) are "
                 "repeated on each of its rows; consecutive rows with the same entry counter make one entry."),
    gettext_lazy("Entry counters run 1, 2, 3... through the fiscal year with no gap; entries are in date order and "
                 "inside the period uploaded."),
    gettext_lazy("Every entry has at least 2 lines, and its debit (D) lines add up to its credit (C) lines; the "
                 "totals of the entry are computed from them."),
    gettext_lazy("Line numbers are not typed: the conversion numbers the rows, running on through the period with "
                 "no gap from where the previous month ended (both the line number and the line counter)."),
    gettext_lazy("Amounts are above 0 with at most 2 decimals; dates exist in the calendar (yyyy-mm-dd)."),
    gettext_lazy("Main accounts have 3 or 4 characters; a sub-account starts with its main account."),
    gettext_lazy("Document types: invoice (fatura), check (çek), voucher (senet, makbuz, fiş), other (diğer), in "
                 "Turkish or English, in any case. An invoice or a check needs its number and date; other needs a "
                 "description."),
    gettext_lazy("Amounts may be typed the Turkish way (1.250,75) or as numbers."),
    gettext_lazy("Rows 2 and 3 are an example entry: it is not read while it is left as it is. Overwrite it or "
                 "add your entries below it."),
    gettext_lazy("Foreign-currency and measure columns may stay empty; when one currency column is filled, the "
                 "original amount and the original currency are required."),
    gettext_lazy("Columns marked * are required. Headers may be in Turkish or English, in any order."),
)


# --- the template --------------------------------------------------------------------------------------------------
def template() -> bytes:
    """The xlsx an accountant fills: headers in the active language (required ones marked *), an example entry
    of 2 lines, and a second sheet explaining the columns and the rules."""
    workbook = Workbook()
    sheet = workbook.active
    sheet.title = _("Journal")[:31]
    bold, fill = Font(bold=True), PatternFill("solid", fgColor="DDEBF7")
    debit, credit = example_entry()
    for index, column in enumerate(TEMPLATE_COLUMNS, start=1):
        label = force_str(column.label) + (" *" if column.required else "")
        cell = sheet.cell(row=1, column=index, value=label)
        cell.font, cell.fill = bold, fill
        letter = get_column_letter(index)
        for row, values in ((2, debit), (3, credit)):
            value = values.get(column.key)
            cell = sheet.cell(row=row, column=index, value=value if value != "" else None)
            cell.number_format = COLUMN_FORMATS[column.key]
        sheet.column_dimensions[letter].width = max(12, min(40, len(label) + 4))
        # Identifiers stay text (Excel would drop a leading 0), dates are dates, amounts are numbers.
        sheet.column_dimensions[letter].number_format = COLUMN_FORMATS[column.key]
    sheet.freeze_panes = "A2"
    notes = workbook.create_sheet(_("Explanation")[:31])
    notes.append([_("Column"), _("Field"), _("Required")])
    for cell in notes[1]:
        cell.font = bold
    for column in TEMPLATE_COLUMNS:
        notes.append([force_str(column.label), column.key, _("yes") if column.required else ""])
    notes.append([])
    for text in EXPLANATIONS:
        notes.append([force_str(text)])
    notes.column_dimensions["A"].width = 34
    notes.column_dimensions["B"].width = 36
    out = io.BytesIO()
    workbook.save(out)
    return out.getvalue()


# --- the findings report -------------------------------------------------------------------------------------------
def findings_report(out, findings, by_rule, source_rows=None) -> None:
    """The findings as an xlsx written to `out` (streaming): a first sheet with the count per rule (by_rule: all
    of them, even when the findings given are only the first ones kept), then one row per finding. `findings`:
    objects with line, field, rule, found and expected (the checker's or the stored ones); with `source_rows`
    (an Excel journal) the sheet row is shown instead of the text line."""
    workbook = Workbook(write_only=True)
    bold = Font(bold=True)

    def header(sheet, titles):
        sheet.append([text_cell(sheet, title, bold) for title in titles])

    summary = workbook.create_sheet(_("Summary")[:31])
    summary.column_dimensions["A"].width = 90
    summary.column_dimensions["B"].width = 12
    summary.freeze_panes = "A2"
    header(summary, [_("Rule"), _("Errors")])
    for rule, count in sorted(dict(by_rule).items(), key=lambda item: (-item[1], item[0])):
        summary.append([force_str(RULES.get(rule, rule)), count])
    summary.append([_("In all"), sum(dict(by_rule).values())])

    sheet = workbook.create_sheet(_("Errors")[:31])
    for letter, width in zip("ABCDEF", (10, 34, 70, 40, 40, 12)):
        sheet.column_dimensions[letter].width = width
    sheet.freeze_panes = "A2"
    header(sheet, [_("Row") if source_rows is not None else _("Line"), _("Field"), _("Rule"), _("Found"),
                   _("Expected")])
    sentences = {rule: force_str(sentence) for rule, sentence in RULES.items()}
    labels = {}
    for finding in findings:
        where = finding.line
        if source_rows is not None:
            where = source_rows[finding.line - 1] if 0 < finding.line <= len(source_rows) else None
        name = finding.field
        if name not in labels:
            label = field_label(name)
            labels[name] = f"{label} ({name})" if label != name else name
        # found: the file's own text, written as text even when it reads "=..." (core.workbooks)
        sheet.append([text_cell(sheet, value) for value in (
            where, labels[name], sentences.get(finding.rule, finding.rule), finding.found,
            force_str(finding.expected))])
    workbook.save(out)
