"""The journal checker on a journal of 1,000,000 lines (BENCH_LEDGER_LINES changes the count), against reading
and splitting the same file by tabs alone, in the same run: at least 0.3 of that speed, with the memory of the
checking process under 100 MB. Run with `make bench`.

Both sides run in alternating rounds and their medians are compared; the time of writing the file is not
counted. The memory is that of a separate process that only checks the file: its peak resident size (VmHWM
of /proc/self/status, which counts the interpreter too; not ru_maxrss, which a child started by vfork inherits
from the large test process); the peak of the check's own allocations (tracemalloc) is shown beside it.
"""

import json
import os
import statistics
import subprocess
import sys
import time
from datetime import date, timedelta
from pathlib import Path

import pytest

from backoffice.ledger.journal import BLOCK_BYTES, JournalCheck, Options

LINES = int(os.environ.get("BENCH_LEDGER_LINES", 1_000_000))
ROUNDS = 3
START, END = date(2025, 3, 1), date(2025, 3, 31)
ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.bench

ACCOUNTS = [("120", "ALICILAR", "120.01.{n:03d}", "Müşteri {n} Tic. A.Ş."),
            ("320", "SATICILAR", "320.01.{n:03d}", "Tedarikçi {n} Ltd. Şti."),
            ("600", "YURT İÇİ SATIŞLAR", "600.01", "Yurt içi satışlar"),
            ("153", "TİCARİ MALLAR", "", ""),
            ("391", "HESAPLANAN KDV", "391.01", "KDV %20"),
            ("191", "İNDİRİLECEK KDV", "191.01", "KDV %20"),
            ("770", "GENEL YÖNETİM GİDERLERİ", "770.01.{n:02d}", "Ofis giderleri"),
            ("102", "BANKALAR", "102.01", "Ziraat Bankası TL hesabı")]


def write_journal(path: Path, lines: int) -> int:
    """A well-formed month of entries of 2 to 5 lines, as an accounting program writes it: Turkish names,
    invoices on the first line of most entries, a foreign-currency group now and then. Returns the count of
    lines written (the last entry is whole, so a few more than asked)."""
    day_count = (END - START).days + 1
    written, counter, entry = 1, 0, 0
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        out.write("Y\t2025-01-01\t2025-12-31\t0\t1234567890\n")
        while written < lines:
            entry += 1
            day = (START + timedelta(days=entry * day_count // (lines // 4 + 1))).isoformat()
            size = 2 + entry % 4
            cents = 10_000 + (entry * 7919) % 5_000_000
            rows = []
            for number in range(1, size + 1):
                counter += 1
                main, name, sub, sub_name = ACCOUNTS[(entry + number) % len(ACCOUNTS)]
                amount = cents * (size - 1) if number == 1 else cents
                code = "D" if number == 1 else "C"
                document = ("invoice", "", f"GIB2025{entry:09d}", f"SIP-{entry}", day) if number == 1 and entry % 5 \
                    else ("voucher", "", "", "", "")
                fields = [str(number), str(counter), main, name, sub_name.format(n=entry % 97),
                          sub.format(n=entry % 97), f"{amount // 100}.{amount % 100:02d}", code, day, *document,
                          "KREDİ KARTI" if number == 1 else "", f"Satış faturası {entry} - açıklama satırı"]
                line = "".join(field + "\t" for field in fields)
                if entry % 20 == 0:  # foreign currency
                    line += f"TRY\t{day}\t{amount / 3600:.2f}\tEUR\t36.0000\tTCMB\tDöviz satış kuru"
                rows.append(line)
            total = f"{cents * (size - 1) // 100}.{cents * (size - 1) % 100:02d}"
            out.write(f"H\tmuhasebe.kullanici\t{day}\tYEV-2025-{entry:07d}\tSatış faturası kaydı\t{total}\t{total}"
                      f"\t{entry}\n")
            out.write("\n".join(rows) + "\n")
            written += 1 + size
    return written


def baseline(path):
    count = 0
    for line in open(path, encoding="utf-8"):
        line.split("\t")
        count += 1
    return count


def check(path):
    checker = JournalCheck(Options(START, END, split_size_mb=150))
    with open(path, "rb") as file:
        findings = list(checker.run(iter(lambda: file.read(BLOCK_BYTES), b"")))
    return findings, checker.summary


CHILD = """
import json, sys, time, tracemalloc
from datetime import date
from django.conf import settings
settings.configure(USE_I18N=False)
from backoffice.ledger.journal import BLOCK_BYTES, JournalCheck, Options

def run():
    checker = JournalCheck(Options(date.fromisoformat(sys.argv[2]), date.fromisoformat(sys.argv[3])))
    with open(sys.argv[1], "rb") as file:
        findings = sum(1 for _ in checker.run(iter(lambda: file.read(BLOCK_BYTES), b"")))
    return findings, checker.summary.lines

start = time.perf_counter()
findings, lines = run()
seconds = time.perf_counter() - start
with open("/proc/self/status") as status:
    maxrss = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmHWM:"))
tracemalloc.start()
run()
peak = tracemalloc.get_traced_memory()[1]
print(json.dumps({"findings": findings, "lines": lines, "maxrss": maxrss, "traced": peak, "seconds": seconds}))
"""


def test_validating_a_journal_against_reading_and_splitting_it(tmp_path):
    path = tmp_path / "yevmiye.txt"
    lines = write_journal(path, LINES)
    size = path.stat().st_size

    ours_times, bare_times = [], []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        assert baseline(path) == lines
        bare_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        findings, summary = check(path)
        ours_times.append(time.perf_counter() - start)
        assert findings == [], findings[:5]
        assert (summary.lines, summary.findings) == (lines, 0)
        assert summary.debit_cents == summary.credit_cents > 0
        assert len(summary.parts) == 1 and summary.parts[0].bytes == size

    child = subprocess.run([sys.executable, "-c", CHILD, str(path), START.isoformat(), END.isoformat()], cwd=ROOT,
                           capture_output=True, text=True, timeout=600, check=True)
    memory = json.loads(child.stdout)
    assert (memory["findings"], memory["lines"]) == (0, lines)

    bare, ours = statistics.median(bare_times), statistics.median(ours_times)
    ratio = bare / ours
    print(f"\n[bench] validating a journal of {lines:,} lines ({size / 1024 ** 2:.0f} MB): checker {ours:.2f} s "
          f"({lines / ours:,.0f} lines/s); reading and splitting by tabs alone {bare:.2f} s "
          f"({lines / bare:,.0f} lines/s); ratio {ratio:.2f} (at least 0.3); the checking process's peak memory "
          f"{memory['maxrss'] / 1024 ** 2:.0f} MB (VmHWM, interpreter included; under 100 MB), the check's own "
          f"allocations at most {memory['traced'] / 1024 ** 2:.1f} MB (tracemalloc)")
    assert ratio >= 0.3
    assert memory["maxrss"] < 100 * 1024 ** 2
