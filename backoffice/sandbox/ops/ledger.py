"""Electronic ledger service (document 3, sections 2.8, 3.2, 4.4 and 8; property names are capitalised there):
the periods of a customer with their parts and book entries, the four previews of a part, the certificates sent
to the tax authority, and the upload of a journal, checked by the platform's own rules (ledger_rules.py). The
control actions that seed periods, set a status and change the timing are in ledger_control.py.

Document kinds (customer-scoped; the Document's pk is the platform's integer Id):
  ledger_period   status the period's Status; data the period's fields (FiscalYearStart ... Task), "upload"
                  {path, member, bytes} of the stored ZIP, "machine" {step, outcome} and "ApprovedAt"; due_at the
                  next move of the period's life.
  ledger_part     number the period's Id; data the part's fields, its text's "sha256", "first_line" and
                  "last_line" in the journal, "ledger" {accountMainID: [description, debit, credit]} in kuruş.
  ledger_book     number the part's Id, status 10; data the book entry's fields.
  ledger_settings key "settings"; data {"step_seconds", "certificates"} of this customer (control action).

Choices where the documents say "not shown" (the back office's client is written against them):
- Paths (the facts file has three; the others are the defaults of backoffice/remote/endpoints.py):
  GET /v1/period/getperiodlist, GET /v1/period/getpartlist?periodId, GET /v1/period/getbookentries?id=<part>,
  GET /v1/period/preview?generalBookId&previewType, GET /v1/sendletterpattentstogib?periodId&isTryAgain,
  POST /v1/period (multipart/form-data).
- Lists answer the capitalised envelope; pageIndex and pageSize are checked as on every list (422).
  sortedColumn is a property name spelled as document 3 does (case-sensitive); periods: Id, FiscalYearStart,
  FiscalYearEnd, Status (none: by creation, isDesc true newest first); parts: Id, IndexNumber,
  PeriodCoveredStart, PeriodCoveredEnd, EntryNumberStart, LineNumberStart (none: IndexNumber). Another column
  or an isDesc other than true / false is a 400.
  The book entries of a part are a plain JSON array: GeneralbookType 1 (journal) and 2 (general ledger).
- Moments are "yyyy-mm-ddT00:00:00"; Debit and Credit JSON numbers with 2 decimals.
- Refusals 400 {title, detail} with "<field>: <message>", every problem of an upload in one detail; an
  unknown id, or another customer's, 404.
- Statuses: 0 uploaded, 20 converting, 30 ready, 40 error (the journal breaks a rule), 50 sent to the tax
  authority, 60 approved, 80 submission failed. Task.Status 1 waiting, 2 running, 3 completed, 4 failed.
  Life (settled lazily on every ledger operation of the customer, like statuses.py): 0 --step--> 20
  {2, 20, "Metin XML'e dönüştürülüyor"} --step--> checked: 30 {3, 100, ""} with its parts and book entries,
  or 40 {4, 100, "<count> hata. Satır N: ...; ..."} (the first 5 findings). A step is 2 s unless the control
  action says otherwise, fixed when the period is uploaded (or its certificates sent). The check runs outside
  any transaction: the period is leased (due_at 10 minutes on) so that one request checks it, and a period
  whose previous month is still on its way waits for it (its counters continue from it).
- Certificates: 30 with isTryAgain false, or 80 with isTryAgain true -> 50 (200, empty body); one step later
  60 (approved) or 80 (Task {4, 100, why}) as the customer's "certificates" setting says (approve, fail,
  fail_once: the next submission fails, the ones after it are approved). A retry clears the failed Task.
- Upload: StartDate and EndDate whole months of one calendar year; SplitSize an integer 1..150 (MiB of text
  per part); TimeStamp and WithoutTaxDetail "true" / "false" in any case (missing: false); form names exactly as
  document 3 spells them (another case is a missing field); the ZIP in the part Files, at most 150 MB, every
  member's CRC tested, exactly one file, a .txt. Months in order: when the customer has a period starting
  earlier, a period that is not in error (40) must cover the day before StartDate. A range overlapping a
  period not in error is refused (already uploaded / already approved). The ZIP is stored on disk
  (SANDBOX_LEDGER_DIR, else next to the SQLite database, else var/), never in the database; the journal is
  checked later, not in the request.
- Previews: HTML (text/html; charset=utf-8, Content-Disposition inline). 1 the part's journal (its first 500
  entry lines, read again from the stored ZIP), 2 the general ledger (totals per main account), 3 the journal
  and ledger certificate (berat: period, part, ranges, totals, SHA-256 of the part's text: the Y line and its
  entries, as in the file), 4 the same approved by the tax authority, only for an approved period (60).
"""

