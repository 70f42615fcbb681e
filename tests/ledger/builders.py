"""Journals for the ledger's service and page tests: the tax authority's tab-separated text (document 3, 2.8),
well formed unless a test breaks it."""

import calendar
from datetime import date

VKN = "1234567890"


def entry_lines(counter: int, line_counter: int, day: date, amount: str = "1250.00") -> list[str]:
    """One entry of two lines: 120 (debit) against 600 (credit)."""
    d = day.isoformat()
    head = f"H\tMUHASEBE\t{d}\tF{counter:05d}\tSatış faturası {counter}\t{amount}\t{amount}\t{counter}\t"
    debit = (f"1\t{line_counter}\t120\tALICILAR\tÖrnek Ticaret A.Ş.\t120.01\t{amount}\tD\t{d}\tinvoice\t\t"
             f"ABC2025{counter:09d}\t\t{d}\t\tSatış\t")
    credit = (f"2\t{line_counter + 1}\t600\tYURT İÇİ SATIŞLAR\t\t600.01\t{amount}\tC\t{d}\tinvoice\t\t"
              f"ABC2025{counter:09d}\t\t{d}\t\tSatış\t")
    return [head, debit, credit]


def journal_text(start: date, *, entries: int = 3, first_entry: int = 1, first_line: int = 1, vkn: str = VKN,
                 year_start: date | None = None) -> str:
    """A month's journal: the Y line, then `entries` balanced entries spread over the month."""
    last = calendar.monthrange(start.year, start.month)[1]
    year_start = year_start or date(start.year, 1, 1)
    lines = [f"Y\t{year_start.isoformat()}\t{date(year_start.year, 12, 31).isoformat()}\t0\t{vkn}\t"]
    for index in range(entries):
        day = start.replace(day=min(last, 1 + index * last // max(entries, 1)))
        lines += entry_lines(first_entry + index, first_line + 2 * index, day)
    return "\n".join(lines) + "\n"


def month_end(start: date) -> date:
    return start.replace(day=calendar.monthrange(start.year, start.month)[1])
