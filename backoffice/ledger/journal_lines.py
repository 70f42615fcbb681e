"""The journal checker's diagnosis of one line (document 3, 2.8; the journal rules of the facts file): which kind
of line it is, its fields one by one (journal_values.py), and the rules across lines (counters, dates in order,
an entry's balance and totals, the part plan). Every line the fast path of journal.py does not take in one step
comes here; both keep the whole state in LineState, so they can hand a file over to each other at any line.
"""

from datetime import date

from django.utils.translation import gettext as _

from .journal_rules import MAX_LINE_BYTES, MIB, Finding, Options, PartPlan, Summary
from .journal_values import ValueCheck, shown

# How the file numbers its lines (lineNumber; the facts file): both ways agree on the first entry, so the first
# line of the second entry decides (or a first line other than 1: running on from there); after the first line
# that breaks the file's way, lineNumber is no longer judged (a mix would otherwise be a finding on every entry).
UNDECIDED, WITHIN, RUNNING, BROKEN = range(4)


def _money(cents: int) -> str:
    sign = "-" if cents < 0 else ""
    return f"{sign}{abs(cents) // 100}.{abs(cents) % 100:02d}"


class LineState:
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
        self.lmode = UNDECIDED  # how the file numbers its lines
        self.lrun = None  # the lineNumber expected next when running on (None: no line read yet)