import html
import os
import shutil
import uuid
import zipfile
import zlib
from datetime import date, datetime, timedelta
from pathlib import Path

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.db import transaction
from django.http import HttpResponse
from django.http.multipartparser import MultiPartParserError
from django.utils import timezone

from ..api import Call, operation, page_params
from ..models import Document
from .common import Problems, envelope, lock, now, refused
from .ledger_rules import MIB, Outcome, Period, cents, check_zip, day, lines_of, open_member

PERIOD, PART, BOOK, SETTINGS = "ledger_period", "ledger_part", "ledger_book", "ledger_settings"
UPLOADED, CONVERTING, READY, ERROR, SENT, APPROVED, FAILED = 0, 20, 30, 40, 50, 60, 80
STATUSES = (UPLOADED, CONVERTING, READY, ERROR, SENT, APPROVED, FAILED)
STATUS_NAMES = {UPLOADED: "uploaded", CONVERTING: "being converted", READY: "ready", ERROR: "in error",
                SENT: "sent to the tax authority", APPROVED: "approved", FAILED: "failed at the tax authority"}
TASK_WAITING, TASK_RUNNING, TASK_COMPLETED, TASK_FAILED = 1, 2, 3, 4
BOOK_CREATED = 10
JOURNAL, GENERAL_LEDGER = 1, 2  # GeneralbookType
PREVIEW_TYPES = {1: "journal", 2: "general ledger", 3: "journal and ledger certificate",
                 4: "tax-authority-approved certificate"}
CONVERTING_MESSAGE = "Metin XML'e dönüştürülüyor"
CERTIFICATE_FAILURE = "GİB berat gönderimi başarısız: mali mühür imzası doğrulanamadı (sandbox)."
DEFAULT_SETTINGS = {"step_seconds": 2.0, "certificates": "approve"}
CERTIFICATE_OUTCOMES = ("approve", "fail", "fail_once")
MAX_SPLIT_SIZE = 150  # MiB; also the largest ZIP (document 3, section 8)
MAX_ZIP_BYTES = MAX_SPLIT_SIZE * MIB
PREVIEW_LINES = 500
LEASE = timedelta(minutes=10)
PERIOD_SORTS = {"Id": "pk", "FiscalYearStart": "data__FiscalYearStart", "FiscalYearEnd": "data__FiscalYearEnd",
                "Status": "status"}
PART_SORTS = {"Id": "pk", "IndexNumber": "data__IndexNumber", "PeriodCoveredStart": "data__PeriodCoveredStart",
              "PeriodCoveredEnd": "data__PeriodCoveredEnd", "EntryNumberStart": "data__EntryNumberStart",
              "LineNumberStart": "data__LineNumberStart"}
PART_FIELDS = ("PeriodId", "IndexNumber", "PeriodCoveredStart", "PeriodCoveredEnd", "EntryNumberStart",
               "EntryNumberEnd", "LineNumberStart", "LineNumberEnd", "Debit", "Credit")
UNREADABLE = (OSError, EOFError, zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, NotImplementedError,
              RuntimeError, KeyError)  # what a broken, encrypted or vanished ZIP raises


# --- small helpers -----------------------------------------------------------------------------------------------

def moment(value: date) -> str:
    return f"{value.isoformat()}T00:00:00"


def amount(kurus: int) -> float:
    return round(kurus / 100, 2)


