"""What the journal checker knows before it reads a line: the journal's fields (document 3, 2.8), the rules it
applies (RULES) and what people call each field, the options of a check and what it gives back (Finding, PartPlan,
Summary). journal.py reads the text, journal_lines.py and journal_values.py apply the rules.
"""

import collections
from dataclasses import dataclass, field
from datetime import date

from django.utils.translation import gettext_lazy

MAX_LINE_BYTES = 64 * 1024
MIB = 1024 * 1024
FOUND_CHARS = 200

Y_FIELDS = ("Y", "fiscalYearStart", "fiscalYearEnd", "batchID", "entityIdentifier")
H_FIELDS = ("H", "enteredBy", "enteredDate", "entryNumber", "entryComment", "totalDebit", "totalCredit",
            "entryNumberCounter")
LINE_FIELDS = ("lineNumber", "lineNumberCounter", "accountMainID", "accountMainDescription", "accountSubDescription",
               "accountSubID", "amount", "debitCreditCode", "postingDate", "documentType", "documentTypeDescription",
               "documentNumber", "documentReference", "documentDate", "paymentMethod", "detailComment")
CURRENCY_FIELDS = ("amountCurrency", "amountOriginalExchangeRateDate", "amountOriginalAmount",
                   "amountOriginalCurrency", "amountOriginalExchangeRate", "amountOriginalExchangeRateSource",
                   "amountOriginalExchangeRateComment")
MEASURE_FIELDS = ("measurableCode", "measurableCodeDescription", "measurableQuantity", "measurableQualifier",
                  "measurableUnitOfMeasure", "measurableCostPerUnit")
ENTRY_FIELDS = LINE_FIELDS + CURRENCY_FIELDS + MEASURE_FIELDS
COLUMN = {name: index for index, name in enumerate(ENTRY_FIELDS, start=1)}  # a field's position on an entry line
DOCUMENT_TYPES = ("invoice", "check", "voucher", "other")
# What accountants write instead (a hint towards the code the tax authority wants).
TURKISH_DOCUMENT_TYPES = {"fatura": "invoice", "çek": "check", "cek": "check", "fiş": "voucher", "fis": "voucher",
                          "makbuz": "voucher", "diğer": "other", "diger": "other"}

RULES = {
    "empty_file": gettext_lazy("The journal has the Y line and at least one entry."),
    "encoding": gettext_lazy("Every line is UTF-8 text."),
    "line_too_long": gettext_lazy("A line is at most 64 KiB long."),
    "blank_line": gettext_lazy("Blank lines are allowed only at the end of the file."),
    "line_before_header": gettext_lazy("Entry lines come after their entry's H line."),
    "y_line": gettext_lazy("The first line, and only the first, is the Y line: Y, fiscal year start, fiscal year "
                           "end, branch number, tax or national id, separated by tabs."),
    "h_line": gettext_lazy("An H line has 8 fields separated by tabs: H, entered by, entry date, entry number, "
                           "comment, total debit, total credit, entry counter."),
    "field_count": gettext_lazy("An entry line has 16 fields, each followed by a tab, even when empty."),
    "optional_groups": gettext_lazy("After field 16 come nothing, the 7 foreign-currency fields, or those 7 (empty "
                                    "when unused) and the 6 measure fields."),
    "required": gettext_lazy("This field is required."),
    "counter_format": gettext_lazy("Counters and line numbers are whole numbers above 0."),
    "amount_format": gettext_lazy("Amounts are written with digits and a dot before the decimals, with no "
                                  "thousands separator: 1250.50."),
    "amount_decimals": gettext_lazy("Amounts have at most 2 decimals."),
    "amount_positive": gettext_lazy("Amounts are above 0."),
    "debit_credit_code": gettext_lazy("The debit/credit code is D (debit) or C (credit)."),
    "date_format": gettext_lazy("Dates are written yyyy-mm-dd and exist in the calendar."),
    "date_in_period": gettext_lazy("Entry dates fall inside the uploaded period."),
    "fiscal_year": gettext_lazy("The fiscal year of the Y line starts before it ends and holds the uploaded "
                                "period."),
    "posting_date": gettext_lazy("A line's posting date is its entry's date."),
    "date_order": gettext_lazy("Entries are in date order: an entry's date is never before the previous one's."),
    "entry_counter": gettext_lazy("Entry counters run on from entry to entry with no gap."),
    "line_number": gettext_lazy("Line numbers either run on through the period with no gap or repeat, or run 1, 2, "
                                "3... within each entry; a journal keeps to the one it starts with."),
    "line_counter": gettext_lazy("Line counters run on over the whole journal with no gap."),
    "entry_min_lines": gettext_lazy("An entry has at least 2 lines."),
    "entry_balance": gettext_lazy("An entry's debit equals its credit."),
    "header_totals": gettext_lazy("The H line's totals equal the sums of its entry's D and C lines."),
    "main_account": gettext_lazy("A main account id has 3 or 4 characters."),
    "sub_account_prefix": gettext_lazy("A sub-account id starts with its main account id."),
    "sub_account_unknown": gettext_lazy("The sub-account is in the company's chart of accounts."),
    "document_type": gettext_lazy("The document type is invoice, check, voucher or other, in lowercase."),
    "document_number": gettext_lazy("An invoice or a check needs its document number."),
    "document_date": gettext_lazy("An invoice or a check needs its document date."),
    "document_description": gettext_lazy("A document of type other needs its document type description."),
    "currency": gettext_lazy("Foreign-currency fields: currency codes of 3 capital letters, the original amount "
                             "and the rate above 0; the original amount and currency are given when any of them "
                             "is."),
    "measure": gettext_lazy("Measure fields: the quantity and the cost per unit are numbers."),
    "entity_identifier": gettext_lazy("The tax number (10 digits) or national id (11 digits) of the Y line is "
                                      "valid."),
    "batch_id": gettext_lazy("The branch number of the Y line is digits."),
    "entry_too_large": gettext_lazy("An entry fits in one part of the chosen part size: it is never split across "
                                    "parts."),
}