class Diagnosis(ValueCheck):
    def __init__(self, options: Options, summary: Summary):
        super().__init__(options, summary)
        self.accounts = options.accounts
        self.limit = options.split_size_mb * MIB
        self.state = LineState()

    def line(self, raw: bytes, n: int, size: int, length: int) -> list:
        """The findings of line n. size: the line's bytes in the file; length: those before its newline (a \r
        included)."""
        out = []
        s = self.state
        if length > MAX_LINE_BYTES:
            return self.long_line(n, raw[:2], length, size)
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        if n == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            self._flush_blanks(out)
            out.append(Finding(n, "line", "encoding", shown(raw), _("UTF-8")))
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
                self.y_line(text, n, out)
            else:
                out.append(Finding(n, "line", "y_line", shown(text), _("only on line 1")))
                self._add_bytes(size)
            return out
        if first:
            out.append(Finding(n, "line", "y_line", shown(text),
                               _("Y, fiscalYearStart, fiscalYearEnd, batchID, entityIdentifier")))
        if kind in ("H\t", "H"):
            self._h_line(text, n, size, out)
        elif not s.in_entry:
            out.append(Finding(n, "line", "line_before_header", shown(text), _("an H line before it")))
            s.pre_bytes += size
        else:
            self._entry_line(text, n, size, out)
        return out

    def long_line(self, n, head, length, size) -> list:
        out = []
        self._flush_blanks(out)
        out.append(Finding(n, "line", "line_too_long", _("%(count)s bytes") % {"count": length},
                           _("at most %(count)s bytes") % {"count": MAX_LINE_BYTES}))
        self.state.seen_first = True
        self._skip(head, n, size, out)
        return out

    def _skip(self, head, n, size, out):
        """A line that cannot be read (not UTF-8, too long): one finding, and it still takes its place (an H opens
        an entry, an entry line uses up its counters), so that the lines after it are not wrong because of it."""
        s = self.state
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
        s = self.state
        s.lnum += 1
        if s.lcx is not None:
            s.lcx += 1
        if s.lrun is not None:
            s.lrun += 1

    def _add_bytes(self, size):
        s = self.state
        if s.in_entry:
            s.ebytes += size
        else:
            s.pre_bytes += size

    def _flush_blanks(self, out):
        s = self.state
        for line in range(s.blank_first, s.blank_first + s.blanks):
            out.append(Finding(line, "line", "blank_line", "", _("no blank line (blank lines only at the end)")))
        s.blanks = 0

    # --- entries -----------------------------------------------------------------------------------------------
    def _h_line(self, text, n, size, out):
        self._close_entry(out)
        s = self.state
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
        self.required(entered_by, n, "enteredBy", 2, out)
        good = None
        if self.date_field(day, n, "enteredDate", 3, out):
            if not self.start <= day <= self.end:
                out.append(Finding(n, "enteredDate", "date_in_period", day,
                                   _("between %(start)s and %(end)s") % {"start": self.start, "end": self.end}, 3))
            if s.lastd and day.encode() < s.lastd:
                out.append(Finding(n, "enteredDate", "date_order", day,
                                   _("%(date)s or later") % {"date": s.lastd.decode()}, 3))
            good = day.encode()
        self.required(number, n, "entryNumber", 4, out)
        totals_out = [] if self.options.derived_totals else out
        td = self.amount_field(total_debit, n, "totalDebit", 6, totals_out)
        tc = self.amount_field(total_credit, n, "totalCredit", 7, totals_out)
        value = self.counter_field(counter, n, "entryNumberCounter", 8, out)
        if value is not None:
            expected = self.options.first_entry_counter if s.ecounter is None else s.ecounter + 1
            if expected is not None and value != expected:
                out.append(Finding(n, "entryNumberCounter", "entry_counter", counter, str(expected), 8))
        self._open_entry(n, size, good, td, tc, value)

    def _open_entry(self, n, size, day, td, tc, counter):
        summary, s = self.summary, self.state
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
        s, summary = self.state, self.summary
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
        self._plan_part(out)
        s.in_entry = False

    def _plan_part(self, out):
        """The part plan: greedy, an entry goes whole to the next part when it does not fit in this one."""
        s, summary = self.state, self.summary
        if s.ebytes > self.limit:
            out.append(Finding(s.hline, "line", "entry_too_large", _("%(count)s bytes") % {"count": s.ebytes},
                               _("at most %(size)s MB") % {"size": self.options.split_size_mb}))
        last_line = s.lcx - 1 if s.lcx is not None else 0
        if s.cur is None or s.cur.bytes + s.ebytes > self.limit:
            if s.cur is not None:
                s.cur.text_end = s.hline - 1
                s.offset = s.cur.offset + s.cur.bytes
            s.cur = PartPlan(index=len(summary.parts) + 1, entry_start=s.ecounter, entry_end=s.ecounter,
                             line_start=s.elc, line_end=last_line, bytes=0, offset=s.offset,
                             text_start=s.hline if summary.parts else 1)
            summary.parts.append(s.cur)
        s.cur.bytes += s.ebytes
        s.cur.entry_end, s.cur.line_end = s.ecounter, last_line

    # --- entry lines -------------------------------------------------------------------------------------------
    def _entry_line(self, text, n, size, out):
        s = self.state
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
        self._line_counters(fields, n, out)
        self._account_and_amount(fields, n, out)
        posting = fields[8]
        if self.date_field(posting, n, "postingDate", 9, out):
            if s.edate is not None:
                if posting.encode() != s.edate:
                    out.append(Finding(n, "postingDate", "posting_date", posting, s.edate.decode(), 9))
            elif not self.start <= posting <= self.end:
                out.append(Finding(n, "postingDate", "date_in_period", posting,
                                   _("between %(start)s and %(end)s") % {"start": self.start, "end": self.end}, 9))
        self.documents(fields, n, out)
        if len(extra) not in (0, 7, 13):
            out.append(Finding(n, "line", "optional_groups",
                               _("fields after field 16: %(count)s") % {"count": len(extra)}, _("0, 7 or 13")))
        else:
            self.optional(extra, n, out)

    def _line_counters(self, fields, n, out):
        """lineNumber keeps the file's way (_line_number); lineNumberCounter runs over the journal: a wrong one is
        named, then counting goes on from it, so that one gap is one finding. s.lnum counts the entry's lines."""
        s = self.state
        self._line_number(self.counter_field(fields[0], n, "lineNumber", 1, out), fields[0], n, out)
        s.lnum += 1
        value = self.counter_field(fields[1], n, "lineNumberCounter", 2, out)
        expected = self.options.first_line_counter if s.lcx is None else s.lcx
        if value is not None and expected is not None and value != expected:
            out.append(Finding(n, "lineNumberCounter", "line_counter", fields[1], str(expected), 2))
        if value is None:
            value = expected if expected is not None else 1
        if s.lcx is None:
            s.elc = value
        s.lcx = value + 1

    def _account_and_amount(self, fields, n, out):
        s = self.state
        main, sub = fields[2], fields[5]
        good_main = self.required(main, n, "accountMainID", 3, out) and 3 <= len(main) <= 4
        if main and not good_main:
            out.append(Finding(n, "accountMainID", "main_account", shown(main), _("3 or 4 characters"), 3))
        self.required(fields[3], n, "accountMainDescription", 4, out)
        if sub:
            if good_main and not sub.startswith(main):
                out.append(Finding(n, "accountSubID", "sub_account_prefix", shown(sub),
                                   _("starting with %(main)s") % {"main": shown(main)}, 6))
            if self.accounts is not None and sub not in self.accounts:
                out.append(Finding(n, "accountSubID", "sub_account_unknown", shown(sub),
                                   _("a sub-account of the chart of accounts"), 6))
        cents = self.amount_field(fields[6], n, "amount", 7, out)
        code = fields[7]
        if code not in ("D", "C"):
            if not code:
                out.append(Finding(n, "debitCreditCode", "required", "", _("D or C"), 8))
            else:
                hint = code.strip().upper() if code.strip().upper() in ("D", "C") else _("D or C")
                out.append(Finding(n, "debitCreditCode", "debit_credit_code", shown(code), hint, 8))
        if cents is None or code not in ("D", "C"):
            s.tainted = True
        elif code == "D":
            s.debit += cents
        else:
            s.credit += cents

    def _line_number(self, value, text, n, out):
        """lineNumber (None: unreadable, taken to be the expected one) in the way the file numbers its lines."""
        s = self.state
        mode, within, running = s.lmode, s.lnum, s.lrun
        if mode == BROKEN:
            return
        if value is None:
            if running is not None:
                s.lrun = running + 1
            return
        if running is None:  # the file's first: running on may start anywhere (the year's numbering continued)
            s.lmode, s.lrun = (UNDECIDED if value == within else RUNNING), value + 1
            return
        if mode == UNDECIDED:
            if value == within == running:  # the first entry
                s.lrun = running + 1
                return
            if value == within:
                s.lmode = WITHIN
                return
            if value == running:
                s.lmode, s.lrun = RUNNING, running + 1
                return
            expected = str(within) if within == running else _(
                "%(within)s (within each entry) or %(running)s (running on through the period)") % {
                "within": within, "running": running}
        elif mode == WITHIN:
            if value == within:
                return
            expected = _("%(number)s (within each entry)") % {"number": within}
        else:
            if value == running:
                s.lrun = running + 1
                return
            expected = _("%(number)s (running on through the period)") % {"number": running}
        out.append(Finding(n, "lineNumber", "line_number", text, expected, 1))
        s.lmode = BROKEN

    # --- the end -----------------------------------------------------------------------------------------------
    def finish(self, n) -> list:
        out = []
        s, summary = self.state, self.summary
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