def task(doc_pk: int, status: int, message: str = "") -> dict:
    """The period's Task as its status implies it."""
    if status == UPLOADED:
        return {"Id": doc_pk, "Status": TASK_WAITING, "Progress": 0, "Message": ""}
    if status == CONVERTING:
        return {"Id": doc_pk, "Status": TASK_RUNNING, "Progress": 20, "Message": CONVERTING_MESSAGE}
    if status in (ERROR, FAILED):
        return {"Id": doc_pk, "Status": TASK_FAILED, "Progress": 100, "Message": message}
    return {"Id": doc_pk, "Status": TASK_COMPLETED, "Progress": 100, "Message": ""}


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


def ledger_settings(customer) -> dict:
    doc = Document.objects.filter(customer=customer, kind=SETTINGS, key="settings").first()
    return {**DEFAULT_SETTINGS, **(doc.data if doc else {})}


def save_settings(customer, changes: dict) -> dict:
    merged = {**ledger_settings(customer), **changes}
    Document.objects.update_or_create(customer=customer, kind=SETTINGS, key="settings", defaults={"data": merged})
    return merged


def first_day(doc: Document) -> date:
    return date.fromisoformat(doc.data["FiscalYearStart"][:10])


def last_day(doc: Document) -> date:
    return date.fromisoformat(doc.data["FiscalYearEnd"][:10])


def new_period(customer, *, start: date, end: date, split_size: int, time_stamp: bool, without_tax_detail: bool,
               status: int, at: datetime, upload: dict | None, step: float, message: str = "",
               due_at: datetime | None = None) -> Document:
    """Save a period; its Id (the pk) is known only then, and its Task carries it."""
    doc = Document.objects.create(customer=customer, kind=PERIOD, key=uuid.uuid4().hex, status=status, created=at,
                                  due_at=due_at, data={})
    doc.data = {"FiscalYearStart": moment(start), "FiscalYearEnd": moment(end), "IsActive": True,
                "SplitSize": split_size, "TimeStamp": time_stamp, "WithoutTaxDetail": without_tax_detail,
                "IsLiquidation": False, "Task": task(doc.pk, status, message), "upload": upload,
                "machine": {"step": step}}
    if status == APPROVED:
        doc.data["ApprovedAt"] = at.isoformat()
    Document.objects.filter(pk=doc.pk).update(data=doc.data)
    return doc


def previous_period(customer, start: date) -> Document | None:
    """The period ending the day before `start` that is not in error (the month the counters continue from)."""
    return (Document.objects.filter(customer=customer, kind=PERIOD,
                                    data__FiscalYearEnd=moment(start - timedelta(days=1)))
            .exclude(status=ERROR).order_by("-pk").first())


def last_counters(customer, period: Document | None) -> tuple[int, int] | None:
    """(EntryNumberEnd, LineNumberEnd) of the period's last part; None without parts."""
    if period is None:
        return None
    part = (Document.objects.filter(customer=customer, kind=PART, number=str(period.pk))
            .order_by("-data__IndexNumber").first())
    return (part.data["EntryNumberEnd"], part.data["LineNumberEnd"]) if part else None


def create_parts(customer, period: Document, summaries: list[dict], at: datetime) -> list[Document]:
    """The parts of a checked journal and the two book entries of each."""
    parts = [Document(customer=customer, kind=PART, key=uuid.uuid4().hex, number=str(period.pk), created=at, data={
        "PeriodId": period.pk, "IndexNumber": item["index"],
        "PeriodCoveredStart": moment(date.fromisoformat(item["covered_start"])),
        "PeriodCoveredEnd": moment(date.fromisoformat(item["covered_end"])),
        "EntryNumberStart": item["entry_start"], "EntryNumberEnd": item["entry_end"],
        "LineNumberStart": item["line_start"], "LineNumberEnd": item["line_end"],
        "Debit": amount(item["debit"]), "Credit": amount(item["credit"]),
        "sha256": item["sha256"], "first_line": item["first_line"], "last_line": item["last_line"],
        "size": item["size"], "entries": item["entries"], "ledger": item["ledger"],
    }) for item in summaries]
    Document.objects.bulk_create(parts, batch_size=500)
    books = []
    for part in parts:
        figures = {name: part.data[name] for name in PART_FIELDS if name not in ("PeriodId", "IndexNumber")}
        for book_type in (JOURNAL, GENERAL_LEDGER):
            books.append(Document(customer=customer, kind=BOOK, key=uuid.uuid4().hex, number=str(part.pk),
                                  status=BOOK_CREATED, created=at,
                                  data={"PartId": part.pk, "GeneralbookType": book_type, **figures}))
    Document.objects.bulk_create(books, batch_size=500)
    return parts


