"""Invoices through a real `manage.py rqworker --with-scheduler`, the test Redis and the sandbox over HTTP: an
e-archive invoice is issued, its status followed until approved, posted to accounting, and a ZIP of PDFs made
with progress; a save answered 500 after it took effect is found rather than sent twice."""

import zipfile

import pytest

from backoffice.core.choices import JobStatus, SyncState
from backoffice.invoices import documents, services
from backoffice.invoices.choices import InvoiceStatus
from backoffice.invoices.models import Invoice, PdfBundle
from tests.testapp.testing import finished_run, output, wait_for

from .test_posting_mapping import map_customer
from .test_services import SAVE_PATH, new_invoice

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

WORKER_ENV = {"JOB_RETRY_BASE_SECONDS": "1", "JOB_RETRY_MAX_SECONDS": "2", "JOB_MAX_ATTEMPTS": "4",
              "PLATFORM_READ_TIMEOUT": "2", "SYNC_STUCK_AFTER_SECONDS": "60", "INVOICE_POLL_FOLLOW_SECONDS": "1"}


@pytest.fixture(scope="module")
def worker_env():
    return WORKER_ENV


def wait(worker, predicate, message, timeout=60):
    try:
        return wait_for(predicate, timeout=timeout, interval=0.2, message=message)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n--- worker output ---\n{output(worker)[-5000:]}") from None


def test_an_invoice_is_issued_followed_until_approved_and_posted(worker, sandbox, sandbox_company):
    sandbox.configure(ticket_processing_seconds=2)
    invoice = new_invoice(sandbox_company)
    wait(worker, lambda: Invoice.objects.filter(pk=invoice.pk, sync_state=SyncState.SYNCED).exists(), "the save")
    wait(worker, lambda: Invoice.objects.filter(pk=invoice.pk, remote_status=InvoiceStatus.APPROVED).exists(),
         "the status polled until approved")
    invoice.refresh_from_db()
    map_customer(invoice.current_account)  # posting needs the customer's mapping (document 3, 2.6)
    services.posting_request("post", [invoice])
    wait(worker, lambda: Invoice.objects.filter(pk=invoice.pk, record_status=1, pending_action="").exists(),
         "the posting")


def test_a_save_answered_500_after_it_took_effect_is_sent_once(worker, sandbox, sandbox_company):
    sandbox.add_fault(path=SAVE_PATH, method="POST", error_rate=1, after_apply="error", remaining=1)
    invoice = new_invoice(sandbox_company)
    wait(worker, lambda: Invoice.objects.filter(pk=invoice.pk, sync_state=SyncState.SYNCED).exists(),
         "the invoice to be found on the platform after the 500")
    assert len(services.accounting(sandbox_company).invoices(True)["items"]) == 1
    run = finished_run(name="invoice_push")
    assert run.status == JobStatus.SUCCEEDED and run.attempts >= 2


def test_a_pdf_zip_is_made_in_the_background_with_progress(worker, sandbox_company):
    invoices = [new_invoice(sandbox_company) for _ in range(4)]
    wait(worker, lambda: Invoice.objects.filter(pk__in=[i.pk for i in invoices], sync_state=SyncState.SYNCED).count()
         == 4, "the invoices to be saved")
    bundle = documents.pdf_bundle_request(sandbox_company, None, Invoice.objects.filter(pk__in=[i.pk for i in invoices]))
    wait(worker, lambda: bool(PdfBundle.objects.get(pk=bundle.pk).file), "the ZIP")
    bundle.refresh_from_db()
    assert bundle.fetched == 4
    with zipfile.ZipFile(bundle.file.open("rb")) as archive:
        assert len(archive.namelist()) == 4
    run = finished_run(name="pdf_bundle")
    assert run.status == JobStatus.SUCCEEDED and run.progress == 100
