"""Issue 33 through a real `manage.py rqworker --with-scheduler`, the test Redis and the sandbox over HTTP
(tests/invoices/test_worker.py's worker and settings): a draft made from a dispatch note is sent, polled until
approved, and the note then names the invoice by the number the platform gave; cancelled on the platform, the invoice
frees the note with the next list reading; the daily checks mark what runs out tomorrow (our notes to invoice, the
incoming notes to answer); an answer to a commercial invoice is sent by the job and followed until delivered."""

import pytest

from datetime import timedelta

from django.utils import timezone

from backoffice.core import jobs
from backoffice.core.choices import SyncState
from backoffice.dispatch import invoicing
from backoffice.dispatch.models import DispatchNote
from backoffice.dispatch_inbox import watch
from backoffice.dispatch_inbox.models import IncomingNote
from backoffice.invoices import answers, from_dispatch, mirror, services
from backoffice.invoices.choices import Answer, InvoiceStatus, ResponseStatus
from backoffice.invoices.models import Invoice

from .test_answers import arrived, quick
from .test_from_dispatch import note
from .test_worker import wait, worker_env  # noqa: F401 (the worker's settings)

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_the_note_follows_its_invoice_from_draft_to_number_to_cancellation(worker, sandbox, sandbox_company):
    sandbox.configure(ticket_processing_seconds=1)
    made = note(sandbox_company, "IRS2026000000001", days_ago=2)
    draft = from_dispatch.invoice_from_notes([made])
    Invoice.objects.filter(pk=draft.pk).update(prefix="ABC")
    services.invoice_send([Invoice.objects.get(pk=draft.pk)])
    wait(worker, lambda: Invoice.objects.filter(pk=draft.pk, remote_status=InvoiceStatus.APPROVED).exists(),
         "the invoice sent and polled until approved")
    invoice = Invoice.objects.get(pk=draft.pk)
    assert invoice.invoice_number.startswith("ABC") and invoice.sync_state == SyncState.SYNCED
    wait(worker, lambda: DispatchNote.objects.get(pk=made.pk).invoiced_as == invoice.invoice_number,
         "the note named by the invoice's number")
    sandbox.control("POST", "invoices/status", {"customer": str(sandbox_company.customer_unique_id),
                                                "ettn": invoice.remote_id, "status": 100})
    mirror.mirror_request(sandbox_company)
    wait(worker, lambda: DispatchNote.objects.get(pk=made.pk).invoiced_as == "",
         "the note freed by the cancelled invoice")
    assert invoicing.days_left(DispatchNote.objects.get(pk=made.pk)) == 5


def test_the_daily_check_runs_on_the_worker(worker, sandbox_company):
    late = note(sandbox_company, "IRS2026000000002", days_ago=6)
    early = note(sandbox_company, "IRS2026000000003", days_ago=1)
    run = jobs.enqueue(invoicing.deadlines_mark)
    wait(worker, lambda: DispatchNote.objects.filter(pk=late.pk, deadline_marked_on__isnull=False).exists(),
         "the note whose 7 days run out tomorrow marked")
    assert DispatchNote.objects.get(pk=early.pk).deadline_marked_on is None
    assert run.name == "deadlines_mark"


def test_the_incoming_notes_daily_check_runs_on_the_worker(worker, sandbox_company):
    running_out = IncomingNote.objects.create(
        company=sandbox_company, remote_id="in-1", despatch_number="GLN2026000000001", remote_status=70,
        sync_state=SyncState.SYNCED, received_at=timezone.now() - timedelta(days=6, hours=1))
    fresh = IncomingNote.objects.create(
        company=sandbox_company, remote_id="in-2", despatch_number="GLN2026000000002", remote_status=70,
        sync_state=SyncState.SYNCED, received_at=timezone.now())
    jobs.enqueue(watch.answer_deadlines_mark)
    wait(worker, lambda: IncomingNote.objects.filter(pk=running_out.pk, deadline_marked_on__isnull=False).exists(),
         "the incoming note whose 7 days to answer run out tomorrow marked")
    assert IncomingNote.objects.get(pk=fresh.pk).deadline_marked_on is None


def test_an_answer_is_sent_by_the_job_and_followed_until_delivered(worker, sandbox, sandbox_company):
    quick(sandbox, sandbox_company)
    invoice = arrived(sandbox, sandbox_company)
    answers.answer_request([invoice], accept=False, reason="Eksik teslim")
    wait(worker, lambda: Invoice.objects.filter(pk=invoice.pk, response_status=ResponseStatus.DELIVERED).exists(),
         "the rejection sent by the job and its answer followed until delivered")
    done = Invoice.objects.get(pk=invoice.pk)
    assert (done.response_answer, done.response_reason, done.pending_action) == (Answer.REJECT, "Eksik teslim", "")
    assert done.remote_status in (InvoiceStatus.DECLINING, InvoiceStatus.DECLINED)