# --- the period's life -------------------------------------------------------------------------------------------

def settle(call: Call) -> None:
    """Move the customer's periods whose time has come, the earliest months first."""
    at = now(call)
    due = (Document.objects.filter(customer=call.customer, kind=PERIOD, status__in=(UPLOADED, CONVERTING, SENT),
                                   due_at__lte=at).order_by("data__FiscalYearStart", "pk"))
    for doc in list(due):
        _advance(call.customer, doc, at)


def _move(doc: Document, status: int, due_at, data: dict) -> bool:
    """Take one move, unless another request took it first (conditional on the status and due_at read)."""
    moved = Document.objects.filter(pk=doc.pk, status=doc.status, due_at=doc.due_at).update(
        status=status, due_at=due_at, data=data)
    if moved:
        doc.status, doc.due_at, doc.data = status, due_at, data
    return bool(moved)


def _advance(customer, doc: Document, at: datetime) -> None:
    step = timedelta(seconds=doc.data["machine"]["step"])
    if doc.status == UPLOADED and not _move(doc, CONVERTING, doc.due_at + step,
                                            {**doc.data, "Task": task(doc.pk, CONVERTING)}):
        return  # another request moved it
    if doc.status == CONVERTING and doc.due_at <= at:
        _check(customer, doc, at)
    elif doc.status == SENT:
        failed = doc.data["machine"].get("outcome") == "fail"
        status = FAILED if failed else APPROVED
        data = {**doc.data, "Task": task(doc.pk, status, CERTIFICATE_FAILURE if failed else "")}
        if not failed:
            data["ApprovedAt"] = doc.due_at.isoformat()
        _move(doc, status, None, data)


def _check(customer, doc: Document, at: datetime) -> None:
    """Check the stored journal (outside any transaction, the period leased to this request), then keep the
    outcome: 30 with the parts, or 40 with the findings."""
    previous = previous_period(customer, first_day(doc))
    if previous is not None and previous.status in (UPLOADED, CONVERTING) and previous.due_at is not None:
        return  # its counters are not known yet: this one waits for it
    leased = at + LEASE
    if not _move(doc, CONVERTING, leased, doc.data):
        return
    upload = doc.data.get("upload") or {}
    facts = Period(start=first_day(doc), end=last_day(doc), split_size=doc.data["SplitSize"],
                   previous=last_counters(customer, previous))
    try:
        outcome = check_zip(upload["path"], upload["member"], facts)
    except UNREADABLE as error:
        outcome = Outcome(errors=1, findings=[f"Satır 1: dosya: yüklenen ZIP okunamadı ({error})"])
    with transaction.atomic():
        lock(customer)
        current = Document.objects.filter(pk=doc.pk, status=CONVERTING, due_at=leased).first()
        if current is None:
            return  # a control action set another status meanwhile
        status = ERROR if outcome.errors else READY
        current.status, current.due_at = status, None
        current.data = {**current.data, "Task": task(doc.pk, status, outcome.message if outcome.errors else ""),
                        "entity": outcome.entity}
        current.save(update_fields=["status", "due_at", "data"])
        if not outcome.errors:
            create_parts(customer, current, outcome.parts, at)


# --- lookups and query values ----------------------------------------------------------------------------------

def _found(call: Call, kind: str, pk, noun: str) -> Document:
    doc = Document.objects.filter(customer=call.customer, kind=kind, pk=pk).first()
    if doc is None:
        raise refused("Not Found", f"No {noun} with Id {pk}.", 404)
    return doc


