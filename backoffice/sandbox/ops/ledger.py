"""Electronic ledger service (document 3, sections 2.8, 3.2, 4.4 and 8; property names are capitalised there):
the periods of a customer with their parts and book entries, the certificates sent to the tax authority, and the
life of a period; the upload of a journal is in ledger_uploads.py (checked by the platform's own rules,
ledger_rules.py), the four previews of a part in ledger_previews.py. The control actions that seed periods, set
a status and change the timing are in ledger_control.py.

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

import uuid
import zipfile
import zlib
from datetime import date, datetime, timedelta

from django.http import HttpResponse

from ..api import Call, operation, page_params
from ..models import Document
from .common import Problems, found, locked, now, paged_query, refused, whole_number
from .ledger_journal import Outcome, Period
from .ledger_rules import check_zip

PERIOD, PART, BOOK, SETTINGS = "ledger_period", "ledger_part", "ledger_book", "ledger_settings"
UPLOADED, CONVERTING, READY, ERROR, SENT, APPROVED, FAILED = 0, 20, 30, 40, 50, 60, 80
STATUSES = (UPLOADED, CONVERTING, READY, ERROR, SENT, APPROVED, FAILED)
STATUS_NAMES = {UPLOADED: "uploaded", CONVERTING: "being converted", READY: "ready", ERROR: "in error",
                SENT: "sent to the tax authority", APPROVED: "approved", FAILED: "failed at the tax authority"}
TASK_WAITING, TASK_RUNNING, TASK_COMPLETED, TASK_FAILED = 1, 2, 3, 4
BOOK_CREATED = 10
JOURNAL, GENERAL_LEDGER = 1, 2  # GeneralbookType
CONVERTING_MESSAGE = "Metin XML'e dönüştürülüyor"
CERTIFICATE_FAILURE = "GİB berat gönderimi başarısız: mali mühür imzası doğrulanamadı (sandbox)."
DEFAULT_SETTINGS = {"step_seconds": 2.0, "certificates": "approve"}
CERTIFICATE_OUTCOMES = ("approve", "fail", "fail_once")
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
    """The period's Task as its status implies it (Status, Progress, Message)."""
    state, progress, text = {UPLOADED: (TASK_WAITING, 0, ""), CONVERTING: (TASK_RUNNING, 20, CONVERTING_MESSAGE),
                             ERROR: (TASK_FAILED, 100, message), FAILED: (TASK_FAILED, 100, message)}.get(
        status, (TASK_COMPLETED, 100, ""))
    return {"Id": doc_pk, "Status": state, "Progress": progress, "Message": text}


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
    with locked(customer):
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

def document_of(call: Call, kind: str, pk, noun: str) -> Document:
    return found(Document.objects.filter(customer=call.customer, kind=kind, pk=pk), f"No {noun} with Id {pk}.")


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
    return paged_query(rows.order_by(*order), page_index, page_size, item, capitalised=True)


def required_id(call: Call, name: str) -> int:
    """An id the query must give: 400 naming it when it is missing or no integer."""
    problems = Problems()
    value = whole_number(call, name, problems)
    problems.raise_any()
    return value


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
    period_id = required_id(call, "periodId")
    settle(call)
    period = document_of(call, PERIOD, period_id, "period")
    rows = Document.objects.filter(customer=call.customer, kind=PART, number=str(period.pk))
    return _listed(call, rows, PART_SORTS, ("data__IndexNumber", "pk"), part_item)


@operation("ledger", "GET", "/v1/period/getbookentries")
def book_entries(call: Call):
    part_id = required_id(call, "id")
    settle(call)
    part = document_of(call, PART, part_id, "part")
    books = Document.objects.filter(customer=call.customer, kind=BOOK, number=str(part.pk))
    return [book_item(doc) for doc in books.order_by("data__GeneralbookType", "pk")]


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
    period_id = whole_number(call, "periodId", problems)
    try_again = flag(call.query.get("isTryAgain"), "isTryAgain", problems)
    problems.raise_any()
    settle(call)
    at = now(call)
    with locked(call.customer):
        doc = document_of(call, PERIOD, period_id, "period")
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
