"""The checker of a journal (yevmiye) in the tax authority's tab-separated text (document 3, 2.8; the journal
rules of the facts file), run before anything goes to the platform.

It streams: blocks of any size come in, findings go out in line order, and what it keeps does not grow with
the file (the open entry's sums and counters, the part plan, a cache of dates). Every line first meets one
regular expression that accepts a well-formed entry line (or H line) as a whole and hands over the few values
the cross-line rules need (counters, amount, code, dates); only a line that it refuses, or whose cross-line
values are not the expected ones, is split into fields and diagnosed field by field. The fast path and the
diagnosis share the state in `_State`; a test runs both on the same files and compares.

Pure: no Django model is imported, so the checker runs in a job, a test or a shell alike.
"""

import collections
import re
from dataclasses import dataclass, field
from datetime import date

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from stdnum.tr import tckimlik, vkn

MAX_LINE_BYTES = 64 * 1024
BLOCK_BYTES = 1024 * 1024
MIB = 1024 * 1024
FOUND_CHARS = 200
DATE_CACHE = 100_000  # distinct dates remembered; a file of random dates cannot grow it further

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
    "amountOriginalAmount": gettext_lazy("Original amount"), "amountOriginalCurrency": gettext_lazy("Original currency"),
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


# --- the fast path: a well-formed line in one step ------------------------------------------------------------
# Python's re is the bulk of the cost, so the patterns are written for it: possessive quantifiers (a field never
# gives back what it took), few groups, and only the values the cross-line rules need are captured.
# A date that is real whatever the year (1000 to 9999); 29 February goes to the diagnosis, which knows leap years.
_DATE = (rb"[1-9][0-9]{3}-(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])|(?:0[13-9]|1[0-2])-(?:29|30)"
         rb"|(?:0[13578]|1[02])-31)")
_F = rb"[^\t]*+"  # any field (a line holds no newline)
_V = rb"[^\t]++"  # a filled field
_COUNTER = rb"([1-9][0-9]{0,17}+)"
_CENTS = rb"([0-9]{1,18}+)(?:\.([0-9]{1,2}+))?"
_NUMBER = rb"[0-9]{1,18}+(?:\.[0-9]{1,18}+)?"
_POSITIVE = rb"(?=[0-9.]*[1-9])" + _NUMBER
# Fields 10 to 14 by document type (required): invoice and check need a number and a date, other a description.
_DOCUMENTS = (rb"(?:voucher\t" + _F + rb"\t" + _F + rb"\t" + _F + rb"\t(?:" + _DATE + rb")?"
              rb"|(?:invoice|check)\t" + _F + rb"\t" + _V + rb"\t" + _F + rb"\t" + _DATE
              + rb"|other\t" + _V + rb"\t" + _F + rb"\t" + _F + rb"\t(?:" + _DATE + rb")?)")
# Fields 17 to 23: all empty, or the original amount and currency given (codes, rates and date well written).
_CURRENCY = (rb"(?:\t{6}|(?:[A-Z]{3})?\t(?:" + _DATE + rb")?\t" + _POSITIVE + rb"\t[A-Z]{3}\t(?:" + _POSITIVE
             + rb")?\t" + _F + rb"\t" + _F + rb")")
_MEASURE = (rb"\t" + _F + rb"\t" + _F + rb"\t(?:-?" + _NUMBER + rb")?\t" + _F + rb"\t" + _F + rb"\t(?:-?" + _NUMBER
            + rb")?")
# An entry line: lineNumber, lineNumberCounter, accountMainID (3 or 4 characters), its description, the sub
# description, accountSubID (empty or starting with the main id: the backreference), amount, D or C,
# postingDate (only captured: it must equal its entry's date, which was checked), fields 10 to 16, the optional
# groups.
_LINE = re.compile(
    _COUNTER + rb"\t" + _COUNTER + rb"\t([ -~]{3,4}+)\t" + _V + rb"\t" + _F + rb"\t((?:\3" + _F + rb")?)\t" + _CENTS
    + rb"\t([DC])\t(" + _F + rb")\t" + _DOCUMENTS + rb"\t" + _F + rb"\t" + _F + rb"\t(?:\Z|" + _CURRENCY + rb"(?:"
    + _MEASURE + rb")?\t?)").fullmatch  # \Z first: an optional group tried for nothing costs a fifth of the time
# An H line: H, enteredBy, enteredDate, entryNumber, entryComment, totals, entryNumberCounter.
_HEAD = re.compile(rb"H\t" + _V + rb"\t(" + _DATE + rb")\t" + _V + rb"\t" + _F + rb"\t" + _CENTS + rb"\t" + _CENTS
                   + rb"\t" + _COUNTER + rb"\t?").fullmatch