def _whole(call: Call, name: str, problems: Problems, required: bool = True) -> int | None:
    raw = call.query.get(name, "").strip()
    if not raw:
        if required:
            problems.add(name, f"The {name} field is required.")
        return None
    try:
        return int(raw)
    except ValueError:
        problems.add(name, f"The value '{raw}' is not valid for {name}: an integer is expected.")
        return None


def flag(value, name: str, problems: Problems) -> bool | None:
    """A boolean of a query or form value: true / false in any case; missing or empty is false."""
    text = (value or "").strip().lower()
    if text in ("", "false"):
        return False
    if text == "true":
        return True
    problems.add(name, f"must be true or false (got '{value}').")
    return None


def _listed(call: Call, rows, sorts: dict, default: tuple, item) -> dict:
    """One page of rows in the capitalised envelope, ordered by sortedColumn / isDesc."""
    page_index, page_size = page_params(call)  # 422 as on every list
    problems = Problems()
    wanted = call.query.get("sortedColumn", "").strip()
    descending = flag(call.query.get("isDesc"), "isDesc", problems)
    column = sorts.get(wanted) if wanted else None
    if wanted and column is None:
        problems.add("sortedColumn", f"unknown column '{wanted}'; one of {', '.join(sorts)}.")
    problems.raise_any()
    sign = "-" if descending else ""
    order = [f"{sign}{column}", f"{sign}pk"] if column else [f"{sign}{name}" for name in default]
    rows = rows.order_by(*order)
    total = rows.count()
    start = (page_index - 1) * page_size
    body = envelope([item(row) for row in rows[start:start + page_size]], total, page_index, page_size)
    return {name[0].upper() + name[1:]: value for name, value in body.items()}


# --- the answers -------------------------------------------------------------------------------------------------

def period_item(doc: Document) -> dict:
    data = doc.data
    return {"Id": doc.pk, "FiscalYearStart": data["FiscalYearStart"], "FiscalYearEnd": data["FiscalYearEnd"],
            "Status": doc.status, "IsActive": data["IsActive"], "SplitSize": data["SplitSize"],
            "TimeStamp": data["TimeStamp"], "WithoutTaxDetail": data["WithoutTaxDetail"],
            "IsLiquidation": data["IsLiquidation"], "Task": data["Task"]}


def part_item(doc: Document) -> dict:
    return {"Id": doc.pk, **{name: doc.data[name] for name in PART_FIELDS}}


def book_item(doc: Document) -> dict:
    data = doc.data
    return {"Id": doc.pk, "PartId": data["PartId"], "GeneralbookType": data["GeneralbookType"],
            **{name: data[name] for name in PART_FIELDS if name not in ("PeriodId", "IndexNumber")},
            "Status": doc.status}


@operation("ledger", "GET", "/v1/period/getperiodlist")
def period_list(call: Call):
    page_params(call)
    settle(call)
    rows = Document.objects.filter(customer=call.customer, kind=PERIOD)
    return _listed(call, rows, PERIOD_SORTS, ("created", "pk"), period_item)


@operation("ledger", "GET", "/v1/period/getpartlist")
def part_list(call: Call):
    page_params(call)
    problems = Problems()
    period_id = _whole(call, "periodId", problems)
    problems.raise_any()
    settle(call)
    period = _found(call, PERIOD, period_id, "period")
    rows = Document.objects.filter(customer=call.customer, kind=PART, number=str(period.pk))
    return _listed(call, rows, PART_SORTS, ("data__IndexNumber", "pk"), part_item)


@operation("ledger", "GET", "/v1/period/getbookentries")
def book_entries(call: Call):
    problems = Problems()
    part_id = _whole(call, "id", problems)
    problems.raise_any()
    settle(call)
    part = _found(call, PART, part_id, "part")
    books = Document.objects.filter(customer=call.customer, kind=BOOK, number=str(part.pk))
    return [book_item(doc) for doc in books.order_by("data__GeneralbookType", "pk")]


# --- previews ----------------------------------------------------------------------------------------------------