# What people call each field (the findings name the platform's field and show this).
FIELD_LABELS = {
    "line": gettext_lazy("the whole line"),
    "Y": gettext_lazy("Y line"), "fiscalYearStart": gettext_lazy("Fiscal year start"),
    "fiscalYearEnd": gettext_lazy("Fiscal year end"), "batchID": gettext_lazy("Branch number"),
    "entityIdentifier": gettext_lazy("Tax or national id"),
    "H": gettext_lazy("H line"), "enteredBy": gettext_lazy("Entered by"), "enteredDate": gettext_lazy("Entry date"),
    "entryNumber": gettext_lazy("Entry number"), "entryComment": gettext_lazy("Entry comment"),
    "totalDebit": gettext_lazy("Total debit"), "totalCredit": gettext_lazy("Total credit"),
    "entryNumberCounter": gettext_lazy("Entry counter"),
    "lineNumber": gettext_lazy("Line number"), "lineNumberCounter": gettext_lazy("Line counter"),
    "accountMainID": gettext_lazy("Main account"), "accountMainDescription": gettext_lazy("Main account name"),
    "accountSubDescription": gettext_lazy("Sub-account name"), "accountSubID": gettext_lazy("Sub-account"),
    "amount": gettext_lazy("Amount"), "debitCreditCode": gettext_lazy("Debit or credit (D/C)"),
    "postingDate": gettext_lazy("Posting date"), "documentType": gettext_lazy("Document type"),
    "documentTypeDescription": gettext_lazy("Document type description"),
    "documentNumber": gettext_lazy("Document number"), "documentReference": gettext_lazy("Document reference"),
    "documentDate": gettext_lazy("Document date"), "paymentMethod": gettext_lazy("Payment method"),
    "detailComment": gettext_lazy("Line comment"), "amountCurrency": gettext_lazy("Currency"),
    "amountOriginalExchangeRateDate": gettext_lazy("Exchange rate date"),
    "amountOriginalAmount": gettext_lazy("Original amount"),
    "amountOriginalCurrency": gettext_lazy("Original currency"),
    "amountOriginalExchangeRate": gettext_lazy("Exchange rate"),
    "amountOriginalExchangeRateSource": gettext_lazy("Exchange rate source"),
    "amountOriginalExchangeRateComment": gettext_lazy("Exchange rate comment"),
    "measurableCode": gettext_lazy("Item code"), "measurableCodeDescription": gettext_lazy("Item description"),
    "measurableQuantity": gettext_lazy("Quantity"), "measurableQualifier": gettext_lazy("Quantity qualifier"),
    "measurableUnitOfMeasure": gettext_lazy("Unit of measure"), "measurableCostPerUnit": gettext_lazy("Cost per unit"),
}


def field_label(name: str) -> str:
    """What people call a field of the journal (amount: "Tutar"), or its own name when it has none."""
    return str(FIELD_LABELS.get(name, name))


@dataclass(frozen=True)
class Finding:
    line: int  # 1-based line number in the text
    field: str  # the platform's field name, or "line" for the line as a whole
    rule: str  # a key of RULES
    found: str
    expected: str
    column: int = 0  # the field's position on its line (1..29 entry line, 1..8 H, 1..5 Y), 0 when none

    @property
    def message(self) -> str:
        return str(RULES[self.rule])


@dataclass
class Options:
    start: date  # the uploaded range (StartDate .. EndDate)
    end: date
    split_size_mb: int = 150  # SplitSize
    accounts: frozenset | None = None  # sub-account ids of the company's chart of accounts; None: not checked
    first_entry_counter: int | None = None  # expected first entryNumberCounter (None: any positive)
    first_line_counter: int | None = None  # expected first lineNumberCounter (None: any positive)
    # An Excel journal: the H totals are the converter's sums of the entry's rows, so a row's own finding (its
    # code or amount) names any problem with them; a finding on a total would point at a row that is right.
    derived_totals: bool = False


@dataclass
class PartPlan:
    """A part as the platform will cut it: entry_* are entryNumberCounter values, line_* lineNumberCounter
    values (as the platform's Part reports them); offset, text_start and text_end say where it lies in the
    file (byte offset, first and last text line)."""

    index: int
    entry_start: int
    entry_end: int
    line_start: int
    line_end: int
    bytes: int
    offset: int = 0
    text_start: int = 0
    text_end: int = 0


@dataclass
class Summary:
    """Filled while run() is consumed; complete once it is exhausted."""

    lines: int = 0
    entries: int = 0
    entry_lines: int = 0
    debit_cents: int = 0
    credit_cents: int = 0
    first_date: date | None = None
    last_date: date | None = None
    fiscal_year_start: date | None = None
    fiscal_year_end: date | None = None
    batch_id: str = ""
    entity_identifier: str = ""
    parts: list = field(default_factory=list)
    by_rule: collections.Counter = field(default_factory=collections.Counter)
    findings: int = 0
