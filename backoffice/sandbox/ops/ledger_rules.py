"""The simulated platform's own check of an uploaded journal (yevmiye): the tab-separated text of document 3,
2.8, against the tax authority's journal rules of the facts file. Written apart from the back office's
validator, so that each checks the other.

It streams: lines are read one at a time from the ZIP member (a line longer than MAX_LINE_BYTES is reported
and skipped, never held whole; ledger_journal.py reads them), and what it keeps grows with the number of parts
and main accounts, not with the file. While it checks it also splits the journal into parts of at most SplitSize
MiB (every part's text is the Y line and whole entries) and sums each part: its dates, counters, debit and credit,
the totals per main account, and the SHA-256 of its text.

Findings read "Satır N: <field>: <problem>", in Turkish, as the platform reports them.

Choices where the documents are silent:
- The Y line is Y, fiscalYearStart, fiscalYearEnd, batchID, entityIdentifier; the H line is H and its 7
  fields; either may end with one tab. The period must lie inside the Y line's fiscal year.
- Entry lines: the 16 fields each end with a tab; after them 0, 7 (foreign currency, 17-23) or 13 (both
  groups, 17-23 left empty with tabs when only the measure is given) fields, one trailing tab allowed.
- Required on every entry line: lineNumber, lineNumberCounter, accountMainID, amount, debitCreditCode,
  postingDate, documentType; accountSubID is optional, but when given it starts with accountMainID.
- Counters: the first entryNumberCounter and lineNumberCounter are 1 when the period starts on the fiscal
  year's first day; else they continue from the previous period (the one ending the day before, with
  parts) when there is one; else the first ones found are taken. After a gap the count goes on from the
  number found, so one gap is reported once.
- lineNumber (the facts file): running on through the period like lineNumberCounter, from whatever the first
  line says, or 1, 2, 3... within each entry. Both agree on the first entry, so the first line of the second
  entry decides (or a first line other than 1: running on). A gap, a repeat or a mix is one finding on the
  first line that breaks the file's way; lineNumber is not judged after it.
- Blank lines are refused, except at the end of the file. Amounts are counted in kuruş (exact).
"""

import hashlib
import re

from .ledger_journal import MAX_LINE_BYTES, MIB, Entry, Outcome, Part, Period, cents, day, identifier_problem, lines_of
from .ledger_journal import money, open_member, shown

SHOWN_FINDINGS = 5  # the Task.Message carries the count and the first ones
DOCUMENT_TYPES = ("invoice", "check", "voucher", "other")
NEEDS_NUMBER_AND_DATE = ("invoice", "check")
ENTRY_FIELDS = ("lineNumber", "lineNumberCounter", "accountMainID", "accountMainDescription",
                "accountSubDescription", "accountSubID", "amount", "debitCreditCode", "postingDate", "documentType",
                "documentTypeDescription", "documentNumber", "documentReference", "documentDate", "paymentMethod",
                "detailComment")
CURRENCY_FIELDS, MEASURE_FIELDS = 7, 6  # fields 17-23 and 24-29
COUNTER = re.compile(r"0*[1-9][0-9]*")
BOM = b"\xef\xbb\xbf"
UNDECIDED, WITHIN, RUNNING, BROKEN = "undecided", "within", "running", "broken"  # how the file numbers its lines
BOTH_WAYS = ("satır numaraları ya dönem boyunca boşluksuz ve tekrarsız sürer ya da her kayıtta 1, 2, 3… diye "
             "başlar; dosya başladığı düzeni sürdürmeli")


# --- the check ------------------------------------------------------------------------------------------------

