"""E-ledger services: the rules of an upload's range, a journal's life from the file to the platform's period,
the certificate submission and the previews (document 3, 2.8, 3.2, 4.4; the facts file's journal rules).
What the platform's period codes mean is periods.py's; the check of a journal is checking.py's, the periods
brought here mirror.py's.
"""

import calendar
from datetime import date, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import formats, translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from backoffice.core import actions, jobs, sync
from backoffice.core.choices import SyncState
from backoffice.core.payloads import integer
from backoffice.remote.errors import LOCAL, RemoteError
from backoffice.remote.ledger import UPLOAD_PART

from . import checking, mirror
from .choices import CheckState, GeneralBookType, PeriodStatus, PreviewType, SourceKind
from .models import BookEntry, Journal, Period
from .periods import (approved_statuses, failed_submission_statuses, ledger_client, ready_statuses,
                      refused_statuses, status_label)

MAX_SPLIT_SIZE = 150  # megabytes (document 3, 4.4 and 8)
MAX_ZIP_BYTES = 150 * 1024 * 1024


class LedgerError(actions.ActionRefused):
    """A rule of the e-ledger the request breaks; the message is for the user (field: the form's field)."""


def _day(value: date) -> str:
    return formats.date_format(value, "SHORT_DATE_FORMAT")


def _month(value: date) -> str:
    return formats.date_format(value, "YEAR_MONTH_FORMAT")


# --- the range of an upload -----------------------------------------------------------------------------

def range_shape_refusal(start: date, end: date) -> tuple[str, str] | None:
    """(field, message) when StartDate..EndDate is not whole months of one year (document 3, 4.4: the ledger is
    uploaded month by month in the tax authority's calendar)."""
    for name, value in (("start_date", start), ("end_date", end)):
        if not 2000 <= value.year <= 2099:
            return name, _("Choose a date between 2000 and 2099.")
    if end < start:
        return "end_date", _("The end date is before the start date.")
    if start.day != 1:
        return "start_date", _("A ledger period starts on the first day of a month (%(day)s).") % {
            "day": _day(start.replace(day=1))}
    last = calendar.monthrange(end.year, end.month)[1]
    if end.day != last:
        return "end_date", _("A ledger period ends on the last day of a month (%(day)s).") % {
            "day": _day(end.replace(day=last))}
    if start.year != end.year:
        return "end_date", _("A ledger period stays within one year; upload December and January apart.")
    return None


def range_refusal(company, start: date, end: date, *, journal=None) -> tuple[str, str] | None:
    """(field, message) when the platform's periods (as mirrored) do not allow this range: a range already
    approved or uploaded, or a month before it not uploaded yet (months go in order; facts file)."""
    shape = range_shape_refusal(start, end)
    if shape:
        return shape
    periods = Period.objects.filter(company=company).exclude(remote_id="")
    overlapping = periods.filter(fiscal_year_start__lte=end, fiscal_year_end__gte=start).exclude(
        remote_status__in=refused_statuses()).order_by("fiscal_year_start").first()
    if overlapping is not None:
        if overlapping.remote_status in approved_statuses():
            return "start_date", _("The tax authority has already approved the period %(period)s; an approved range "
                                   "cannot be uploaded again.") % {"period": overlapping}
        return "start_date", _("The period %(period)s is already on the platform (%(status)s); a range is uploaded "
                               "again only after the platform refused it.") % {
            "period": overlapping, "status": status_label(overlapping.remote_status)}
    uploading = Journal.objects.filter(company=company, start_date__lte=end, end_date__gte=start,
                                       sync_state__in=[SyncState.QUEUED, SyncState.SENDING])
    if journal is not None and journal.pk:
        uploading = uploading.exclude(pk=journal.pk)
    if uploading.exists():
        return "start_date", _("A journal of this range is being uploaded now; wait for it to finish.")
    # Months in order: once any earlier month is on the platform (even refused), the month just before must be
    # there and not refused; and no later month may be there already.
    before = start - timedelta(days=1)
    if periods.filter(fiscal_year_end__lt=start).exists() and not periods.filter(
            fiscal_year_start__lte=before, fiscal_year_end__gte=before).exclude(
            remote_status__in=refused_statuses()).exists():
        return "start_date", _("Months are uploaded in order: upload %(month)s first.") % {"month": _month(before)}
    later = periods.filter(fiscal_year_start__gt=end).exclude(remote_status__in=refused_statuses()).order_by(
        "fiscal_year_start").first()
    if later is not None:
        return "start_date", _("Months are uploaded in order, and the period %(period)s is already on the "
                               "platform.") % {"period": later}
    return None


# --- a journal: created, checked (checking.py), uploaded -------------------------------------------------

