"""The journal text (yevmiye) of document 3, 2.8, as the simulated platform reads it: its values (dates, amounts in
kuruş, a VKN or TCKN), what a check needs and gives (the period, the parts, the outcome) and the lines of a stored
ZIP's member, read one at a time. The check itself is in ledger_rules.py.
"""

import functools
import io
import re
import zipfile
from dataclasses import dataclass, field
from datetime import date

from stdnum.tr import tckimlik, vkn

MAX_LINE_BYTES = 1 << 20  # a journal line is a few hundred bytes; a longer one is reported, not read whole
MIB = 1024 * 1024
AMOUNT = re.compile(r"([0-9]+)(?:\.([0-9]{1,2}))?")
DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


# --- values ------------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=4096)
def day(text: str) -> date | None:
    """The date of a yyyy-mm-dd value, else None."""
    if not DAY.fullmatch(text):
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None


def cents(text: str) -> int | None:
    """Kuruş of an amount written with digits and at most 2 decimals after a dot, else None."""
    found = AMOUNT.fullmatch(text)
    if found is None:
        return None
    whole, fraction = found.groups()
    return int(whole) * 100 + int((fraction or "0").ljust(2, "0"))


def money(value: int) -> str:
    sign = "-" if value < 0 else ""
    return f"{sign}{abs(value) // 100}.{abs(value) % 100:02d}"


def identifier_problem(value: str) -> str | None:
    """Why a value is no valid VKN (10 digits) or TCKN (11 digits), in Turkish; None when it is one."""
    if not re.fullmatch(r"[0-9]{10}|[0-9]{11}", value):
        return f"'{value}' 10 haneli VKN ya da 11 haneli TCKN olmalı"
    if len(value) == 10 and not vkn.is_valid(value):
        return f"'{value}' geçerli bir VKN değil: kontrol hanesi tutmuyor"
    if len(value) == 11 and not tckimlik.is_valid(value):
        return f"'{value}' geçerli bir TCKN değil: kontrol haneleri tutmuyor"
    return None


def shown(value: str, width: int = 40) -> str:
    return value if len(value) <= width else value[:width] + "…"


# --- what the check needs and gives --------------------------------------------------------------------------

@dataclass(frozen=True)
class Period:
    """The period the journal is checked against."""

    start: date
    end: date
    split_size: int  # MiB of text per part
    previous: tuple[int, int] | None = None  # (last entryNumberCounter, last lineNumberCounter) of the period before


@dataclass
class Part:
    """One part of the split journal, summed while the journal is read."""

    index: int
    first_line: int  # line numbers in the file: its first H line and its last entry line
    last_line: int = 0
    covered_start: str = ""
    covered_end: str = ""
    entry_start: int = 0
    entry_end: int = 0
    line_start: int = 0
    line_end: int = 0
    debit: int = 0  # kuruş
    credit: int = 0
    size: int = 0  # bytes of its text (the Y line and its entries)
    entries: int = 0
    ledger: dict = field(default_factory=dict)  # accountMainID -> [accountMainDescription, debit, credit]
    hasher: object = None

    def summary(self) -> dict:
        return {"index": self.index, "first_line": self.first_line, "last_line": self.last_line,
                "covered_start": self.covered_start, "covered_end": self.covered_end,
                "entry_start": self.entry_start, "entry_end": self.entry_end, "line_start": self.line_start,
                "line_end": self.line_end, "debit": self.debit, "credit": self.credit, "size": self.size,
                "entries": self.entries, "ledger": self.ledger, "sha256": self.hasher.hexdigest()}


@dataclass
class Outcome:
    errors: int = 0
    findings: list = field(default_factory=list)  # the first SHOWN_FINDINGS, "Satır N: field: problem"
    parts: list = field(default_factory=list)  # Part.summary() of each part, when there is no error
    entity: str = ""  # the Y line's entityIdentifier
    fiscal_year: tuple[str, str] = ("", "")
    lines: int = 0

    @property
    def message(self) -> str:
        """The Task.Message of a period in error: the count and the first findings."""
        return f"{self.errors} hata. " + "; ".join(self.findings)


@dataclass
class Entry:
    """The entry being read: its H line's values and what its lines add up to."""

    line: int
    date: str | None
    counter: int | None
    total_debit: int | None
    total_credit: int | None
    size: int
    lines: int = 0
    debit: int = 0
    credit: int = 0
    broken: bool = False  # a line of it could not be read: its sums say nothing
    line_start: int = 0
    line_end: int = 0
    last_line: int = 0
    ledger: dict = field(default_factory=dict)
    joined: object = None  # the current part's hash with this entry fed in, while the entry still fits there
    alone: object = None  # the hash of a new part (the Y line) with this entry, while it fits in one


# --- reading ----------------------------------------------------------------------------------------------------

def lines_of(stream, limit: int = MAX_LINE_BYTES):
    """(raw line with its end, too_long) of each line of a binary stream; a line over `limit` bytes comes cut
    to its first `limit` bytes, the rest read past in pieces."""
    readline = stream.readline
    while True:
        raw = readline(limit + 1)
        if not raw:
            return
        if len(raw) > limit and not raw.endswith(b"\n"):
            size = len(raw)
            while True:
                rest = readline(limit)
                size += len(rest)
                if not rest or rest.endswith(b"\n"):
                    break
            yield raw[:limit], True
            continue
        yield raw, False


def open_member(path, member: str):
    """The journal text member of a stored ZIP as a buffered binary stream (close the ZipFile with it)."""
    archive = zipfile.ZipFile(path)
    return archive, io.BufferedReader(archive.open(member), buffer_size=MIB)