class JournalCheck:
    """Feed it the journal's lines in order (with their line ends), then finish()."""

    def __init__(self, period: Period, break_before: frozenset = frozenset()):
        self.period = period
        self.first_day, self.last_day = period.start.isoformat(), period.end.isoformat()
        self.limit = period.split_size * MIB
        self.break_before = break_before  # entry counters that start a new part (sandbox seeds)
        self.outcome = Outcome()
        self.number = 0
        self.seen_y = False
        self.y_raw = b""
        self.blank_since = None
        self.written = 0  # lines that are not blank
        self.entry: Entry | None = None
        self.previous_date = None
        self.next_entry = self.next_line = None  # the counters expected next; None: take the first found
        self.entry_reason = self.line_reason = ""
        self.numbering = UNDECIDED
        self.next_number = None  # the lineNumber expected next when running on; None: no line read yet
        self.parts: list[Part] = []
        self.part: Part | None = None
        self.entries = 0

    # findings

    def problem(self, line: int, name: str, text: str) -> None:
        self.outcome.errors += 1
        if len(self.outcome.findings) < SHOWN_FINDINGS:
            self.outcome.findings.append(f"Satır {line}: {name}: {text}")

    # lines

    def feed(self, raw: bytes, too_long: bool = False) -> None:
        self.number += 1
        number = self.number
        if number == 1 and raw.startswith(BOM):
            raw = raw[len(BOM):]
        if too_long:
            self._blank_check(number)
            self.written += 1
            self.problem(number, "satır", f"{MAX_LINE_BYTES} bayttan uzun; okunmadı")
            self._grow(raw, broken=True)
            return
        stripped = raw.rstrip(b"\r\n")
        if not stripped.strip():
            if self.blank_since is None:
                self.blank_since = number
            return
        self._blank_check(number)
        self.written += 1
        try:
            text = stripped.decode("utf-8")
        except UnicodeDecodeError as error:
            self.problem(number, "satır", f"UTF-8 değil ({error.start + 1}. baytta geçersiz kodlama)")
            self._grow(raw, broken=True)
            return
        fields = text.split("\t")
        kind = fields[0]
        if number == 1 and kind != "Y":
            self.problem(1, "Y", f"ilk satır Y satırı olmalı ('{shown(kind, 10)}' ile başlıyor)")
        if kind == "Y":
            self._y_line(number, fields, raw)
        elif kind == "H":
            self._h_line(number, fields, raw)
        else:
            self._entry_line(number, fields, raw)

    def _blank_check(self, number: int) -> None:
        if self.blank_since is not None:
            self.problem(self.blank_since, "satır", "boş satır olamaz")
            self.blank_since = None

    def _grow(self, raw: bytes, broken: bool) -> None:
        """A line that is not read further still belongs to the entry it stands in."""
        entry = self.entry
        if entry is not None:
            entry.broken = entry.broken or broken
            self._add_bytes(entry, raw)

    def _add_bytes(self, entry: Entry, raw: bytes) -> None:
        entry.size += len(raw)
        entry.last_line = self.number
        if entry.joined is not None:
            if self.part.size + entry.size <= self.limit:
                entry.joined.update(raw)
            else:
                entry.joined = None
        if entry.alone is not None:
            if len(self.y_raw) + entry.size <= self.limit:
                entry.alone.update(raw)
            else:
                entry.alone = None

    @staticmethod
    def _fields(fields: list, count: int) -> list | None:
        """The fields of a Y or H line (with one trailing tab allowed), or None when there are not `count`."""
        if len(fields) == count + 1 and fields[-1] == "":
            fields = fields[:-1]
        return fields if len(fields) == count else None

    def _y_line(self, number: int, fields: list, raw: bytes) -> None:
        if self.seen_y or number != 1:
            self.problem(number, "Y", "Y satırı yalnızca dosyanın ilk satırında olur")
            return
        self.seen_y = True
        self.y_raw = raw
        values = self._fields(fields, 5)
        if values is None:
            self.problem(number, "Y", f"Y ve 4 alan bekleniyor (fiscalYearStart, fiscalYearEnd, batchID, "
                                      f"entityIdentifier); {len(fields) - 1} alan var")
            return
        _, year_start, year_end, _batch, entity = values
        self.outcome.entity, self.outcome.fiscal_year = entity, (year_start, year_end)
        start, end = day(year_start), day(year_end)
        for name, value, parsed in (("fiscalYearStart", year_start, start), ("fiscalYearEnd", year_end, end)):
            if parsed is None:
                self.problem(number, name, f"'{shown(value)}' yyyy-aa-gg biçiminde geçerli bir tarih değil")
        if start and end:
            if start > end:
                self.problem(number, "fiscalYearEnd", f"{year_end}, fiscalYearStart'tan ({year_start}) önce")
            elif not (start <= self.period.start and self.period.end <= end):
                self.problem(number, "fiscalYearStart", f"dönem ({self.first_day} – {self.last_day}) mali yılın "
                                                        f"({year_start} – {year_end}) içinde olmalı")
        reason = identifier_problem(entity)
        if reason:
            self.problem(number, "entityIdentifier", reason)
        if start == self.period.start:
            self.next_entry = self.next_line = 1
            self.entry_reason = self.line_reason = "mali yılın ilk dönemi 1'den başlar"
        elif self.period.previous:
            last_entry, last_line = self.period.previous
            self.next_entry, self.next_line = last_entry + 1, last_line + 1
            self.entry_reason = f"önceki dönemin son kaydı {last_entry}'den devam eder"
            self.line_reason = f"önceki dönemin son satırı {last_line}'den devam eder"

    def _counter(self, number: int, name: str, value: str, expected_name: str) -> int | None:
        """A counter's value, checked against the one expected (consecutive, no gap); it sets the next one."""
        if not COUNTER.fullmatch(value):
            self.problem(number, name, f"'{shown(value)}' pozitif bir tam sayı olmalı")
            expected = getattr(self, expected_name)
            if expected is not None:
                setattr(self, expected_name, expected + 1)
            return None
        found = int(value)
        expected = getattr(self, expected_name)
        if expected is not None and found != expected:
            reason = self.entry_reason if expected_name == "next_entry" else self.line_reason
            self.problem(number, name, f"{found} bulundu, {expected} bekleniyor (ardışık ve boşluksuz olmalı"
                                       f"{'; ' + reason if reason else ''})")
        setattr(self, expected_name, found + 1)
        if expected_name == "next_entry":
            self.entry_reason = ""
        else:
            self.line_reason = ""
        return found

    def _amount(self, number: int, name: str, value: str) -> int | None:
        found = cents(value)
        if found is None or found <= 0:
            self.problem(number, name, f"'{shown(value)}' 0'dan büyük, en çok 2 ondalıklı, ondalık ayırıcısı nokta "
                                       f"olan bir tutar olmalı")
            return None
        return found

    def _h_line(self, number: int, fields: list, raw: bytes) -> None:
        self._close_entry()
        values = self._fields(fields, 8)
        entry = Entry(line=number, date=None, counter=None, total_debit=None, total_credit=None, size=0)
        self._open(entry)
        self._add_bytes(entry, raw)
        if values is None:
            self.problem(number, "H", f"H ve 7 alan bekleniyor (enteredBy, enteredDate, entryNumber, entryComment, "
                                      f"totalDebit, totalCredit, entryNumberCounter); {len(fields) - 1} alan var")
            entry.broken = True
            if self.next_entry is not None:
                self.next_entry += 1
            return
        _, _by, entered, _entry_number, _comment, total_debit, total_credit, counter = values
        when = day(entered)
        if when is None:
            self.problem(number, "enteredDate", f"'{shown(entered)}' yyyy-aa-gg biçiminde geçerli bir tarih değil")
        elif not self.first_day <= entered <= self.last_day:
            self.problem(number, "enteredDate", f"{entered} dönemin ({self.first_day} – {self.last_day}) dışında")
        else:
            if self.previous_date is not None and entered < self.previous_date:
                self.problem(number, "enteredDate", f"{entered}, önceki kaydın tarihinden ({self.previous_date}) önce: "
                                                    f"kayıtlar tarih sırasında olmalı")
            self.previous_date = entered
        entry.date = entered if when is not None else None
        entry.total_debit = self._amount(number, "totalDebit", total_debit)
        entry.total_credit = self._amount(number, "totalCredit", total_credit)
        entry.counter = self._counter(number, "entryNumberCounter", counter, "next_entry")

    def _open(self, entry: Entry) -> None:
        self.entry = entry
        part = self.part
        if part is not None and part.entries:
            entry.joined = part.hasher.copy()
        entry.alone = hashlib.sha256(self.y_raw)

    def _entry_line(self, number: int, fields: list, raw: bytes) -> None:
        entry = self.entry
        if entry is None:
            if number > 1:
                self.problem(number, "H", "kayıt satırından önce bir H satırı olmalı")
            return
        self._add_bytes(entry, raw)
        entry.lines += 1
        if len(fields) < 17:
            self.problem(number, "satır", f"ilk 16 alanın her biri sekmeyle bitmeli; {len(fields) - 1} sekme var")
            entry.broken = True
            if self.next_line is not None:
                self.next_line += 1
            if self.next_number is not None:
                self.next_number += 1
            return
        rest = fields[16:]
        if rest == [""]:
            extra = 0
        else:
            extra = len(rest) - 1 if len(rest) in (8, 14) and rest[-1] == "" else len(rest)
        if extra not in (0, CURRENCY_FIELDS, CURRENCY_FIELDS + MEASURE_FIELDS):
            self.problem(number, "alan 17-29", f"16. alandan sonra 0, 7 (döviz, 17-23) ya da 13 alan (döviz ve "
                                               f"miktar; miktar dövizsiz ise 17-23 sekmelerle boş geçilir) olmalı; "
                                               f"{extra} alan var")
        (line_number, counter, main, main_description, _sub_description, sub, amount, code, posted, doc_type,
         doc_description, doc_number, _reference, doc_date) = fields[:14]
        self._line_number(number, entry, line_number)
        found = self._counter(number, "lineNumberCounter", counter, "next_line")
        if found is not None:
            entry.line_start = entry.line_start or found
            entry.line_end = found
        if not 3 <= len(main) <= 4 or not main.strip():
            self.problem(number, "accountMainID", f"'{shown(main)}' 3 ya da 4 karakter olmalı")
        if sub and not sub.startswith(main):
            self.problem(number, "accountSubID", f"'{shown(sub)}' ana hesabın kodu '{main}' ile başlamalı")
        value = self._amount(number, "amount", amount)
        if code not in ("D", "C"):
            self.problem(number, "debitCreditCode", f"'{shown(code)}' D (borç) ya da C (alacak) olmalı")
        if value is None or code not in ("D", "C"):
            entry.broken = True
        else:
            totals = entry.ledger.get(main)
            if totals is None:
                totals = entry.ledger[main] = [main_description, 0, 0]
            if code == "D":
                entry.debit += value
                totals[1] += value
            else:
                entry.credit += value
                totals[2] += value
        self._posting_date(number, entry, posted)
        self._document(number, doc_type, doc_description, doc_number, doc_date)

    def _line_number(self, number: int, entry: Entry, value: str) -> None:
        """lineNumber in the way the file numbers its lines (see the module's choices)."""
        if self.numbering == BROKEN:
            return
        if not COUNTER.fullmatch(value):
            self.problem(number, "lineNumber", "boş olamaz" if not value.strip() else
                         f"'{shown(value)}' pozitif bir tam sayı olmalı")
            if self.next_number is not None:  # taken to be the expected one
                self.next_number += 1
            return
        found, within, running = int(value), entry.lines, self.next_number
        if running is None:  # the file's first: running on may start anywhere (the year's numbering continued)
            self.numbering, self.next_number = (UNDECIDED if found == within else RUNNING), found + 1
            return
        if self.numbering == UNDECIDED:
            if found == within == running:  # the first entry
                self.next_number = found + 1
                return
            if found == within:
                self.numbering = WITHIN
                return
            if found == running:
                self.numbering, self.next_number = RUNNING, found + 1
                return
            expected = str(within) if within == running else \
                f"{within} (her kayıtta yeniden) ya da {running} (dönem boyunca)"
        elif self.numbering == WITHIN:
            if found == within:
                return
            expected = f"{within} (her kayıtta yeniden)"
        else:
            if found == running:
                self.next_number = found + 1
                return
            expected = f"{running} (dönem boyunca)"
        self.problem(number, "lineNumber", f"{found} bulundu, {expected} bekleniyor: {BOTH_WAYS}")
        self.numbering = BROKEN

    def _posting_date(self, number: int, entry: Entry, posted: str) -> None:
        if day(posted) is None:
            self.problem(number, "postingDate", f"'{shown(posted)}' yyyy-aa-gg biçiminde geçerli bir tarih değil")
        elif entry.date is not None:
            if posted != entry.date:
                self.problem(number, "postingDate", f"{posted}, kaydın tarihiyle (enteredDate {entry.date}) aynı "
                                                    f"olmalı")
        elif not self.first_day <= posted <= self.last_day:
            self.problem(number, "postingDate", f"{posted} dönemin ({self.first_day} – {self.last_day}) dışında")

    def _document(self, number: int, doc_type: str, description: str, doc_number: str, doc_date: str) -> None:
        if doc_type not in DOCUMENT_TYPES:
            what = "boş olamaz" if not doc_type else f"'{shown(doc_type)}' geçersiz"
            self.problem(number, "documentType", f"{what}; invoice, check, voucher ya da other olmalı")
            return
        if doc_type in NEEDS_NUMBER_AND_DATE:
            if not doc_number.strip():
                self.problem(number, "documentNumber", f"{doc_type} belgesinde belge numarası zorunlu")
            if not doc_date.strip():
                self.problem(number, "documentDate", f"{doc_type} belgesinde belge tarihi zorunlu")
        elif doc_type == "other" and not description.strip():
            self.problem(number, "documentTypeDescription", "other belgesinde belge türü açıklaması zorunlu")
        if doc_date.strip() and day(doc_date) is None:
            self.problem(number, "documentDate", f"'{shown(doc_date)}' yyyy-aa-gg biçiminde geçerli bir tarih değil")

    # entries and parts

    def _close_entry(self) -> None:
        entry, self.entry = self.entry, None
        if entry is None:
            return
        self.entries += 1
        number = entry.line
        if entry.lines < 2:
            self.problem(number, "H", f"bir kayıtta en az 2 satır olmalı; {entry.lines} satır var")
        if not entry.broken:
            if entry.debit != entry.credit:
                self.problem(number, "H", f"kaydın borç (D) toplamı {money(entry.debit)}, alacak (C) toplamı "
                                          f"{money(entry.credit)}: eşit olmalı")
            if entry.total_debit is not None and entry.total_debit != entry.debit:
                self.problem(number, "totalDebit", f"{money(entry.total_debit)} yazılmış; satırların borç "
                                                   f"toplamı {money(entry.debit)}")
            if entry.total_credit is not None and entry.total_credit != entry.credit:
                self.problem(number, "totalCredit", f"{money(entry.total_credit)} yazılmış; satırların alacak "
                                                    f"toplamı {money(entry.credit)}")
        self._place(entry)

    def _place(self, entry: Entry) -> None:
        """Put the entry in the current part when it fits there, else in a new one; never split it."""
        part = self.part
        forced = entry.counter in self.break_before
        if part is not None and part.entries and entry.joined is not None and not forced:
            part.hasher = entry.joined
        else:
            if entry.alone is None:
                self.problem(entry.line, "H", f"kayıt {entry.size} bayt: Y satırıyla birlikte SplitSize "
                                              f"({self.period.split_size} MB) parçasına sığmıyor; bir kayıt "
                                              f"parçalara bölünemez")
                entry.alone = hashlib.sha256(self.y_raw)
            part = self.part = Part(index=len(self.parts) + 1, first_line=entry.line, size=len(self.y_raw),
                                    hasher=entry.alone)
            self.parts.append(part)
        part.entries += 1
        part.size += entry.size
        part.last_line = entry.last_line
        if entry.date:
            part.covered_start = part.covered_start or entry.date
            part.covered_end = entry.date
        if entry.counter is not None:
            part.entry_start = part.entry_start or entry.counter
            part.entry_end = entry.counter
        if entry.line_start:
            part.line_start = part.line_start or entry.line_start
            part.line_end = entry.line_end
        part.debit += entry.debit
        part.credit += entry.credit
        for main, (description, debit, credit) in entry.ledger.items():
            totals = part.ledger.get(main)
            if totals is None:
                part.ledger[main] = [description, debit, credit]
            else:
                totals[0] = totals[0] or description
                totals[1] += debit
                totals[2] += credit

    def finish(self) -> Outcome:
        self._close_entry()
        self.outcome.lines = self.number
        if self.written == 0:
            self.problem(1, "Y", "dosya boş; ilk satır Y satırı olmalı")
        elif self.entries == 0:
            self.problem(self.number, "H", "dosyada hiç yevmiye kaydı (H satırı ve satırları) yok")
        if not self.outcome.errors:
            self.outcome.parts = [part.summary() for part in self.parts]
        return self.outcome


# --- a stream or a stored ZIP ----------------------------------------------------------------------------------

def check_stream(stream, period: Period, break_before: frozenset = frozenset()) -> Outcome:
    check = JournalCheck(period, break_before)
    feed = check.feed
    for raw, too_long in lines_of(stream):
        feed(raw, too_long)
    return check.finish()


def check_zip(path, member: str, period: Period, break_before: frozenset = frozenset()) -> Outcome:
    """Check the journal text of a stored ZIP, streaming."""
    archive, stream = open_member(path, member)
    with archive, stream:
        return check_stream(stream, period, break_before)
