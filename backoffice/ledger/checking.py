"""Our check of an uploaded journal, in the background: an Excel journal turned into the text first, then the
text read in 1 MB blocks by the checker (journal.py) while another thread writes the same file into the ZIP the
upload will send (zlib works outside the GIL: the ZIP costs the check about 1%), findings stored in batches with
the progress shown.

Memory does not grow with the file; the ZIP is kept only when no error is found (the upload sends it as it is).
"""

import array
import logging
import os
import tempfile
import threading
import zipfile
from collections import Counter
from datetime import date, timedelta
from decimal import Decimal

from django.conf import settings
from django.core.files import File
from django.db import transaction
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from backoffice.core import domains, jobs, schedule, sync
from backoffice.core.choices import JobStatus
from backoffice.core.conf import tunable
from backoffice.core.models import JobRun
from backoffice.core.payloads import day
from backoffice.remote.errors import RemoteError

from . import journal as checker
from . import mirror, workbook
from .choices import CheckState, SourceKind
from .models import Finding, Journal, Part, Period
from .periods import ledger_client, refused_statuses

chart_api = domains.api("chart_of_accounts")

logger = logging.getLogger("backoffice.ledger")

BLOCK = 1024 * 1024
BATCH = 2000
ZIP_CHUNK = 8 * 1024 * 1024


def findings_kept() -> int:
    return int(tunable("LEDGER_FINDINGS_KEPT", 10_000))


def fiscal_year_start(journal):
    """The fiscal year's first day as the journal gives it: the form's Y line of an Excel journal, else the text's
    own Y line (read from the first line only), or None."""
    if journal.source_kind == SourceKind.XLSX:
        value = (journal.y_line or {}).get("fiscal_year_start")
    else:
        with journal.source.open("rb") as handle:
            head = handle.readline(4096).lstrip(b"\xef\xbb\xbf").split(b"\t")
        value = head[1].decode("ascii", errors="replace").strip() if len(head) > 1 and head[0] == b"Y" else ""
    return day(value)


def _previous_period(journal):
    before = journal.start_date - timedelta(days=1)
    return (Period.objects.filter(company=journal.company, fiscal_year_end=before)
            .exclude(remote_status__in=refused_statuses()).order_by("-pk").first())


def first_counters(journal) -> tuple[int | None, int | None]:
    """The entry and line counters the journal must start with (they run through the fiscal year): 1 when it
    starts the fiscal year, else one past the last of the period just before it. That period and its parts are
    read from the platform when they are not known here; (None, None) when they cannot be."""
    if fiscal_year_start(journal) == journal.start_date:
        return 1, 1
    previous = _previous_period(journal)
    try:
        if previous is None or not previous.parts.exists():
            # One try each, no retries: the check does not wait long for what only sharpens it.
            client = ledger_client(journal.company, interactive=True)
            mirror.periods_mirror(journal.company, client=client)
            previous = _previous_period(journal)
            if previous is not None and not previous.parts.exists():
                mirror.parts_mirror(previous, client=client)
    except RemoteError as exc:  # the check goes on without them; the page says so
        logger.info("journal %s: the periods could not be read before the check: %s", journal.pk, exc)
    if previous is None:
        return None, None
    parts = list(Part.objects.filter(period=previous))
    last_entry = max((p.entry_number_end or 0 for p in parts), default=0)
    last_line = max((p.line_number_end or 0 for p in parts), default=0)
    return (last_entry + 1 if last_entry else None), (last_line + 1 if last_line else None)


class Zipper(threading.Thread):
    """Writes the journal's text into a ZIP while the checker reads it: the thread reads the file itself, 8 MB at
    a time, so the two share nothing but the disk cache; zlib, the reads and the writes give the GIL up, and
    deflate at level 1 outruns the checker, so the ZIP is done when the check is."""

    def __init__(self, path, member, opener):
        super().__init__(daemon=True)
        self.path, self.member, self.opener, self.error = path, member, opener, None
        self.stop = threading.Event()

    def run(self):
        level = int(tunable("LEDGER_ZIP_LEVEL", 1))
        try:
            with self.opener() as source, \
                    zipfile.ZipFile(self.path, "w", zipfile.ZIP_DEFLATED, compresslevel=level) as archive, \
                    archive.open(self.member, "w", force_zip64=True) as out:
                while not self.stop.is_set() and (chunk := source.read(ZIP_CHUNK)):
                    out.write(chunk)
        except Exception as exc:  # reported by the checking job
            self.error = exc


def _blocks(handle, size, on_progress):
    done = 0
    while block := handle.read(BLOCK):
        done += len(block)
        on_progress(done, size)
        yield block


def check_request_target(journal) -> str:
    return sync.record_target(Journal, journal.pk)


def check_request(journal) -> "jobs.JobRun":
    return jobs.enqueue(journal_check, company=journal.company_id, target=check_request_target(journal),
                        args=[journal.pk])


