"""Zipping and uploading a 100 MB journal to the sandbox as the product does, against a bare
`requests.post(files=...)` of the same ZIP to the same operation.

The product writes the ZIP while it checks the journal (checking.py: a thread reads the same file and deflates
it, zlib working outside the GIL), and the upload streams that ZIP from disk through the ledger
client (the multipart body read as it is sent, the audit, the limiter). What zipping costs is therefore the
wall time it adds to the check; so each round measures the check alone, the check writing the ZIP, our upload
of that ZIP and the bare upload of the same ZIP:

    ratio = bare upload / (added by zipping + our upload)

It also prints the ratio of zipping first and uploading after (zlib's speed against a local upload), for
comparison. Alternating rounds in one run, each figure the fastest of its rounds; asserts the ratio (at least 0.8),
that the journal is clean and that every upload made exactly one period; never an absolute time. BENCH_LEDGER_MB
changes the size (100 by default).
"""

import os
import resource
import time
from datetime import date

import pytest
import requests

from backoffice.ledger import checking, services
from backoffice.ledger import journal as checker
from backoffice.remote.ledger import UPLOAD_PART
from tests.ledger.builders import entry_lines, month_end

MEGABYTES = int(os.environ.get("BENCH_LEDGER_MB", 100))
ROUNDS = 10  # the check with and without the ZIP
UPLOAD_ROUNDS = 6  # two uploads a round, one month each: the 12 months of 2025

pytestmark = [pytest.mark.bench, pytest.mark.django_db]


def write_journal(path, megabytes):
    """A clean January journal of about `megabytes` MB: entries of two lines, dates in order over the month."""
    sample = len(("\n".join(entry_lines(100000, 199999, date(2025, 1, 10))) + "\n").encode())
    entries = megabytes * 2 ** 20 // sample
    with open(path, "w", encoding="utf-8") as out:
        out.write("Y\t2025-01-01\t2025-12-31\t0\t1234567890\t\n")
        for counter in range(1, entries + 1):
            day = date(2025, 1, 1 + (counter - 1) * 31 // entries)
            out.write("\n".join(entry_lines(counter, 2 * counter - 1, day)) + "\n")


def check(text_path, zip_path=None):
    """The product's check of the journal, writing its ZIP as checking.journal_check does when zip_path is given.
    Returns the number of findings."""
    options = checker.Options(start=date(2025, 1, 1), end=date(2025, 1, 31), split_size_mb=10)
    journal_check = checker.JournalCheck(options)
    zipper = None
    if zip_path is not None:
        zipper = checking.Zipper(zip_path, "yevmiye.txt", lambda: open(text_path, "rb"))
        zipper.start()
    with open(text_path, "rb") as handle:
        findings = sum(1 for _ in journal_check.run(iter(lambda: handle.read(checking.BLOCK), b"")))
    if zipper is not None:
        zipper.join()
        assert zipper.error is None
    return findings


def zip_alone(text_path, zip_path):
    zipper = checking.Zipper(zip_path, "yevmiye.txt", lambda: open(text_path, "rb"))
    zipper.start()
    zipper.join()


def timed(work):
    began = time.perf_counter()
    result = work()
    return time.perf_counter() - began, result


def test_zipping_and_uploading_a_journal_against_a_bare_upload_of_the_zip(sandbox, sandbox_company, tmp_path):
    # Nothing of the period's life comes due during the benchmark (no platform check runs inside an upload).
    sandbox.control("POST", "ledger/settings", {"customer": str(sandbox_company.customer_unique_id),
                                                "step_seconds": 86400})
    text = tmp_path / "yevmiye.txt"
    write_journal(text, MEGABYTES)
    client = services.ledger_client(sandbox_company)
    url = sandbox.service_url("ledger") + "/v1/period"
    bare = requests.Session()
    bare.trust_env = False
    headers = {"x-api-key": sandbox_company.api_key}
    months = iter(range(1, 13))

    def ours(zip_path):
        start = date(2025, next(months), 1)
        with open(zip_path, "rb") as archive:
            period = client.upload(start=start.isoformat(), end=month_end(start).isoformat(), split_size=10,
                                   time_stamp=False, without_tax_detail=False, archive=archive,
                                   filename="yevmiye.zip", part=UPLOAD_PART)
        assert period["FiscalYearStart"][:10] == start.isoformat()

    def plain(zip_path):
        start = date(2025, next(months), 1)
        with open(zip_path, "rb") as archive:
            response = bare.post(url, headers=headers, files={"Files": ("yevmiye.zip", archive, "application/zip")},
                                 data={"StartDate": start.isoformat(), "EndDate": month_end(start).isoformat(),
                                       "SplitSize": "10", "TimeStamp": "false", "WithoutTaxDetail": "false"},
                                 timeout=120)
        assert response.status_code == 200, response.text

    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    checks, uploads = [], []
    for index in range(ROUNDS):
        zip_path = tmp_path / f"round-{index}.zip"
        check_alone, findings = timed(lambda: check(text))
        check_zipping, zipped_findings = timed(lambda: check(text, zip_path))
        assert findings == zipped_findings == 0
        zipping_alone, _ = timed(lambda: zip_alone(text, tmp_path / "alone.zip"))
        checks.append((check_alone, check_zipping, zipping_alone))
        if index < UPLOAD_ROUNDS:
            uploads.append((timed(lambda: ours(zip_path))[0], timed(lambda: plain(zip_path))[0]))
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak_before) / 1024

    assert len(client.periods()["items"]) == 2 * UPLOAD_ROUNDS  # one period per upload, none twice
    # The fastest of the rounds: what each costs when nothing else on the machine gets in its way (the zipping's
    # cost is a difference of two ~2 s runs, which a busy moment of a shared machine would otherwise swamp).
    check_alone, check_zipping, zipping_alone = (min(c) for c in zip(*checks))
    upload_ours, upload_bare = (min(c) for c in zip(*uploads))
    added = max(check_zipping - check_alone, 0.0)
    ratio = upload_bare / (added + upload_ours)
    sequential = upload_bare / (zipping_alone + upload_ours)
    zip_mb = (tmp_path / "round-0.zip").stat().st_size / 2 ** 20
    print(f"\n[bench] ledger upload of a {text.stat().st_size / 2 ** 20:.0f} MB journal ({zip_mb:.1f} MB ZIP), "
          f"the fastest of {ROUNDS} checks and {UPLOAD_ROUNDS} uploads: check {check_alone:.2f} s, check writing "
          f"the ZIP {check_zipping:.2f} s (zipping adds {added:.2f} s), our upload {upload_ours:.2f} s, bare upload "
          f"{upload_bare:.2f} s -> ratio {ratio:.2f} (at least 0.8); zipping alone {zipping_alone:.2f} s, zipping "
          f"then uploading {sequential:.2f}; peak memory of the process grew {grown_mb:.0f} MB")
    assert ratio >= 0.8
