"""The incoming list names a reply whose id one of our own replies takes while the mirror reads the list (issue 32,
make chaos): the answers poll, in another worker, reads our approval's id after the mirror read the ids it knows.
The mirror must not add a second reply under that id (the unique id refuses it) nor fail its job: the job succeeds
and the id stays with our reply."""

import pytest
from django.db.models import Q
from django.utils import translation

from backoffice.core import jobs
from backoffice.core.choices import JobStatus, SyncState
from backoffice.dispatch.choices import Answer
from backoffice.dispatch_inbox import mirror as inbox
from backoffice.dispatch_inbox import replies
from backoffice.dispatch_inbox.choices import ReplyWay
from backoffice.dispatch_inbox.models import DispatchReply
from tests.dispatch.inbox_helpers import arrive, delivered_recently, mirrored, quick
from tests.testapp.testing import rq_queue, run_rq_job  # noqa: F401 (fixture)

from .test_inbox import answered

# The database engine matters here (a unique constraint met inside the job's transaction): CI's SQLite pass runs
# these too.
pytestmark = [pytest.mark.django_db, pytest.mark.database]


@pytest.fixture(autouse=True)
def english():
    with translation.override("en"):
        yield


# Transactional: the job runs in autocommit as on a worker, so a unique violation fails its run (the symptom make chaos
# saw) rather than breaking the test's own transaction.
@pytest.mark.django_db(transaction=True)
def test_a_reply_id_taken_by_our_approval_while_the_list_is_read_is_not_added_twice(
        sandbox, sandbox_company, rq_queue, monkeypatch, django_capture_on_commit_callbacks):
    quick(sandbox, sandbox_company)
    arrive(sandbox, sandbox_company)
    [note] = mirrored(sandbox_company)
    answered(replies.answer_request([note], approve=True, prefix="KAB", delivered_at=delivered_recently()))
    ours = note.replies.get()
    # An approval's answer carries no id: ours waits for it, SYNCED, until a poll or the list names it.
    assert (ours.way, ours.answer, ours.sync_state, ours.remote_id) == (
        ReplyWay.APPROVE_REJECT, Answer.ACCEPT, SyncState.SYNCED, "")
    [item] = inbox.inbox_client(sandbox_company).inbox_list(1, 10)["items"]
    reply_id = item["receiptAdviceId"].lower()
    assert reply_id

    taken = []

    def answers_poll_takes_the_id(*args, **kwargs):
        # replies_adopt asks about the note's replies after it read the ids it knows, before it adds one: the
        # answers poll of another worker gives ours its id at this moment.
        if not taken:
            taken.append(DispatchReply.objects.filter(pk=ours.pk, remote_id="").update(remote_id=reply_id))
        return Q(*args, **kwargs)

    monkeypatch.setattr(inbox, "Q", answers_poll_takes_the_id)
    with django_capture_on_commit_callbacks(execute=True):
        run = jobs.enqueue(inbox.inbox_mirror, company=sandbox_company, args=[sandbox_company.pk, True])
    run_rq_job(run)
    assert taken == [1], "the race was not met: replies_adopt no longer reads the note's replies in between"
    run.refresh_from_db()
    assert run.status == JobStatus.SUCCEEDED, run.message
    assert list(DispatchReply.objects.filter(company=sandbox_company, remote_id=reply_id).values_list(
        "pk", flat=True)) == [ours.pk]
    assert note.replies.count() == 1 and not note.replies.filter(way=ReplyWay.PLATFORM).exists()


def test_without_the_race_the_list_gives_our_approval_its_id(sandbox, sandbox_company):
    """The same list read with nobody in between: ours takes the id (no platform reply added)."""
    quick(sandbox, sandbox_company)
    arrive(sandbox, sandbox_company)
    [note] = mirrored(sandbox_company)
    answered(replies.answer_request([note], approve=True, prefix="KAB", delivered_at=delivered_recently()))
    ours = note.replies.get()
    mirrored(sandbox_company, walk=True)
    ours.refresh_from_db()
    assert ours.remote_id and note.replies.count() == 1
