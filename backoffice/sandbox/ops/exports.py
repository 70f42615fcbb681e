"""Excel exports as the platform's document services offer them: the filters every export takes, the
workbook and ZIP building, and the start / history / download operations over Document rows of kind
"<kind>_export" (key exportId, blob the ZIP, due_at when it shows in the history).

An export is built when it is started, appears in the history export_ready_seconds later and can be
downloaded for 24 hours after it was started (then 410); the download is the ZIP itself.
"""

import io
import uuid
import zipfile
from collections.abc import Callable
from datetime import datetime, timedelta

from django.http import HttpResponse
from django.utils import timezone

from ..api import Call, operation
from ..models import Document
from .common import Problems, blank, check_model, field, found, iso, moment, now, refused

LIFETIME = timedelta(hours=24)


# --- filters -------------------------------------------------------------------------------------------------

def filters_of(body, model: dict, statuses: tuple = ()) -> tuple[dict, Problems, dict]:
    """The export filters' body checked against its model (none is no filter), the problems of its values, and
    the filters every export takes: ids (an array of strings, as the model binds it) and status (one of statuses,
    for the exports whose model has it)."""
    if body is None:
        body = {}
    elif not isinstance(body, dict):
        raise refused("Validation failed", "body: The export filters must be a JSON object.")
    check_model(body, model)
    problems, filters = Problems(), {}
    if body.get("ids"):
        filters["ids"] = body["ids"]
    if body.get("status") is not None:
        if body["status"] not in statuses:
            problems.add("status", f"status must be one of {', '.join(map(str, statuses))}.")
        else:
            filters["status"] = body["status"]
    return body, problems, filters


def date_filter(body: dict, name: str, problems: Problems, filters: dict, *, end: bool) -> None:
    """A start or end moment of a range; a bare end date covers its whole day."""
    value = field(body, name)
    if blank(value):
        return
    parsed = moment(value)
    if parsed is None:
        problems.add(name, f"The value '{value}' of {name} is not a valid date and time.")
        return
    if end and isinstance(value, str) and "T" not in value and " " not in value.strip():
        parsed += timedelta(days=1) - timedelta(microseconds=1)
    filters[name] = parsed


def within(value, start, end) -> bool:
    """Whether a moment lies in [start, end]; any moment does when neither is given, none does when it is None."""
    if start is None and end is None:
        return True
    return value is not None and not (start and value < start) and not (end and value > end)


# --- files ---------------------------------------------------------------------------------------------------

def xlsx(rows_by_sheet: dict) -> bytes:
    from openpyxl import Workbook  # only exports need it

    book = Workbook(write_only=True)
    for title, rows in rows_by_sheet.items():
        sheet = book.create_sheet(title)
        for row in rows:
            sheet.append(row)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def archive(files: dict) -> bytes:
    """A ZIP of these {name: bytes}, the same bytes for the same files (its members carry no clock time)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zipped:
        for name, content in files.items():
            zipped.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), content, zipfile.ZIP_DEFLATED)
    return out.getvalue()


# --- operations ----------------------------------------------------------------------------------------------

def start(call: Call, kind: str, file_stem: str, filters: dict, build: Callable[[], tuple[bytes, int]]):
    """Build the export now (build() gives the ZIP and how many documents it holds) and keep it."""
    at = now(call)
    blob, count = build()
    export_id = str(uuid.uuid4())
    Document.objects.create(
        customer=call.customer, kind=f"{kind}_export", key=export_id, created=at,
        due_at=at + timedelta(seconds=call.settings.export_ready_seconds), blob=blob,
        data={"fileName": f"{file_stem}-{timezone.localtime(at):%Y%m%d-%H%M%S}.zip", "count": count,
              "filters": {k: iso(v) if isinstance(v, datetime) else v for k, v in filters.items()}},
    )
    return {"exportId": export_id}


def routes(service: str, base: str, kind: str, start_export: Callable) -> None:
    """Register the start (start_export(call)), history and download of one kind's exports below base."""
    operation(service, "POST", base + "/export")(start_export)
    operation(service, "GET", base + "/export/history")(lambda call: history(call, kind))
    operation(service, "GET", base + "/export/{exportId}/download")(
        lambda call, exportId: download(call, kind, exportId))


def history(call: Call, kind: str):
    exports = Document.objects.filter(customer=call.customer, kind=f"{kind}_export", due_at__lte=now(call))
    return [{"exportId": doc.key, "createdDate": iso(doc.created), "fileName": doc.data.get("fileName", "")}
            for doc in exports.order_by("-created", "-pk").defer("blob")]


def download(call: Call, kind: str, export_id: str):
    doc = found(Document.objects.filter(customer=call.customer, kind=f"{kind}_export", key=export_id),
                f"No export with id {export_id}.")
    at = now(call)
    if doc.due_at and doc.due_at > at:
        raise refused("Not Found", f"Export {export_id} is still being prepared; it shows in the export history "
                                   "once it is ready.", 404)
    if at >= doc.created + LIFETIME:
        raise refused("Gone", f"Export {export_id} expired: exported files can be downloaded for 24 hours after "
                              f"they were created ({iso(doc.created)}).", 410)
    response = HttpResponse(bytes(doc.blob), content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{doc.data.get("fileName", "export.zip")}"'
    return response