STYLE = """body{font-family:sans-serif;font-size:13px;color:#222;margin:16px}
h1{font-size:18px;margin:0 0 4px}h2{font-size:14px;margin:16px 0 4px}
table{border-collapse:collapse;width:100%}th,td{border:1px solid #ccc;padding:3px 6px;text-align:left}
th{background:#f0f0f0}td.n{text-align:right;white-space:nowrap}tr.h td{background:#fafae8;font-weight:bold}
dl{display:grid;grid-template-columns:max-content auto;gap:4px 16px}dt{font-weight:bold}dd{margin:0}
code{word-break:break-all}.note{color:#555;margin:8px 0}.seal{border:2px solid #2a6;padding:8px;margin-top:12px}"""


def _e(value) -> str:
    return html.escape(str(value if value is not None else ""))


def _tl(kurus: int) -> str:
    """An amount as Turkish accounts show it: 1.234,56."""
    sign = "-" if kurus < 0 else ""
    whole, rest = divmod(abs(kurus), 100)
    return f"{sign}{whole:,}".replace(",", ".") + f",{rest:02d}"


def _tl_figure(value) -> str:
    return _tl(round(float(value) * 100))


def _page(title: str, body: str) -> str:
    return (f'<!DOCTYPE html><html lang="tr"><head><meta charset="utf-8"><title>{_e(title)}</title>'
            f"<style>{STYLE}</style></head><body>{body}</body></html>")


def _heading(title: str, period: Document, part: Document) -> str:
    return (f"<h1>{_e(title)}</h1><p class=\"note\">VKN/TCKN {_e(period.data.get('entity', ''))} · dönem "
            f"{_e(period.data['FiscalYearStart'][:10])} – {_e(period.data['FiscalYearEnd'][:10])} · parça "
            f"{part.data['IndexNumber']}</p>")


def _journal(period: Document, part: Document) -> str:
    """The part's entries as a table, read again from the stored journal: its first PREVIEW_LINES lines."""
    upload = period.data.get("upload") or {}
    first, last = part.data["first_line"], part.data["last_line"]
    total = part.data["LineNumberEnd"] - part.data["LineNumberStart"] + 1
    rows, shown, number = [], 0, 0
    try:
        archive, stream = open_member(upload["path"], upload["member"])
    except UNREADABLE:
        return _page("Yevmiye defteri", "<p>Yüklenen dosya okunamadı.</p>")
    with archive, stream:
        for raw, _too_long in lines_of(stream):
            number += 1
            if number < first:
                continue
            if number > last or shown >= PREVIEW_LINES:
                break
            fields = raw.rstrip(b"\r\n").decode("utf-8", "replace").lstrip("\ufeff").split("\t")
            if fields[0] == "H":
                fields += [""] * (8 - len(fields))
                rows.append(f'<tr class="h"><td>{_e(fields[7])}</td><td>{_e(fields[2])}</td>'
                            f'<td colspan="4">{_e(fields[3])} {_e(fields[4])}</td><td colspan="3">'
                            f"{_e(fields[1])}</td></tr>")
                continue
            fields += [""] * (16 - len(fields))
            kurus = cents(fields[6])
            value = _tl(kurus) if kurus is not None else _e(fields[6])
            debit, credit = (value, "") if fields[7] == "D" else ("", value)
            rows.append(f"<tr><td>{_e(fields[1])}</td><td>{_e(fields[8])}</td><td>{_e(fields[2])}</td>"
                        f"<td>{_e(fields[5])}</td><td>{_e(fields[3])} {_e(fields[4])}</td>"
                        f'<td>{_e(fields[15])}</td><td class="n">{debit}</td><td class="n">{credit}</td>'
                        f"<td>{_e(fields[9])} {_e(fields[11])}</td></tr>")
            shown += 1
    count = f"{total:,}".replace(",", ".")  # Turkish thousands
    note = (f'<p class="note">İlk {PREVIEW_LINES} satır gösteriliyor; parçada {count} satır var.</p>'
            if total > shown else f'<p class="note">{count} satır.</p>')
    table = ("<table><tr><th>Satır / madde</th><th>Tarih</th><th>Hesap</th><th>Alt hesap</th><th>Açıklama</th>"
             "<th>Detay</th><th>Borç</th><th>Alacak</th><th>Belge</th></tr>" + "".join(rows) + "</table>")
    return _page("Yevmiye defteri", _heading("Yevmiye Defteri", period, part) + note + table + note)