_FRACTION = {None: 0, **{str(d).encode(): d * 10 for d in range(10)}, **{f"{d:02d}".encode(): d for d in range(100)}}
_LINE_NUMBER = {b"%d" % i: i for i in range(1, 10_000)}  # lineNumber text -> value, without int()'s cost
# How the file numbers its lines (lineNumber; the facts file): both ways agree on the first entry, so the first
# line of the second entry decides (or a first line other than 1: running on from there); after the first line
# that breaks the file's way, lineNumber is no longer judged (a mix would otherwise be a finding on every entry).
_UNDECIDED, _WITHIN, _RUNNING, _BROKEN = range(4)
_UNREAD = -1  # (the fast path only) no lineNumber read yet: every entry line goes to the diagnosis


# --- the diagnosis ---------------------------------------------------------------------------------------------
_COUNTER_TEXT = re.compile(r"[1-9][0-9]{0,17}")
_AMOUNT_TEXT = re.compile(r"(-?)([0-9]+)(?:\.([0-9]+))?")
_NUMBER_TEXT = re.compile(r"-?[0-9]{1,18}(?:\.[0-9]{1,18})?")
_DATE_TEXT = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_CURRENCY_CODE = re.compile(r"[A-Z]{3}")
_TR_AMOUNT = re.compile(r"[0-9]{1,3}(?:[. ][0-9]{3})*(?:,[0-9]+)?|[0-9]+,[0-9]+")
_EN_AMOUNT = re.compile(r"[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?")
_DMY = re.compile(r"([0-9]{1,2})[./-]([0-9]{1,2})[./-]([0-9]{4})")
_YMD = re.compile(r"([0-9]{4})[./-]([0-9]{1,2})[./-]([0-9]{1,2})")


def _shown(value) -> str:
    """A value as a finding shows it: control characters escaped, cut to FOUND_CHARS."""
    if isinstance(value, (bytes, bytearray)):
        value = bytes(value[:FOUND_CHARS * 4]).decode("utf-8", "backslashreplace")
    value = str(value)[:FOUND_CHARS]
    if not value.isprintable():
        value = "".join(c if c.isprintable() else ("\\t" if c == "\t" else f"\\x{ord(c):02x}" if ord(c) < 256
                                                   else f"\\u{ord(c):04x}") for c in value)
    return value[:FOUND_CHARS]


def _money(cents: int) -> str:
    sign = "-" if cents < 0 else ""
    return f"{sign}{abs(cents) // 100}.{abs(cents) % 100:02d}"


def _amount_hint(text: str) -> str:
    """What a wrongly written amount should look like, when the intent is clear (1.250,50 is 1250.50)."""
    guess = None
    if _TR_AMOUNT.fullmatch(text):
        guess = text.replace(".", "").replace(" ", "").replace(",", ".")
    elif _EN_AMOUNT.fullmatch(text):
        guess = text.replace(",", "")
    if guess and _AMOUNT_TEXT.fullmatch(guess) and len(guess.partition(".")[2]) <= 2:
        return guess
    return _("digits with a dot before the decimals, e.g. 1250.50")


def _date_hint(text: str) -> str:
    """The yyyy-mm-dd form of a date written another way (31.01.2025), when it is a real date."""
    for pattern, order in ((_DMY, (3, 2, 1)), (_YMD, (1, 2, 3))):
        match = pattern.fullmatch(text)
        if match:
            try:
                return date(*(int(match.group(i)) for i in order)).isoformat()
            except ValueError:
                break
    return _("yyyy-mm-dd")


class _State:
    """The checker's whole memory: the open entry's aggregates, the counters, the part being planned."""

    __slots__ = ("in_entry", "lnum", "lcx", "edate", "lastd", "debit", "credit", "ebytes", "e_td", "e_tc",
                 "ecounter", "elc", "hline", "maxd", "mind", "tainted", "cur", "seen_first", "pre_bytes", "blanks",
                 "blank_first", "offset", "lmode", "lrun")

    def __init__(self):
        self.in_entry = False
        self.lnum = 1  # the lineNumber expected next in the open entry: its lines so far + 1
        self.lcx = None  # the lineNumberCounter expected next (None: the first, any positive)
        self.edate = None  # the open entry's date (bytes) when it is a good one
        self.lastd = b""  # the last good entry date (for the order)
        self.debit = self.credit = 0  # the open entry's sums in cents
        self.ebytes = 0  # the open entry's size in the file, from its H line to the next
        self.e_td = self.e_tc = None  # its H totals in cents (None: unreadable)
        self.ecounter = None  # its entryNumberCounter (None: none read yet)
        self.elc = 0  # the lineNumberCounter of its first line
        self.hline = 0  # its H line's number
        self.maxd = b""
        self.mind = b""
        self.tainted = False  # a line of it could not be read: its sums are not known
        self.cur = None  # the part being planned
        self.seen_first = False  # a non-blank line was read (the first must be Y)
        self.pre_bytes = 0  # bytes before the first H (the Y line), which go with the first entry
        self.blanks = 0  # blank lines waiting: in the middle (a finding) or at the end (fine)
        self.blank_first = 0
        self.offset = 0  # bytes planned into parts so far
        self.lmode = _UNDECIDED  # how the file numbers its lines
        self.lrun = None  # the lineNumber expected next when running on (None: no line read yet)