@jobs.job(gettext_lazy("Check a journal"))
def journal_check(pk) -> str:
    journal = Journal.objects.filter(pk=pk).first()
    if journal is None:
        return _("The journal no longer exists.")
    with uploaders_language(journal):
        return _journal_check(journal)


def uploaders_language(journal):
    """What the check says of a file is for whoever uploaded it (the worker's own language is the site's)."""
    return translation.override(journal.language or settings.LANGUAGE_CODE)


def _journal_check(journal) -> str:
    pk = journal.pk
    if not Journal.objects.filter(pk=pk, check_state__in=[CheckState.WAITING, CheckState.CHECKING]).update(
            check_state=CheckState.CHECKING, check_progress=0, check_message=""):
        return _("The journal has been checked already.")
    try:
        return _check(journal)
    except Exception as exc:  # never left "being checked": the page says what to do (the runner logs the trace)
        Finding.objects.filter(journal=journal).delete()
        Journal.objects.filter(pk=pk).update(
            check_state=CheckState.UNREADABLE, checked_at=timezone.now(),
            check_message=_("The file could not be checked (%(error)s). Upload it again; if this happens again, "
                            "tell your administrator.") % {"error": exc.__class__.__name__})
        raise


def _check(journal) -> str:
    pk = journal.pk
    Finding.objects.filter(journal=journal).delete()
    entry, line = first_counters(journal)
    given = (journal.y_line or {}).get("first_line_counter")
    if given:  # the form's, for an Excel journal whose month before is not on the platform
        line = int(given)
    note = "" if line is not None else _(
        "The month before is not known here, so the journal's first entry and line counters were not compared "
        "with it: they continue from its last ones (1 at the start of the fiscal year).")
    try:
        rows = _text_of(journal, line)
    except workbook.WorkbookError as exc:
        Journal.objects.filter(pk=pk).update(check_state=CheckState.UNREADABLE, check_message=str(exc),
                                             checked_at=timezone.now())
        return str(exc)
    skipped = getattr(rows, "skipped", None)  # the Excel template's example entry, not read
    if skipped:
        note = " ".join(filter(None, [note, _("The template's example entry (rows %(rows)s) was not read.") % {
            "rows": ", ".join(str(row) for row in skipped)}]))
    journal.refresh_from_db()
    options = checker.Options(start=journal.start_date, end=journal.end_date, split_size_mb=journal.split_size,
                              accounts=chart_api.chart_codes(journal.company), first_entry_counter=entry,
                              first_line_counter=line, derived_totals=journal.source_kind == SourceKind.XLSX)
    check = checker.JournalCheck(options)
    handle, zip_path = tempfile.mkstemp(suffix=".zip")
    os.close(handle)
    # The thread opens a file of its own (the field's file object is the checker's).
    zipper = Zipper(zip_path, journal.file_name("txt"),
                    lambda: journal.text.storage.open(journal.text.name, "rb"))
    zipper.start()
    last = [0]

    def progress(done, size):
        percent = int(100 * done / max(size, 1))
        if percent >= last[0] + 2:
            last[0] = percent
            Journal.objects.filter(pk=pk).update(check_progress=min(percent, 99))
            jobs.set_progress(percent, _("Checked %(percent)s%% of the journal") % {"percent": percent})

    kept, batch = findings_kept(), []
    try:
        with journal.text.open("rb") as text:
            for finding in check.run(_blocks(text, journal.text.size, progress)):
                if check.summary.findings <= kept:
                    batch.append(_finding(journal, finding, rows))
                    if len(batch) >= BATCH:
                        Finding.objects.bulk_create(batch)
                        batch = []
    except BaseException:
        zipper.stop.set()
        zipper.join()
        os.unlink(zip_path)
        raise
    zipper.join()
    Finding.objects.bulk_create(batch)
    return _finish(journal, check.summary, zip_path, zipper.error, note)


def _finding(journal, finding, rows) -> Finding:
    row = rows[finding.line - 1] if rows is not None and 0 < finding.line <= len(rows) else None
    return Finding(journal=journal, line=finding.line, row=row or None, field=finding.field[:60],
                   column=finding.column, rule=finding.rule[:40], found=finding.found[:200],
                   expected=str(finding.expected)[:200])


def _finish(journal, summary, zip_path, zip_error, note="") -> str:
    passed = summary.findings == 0
    fields = {
        "check_message": note,
        "check_state": CheckState.PASSED if passed else CheckState.ERRORS, "check_progress": 100,
        "checked_at": timezone.now(), "line_count": summary.lines, "entry_count": summary.entries,
        "debit_total": Decimal(summary.debit_cents) / 100, "credit_total": Decimal(summary.credit_cents) / 100,
        "first_date": summary.first_date, "last_date": summary.last_date,
        "entity_identifier": (summary.entity_identifier or "")[:11], "findings_count": summary.findings,
        "findings_by_rule": dict(Counter(summary.by_rule)),
        "parts_plan": [vars(part) for part in summary.parts],
    }
    try:
        if passed and zip_error is None:
            with open(zip_path, "rb") as handle, transaction.atomic():
                journal.archive.save(journal.file_name("zip"), File(handle), save=False)
                fields["archive"] = journal.archive.name
        elif zip_error is not None:
            fields.update(check_state=CheckState.UNREADABLE,
                          check_message=_("The ZIP could not be written (%(error)s); try again.")
                          % {"error": zip_error.__class__.__name__})
    finally:
        os.unlink(zip_path)
    Journal.objects.filter(pk=journal.pk).update(**fields)
    if passed:
        return _("No error found in %(lines)s lines; the journal can be uploaded.") % {"lines": summary.lines}
    return _("%(count)s error(s) found in %(lines)s lines.") % {"count": summary.findings, "lines": summary.lines}


