"""The receiving side through a real `manage.py rqworker --with-scheduler`, the test Redis and the sandbox over HTTP
(tests/dispatch/test_worker.py's worker and settings): a partial acceptance answered 500 after it took effect is sent
once and followed until the note is partially accepted; several notes are rejected by one job with what the user
chose."""

import pytest

from backoffice.core.choices import SyncState
from backoffice.core.models import RemoteCall
from backoffice.dispatch_inbox import documents, replies
from backoffice.dispatch_inbox.answers import answer_refusal
from backoffice.dispatch_inbox.models import DispatchReply, IncomingNote
from tests.dispatch.inbox_helpers import arrive, delivered_recently, mirrored
from tests.dispatch.test_worker import ready, wait, worker_env  # noqa: F401 (the worker's settings and company)

from .test_inbox import PARTIAL_PATH, partial

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_a_partial_acceptance_answered_500_after_it_took_effect_is_sent_once(worker, sandbox, ready):  # noqa: F811
    arrive(sandbox, ready)
    [note] = mirrored(ready)
    documents.lines_load(note)
    sandbox.add_fault(path=PARTIAL_PATH, method="POST", error_rate=1, after_apply="error", remaining=1)
    reply = partial(note)
    wait(worker, lambda: DispatchReply.objects.filter(pk=reply.pk, sync_state=SyncState.SYNCED).exists(),
         "the reply found on the platform after the 500")
    wait(worker, lambda: IncomingNote.objects.filter(pk=note.pk, remote_status=90).exists(),
         "the note polled until partially accepted")
    assert RemoteCall.objects.filter(operation="dispatch.reply_partial_accept").count() == 1
    assert answer_refusal(IncomingNote.objects.get(pk=note.pk))


def test_several_notes_are_approved_by_the_job_with_what_the_user_chose(worker, sandbox, ready):  # noqa: F811
    arrive(sandbox, ready, count=2)
    notes = mirrored(ready)
    replies.answer_request(notes, approve=False, prefix="RED", reason="Hasarlı teslim",
                           delivered_at=delivered_recently())
    wait(worker, lambda: IncomingNote.objects.filter(company=ready, pending_action="", remote_status=80).count() == 2,
         "both notes rejected and polled")
    assert set(DispatchReply.objects.values_list("reason", "prefix")) == {("Hasarlı teslim", "RED")}
