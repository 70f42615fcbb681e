"""Electronic ledger service, the upload of a journal (document 3, 2.8, 3.2 and 8): POST /v1/period as
multipart/form-data, its form and its ZIP checked in the request, the ZIP kept on disk and the journal checked
later, as the period lives (ledger.py). The choices are listed in ledger.py.
"""

import os
import shutil
import uuid
import zipfile
from datetime import date, timedelta
from pathlib import Path

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.http.multipartparser import MultiPartParserError

from ..api import Call, operation
from ..models import Document
from .common import Problems, locked, now, refused
from .ledger import (APPROVED, ERROR, PERIOD, STATUS_NAMES, UNREADABLE, UPLOADED, first_day, flag, last_day,
                     ledger_settings, new_period, period_item, settle)
from .ledger_journal import MIB, day

MAX_SPLIT_SIZE = 150  # MiB; also the largest ZIP (document 3, section 8)
MAX_ZIP_BYTES = MAX_SPLIT_SIZE * MIB


def upload_dir() -> Path:
    """Where uploaded ZIPs are kept: SANDBOX_LEDGER_DIR, else beside the SQLite database (a test session's own
    directory), else var/."""
    configured = getattr(settings, "SANDBOX_LEDGER_DIR", None) or os.environ.get("SANDBOX_LEDGER_DIR")
    if configured:
        path = Path(configured)
    else:
        database = settings.DATABASES["default"]
        name = str(database.get("NAME") or "")
        if database["ENGINE"].endswith("sqlite3") and name and "memory" not in name:
            path = Path(name).resolve().parent / "sandbox-ledger"
        else:
            path = Path(getattr(settings, "VAR_DIR", None) or Path.cwd() / "var") / "sandbox-ledger"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _dates(post, problems: Problems) -> tuple[date | None, date | None]:
    values = {}
    for name in ("StartDate", "EndDate"):
        raw = post.get(name)  # the name exactly as document 3 spells it (StartDate, not startdate)
        if raw is None or not raw.strip():
            problems.add(name, f"The {name} field is required (yyyy-mm-dd).")
        elif day(raw.strip()) is None:
            problems.add(name, f"'{raw}' is not a date in the form yyyy-mm-dd.")
        values[name] = day(raw.strip()) if raw else None
    start, end = values["StartDate"], values["EndDate"]
    if start is None or end is None:
        return None, None
    whole = True
    if start > end:
        problems.add("StartDate", f"{start} is after EndDate {end}.")
        return None, None
    if start.day != 1:
        problems.add("StartDate", f"must be the first day of a month (got {start}): a period is whole months.")
        whole = False
    if (end + timedelta(days=1)).day != 1:
        problems.add("EndDate", f"must be the last day of a month (got {end}): a period is whole months.")
        whole = False
    if start.year != end.year:
        problems.add("EndDate", f"the period must lie in one calendar year (StartDate {start}, EndDate {end}).")
        whole = False
    return (start, end) if whole else (None, None)


def _split_size(post, problems: Problems) -> int | None:
    raw = (post.get("SplitSize") or "").strip()
    if not raw:
        problems.add("SplitSize", "The SplitSize field is required (megabytes per part, 1 to 150).")
        return None
    try:
        value = int(raw)
    except ValueError:
        value = None
    if value is None or not 1 <= value <= MAX_SPLIT_SIZE:
        problems.add("SplitSize", f"must be a whole number of megabytes from 1 to {MAX_SPLIT_SIZE} (got '{raw}').")
        return None
    return value