def journal_create(*, company, user, source, start: date, end: date, split_size: int, time_stamp: bool,
                   without_tax_detail: bool, y_line: dict | None = None) -> Journal:
    """Keep the uploaded file and have it checked in the background. y_line: the Y line's fields of an Excel
    journal (fiscal_year_start, fiscal_year_end, batch_id, entity_identifier), which the sheet does not hold."""
    refusal = range_shape_refusal(start, end)
    if refusal:
        raise LedgerError(refusal[1], field=refusal[0])
    if not 1 <= int(split_size) <= MAX_SPLIT_SIZE:
        raise LedgerError(_("The part size is 1 to %(max)s MB.") % {"max": MAX_SPLIT_SIZE}, field="split_size")
    name = source.name.rsplit("/", 1)[-1][:255]
    kind = SourceKind.XLSX if name.lower().endswith(".xlsx") else SourceKind.TEXT
    y_values = {key: value.isoformat() if isinstance(value, date) else str(value)
                for key, value in (y_line or {}).items()}
    with transaction.atomic():
        journal = Journal(company=company, created_by=user, start_date=start, end_date=end, split_size=split_size,
                          time_stamp=time_stamp, without_tax_detail=without_tax_detail, source_kind=kind,
                          source_name=name, size=source.size or 0, y_line=y_values,
                          language=translation.get_language() or "")
        journal.source.save(name, source, save=False)
        journal.save()
        checking.check_request(journal)
    return journal