class JournalCheck:
    def __init__(self, options: Options):
        self.options = options
        self.summary = Summary()
        self._start, self._end = options.start.isoformat(), options.end.isoformat()
        self._accounts = options.accounts
        self._accounts_b = None if options.accounts is None else frozenset(a.encode() for a in options.accounts)
        self._limit = options.split_size_mb * MIB
        self._dates = {}  # text -> a real date?
        self._s = _State()
        self.fast = True  # False: every line through the diagnosis (a test compares both ways)

    # --- reading ---------------------------------------------------------------------------------------------
    def run(self, blocks):
        """Findings of the text that `blocks` (bytes of any size) make up, in line order."""
        buf = bytearray()
        skipping = -1  # the length of a too-long line being skipped, -1 when none
        head = b""
        n = 0
        for block in blocks:
            if not block:
                continue
            if skipping >= 0:
                i = block.find(b"\n")
                if i < 0:
                    skipping += len(block)
                    continue
                n += 1
                yield from self._note(self._slow_long(n, head, skipping + i, skipping + i + 1))
                block = block[i + 1:]
                skipping = -1
            cut = block.rfind(b"\n")
            if cut >= 0:
                if buf:
                    buf += block[:cut]
                    chunk = bytes(buf)
                    buf.clear()
                else:
                    chunk = block[:cut]
                yield from self._lines(chunk, n)
                n += chunk.count(b"\n") + 1
                block = block[cut + 1:]
            if len(buf) + len(block) > MAX_LINE_BYTES:
                # Too long to be a line: counted, never kept (a file with no newline must not fill the memory).
                skipping, head = len(buf) + len(block), (bytes(buf[:2]) + block[:2])[:2]
                buf.clear()
            else:
                buf += block
        if skipping >= 0:
            n += 1
            yield from self._note(self._slow_long(n, head, skipping, skipping))
        elif buf:
            n += 1
            yield from self._note(self._slow(bytes(buf), n, len(buf), len(buf)))
        yield from self._note(self._finish(n))

    def _note(self, findings):
        summary = self.summary
        for finding in findings:
            summary.findings += 1
            summary.by_rule[finding.rule] += 1
            yield finding

    def _lines(self, chunk, n):
        """The complete lines of a chunk (without its last newline); n: the number of the line before it. A line
        that is not UTF-8 goes to the diagnosis, the lines around it to _fast_lines."""
        for _attempt in range(8):
            try:
                chunk.decode("utf-8")
                break
            except UnicodeDecodeError as error:
                first = chunk.rfind(b"\n", 0, error.start) + 1  # the line of the wrong byte
                last = chunk.find(b"\n", error.start)
                last = len(chunk) if last < 0 else last
                if first:
                    yield from self._fast_lines(chunk[:first - 1], n)
                    n += chunk.count(b"\n", 0, first)
                n += 1
                yield from self._note(self._slow(chunk[first:last], n, last - first + 1, last - first))
                if last == len(chunk):
                    return
                chunk = chunk[last + 1:]
        else:
            yield from self._fast_lines(chunk, n, utf8=False)  # many such lines: the diagnosis decodes each
            return
        yield from self._fast_lines(chunk, n)

    def _fast_lines(self, chunk, n, utf8=True):
        """Lines that are UTF-8 (unless utf8 is False).

        A well-formed line that follows on (its counters and date; an H line closing a clean entry that fits in
        the part) is taken in one step here; any other goes through the diagnosis (_slow), which holds the whole
        state in _State while it runs."""
        raw, lines, newline, fast = chunk.split(b"\n"), None, 1, self.fast and utf8
        if b"\r" in chunk:
            if chunk.endswith(b"\r") and chunk.count(b"\r") == len(raw) == chunk.count(b"\r\n") + 1:
                lines, newline = chunk[:-1].split(b"\r\n"), 2  # every line ends \r\n
            else:
                fast = False
        lines = lines or raw
        if fast and max(map(len, lines)) + newline - 1 > MAX_LINE_BYTES:
            fast = False
        if not fast:
            for n, line in enumerate(raw, n + 1):  # the diagnosis takes off a \r itself
                found = self._slow(line, n, len(line) + 1, len(line))
                if found:
                    yield from self._note(found)
            return
        note, line_match, head, fraction, numbers = self._note, _LINE, _HEAD, _FRACTION, _LINE_NUMBER
        accounts, limit = self._accounts_b, self._limit
        start_b, end_b = self._start.encode(), self._end.encode()
        (go, lnum, lcx, edate, lastd, debit, credit, ebytes, e_td, e_tc, ecounter, elc, hline, maxd, tainted,
         cur) = self._load()
        lmode, ldelta = self._line_numbering(go)
        opened = closed_lines = closed_debit = closed_credit = 0  # what the fast path did, told to summary at the end
        for n, line in enumerate(lines, n + 1):
            if go:
                m = line_match(line)
                if m is not None:
                    ln, lc, _main, sub, whole, part, dc, post = m.groups()
                    # lineNumber runs on with lineNumberCounter (ldelta apart), or restarts in each entry.
                    if lmode == _WITHIN:
                        numbered = numbers.get(ln) == lnum
                    elif lmode == _RUNNING:
                        numbered = ln == lc if not ldelta else ln == b"%d" % (lcx + ldelta)
                    else:  # broken: not judged; undecided: the first entry, where both ways agree
                        numbered = lmode == _BROKEN or (lmode == _UNDECIDED and numbers.get(ln) == lnum == lcx + ldelta)
                    if (numbered and post == edate and lc == b"%d" % lcx
                            and (accounts is None or not sub or sub in accounts)):
                        cents = int(whole) * 100 + fraction[part]
                        if cents:  # 0 is for the diagnosis to name
                            if dc == b"D":
                                debit += cents
                            else:
                                credit += cents
                            lnum += 1
                            lcx += 1
                            ebytes += len(line) + newline
                            continue
                elif (not tainted and lnum > 2 and debit == credit and e_td == debit and e_tc == credit
                      and cur.bytes + ebytes <= limit):
                    m = head(line)
                    if m is not None:
                        day, dw, dp, cw, cp, counter = m.groups()
                        # (the first good date of the journal goes through the diagnosis, which notes it)
                        if lastd and lastd <= day and start_b <= day <= end_b and counter == b"%d" % (ecounter + 1):
                            td, tc = int(dw) * 100 + fraction[dp], int(cw) * 100 + fraction[cp]
                            if td and tc:
                                # The entry before was clean and fits the part: close it, open this one.
                                cur.bytes += ebytes
                                opened += 1
                                closed_lines += lnum - 1
                                closed_debit += debit
                                closed_credit += credit
                                ecounter += 1
                                edate = lastd = day
                                if day > maxd:
                                    maxd = day
                                e_td, e_tc = td, tc
                                debit = credit = 0
                                lnum, elc, hline, ebytes = 1, lcx, n, len(line) + newline
                                continue
            if opened:
                self._closed_fast(opened, closed_lines, closed_debit, closed_credit, ecounter, elc, cur)
                opened = closed_lines = closed_debit = closed_credit = 0
            self._store(lnum, lcx, edate, lastd, debit, credit, ebytes, e_td, e_tc, ecounter, elc, hline,
                        maxd, tainted, cur)
            if lmode == _RUNNING or lmode == _UNDECIDED:
                self._s.lrun = lcx + ldelta
            found = self._slow(line, n, len(line) + newline, len(line) + newline - 1)
            (go, lnum, lcx, edate, lastd, debit, credit, ebytes, e_td, e_tc, ecounter, elc, hline, maxd, tainted,
             cur) = self._load()
            lmode, ldelta = self._line_numbering(go)
            if found:
                yield from note(found)
        if opened:
            self._closed_fast(opened, closed_lines, closed_debit, closed_credit, ecounter, elc, cur)
        self._store(lnum, lcx, edate, lastd, debit, credit, ebytes, e_td, e_tc, ecounter, elc, hline, maxd,
                    tainted, cur)
        if lmode == _RUNNING or lmode == _UNDECIDED:
            self._s.lrun = lcx + ldelta

    def _line_numbering(self, go):
        """(lmode, ldelta) as _fast_lines keeps them: lineNumber running on moves with lineNumberCounter, so the
        fast path keeps their difference and gives lrun back as lcx + ldelta."""
        s = self._s
        if not go or s.lrun is None:
            return _UNREAD, 0
        return s.lmode, s.lrun - s.lcx

    def _closed_fast(self, opened, lines, debit, credit, ecounter, elc, cur):
        """What the fast path's H lines did, in the summary and the part: entries opened, and the ones before them
        closed (the last of these is the entry before the open one)."""
        summary = self.summary
        summary.entries += opened
        summary.entry_lines += lines
        summary.debit_cents += debit
        summary.credit_cents += credit
        cur.entry_end, cur.line_end = ecounter - 1, elc - 1

    def _load(self):
        """The hot state as _fast_lines keeps it in locals; the first: whether the fast path may take a line."""
        s = self._s
        go = s.in_entry and not s.blanks and s.cur is not None and s.lcx is not None
        return (go, s.lnum, s.lcx, s.edate, s.lastd, s.debit, s.credit, s.ebytes, s.e_td, s.e_tc, s.ecounter, s.elc,
                s.hline, s.maxd, s.tainted, s.cur)

    def _store(self, *values):
        s = self._s
        (s.lnum, s.lcx, s.edate, s.lastd, s.debit, s.credit, s.ebytes, s.e_td, s.e_tc, s.ecounter, s.elc,
         s.hline, s.maxd, s.tainted, s.cur) = values

    # --- the diagnosis of one line ---------------------------------------------------------------------------
    def _slow(self, raw: bytes, n: int, size: int, length: int) -> list:
        """size: the line's bytes in the file; length: those before its newline (a \r included)."""
        out = []
        s = self._s
        if length > MAX_LINE_BYTES:
            return self._slow_long(n, raw[:2], length, size)
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        if n == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            self._flush_blanks(out)
            out.append(Finding(n, "line", "encoding", _shown(raw), _("UTF-8")))
            s.seen_first = True
            self._skip(raw[:2], n, size, out)
            return out
        if not text.strip():
            if s.blanks == 0:
                s.blank_first = n
            s.blanks += 1
            self._add_bytes(size)
            return out
        self._flush_blanks(out)
        kind = text[:2]
        first = not s.seen_first
        s.seen_first = True
        if kind in ("Y\t", "Y"):
            if first:
                s.pre_bytes += size
                self._y_line(text, n, out)
            else:
                out.append(Finding(n, "line", "y_line", _shown(text), _("only on line 1")))
                self._add_bytes(size)
            return out
        if first:
            out.append(Finding(n, "line", "y_line", _shown(text),
                               _("Y, fiscalYearStart, fiscalYearEnd, batchID, entityIdentifier")))
        if kind in ("H\t", "H"):
            self._h_line(text, n, size, out)
        elif not s.in_entry:
            out.append(Finding(n, "line", "line_before_header", _shown(text), _("an H line before it")))
            s.pre_bytes += size
        else:
            self._entry_line(text, n, size, out)
        return out

    def _slow_long(self, n, head, length, size):
        out = []
        self._flush_blanks(out)
        out.append(Finding(n, "line", "line_too_long", _("%(count)s bytes") % {"count": length},
                           _("at most %(count)s bytes") % {"count": MAX_LINE_BYTES}))
        self._s.seen_first = True
        self._skip(head, n, size, out)
        return out

    def _skip(self, head, n, size, out):
        """A line that cannot be read (not UTF-8, too long): one finding, and it still takes its place (an H opens
        an entry, an entry line uses up its counters), so that the lines after it are not wrong because of it."""
        s = self._s
        if head[:2] in (b"H\t", b"H"):
            self._close_entry(out)
            self._open_entry(n, size, None, None, None, None)
            s.tainted = True
        elif s.in_entry and head[:2] not in (b"Y\t", b"Y"):
            self._unread_line()
            s.tainted = True
            s.ebytes += size
        else:
            self._add_bytes(size)

    def _unread_line(self):
        """An entry line that cannot be read still takes its place: its numbers are taken to be the expected ones."""
        s = self._s
        s.lnum += 1
        if s.lcx is not None:
            s.lcx += 1
        if s.lrun is not None:
            s.lrun += 1

    def _add_bytes(self, size):
        s = self._s
        if s.in_entry:
            s.ebytes += size
        else:
            s.pre_bytes += size

    def _flush_blanks(self, out):
        s = self._s
        for line in range(s.blank_first, s.blank_first + s.blanks):
            out.append(Finding(line, "line", "blank_line", "", _("no blank line (blank lines only at the end)")))
        s.blanks = 0

    # --- values ------------------------------------------------------------------------------------------------
    def _is_date(self, text: str) -> bool:
        known = self._dates.get(text)
        if known is None:
            known = False
            if _DATE_TEXT.fullmatch(text):
                try:
                    date.fromisoformat(text)
                    known = True
                except ValueError:
                    pass
            if len(self._dates) >= DATE_CACHE:
                self._dates.clear()
            self._dates[text] = known
        return known

    def _date(self, text, n, name, column, out) -> bool:
        """A date field: required, yyyy-mm-dd and real."""
        if not text:
            out.append(Finding(n, name, "required", "", _("a date (yyyy-mm-dd)"), column))
            return False
        if not self._is_date(text):
            out.append(Finding(n, name, "date_format", _shown(text), _date_hint(text), column))
            return False
        return True

    def _amount(self, text, n, name, column, out):
        """An amount field: its cents, or None with the finding."""
        if not text:
            out.append(Finding(n, name, "required", "", _("an amount, e.g. 1250.50"), column))
            return None
        match = _AMOUNT_TEXT.fullmatch(text)
        if match is None or len(match.group(2)) > 18:
            out.append(Finding(n, name, "amount_format", _shown(text), _amount_hint(text), column))
            return None
        sign, whole, decimals = match.groups()
        if decimals and len(decimals) > 2:
            out.append(Finding(n, name, "amount_decimals", _shown(text), _("at most 2 decimals"), column))
            return None
        cents = int(whole) * 100 + int((decimals or "").ljust(2, "0"))
        if sign or not cents:
            out.append(Finding(n, name, "amount_positive", _shown(text), _("above 0"), column))
            return None
        return cents

    def _counter(self, text, n, name, column, out):
        """A counter field: its value, or None with the finding."""
        if not text:
            out.append(Finding(n, name, "required", "", _("a whole number above 0"), column))
            return None
        if not _COUNTER_TEXT.fullmatch(text):
            hint = text.lstrip("0") if text.isdigit() and text.strip("0") and len(text) < 40 else None
            out.append(Finding(n, name, "counter_format", _shown(text), hint or _("a whole number above 0"), column))
            return None
        return int(text)

    def _required(self, text, n, name, column, out) -> bool:
        if text:
            return True
        out.append(Finding(n, name, "required", "", _("a value"), column))
        return False

    # --- the Y line --------------------------------------------------------------------------------------------
    def _y_line(self, text, n, out):
        fields = text.split("\t")
        if len(fields) == 6 and fields[-1] == "":
            fields.pop()
        if len(fields) != 5:
            out.append(Finding(n, "line", "y_line", _("fields: %(count)s") % {"count": len(fields)},
                               _("5 fields: Y, fiscal year start, fiscal year end, branch number, tax or national id")))
            return
        _y, start, end, batch, identifier = fields
        summary = self.summary
        good_start = self._date(start, n, "fiscalYearStart", 2, out)
        good_end = self._date(end, n, "fiscalYearEnd", 3, out)
        if good_start:
            summary.fiscal_year_start = date.fromisoformat(start)
        if good_end:
            summary.fiscal_year_end = date.fromisoformat(end)
        if good_start and good_end and start >= end:
            out.append(Finding(n, "fiscalYearEnd", "fiscal_year", end, _("after %(date)s") % {"date": start}, 3))
        elif good_start and good_end:
            if start > self._start:
                out.append(Finding(n, "fiscalYearStart", "fiscal_year", start,
                                   _("on or before %(date)s") % {"date": self._start}, 2))
            if end < self._end:
                out.append(Finding(n, "fiscalYearEnd", "fiscal_year", end,
                                   _("on or after %(date)s") % {"date": self._end}, 3))
        if self._required(batch, n, "batchID", 4, out):
            summary.batch_id = batch[:FOUND_CHARS]
            if not (batch.isascii() and batch.isdigit()):
                out.append(Finding(n, "batchID", "batch_id", _shown(batch), _("digits"), 4))
        if self._required(identifier, n, "entityIdentifier", 5, out):
            summary.entity_identifier = identifier[:FOUND_CHARS]
            valid = (len(identifier) == 10 and vkn.is_valid(identifier)) or (
                len(identifier) == 11 and tckimlik.is_valid(identifier))
            if not valid:
                out.append(Finding(n, "entityIdentifier", "entity_identifier", _shown(identifier),
                                   _("a valid tax number (10 digits) or national id (11 digits)"), 5))

    # --- entries -----------------------------------------------------------------------------------------------
    def _h_line(self, text, n, size, out):
        self._close_entry(out)
        s = self._s
        fields = text.split("\t")
        if len(fields) == 9 and fields[-1] == "":
            fields.pop()
        if len(fields) != 8:
            out.append(Finding(n, "line", "h_line", _("fields: %(count)s") % {"count": len(fields)},
                               _("8 fields: H, entered by, entry date, entry number, entry comment, total debit, "
                                 "total credit, entry counter")))
            self._open_entry(n, size, None, None, None, None)
            s.tainted = True
            return
        _h, entered_by, day, number, _comment, total_debit, total_credit, counter = fields
        self._required(entered_by, n, "enteredBy", 2, out)
        good = None
        if self._date(day, n, "enteredDate", 3, out):
            if not self._start <= day <= self._end:
                out.append(Finding(n, "enteredDate", "date_in_period", day,
                                   _("between %(start)s and %(end)s") % {"start": self._start, "end": self._end}, 3))
            if s.lastd and day.encode() < s.lastd:
                out.append(Finding(n, "enteredDate", "date_order", day,
                                   _("%(date)s or later") % {"date": s.lastd.decode()}, 3))
            good = day.encode()
        self._required(number, n, "entryNumber", 4, out)
        totals_out = [] if self.options.derived_totals else out
        td = self._amount(total_debit, n, "totalDebit", 6, totals_out)
        tc = self._amount(total_credit, n, "totalCredit", 7, totals_out)
        value = self._counter(counter, n, "entryNumberCounter", 8, out)
        if value is not None:
            expected = self.options.first_entry_counter if s.ecounter is None else s.ecounter + 1
            if expected is not None and value != expected:
                out.append(Finding(n, "entryNumberCounter", "entry_counter", counter, str(expected), 8))
        self._open_entry(n, size, good, td, tc, value)

    def _open_entry(self, n, size, day, td, tc, counter):
        summary, s = self.summary, self._s
        if counter is None:  # unreadable: it is taken to be the expected one, so the next is not wrong too
            counter = (self.options.first_entry_counter or 1) if s.ecounter is None else s.ecounter + 1
        summary.entries += 1
        s.in_entry, s.hline, s.ecounter, s.edate = True, n, counter, day
        s.e_td, s.e_tc, s.debit, s.credit, s.lnum, s.tainted = td, tc, 0, 0, 1, False
        s.ebytes = size + s.pre_bytes
        s.pre_bytes = 0
        s.elc = s.lcx if s.lcx is not None else (self.options.first_line_counter or 1)
        if day is not None:
            s.lastd = day
            if not s.mind or day < s.mind:
                s.mind = day
            if day > s.maxd:
                s.maxd = day

    def _close_entry(self, out):
        s, summary = self._s, self.summary
        if not s.in_entry:
            return
        lines = s.lnum - 1
        summary.entry_lines += lines
        summary.debit_cents += s.debit
        summary.credit_cents += s.credit
        if lines < 2:
            out.append(Finding(s.hline, "line", "entry_min_lines", str(lines), _("at least 2")))
        if not s.tainted:
            if s.debit != s.credit:
                out.append(Finding(s.hline, "line", "entry_balance",
                                   _("debit %(debit)s, credit %(credit)s") % {"debit": _money(s.debit),
                                                                             "credit": _money(s.credit)},
                                   _("equal debit and credit")))
            if s.e_td is not None and s.e_td != s.debit and not self.options.derived_totals:
                out.append(Finding(s.hline, "totalDebit", "header_totals", _money(s.e_td), _money(s.debit), 6))
            if s.e_tc is not None and s.e_tc != s.credit and not self.options.derived_totals:
                out.append(Finding(s.hline, "totalCredit", "header_totals", _money(s.e_tc), _money(s.credit), 7))
        # The part plan: greedy, an entry goes whole to the next part when it does not fit in this one.
        if s.ebytes > self._limit:
            out.append(Finding(s.hline, "line", "entry_too_large", _("%(count)s bytes") % {"count": s.ebytes},
                               _("at most %(size)s MB") % {"size": self.options.split_size_mb}))
        last_line = s.lcx - 1 if s.lcx is not None else 0
        if s.cur is None or s.cur.bytes + s.ebytes > self._limit:
            if s.cur is not None:
                s.cur.text_end = s.hline - 1
                s.offset = s.cur.offset + s.cur.bytes
            s.cur = PartPlan(index=len(summary.parts) + 1, entry_start=s.ecounter, entry_end=s.ecounter,
                             line_start=s.elc, line_end=last_line, bytes=0, offset=s.offset,
                             text_start=s.hline if summary.parts else 1)
            summary.parts.append(s.cur)
        s.cur.bytes += s.ebytes
        s.cur.entry_end, s.cur.line_end = s.ecounter, last_line
        s.in_entry = False

    def _entry_line(self, text, n, size, out):
        s = self._s
        s.ebytes += size
        tabs = text.count("\t")
        if tabs < 16:
            name, column = ("detailComment", 16) if tabs == 15 else ("line", 0)
            out.append(Finding(n, name, "field_count", _("tabs: %(count)s") % {"count": tabs},
                               _("16 fields, each followed by a tab"), column))
            self._unread_line()
            s.tainted = True
            return
        fields = text.split("\t", 16)
        rest = fields.pop()
        extra = rest.split("\t") if rest else []
        if len(extra) in (8, 14) and extra[-1] == "":
            extra.pop()
        # lineNumber keeps the file's way (_line_number); lineNumberCounter runs over the journal: a wrong one is
        # named, then counting goes on from it, so that one gap is one finding. s.lnum counts the entry's lines.
        self._line_number(self._counter(fields[0], n, "lineNumber", 1, out), fields[0], n, out)
        s.lnum += 1
        value = self._counter(fields[1], n, "lineNumberCounter", 2, out)
        expected = self.options.first_line_counter if s.lcx is None else s.lcx
        if value is not None and expected is not None and value != expected:
            out.append(Finding(n, "lineNumberCounter", "line_counter", fields[1], str(expected), 2))
        if value is None:
            value = expected if expected is not None else 1
        if s.lcx is None:
            s.elc = value
        s.lcx = value + 1
        main, sub = fields[2], fields[5]
        good_main = self._required(main, n, "accountMainID", 3, out) and 3 <= len(main) <= 4
        if main and not good_main:
            out.append(Finding(n, "accountMainID", "main_account", _shown(main), _("3 or 4 characters"), 3))
        self._required(fields[3], n, "accountMainDescription", 4, out)
        if sub:
            if good_main and not sub.startswith(main):
                out.append(Finding(n, "accountSubID", "sub_account_prefix", _shown(sub),
                                   _("starting with %(main)s") % {"main": _shown(main)}, 6))
            if self._accounts is not None and sub not in self._accounts:
                out.append(Finding(n, "accountSubID", "sub_account_unknown", _shown(sub),
                                   _("a sub-account of the chart of accounts"), 6))
        cents = self._amount(fields[6], n, "amount", 7, out)
        code = fields[7]
        if code not in ("D", "C"):
            if not code:
                out.append(Finding(n, "debitCreditCode", "required", "", _("D or C"), 8))
            else:
                hint = code.strip().upper() if code.strip().upper() in ("D", "C") else _("D or C")
                out.append(Finding(n, "debitCreditCode", "debit_credit_code", _shown(code), hint, 8))
        if cents is None or code not in ("D", "C"):
            s.tainted = True
        elif code == "D":
            s.debit += cents
        else:
            s.credit += cents
        posting = fields[8]
        if self._date(posting, n, "postingDate", 9, out):
            if s.edate is not None:
                if posting.encode() != s.edate:
                    out.append(Finding(n, "postingDate", "posting_date", posting, s.edate.decode(), 9))
            elif not self._start <= posting <= self._end:
                out.append(Finding(n, "postingDate", "date_in_period", posting,
                                   _("between %(start)s and %(end)s") % {"start": self._start, "end": self._end}, 9))
        self._documents(fields, n, out)
        if len(extra) not in (0, 7, 13):
            out.append(Finding(n, "line", "optional_groups",
                               _("fields after field 16: %(count)s") % {"count": len(extra)}, _("0, 7 or 13")))
        else:
            self._optional(extra, n, out)

    def _line_number(self, value, text, n, out):
        """lineNumber (None: unreadable, taken to be the expected one) in the way the file numbers its lines."""
        s = self._s
        mode, within, running = s.lmode, s.lnum, s.lrun
        if mode == _BROKEN:
            return
        if value is None:
            if running is not None:
                s.lrun = running + 1
            return
        if running is None:  # the file's first: running on may start anywhere (the year's numbering continued)
            s.lmode, s.lrun = (_UNDECIDED if value == within else _RUNNING), value + 1
            return
        if mode == _UNDECIDED:
            if value == within == running:  # the first entry
                s.lrun = running + 1
                return
            if value == within:
                s.lmode = _WITHIN
                return
            if value == running:
                s.lmode, s.lrun = _RUNNING, running + 1
                return
            expected = str(within) if within == running else _(
                "%(within)s (within each entry) or %(running)s (running on through the period)") % {
                "within": within, "running": running}
        elif mode == _WITHIN:
            if value == within:
                return
            expected = _("%(number)s (within each entry)") % {"number": within}
        else:
            if value == running:
                s.lrun = running + 1
                return
            expected = _("%(number)s (running on through the period)") % {"number": running}
        out.append(Finding(n, "lineNumber", "line_number", text, expected, 1))
        s.lmode = _BROKEN

    def _documents(self, fields, n, out):
        kind, description, number, when = fields[9], fields[10], fields[11], fields[13]
        if not kind:  # the tax authority's schema wants a document type on every line
            out.append(Finding(n, "documentType", "required", "", _("invoice, check, voucher or other"), 10))
        elif kind not in DOCUMENT_TYPES:
            known = TURKISH_DOCUMENT_TYPES.get(kind.strip().lower().replace("I", "ı"), kind.strip().lower())
            out.append(Finding(n, "documentType", "document_type", _shown(kind),
                               known if known in DOCUMENT_TYPES else _("invoice, check, voucher or other"), 10))
            kind = known
        if kind in ("invoice", "check"):
            if not number:
                out.append(Finding(n, "documentNumber", "document_number", "",
                                   _("required for %(type)s") % {"type": kind}, 12))
            if not when:
                out.append(Finding(n, "documentDate", "document_date", "",
                                   _("required for %(type)s") % {"type": kind}, 14))
        elif kind == "other" and not description:
            out.append(Finding(n, "documentTypeDescription", "document_description", "",
                               _("required for %(type)s") % {"type": kind}, 11))
        if when:
            self._date(when, n, "documentDate", 14, out)

    def _optional(self, extra, n, out):
        currency = extra[:7]
        if any(currency):
            code, rate_date, original, original_code, rate = currency[:5]
            for name, value in (("amountCurrency", code), ("amountOriginalCurrency", original_code)):
                if value and not _CURRENCY_CODE.fullmatch(value):
                    out.append(Finding(n, name, "currency", _shown(value),
                                       _("3 capital letters (ISO 4217), e.g. USD"), COLUMN[name]))
            for name, value in (("amountOriginalAmount", original), ("amountOriginalCurrency", original_code)):
                if not value:
                    out.append(Finding(n, name, "currency", "",
                                       _("required when foreign-currency fields are filled"), COLUMN[name]))
            for name, value in (("amountOriginalAmount", original), ("amountOriginalExchangeRate", rate)):
                if value and not (_NUMBER_TEXT.fullmatch(value) and not value.startswith("-")
                                  and value.strip("0.")):
                    out.append(Finding(n, name, "currency", _shown(value), _("a number above 0"), COLUMN[name]))
            if rate_date:
                self._date(rate_date, n, "amountOriginalExchangeRateDate", 18, out)
        measure = extra[7:]
        if any(measure):
            for name, value in (("measurableQuantity", measure[2]), ("measurableCostPerUnit", measure[5])):
                if value and not _NUMBER_TEXT.fullmatch(value):
                    out.append(Finding(n, name, "measure", _shown(value), _("a number, e.g. 12.5"), COLUMN[name]))

    # --- the end -----------------------------------------------------------------------------------------------
    def _finish(self, n) -> list:
        out = []
        s, summary = self._s, self.summary
        self._close_entry(out)
        summary.lines = n
        if s.cur is not None:
            s.cur.text_end = n
        if summary.entries == 0:
            out.append(Finding(1, "line", "empty_file", "", _("a Y line and at least one entry")))
        if s.mind:
            summary.first_date = date.fromisoformat(s.mind.decode())
            summary.last_date = date.fromisoformat(s.maxd.decode())
        return out


def check_file(path, options: Options):
    """Every finding of a file and its summary (for tests and small files: the findings are kept)."""
    check = JournalCheck(options)

    def blocks():
        with open(path, "rb") as file:
            while block := file.read(BLOCK_BYTES):
                yield block

    return list(check.run(blocks())), check.summary