def _archive(files, problems: Problems):
    """(the uploaded ZIP, its journal member's name) when the part Files holds a sound one."""
    if "Files" not in files:
        others = ", ".join(files)
        problems.add("Files", f"the ZIP must be sent in the multipart part named Files (got {others})." if others
                     else "the ZIP of the journal is missing: send it in the multipart part named Files.")
        return None, None
    uploads = files.getlist("Files")
    if len(uploads) != 1:
        problems.add("Files", f"send one ZIP (got {len(uploads)} files).")
        return None, None
    upload = uploads[0]
    if upload.size > MAX_ZIP_BYTES:
        problems.add("Files", f"the ZIP is {upload.size / MIB:.1f} MB; at most {MAX_SPLIT_SIZE} MB is accepted.")
        return None, None
    source = upload.temporary_file_path() if hasattr(upload, "temporary_file_path") else upload
    try:
        upload.seek(0)
        with zipfile.ZipFile(source) as archive:
            members = [info for info in archive.infolist() if not info.is_dir()]
            if len(members) != 1 or not members[0].filename.lower().endswith(".txt"):
                found = ", ".join(info.filename for info in members[:5]) or "nothing"
                problems.add("Files", f"the ZIP must hold exactly one file, the journal text (.txt); it holds "
                                      f"{len(members)}: {found}.")
                return None, None
            bad = archive.testzip()
    except zipfile.BadZipFile:
        problems.add("Files", f"'{upload.name}' is not a ZIP file (or its directory is damaged).")
        return None, None
    except UNREADABLE as error:
        problems.add("Files", f"the ZIP is corrupt or cannot be read ({error}).")
        return None, None
    finally:
        upload.seek(0)
    if bad is not None:
        problems.add("Files", f"the ZIP is corrupt: {bad} fails its CRC check.")
        return None, None
    return upload, members[0].filename


def _store(upload, customer, key: str) -> Path:
    """Keep the ZIP on disk: moved when Django spooled it to a temporary file, else written out."""
    path = upload_dir() / f"{customer.customer_unique_id}-{key}.zip"
    if hasattr(upload, "temporary_file_path"):
        shutil.move(upload.temporary_file_path(), path)
    else:
        with open(path, "wb") as target:
            target.writelines(upload.chunks())
    return path


def _range_problems(customer, start: date, end: date, problems: Problems) -> None:
    """Months in order, and no range uploaded twice (periods in error, 40, do not count)."""
    periods = list(Document.objects.filter(customer=customer, kind=PERIOD))
    for doc in periods:
        if doc.status != ERROR and first_day(doc) <= end and last_day(doc) >= start:
            what = "already approved" if doc.status == APPROVED else \
                f"already uploaded (period {doc.pk}, {STATUS_NAMES.get(doc.status, doc.status)}, status {doc.status})"
            problems.add("StartDate", f"{start} – {end} overlaps {first_day(doc)} – {last_day(doc)}, {what}.")
            return
    before = start - timedelta(days=1)
    if any(first_day(doc) < start for doc in periods) and not any(
            doc.status != ERROR and first_day(doc) <= before <= last_day(doc) for doc in periods):
        problems.add("StartDate", f"months are uploaded in order: no period (other than ones in error) covers "
                                  f"{before}, the day before StartDate; upload {before:%Y-%m} first.")


@operation("ledger", "POST", "/v1/period")
def upload(call: Call):
    problems = Problems()
    try:
        post, files = call.request.POST, call.request.FILES
    except (MultiPartParserError, RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent) as error:
        raise refused("Validation failed", f"Files: the multipart/form-data body cannot be read ({error}).") from None
    start, end = _dates(post, problems)
    split_size = _split_size(post, problems)
    time_stamp = flag(post.get("TimeStamp"), "TimeStamp", problems)
    without_tax_detail = flag(post.get("WithoutTaxDetail"), "WithoutTaxDetail", problems)
    archive, member = _archive(files, problems)
    settle(call)
    at = now(call)
    key = uuid.uuid4().hex
    path = _store(archive, call.customer, key) if archive is not None and not problems.items else None
    try:
        with locked(call.customer):
            if start is not None:
                _range_problems(call.customer, start, end, problems)
            problems.raise_any()
            step = float(ledger_settings(call.customer)["step_seconds"])
            doc = new_period(call.customer, start=start, end=end, split_size=split_size, time_stamp=time_stamp,
                             without_tax_detail=without_tax_detail, status=UPLOADED, at=at, step=step,
                             upload={"path": str(path), "member": member, "bytes": archive.size},
                             due_at=at + timedelta(seconds=step))
    except BaseException:
        if path is not None:
            path.unlink(missing_ok=True)
        raise
    return period_item(doc)


def stored_journal(customer, text: bytes) -> dict:
    """Write a journal text into a new ZIP in the upload directory (sandbox seeds): {path, member, bytes}."""
    path = upload_dir() / f"{customer.customer_unique_id}-{uuid.uuid4().hex}.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("yevmiye.txt", text)
    return {"path": str(path), "member": "yevmiye.txt", "bytes": path.stat().st_size}