def upload_refusal(journal) -> str:
    """Why this journal cannot be uploaded now ("" when it can)."""
    if journal.check_state != CheckState.PASSED:
        return _("Only a journal our check found no error in is uploaded; fix the file and upload it again here.")
    if journal.sync_state != SyncState.LOCAL:
        return _("This journal has already been sent to the platform.") if journal.sync_state == SyncState.SYNCED \
            else _("This journal is on its way to the platform.") if journal.is_busy else \
            _("The upload failed: %(error)s Upload the file again here to try once more.") % {
                "error": journal.last_error}
    if not journal.archive or not journal.archive.storage.exists(journal.archive.name):
        return _("The journal's ZIP is missing; upload the file again.")
    if journal.archive.size > MAX_ZIP_BYTES:
        return _("The ZIP is %(size)s MB; the platform takes at most 150 MB. Upload the months apart.") % {
            "size": journal.archive.size // (1024 * 1024)}
    refusal = range_refusal(journal.company, journal.start_date, journal.end_date, journal=journal)
    return refusal[1] if refusal else ""


def journal_upload_request(journal) -> "jobs.JobRun":
    """Send a checked journal to the platform (the push job zips nothing: the ZIP was made by the check)."""
    refusal = upload_refusal(journal)
    if refusal:
        raise LedgerError(refusal)
    try:
        return sync.record_queue(journal)
    except sync.StateError as exc:
        raise LedgerError(str(exc)) from None


def _refused_here(message: str) -> RemoteError:
    """A rule of ours the upload breaks, found by the push: the journal fails with it, nothing was sent."""
    return RemoteError(message, permanent=True, source=LOCAL)


def journal_send(journal) -> dict:
    """The upload (record_push's send): the platform's periods read again first, the range rules checked on
    them (the mirror may be old), the periods of this range it has noted (so that a lost answer is found
    again among the others), then the ZIP streamed."""
    mirror.periods_mirror(journal.company)
    if journal.known_periods is not None:  # an earlier attempt's upload may have been stored since it was asked for
        found = journal_reconcile(journal)
        if found:
            return found
    refusal = range_refusal(journal.company, journal.start_date, journal.end_date, journal=journal)
    if refusal:
        raise _refused_here(refusal[1])
    known = list(Period.objects.filter(company=journal.company, fiscal_year_start=journal.start_date,
                                       fiscal_year_end=journal.end_date).exclude(remote_id="")
                 .values_list("remote_id", flat=True))
    if journal.known_periods is None:  # noted once, before the first attempt: later ones may be ours
        Journal.objects.filter(pk=journal.pk).update(known_periods=known)
    try:
        with journal.archive.open("rb") as archive:
            answer = ledger_client(journal.company).upload(
                start=journal.start_date.isoformat(), end=journal.end_date.isoformat(), split_size=journal.split_size,
                time_stamp=journal.time_stamp, without_tax_detail=journal.without_tax_detail, archive=archive,
                filename=journal.file_name("zip"), part=getattr(settings, "LEDGER_UPLOAD_PART", UPLOAD_PART))
    except RemoteError as exc:
        # "Already uploaded" may be our own earlier attempt, stored by the platform after we looked for it.
        if exc.permanent and getattr(exc, "source", "") != LOCAL and journal.known_periods is not None:
            journal.refresh_from_db(fields=["known_periods"])
            found = journal_reconcile(journal)
            if found:
                return found
        raise
    return _uploaded(journal, answer)


def journal_reconcile(journal) -> dict | None:
    """The period an earlier upload of this journal made, when the platform has one the journal had not
    seen before its first attempt and no other journal claims."""
    if journal.known_periods is None:  # the first attempt never reached the upload call
        return None
    claimed = Journal.objects.filter(company=journal.company).exclude(pk=journal.pk).exclude(remote_id="")
    exclude = {*journal.known_periods, *claimed.values_list("remote_id", flat=True)}
    found = ledger_client(journal.company).find_period(journal.start_date.isoformat(), journal.end_date.isoformat(),
                                                       exclude=exclude)
    return _uploaded(journal, found) if found else None


def _uploaded(journal, item) -> dict:
    period = mirror.period_store(journal.company, item)
    mirror.follow_request(journal.company_id)
    return {"remote_id": period.remote_id, "period": period}


@jobs.job(gettext_lazy("Upload a journal to the platform"), name="journal_upload")
def journal_push(pk):
    return sync.record_push(Journal, pk, send=journal_send, reconcile=journal_reconcile)


# --- certificates: a record action on a period -----------------------------------------------------------

def _send_certificates(client, targets):
    """isTryAgain from the platform's own status read now (our mirror may be older than a failed submission);
    a period the platform shows sent or approved already is not sent again."""
    with_parameters = bool(getattr(settings, "LEDGER_CERTIFICATES_WITH_PARAMETERS", True))
    now = {str(answer["id"]): answer.get("status") for answer in client.statuses(targets) or []}
    for target in targets:
        status = integer(now.get(str(target["periodId"])))
        if status in (PeriodStatus.SENT, *approved_statuses()):
            continue
        is_try_again = status in failed_submission_statuses() if status is not None else target["isTryAgain"]
        client.send_certificates(target["periodId"], is_try_again, with_parameters=with_parameters)


def _follow_after(periods):
    if periods:
        mirror.follow_request(periods[0].company_id)


PERIOD_ACTIONS = actions.ActionSet(
    client=lambda company, model: ledger_client(company), number="range_label", error=LedgerError,
    empty=gettext_lazy("Select at least one period."), status_label=status_label,
    status_operation=lambda model: "ledger.list_periods",
    # isTryAgain: true for a period whose earlier submission failed (document 3, 4.4), read from its status as
    # the platform last gave it (core.actions reads the statuses again before anything is sent again).
    target=lambda period: {"periodId": period.remote_id,
                           "isTryAgain": period.remote_status in failed_submission_statuses()},
    actions=[actions.RecordAction(
        "certificates", gettext_lazy("Send the certificates to the tax authority"),
        button=gettext_lazy("Send the certificates to the tax authority"), call=_send_certificates,
        leads_to=PeriodStatus.SENT, sources=(*ready_statuses(), *failed_submission_statuses()),
        reached=(PeriodStatus.SENT, *approved_statuses()), icon="send-check", undoable=False, refresh=True,
        after=_follow_after,
        confirm=gettext_lazy("The journal and ledger certificates of these periods go to the tax authority. "
                             "A submission cannot be taken back."),
        refused=gettext_lazy("The certificates are sent only for a period the platform has converted and "
                             "checked, or whose submission failed: %(numbers)s"),
        done=lambda count: _("Certificates sent for %(count)s period(s).") % {"count": count})])


# --- previews ------------------------------------------------------------------------------------------

def preview_book(part, preview_type: int) -> BookEntry | None:
    """The book entry a preview is asked for: the general ledger's for its preview, the journal's otherwise."""
    books = {book.generalbook_type: book for book in part.book_entries.all()}
    if preview_type == PreviewType.LEDGER and GeneralBookType.LEDGER in books:
        return books[GeneralBookType.LEDGER]
    return books.get(GeneralBookType.JOURNAL) or next(iter(books.values()), None)


def preview_refusal(part, preview_type: int) -> str:
    if preview_type == PreviewType.APPROVED_CERTIFICATE and part.period.remote_status not in approved_statuses():
        return _("The tax authority's approved certificate exists once the period is approved.")
    if preview_book(part, preview_type) is None:
        return _("The platform has listed no book of this part yet; read the period again.")
    return ""


def preview_fetch(part, preview_type: int) -> tuple[bytes, str]:
    """The preview as the platform gives it, asked for now (the user waits for it)."""
    refusal = preview_refusal(part, preview_type)
    if refusal:
        raise LedgerError(refusal)
    book = preview_book(part, preview_type)
    return ledger_client(part.company, interactive=True).preview(book.remote_id, preview_type)


# --- what core runs for this domain (read when the app is ready: core.domains) --------------------------------------
sync.register_pushable(Journal, journal_push)
actions.register_actions(Period, PERIOD_ACTIONS)
