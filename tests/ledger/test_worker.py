"""The e-ledger through a real `manage.py rqworker --with-scheduler`, the test Redis and the sandbox over HTTP: a
journal checked by the worker, uploaded and its period followed until ready with its parts and book entries; an
upload answered 500 after the platform stored it ends with one period, not two; the certificates sent, failed
at the tax authority once, sent again and approved. The sandbox's period moves a step a second."""

from datetime import date

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from backoffice.core import actions
from backoffice.core.choices import JobStatus, SyncState
from backoffice.core.models import JobRun
from backoffice.ledger import periods, services
from backoffice.ledger.choices import CheckState, GeneralBookType, PeriodStatus
from backoffice.ledger.models import BookEntry, Journal, Part, Period
from tests.testapp.testing import finished_run, output, wait_for

from .builders import journal_text, month_end

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

WORKER_ENV = {"LEDGER_FOLLOW_SECONDS": "1", "JOB_RETRY_BASE_SECONDS": "1", "JOB_RETRY_MAX_SECONDS": "2",
              "PLATFORM_READ_TIMEOUT": "5"}
UPLOAD_PATH = "/ledger/v1/period"
MARCH = date(2025, 3, 1)
ENTRIES = 4


@pytest.fixture(scope="module")
def media_root(tmp_path_factory):
    return tmp_path_factory.mktemp("ledger-media")


@pytest.fixture(scope="module")
def worker_env(media_root):
    # The worker reads the journal this process keeps: both use one media directory.
    return {**WORKER_ENV, "DJANGO_MEDIA_ROOT": str(media_root)}


@pytest.fixture(autouse=True)
def ledger_media(settings, media_root):
    """Overrides the package's per-test media directory: the worker, started once per module, must see it."""
    settings.MEDIA_ROOT = media_root


@pytest.fixture
def ledger_company(sandbox, sandbox_company):
    """A sandbox customer whose periods move a step a second (uploaded, converting, checked; sent, answered)."""
    sandbox.control("POST", "ledger/settings", {"customer": str(sandbox_company.customer_unique_id),
                                                "step_seconds": 1})
    return sandbox_company


def wait(worker, predicate, message, timeout=60):
    try:
        return wait_for(predicate, timeout=timeout, interval=0.2, message=message)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n--- worker output ---\n{output(worker)[-5000:]}") from None


def new_journal(company) -> Journal:
    text = journal_text(MARCH, entries=ENTRIES)
    return services.journal_create(company=company, user=None, source=SimpleUploadedFile("yevmiye.txt", text.encode()),
                                   start=MARCH, end=month_end(MARCH), split_size=10, time_stamp=False,
                                   without_tax_detail=False)


def checked_by_the_worker(worker, company) -> Journal:
    journal = new_journal(company)
    wait(worker, lambda: Journal.objects.filter(pk=journal.pk).exclude(
        check_state__in=[CheckState.WAITING, CheckState.CHECKING]).exists(), "the worker's check")
    journal.refresh_from_db()
    assert journal.check_state == CheckState.PASSED, list(journal.findings.values_list("line", "rule", "found"))
    return journal


def period_of(journal) -> Period | None:
    return Period.objects.filter(journals=journal).first()


def ready(worker, journal) -> Period:
    """Wait for the journal to be on the platform and its period to be followed until ready, parts read."""
    wait(worker, lambda: Journal.objects.filter(pk=journal.pk, sync_state=SyncState.SYNCED).exists(), "the upload")
    wait(worker, lambda: Period.objects.filter(journals=journal, remote_status=PeriodStatus.READY,
                                               parts_read_at__isnull=False).exists(),
         "the period to be followed until ready, its parts read")
    # By the follow job, every second: none of its runs failed on the way (the minute's cron did not stand in).
    follows = JobRun.objects.filter(name="periods_follow", company=journal.company_id)
    assert not follows.filter(status=JobStatus.FAILED).exists(), list(follows.values_list("status", "message"))
    return period_of(journal)