def _text_of(journal, first_line=None):
    """The journal's text: the upload itself, or an Excel journal turned into it. Returns the sheet row of
    each text line (an Excel journal) or None."""
    if journal.source_kind != SourceKind.XLSX:
        if journal.text.name != journal.source.name:
            Journal.objects.filter(pk=journal.pk).update(text=journal.source.name)
        return None
    y = journal.y_line or {}
    y_line = workbook.YLine(fiscal_year_start=date.fromisoformat(y["fiscal_year_start"]),
                            fiscal_year_end=date.fromisoformat(y["fiscal_year_end"]),
                            batch_id=y.get("batch_id", ""), entity_identifier=y.get("entity_identifier", ""))
    handle, path = tempfile.mkstemp(suffix=".txt")
    try:
        with journal.source.open("rb") as source, os.fdopen(handle, "wb") as out:
            workbook.check_size(source)
            try:
                rows = workbook.xlsx_to_text(source, out, y_line, first_line_counter=first_line or 1)
            except workbook.WorkbookError:
                raise
            except Exception as exc:  # a damaged part inside the file: openpyxl's own errors say little
                raise workbook.WorkbookError(_(
                    "The Excel file could not be read (%(error)s). Open it in Excel, save it again as .xlsx and "
                    "upload it again.") % {"error": exc.__class__.__name__}) from exc
        with open(path, "rb") as text:
            journal.text.save(journal.file_name("txt"), File(text), save=False)
        handle, rows_path = tempfile.mkstemp(suffix=".rows")
        with os.fdopen(handle, "wb") as out:
            rows.tofile(out)
        with open(rows_path, "rb") as saved:
            journal.rows.save(f"{journal.pk}.rows", File(saved), save=False)
        os.unlink(rows_path)
        Journal.objects.filter(pk=journal.pk).update(text=journal.text.name, rows=journal.rows.name)
        return rows
    finally:
        os.unlink(path)


def source_rows(journal):
    """The sheet row of each text line of an Excel journal (for the findings report), or None."""
    if not journal.rows or not journal.rows.storage.exists(journal.rows.name):
        return None
    rows = array.array("I")
    with journal.rows.open("rb") as handle:
        rows.frombytes(handle.read())
    return rows


@jobs.job(gettext_lazy("Check again the journals whose check stopped"))
def journal_checks_sweep(*, older_than_minutes: int = 10) -> int:
    """Cron: the check of a journal whose worker died (killed, out of memory) is asked for again; a check still
    running is left alone (jobs.enqueue returns it), one whose run was lost (jobs.reap_lost) starts over. A check
    whose run was lost more often than jobs.LOST_RETRIES (the run failed, the journal still waiting) is not asked
    for again: the file ends "could not be read", never "being checked" for ever with a worker killed each round."""
    jobs.reap_lost()
    cutoff = timezone.now() - timedelta(minutes=older_than_minutes)
    stuck = Journal.objects.filter(check_state__in=[CheckState.WAITING, CheckState.CHECKING], created_at__lt=cutoff)
    requested = 0
    for journal in stuck.order_by("pk")[:100]:
        if _lost_for_good(journal):
            with uploaders_language(journal):
                message = _("The check stopped before its end %(count)s times (its worker was stopped, e.g. out of "
                            "memory). Split the file into smaller ones and upload them; if this happens again, tell "
                            "your administrator.") % {"count": jobs.LOST_RETRIES + 1}
            with transaction.atomic():  # the killed run's findings go: they were of a check that never ended
                Finding.objects.filter(journal=journal).delete()
                Journal.objects.filter(pk=journal.pk, check_state=journal.check_state).update(
                    check_state=CheckState.UNREADABLE, checked_at=timezone.now(), check_message=message,
                    findings_count=0, findings_by_rule={})
        else:
            requested += check_request(journal).is_new
    return requested


def _lost_for_good(journal) -> bool:
    last = JobRun.objects.filter(target=check_request_target(journal), func_path__endswith=".journal_check") \
        .order_by("-enqueued_at").only("status", "lost_count").first()
    return last is not None and last.status == JobStatus.FAILED and last.lost_count >= jobs.LOST_RETRIES


# A check whose worker died (killed, out of memory) is asked for again.
schedule.register(func=journal_checks_sweep, interval=300, name="ledger_checks_sweep", job_timeout=120)
