"""The checker of a journal (yevmiye) in the tax authority's tab-separated text (document 3, 2.8; the journal
rules of the facts file), run before anything goes to the platform.

It streams: blocks of any size come in, findings go out in line order, and what it keeps does not grow with
the file (the open entry's sums and counters, the part plan, a cache of dates). Every line first meets one
regular expression that accepts a well-formed entry line (or H line) as a whole and hands over the few values
the cross-line rules need (counters, amount, code, dates); only a line that it refuses, or whose cross-line
values are not the expected ones, is split into fields and diagnosed field by field (journal_lines.py). The fast
path and the diagnosis share the state in LineState; a test runs both on the same files and compares.

Pure: no Django model is imported, so the checker runs in a job, a test or a shell alike.
"""

import re

from .journal_lines import BROKEN, RUNNING, UNDECIDED, WITHIN, Diagnosis
from .journal_rules import MAX_LINE_BYTES, Options, Summary

BLOCK_BYTES = 1024 * 1024

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

_UNREAD = -1  # no lineNumber read yet: every entry line goes to the diagnosis


class JournalCheck(Diagnosis):
    """The text read line by line: the fast path where it can, the diagnosis (Diagnosis.line) where it cannot."""

    def __init__(self, options: Options):
        super().__init__(options, Summary())
        self._accounts_b = None if options.accounts is None else frozenset(a.encode() for a in options.accounts)
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
                yield from self._note(self.long_line(n, head, skipping + i, skipping + i + 1))
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
            yield from self._note(self.long_line(n, head, skipping, skipping))
        elif buf:
            n += 1
            yield from self._note(self.line(bytes(buf), n, len(buf), len(buf)))
        yield from self._note(self.finish(n))

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
                yield from self._note(self.line(chunk[first:last], n, last - first + 1, last - first))
                if last == len(chunk):
                    return
                chunk = chunk[last + 1:]
        else:
            yield from self._fast_lines(chunk, n, utf8=False)  # many such lines: the diagnosis decodes each
            return
        yield from self._fast_lines(chunk, n)

    def _fast_lines(self, chunk, n, utf8=True):
        """Lines that are UTF-8 (unless utf8 is False): runs of lines the fast path takes, and between them the
        lines it hands over to the diagnosis."""
        lines, newline = self._fast_split(chunk) if self.fast and utf8 else (None, 1)
        if lines is None:
            for n, line in enumerate(chunk.split(b"\n"), n + 1):  # the diagnosis takes off a \r itself
                found = self.line(line, n, len(line) + 1, len(line))
                if found:
                    yield from self._note(found)
            return
        numbered = enumerate(lines, n + 1)
        while (stopped := self._fast_run(numbered, newline)) is not None:
            n, line = stopped
            found = self.line(line, n, len(line) + newline, len(line) + newline - 1)
            if found:
                yield from self._note(found)

    @staticmethod
    def _fast_split(chunk):
        """(lines, newline bytes) of a chunk the fast path may read, or (None, 1): a \r anywhere but at the end of
        every line, or a line too long, is for the diagnosis."""
        raw, newline = chunk.split(b"\n"), 1
        if b"\r" in chunk:
            if not (chunk.endswith(b"\r") and chunk.count(b"\r") == len(raw) == chunk.count(b"\r\n") + 1):
                return None, 1
            raw, newline = chunk[:-1].split(b"\r\n"), 2  # every line ends \r\n
        if max(map(len, raw)) + newline - 1 > MAX_LINE_BYTES:
            return None, 1
        return raw, newline

    def _fast_run(self, numbered, newline):
        """Take lines from `numbered` while each is well formed and follows on (its counters and date; an H line
        closing a clean entry that fits in the part); returns (n, line) of the first it does not take, with the
        state stored for the diagnosis, or None at the end."""
        line_match, head, fraction, numbers = _LINE, _HEAD, _FRACTION, _LINE_NUMBER
        accounts, limit, start_b, end_b = self._accounts_b, self.limit, self.start.encode(), self.end.encode()
        (go, lmode, ldelta, lnum, lcx, edate, lastd, debit, credit, ebytes, e_td, e_tc, ecounter, elc, hline, maxd,
         tainted, cur) = self._load()
        opened = closed_lines = closed_debit = closed_credit = 0  # what the fast path did, told to summary at the end
        stopped = None
        for n, line in numbered:
            if go:
                m = line_match(line)
                if m is not None:
                    ln, lc, _main, sub, whole, part, dc, post = m.groups()
                    # lineNumber runs on with lineNumberCounter (ldelta apart), or restarts in each entry.
                    if lmode == WITHIN:
                        numbered_well = numbers.get(ln) == lnum
                    elif lmode == RUNNING:
                        numbered_well = ln == lc if not ldelta else ln == b"%d" % (lcx + ldelta)
                    else:  # broken: not judged; undecided: the first entry, where both ways agree
                        numbered_well = lmode == BROKEN or (lmode == UNDECIDED
                                                            and numbers.get(ln) == lnum == lcx + ldelta)
                    if (numbered_well and post == edate and lc == b"%d" % lcx
                            and (accounts is None or not sub or sub in accounts)):
                        cents = int(whole) * 100 + fraction[part]
                        if cents:  # 0 is for the diagnosis to name
                            if dc == b"D":
                                debit += cents
                            else:
                                credit += cents
                            lnum, lcx, ebytes = lnum + 1, lcx + 1, ebytes + len(line) + newline
                            continue
                elif (not tainted and lnum > 2 and debit == credit and e_td == debit and e_tc == credit
                      and cur.bytes + ebytes <= limit):
                    m = head(line)
                    if m is not None:
                        day, dw, dp, cw, cp, counter = m.groups()
                        # (the first good date of the journal goes through the diagnosis, which notes it)
                        if lastd and lastd <= day and start_b <= day <= end_b and counter == b"%d" % (ecounter + 1):
                            td, tc = int(dw) * 100 + fraction[dp], int(cw) * 100 + fraction[cp]
                            if td and tc:  # the entry before was clean and fits the part: close it, open this one
                                cur.bytes += ebytes
                                opened, closed_lines = opened + 1, closed_lines + lnum - 1
                                closed_debit, closed_credit = closed_debit + debit, closed_credit + credit
                                ecounter, edate, lastd = ecounter + 1, day, day
                                if day > maxd:
                                    maxd = day
                                e_td, e_tc, debit, credit = td, tc, 0, 0
                                lnum, elc, hline, ebytes = 1, lcx, n, len(line) + newline
                                continue
            stopped = n, line
            break
        self._closed_fast(opened, closed_lines, closed_debit, closed_credit, ecounter, elc, cur)
        self._store(lmode, ldelta, lnum, lcx, edate, lastd, debit, credit, ebytes, e_td, e_tc, ecounter, elc, hline,
                    maxd, tainted, cur)
        return stopped

    def _closed_fast(self, opened, lines, debit, credit, ecounter, elc, cur):
        """What the fast path's H lines did, in the summary and the part: entries opened, and the ones before them
        closed (the last of these is the entry before the open one)."""
        if not opened:
            return
        summary = self.summary
        summary.entries += opened
        summary.entry_lines += lines
        summary.debit_cents += debit
        summary.credit_cents += credit
        cur.entry_end, cur.line_end = ecounter - 1, elc - 1

    def _load(self):
        """The hot state as _fast_run keeps it in locals: whether the fast path may take a line; how lines are
        numbered (lineNumber running on moves with lineNumberCounter, so the fast path keeps their difference and
        gives lrun back as lcx + ldelta); then the open entry's state."""
        s = self.state
        go = s.in_entry and not s.blanks and s.cur is not None and s.lcx is not None
        lmode, ldelta = (s.lmode, s.lrun - s.lcx) if go and s.lrun is not None else (_UNREAD, 0)
        return (go, lmode, ldelta, s.lnum, s.lcx, s.edate, s.lastd, s.debit, s.credit, s.ebytes, s.e_td, s.e_tc,
                s.ecounter, s.elc, s.hline, s.maxd, s.tainted, s.cur)

    def _store(self, lmode, ldelta, *values):
        s = self.state
        (s.lnum, s.lcx, s.edate, s.lastd, s.debit, s.credit, s.ebytes, s.e_td, s.e_tc, s.ecounter, s.elc,
         s.hline, s.maxd, s.tainted, s.cur) = values
        if lmode == RUNNING or lmode == UNDECIDED:
            s.lrun = s.lcx + ldelta


def check_file(path, options: Options):
    """Every finding of a file and its summary (for tests and small files: the findings are kept)."""
    check = JournalCheck(options)

    def blocks():
        with open(path, "rb") as file:
            while block := file.read(BLOCK_BYTES):
                yield block

    return list(check.run(blocks())), check.summary