def _general_ledger(period: Document, part: Document) -> str:
    rows, debit_total, credit_total = [], 0, 0
    for main, (description, debit, credit) in sorted(part.data["ledger"].items()):
        debit_total, credit_total = debit_total + debit, credit_total + credit
        rows.append(f'<tr><td>{_e(main)}</td><td>{_e(description)}</td><td class="n">{_tl(debit)}</td>'
                    f'<td class="n">{_tl(credit)}</td><td class="n">{_tl(debit - credit)}</td></tr>')
    rows.append(f'<tr class="h"><td colspan="2">Toplam</td><td class="n">{_tl(debit_total)}</td>'
                f'<td class="n">{_tl(credit_total)}</td><td class="n">{_tl(debit_total - credit_total)}</td></tr>')
    table = ("<table><tr><th>Ana hesap</th><th>Açıklama</th><th>Borç</th><th>Alacak</th><th>Bakiye</th></tr>"
             + "".join(rows) + "</table>")
    return _page("Büyük defter (kebir)", _heading("Büyük Defter (Kebir)", period, part) + table)


def _certificate(period: Document, part: Document, book: Document, approved: bool) -> str:
    data = part.data
    book_name = "Yevmiye defteri" if book.data["GeneralbookType"] == JOURNAL else "Büyük defter (kebir)"
    facts = [("Defter", book_name), ("VKN/TCKN", period.data.get("entity", "")),
             ("Dönem", f"{period.data['FiscalYearStart'][:10]} – {period.data['FiscalYearEnd'][:10]}"),
             ("Parça", data["IndexNumber"]),
             ("Kapsadığı tarihler", f"{data['PeriodCoveredStart'][:10]} – {data['PeriodCoveredEnd'][:10]}"),
             ("Madde numaraları", f"{data['EntryNumberStart']} – {data['EntryNumberEnd']}"),
             ("Satır numaraları", f"{data['LineNumberStart']} – {data['LineNumberEnd']}"),
             ("Borç toplamı", _tl_figure(data["Debit"])), ("Alacak toplamı", _tl_figure(data["Credit"]))]
    body = "<dl>" + "".join(f"<dt>{_e(name)}</dt><dd>{_e(value)}</dd>" for name, value in facts)
    body += f"<dt>SHA-256</dt><dd><code>{_e(data['sha256'])}</code></dd></dl>"
    title = "Yevmiye Defteri ve Büyük Defter Beratı"
    if approved:
        reference = uuid.uuid5(uuid.NAMESPACE_URL, f"gib:{period.pk}:{data['sha256']}")
        approved_at = period.data.get("ApprovedAt")
        shown_at = f"{timezone.localtime(datetime.fromisoformat(approved_at)):%Y-%m-%d %H:%M}" if approved_at else ""
        body += (f'<div class="seal"><strong>Gelir İdaresi Başkanlığı onayı</strong><br>Onay zamanı '
                 f"{_e(shown_at)}<br>Onay numarası <code>{reference}</code></div>")
        title = "GİB Onaylı " + title
    return _page(title, _heading(title, period, part) + body)