def test_a_journal_is_checked_uploaded_and_followed_until_ready(worker, sandbox, ledger_company):
    journal = checked_by_the_worker(worker, ledger_company)
    assert (journal.line_count, journal.entry_count, journal.findings_count) == (1 + 3 * ENTRIES, ENTRIES, 0)
    assert journal.archive and journal.check_progress == 100
    assert finished_run(name="journal_check", company=ledger_company).status == JobStatus.SUCCEEDED

    services.journal_upload_request(journal)
    period = ready(worker, journal)
    journal.refresh_from_db()
    assert journal.remote_id == period.remote_id and journal.sync_state == SyncState.SYNCED
    assert (period.fiscal_year_start, period.fiscal_year_end, period.split_size) == (MARCH, month_end(MARCH), 10)
    assert period.task_percent == 100 and not period.task_message
    [part] = Part.objects.filter(period=period)
    assert (part.entry_number_start, part.entry_number_end, part.line_number_start, part.line_number_end) == (
        1, ENTRIES, 1, 2 * ENTRIES)
    assert str(part.debit) == str(part.credit) == "5000.00"
    assert sorted(BookEntry.objects.filter(part=part).values_list("generalbook_type", flat=True)) == [
        GeneralBookType.JOURNAL, GeneralBookType.LEDGER]
    # The follow job ended once nothing was left to follow (it does not poll a ready period forever).
    wait(worker, lambda: not JobRun.objects.filter(name="periods_follow", company=ledger_company).exclude(
        status__in=[JobStatus.SUCCEEDED, JobStatus.FAILED]).exists(), "the follow job to end")
    assert JobRun.objects.filter(name="periods_follow", company=ledger_company,
                                 status=JobStatus.SUCCEEDED).exists()


def test_an_upload_answered_500_after_the_platform_stored_it_is_uploaded_once(worker, sandbox, ledger_company):
    journal = checked_by_the_worker(worker, ledger_company)
    sandbox.add_fault(path=UPLOAD_PATH, method="POST", error_rate=1, after_apply="error", remaining=1)
    services.journal_upload_request(journal)
    period = ready(worker, journal)
    items = periods.ledger_client(ledger_company).periods()["items"]
    assert [str(item["Id"]) for item in items] == [period.remote_id]
    run = finished_run(name="journal_upload", company=ledger_company)
    assert run.status == JobStatus.SUCCEEDED and run.attempts >= 2, (run.status, run.attempts, run.message)


def test_certificates_failed_once_are_sent_again_and_approved(worker, sandbox, ledger_company):
    journal = checked_by_the_worker(worker, ledger_company)
    services.journal_upload_request(journal)
    period = ready(worker, journal)
    sandbox.control("POST", "ledger/settings", {"customer": str(ledger_company.customer_unique_id),
                                                "certificates": "fail_once"})

    def settled(status):
        return Period.objects.filter(pk=period.pk, remote_status=status, pending_action="").exists()

    actions.action_request(Period, "certificates", [period])
    wait(worker, lambda: settled(PeriodStatus.SUBMISSION_FAILED), "the submission to be sent and to fail")
    period.refresh_from_db()
    assert period.task_message and not period.last_error  # the tax authority's answer, not a failed call

    actions.action_request(Period, "certificates", [period])  # isTryAgain: true (the sandbox refuses it otherwise)
    wait(worker, lambda: settled(PeriodStatus.APPROVED), "the submission sent again to be approved")
    action = services.PERIOD_ACTIONS.by_name["certificates"]
    runs = JobRun.objects.filter(company=ledger_company, name=actions.job_name(Period, action))
    assert runs.count() == 2 and not runs.exclude(status=JobStatus.SUCCEEDED).exists()
    items = periods.ledger_client(ledger_company).periods()["items"]
    assert [item["Status"] for item in items] == [PeriodStatus.APPROVED]