@operation("ledger", "GET", "/v1/period/preview")
def preview(call: Call):
    problems = Problems()
    book_id = _whole(call, "generalBookId", problems)
    preview_type = _whole(call, "previewType", problems)
    if preview_type is not None and preview_type not in PREVIEW_TYPES:
        problems.add("previewType", "must be 1 (journal), 2 (general ledger), 3 (journal and ledger certificate) "
                                    f"or 4 (tax-authority-approved certificate); got {preview_type}.")
    problems.raise_any()
    settle(call)
    book = _found(call, BOOK, book_id, "book entry")
    part = _found(call, PART, book.data["PartId"], "part")
    period = _found(call, PERIOD, part.data["PeriodId"], "period")
    if preview_type == 4 and period.status != APPROVED:
        raise refused("Validation failed", f"previewType: the period {period.pk} is not approved yet (status "
                                           f"{period.status}); the approved certificate exists once the tax "
                                           f"authority has approved it (60).")
    if preview_type == 1:
        content = _journal(period, part)
    elif preview_type == 2:
        content = _general_ledger(period, part)
    else:
        content = _certificate(period, part, book, approved=preview_type == 4)
    names = {1: "yevmiye", 2: "kebir", 3: "berat", 4: "onayli-berat"}
    response = HttpResponse(content.encode("utf-8"), content_type="text/html; charset=utf-8")
    response["Content-Disposition"] = (f'inline; filename="{names[preview_type]}-{period.pk}-'
                                       f'{part.data["IndexNumber"]}.html"')
    return response


# --- certificates ------------------------------------------------------------------------------------------------

def _submission_refusal(doc: Document, try_again: bool) -> tuple[str, str] | None:
    status = doc.status
    if status == READY and not try_again or status == FAILED and try_again:
        return None
    if status == READY:
        return "isTryAgain", ("isTryAgain is for a period whose submission failed (80); period "
                              f"{doc.pk} is ready (30): send it with isTryAgain=false.")
    if status == FAILED:
        return "isTryAgain", (f"isTryAgain must be true for a period whose submission failed: period {doc.pk} "
                              "failed at the tax authority (80).")
    if status == SENT:
        return "periodId", f"the certificates of period {doc.pk} were already sent to the tax authority (50)."
    if status == APPROVED:
        return "periodId", f"period {doc.pk} is already approved by the tax authority (60)."
    if status == ERROR:
        return "periodId", f"period {doc.pk} is in error (40): its journal breaks the rules; upload it again."
    return "periodId", (f"period {doc.pk} is not ready: it is {STATUS_NAMES.get(status, status)} ({status}); "
                        "certificates are sent once it is ready (30).")


@operation("ledger", "GET", "/v1/sendletterpattentstogib")
def send_certificates(call: Call):
    problems = Problems()
    period_id = _whole(call, "periodId", problems)
    try_again = flag(call.query.get("isTryAgain"), "isTryAgain", problems)
    problems.raise_any()
    settle(call)
    at = now(call)
    with transaction.atomic():
        lock(call.customer)
        doc = _found(call, PERIOD, period_id, "period")
        refusal = _submission_refusal(doc, try_again)
        if refusal:
            raise refused("Validation failed", f"{refusal[0]}: {refusal[1]}")
        chosen = ledger_settings(call.customer)
        outcome = chosen["certificates"]
        if outcome == "fail_once":
            save_settings(call.customer, {"certificates": "approve"})
        step = float(chosen["step_seconds"])
        doc.status, doc.due_at = SENT, at + timedelta(seconds=step)
        doc.data = {**doc.data, "machine": {**doc.data["machine"], "step": step,
                                            "outcome": "approve" if outcome == "approve" else "fail"}}
        if try_again:
            doc.data["Task"] = task(doc.pk, SENT)
        doc.save(update_fields=["status", "due_at", "data"])
    return HttpResponse(b"", content_type="text/plain; charset=utf-8")


# --- upload ------------------------------------------------------------------------------------------------------

def _form(post, name: str):
    """A form value by its name exactly as document 3 spells it (StartDate, not startdate)."""
    return post.get(name)


def _dates(post, problems: Problems) -> tuple[date | None, date | None]:
    values = {}
    for name in ("StartDate", "EndDate"):
        raw = _form(post, name)
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
    raw = (_form(post, "SplitSize") or "").strip()
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
    time_stamp = flag(_form(post, "TimeStamp"), "TimeStamp", problems)
    without_tax_detail = flag(_form(post, "WithoutTaxDetail"), "WithoutTaxDetail", problems)
    archive, member = _archive(files, problems)
    settle(call)
    at = now(call)
    key = uuid.uuid4().hex
    path = _store(archive, call.customer, key) if archive is not None and not problems.items else None
    try:
        with transaction.atomic():
            lock(call.customer)
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

