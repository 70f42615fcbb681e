"""The receiving side through the sandbox over HTTP: incoming notes mirrored with their lines and documents, every
way of answering (approve or reject several at once, partial acceptance, a ReceiptAdvice file, drafts and the
replies' status changes) and every rule with bad input, each answer that may have reached the platform answered 500
after it took effect and not sent twice, the replies to our own notes linked with their lines, and the incoming
Excel exports. The job bodies run here; a real worker runs them in test_worker.py."""

import time
import uuid
from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone, translation

from backoffice.core import actions, polling
from backoffice.core.choices import SyncState
from backoffice.core.models import RemoteCall
from backoffice.dispatch import api, mirror, services, taxpayers
from backoffice.dispatch.choices import Answer, DispatchStatus, DocumentKind, ReplyStatus
from backoffice.dispatch.models import ReceivedReply
from backoffice.dispatch_inbox import documents, polls, replies
from backoffice.dispatch_inbox import mirror as inbox
from backoffice.dispatch_inbox.answers import UblReplyRefused, answer_refusal, partial_save, ubl_reply
from backoffice.dispatch_inbox.choices import ReplyWay
from backoffice.dispatch_inbox.families import INCOMING_EXPORTS
from backoffice.dispatch_inbox.models import DispatchReply, IncomingNote
from backoffice.remote.errors import RemoteError
from tests.dispatch.inbox_helpers import arrive, customer, delivered_recently, mirrored, quick, receipt_for, sandbox_vkn
from tests.dispatch.test_services import new_note, pushed
from tests.testapp.testing import wait_for

# The database engine matters here (the inbox mirror's bulk upserts): CI's SQLite pass runs these too.
pytestmark = [pytest.mark.django_db, pytest.mark.database]

REPLY_PATH = "/dispatch/v1/outboxreceiptadvice"
PARTIAL_PATH = REPLY_PATH + "/partialaccept"
APPROVE_PATH = REPLY_PATH + "/approvereject"


@pytest.fixture(autouse=True)
def english():
    with translation.override("en"):
        yield


@pytest.fixture
def note(sandbox, sandbox_company):
    """One incoming note awaiting an answer, mirrored with its three lines read."""
    quick(sandbox, sandbox_company)
    arrive(sandbox, sandbox_company)
    [incoming] = mirrored(sandbox_company)
    documents.lines_load(incoming)
    return incoming


def partial(note, answers=None, **overrides):
    values = {"answers": answers if answers is not None else [
        {"line_id": "1", "accepted": Decimal(40), "rejected": 0, "reason": ""},
        {"line_id": "2", "accepted": Decimal(12), "rejected": 0, "reason": ""},
        {"line_id": "3", "accepted": Decimal(450), "rejected": Decimal(50), "reason": "Kırık tuğla"}],
        "delivered_at": delivered_recently(), "contact": "Ayşe Yılmaz", "prefix": "IRY"}
    values.update(overrides)
    return partial_save(note, **values)


def answered(run):
    """The approve / reject job as the worker runs it: its arguments carry what the user chose."""
    return actions.action_job(*run.job_args["args"])


def settle(company, times=3):
    """Both polls of the receiving side, as their jobs run them: the notes being answered (our replies' ids read
    first), then our replies."""
    for _ in range(times):
        polling.run(polls.ANSWERS_POLL, company)
        polling.run(polls.REPLIES_POLL, company)


# --- the incoming list -------------------------------------------------------------------------------------------
def test_incoming_notes_are_mirrored_with_their_lines_and_days_left(sandbox, sandbox_company):
    arrive(sandbox, sandbox_company, count=3)
    notes = mirrored(sandbox_company)
    assert len(notes) == 3 and all(n.remote_status == DispatchStatus.AWAITING_APPROVAL for n in notes)
    first = notes[0]
    assert first.despatch_number and first.sender_identifier == "4840000006" and first.received_at
    assert inbox.days_left(first) == 7
    lines = documents.lines_load(first)
    assert [(line.line_id, line.product_name, line.quantity, line.unit_code) for line in lines] == [
        ("1", "Çimento 50 kg", Decimal(40), "C62"), ("2", "Kum", Decimal(12), "TNE"), ("3", "Tuğla", Decimal(500), "C62")]
    calls = RemoteCall.objects.count()
    assert len(documents.lines_load(first)) == 3 and RemoteCall.objects.count() == calls  # read once
    assert mirrored(sandbox_company) == notes  # read again: nothing new


def test_days_left_follow_the_setting(settings, sandbox_company):
    settings.DISPATCH_ANSWER_DAYS = 3
    note = IncomingNote(company=sandbox_company, remote_status=70, received_at=timezone.now() - timedelta(days=5))
    assert inbox.days_left(note) == -2
    note.remote_status = DispatchStatus.APPROVED
    assert inbox.days_left(note) is None


def test_the_list_query_never_asks_for_an_end_later_than_now(sandbox, sandbox_company):
    assert api.list_end() < timezone.now()
    arrive(sandbox, sandbox_company)
    assert len(mirrored(sandbox_company)) == 1  # the mirror's own query passes
    # the platform refuses an endDate later than now (document 3, 4.5): the sandbox's check stands for it
    client = inbox.inbox_client(sandbox_company)
    with pytest.raises(RemoteError) as refused:
        client.inbox_list(1, 10, endDate=api.platform_time(timezone.now() + timedelta(hours=1)))
    assert "endDate" in str(refused.value)


def test_an_answer_given_elsewhere_is_read_on_the_daily_walk(sandbox, sandbox_company):
    quick(sandbox, sandbox_company)
    arrive(sandbox, sandbox_company)
    [note] = mirrored(sandbox_company)
    # answered on the platform's portal: the same call, not made by us
    inbox.inbox_client(sandbox_company).approve_reject([note.remote_id], approve=True, prefix="POR")
    [note] = mirrored(sandbox_company, walk=True)
    assert note.remote_status != DispatchStatus.AWAITING_APPROVAL
    reply = note.replies.get()
    assert reply.way == ReplyWay.PLATFORM and reply.remote_id and reply.receipt_number.startswith("POR")
    settle(sandbox_company)
    reply.refresh_from_db()
    assert reply.remote_status == ReplyStatus.APPROVED


# --- partial acceptance --------------------------------------------------------------------------------------------
def test_a_partial_acceptance_is_sent_and_followed_until_the_note_is_partially_accepted(note):
    reply = partial(note, user=None)
    assert reply.sync_state == SyncState.QUEUED and reply.answer == Answer.PARTIAL
    assert replies.reply_push(reply.pk) == "Sent to the platform."
    reply.refresh_from_db()
    note.refresh_from_db()
    assert reply.remote_id and reply.receipt_number.startswith(f"IRY{timezone.localdate().year}")
    assert note.remote_status == DispatchStatus.PARTIALLY_ACCEPTING
    settle(note.company)
    reply.refresh_from_db()
    note.refresh_from_db()
    assert reply.remote_status == ReplyStatus.APPROVED and note.remote_status == DispatchStatus.PARTIALLY_ACCEPTED
    assert [(line.line_id, line.accepted, line.rejected, line.reason) for line in reply.lines.all()] == [
        ("1", 40, 0, ""), ("2", 12, 0, ""), ("3", 450, 50, "Kırık tuğla")]


def test_a_partial_acceptance_answered_500_after_it_took_effect_is_not_sent_twice(sandbox, note):
    reply = partial(note)
    sandbox.add_fault(path=PARTIAL_PATH, method="POST", error_rate=1, after_apply="error", remaining=1)
    with pytest.raises(RemoteError):
        replies.reply_push(reply.pk)
    reply.refresh_from_db()
    assert reply.sync_state == SyncState.QUEUED
    assert replies.reply_push(reply.pk) == "Found on the platform; not sent again."
    reply.refresh_from_db()
    assert reply.sync_state == SyncState.SYNCED and reply.remote_id and reply.receipt_number
    assert RemoteCall.objects.filter(operation="dispatch.reply_partial_accept").count() == 1
    page = inbox.inbox_client(note.company).inbox_list(1, 10, despatchNumber=note.despatch_number)
    assert page["items"][0]["receiptAdviceId"].lower() == reply.remote_id


@pytest.mark.parametrize("answers, overrides, field, message", [
    ([{"line_id": "1", "accepted": 41, "rejected": 0, "reason": ""}], {}, "lines",
     "1: Accepted and rejected together (41) exceed the delivered quantity (40)."),
    ([{"line_id": "3", "accepted": 400, "rejected": 101, "reason": "Kırık"}], {}, "lines",
     "3: Accepted and rejected together (501) exceed the delivered quantity (500)."),
    ([{"line_id": "2", "accepted": 10, "rejected": 2, "reason": "  "}], {}, "lines",
     "2: Give the reason for the rejected quantity."),
    ([{"line_id": "2", "accepted": -1, "rejected": 0, "reason": ""}], {}, "lines", "2: Quantities cannot be negative."),
    ([{"line_id": "9", "accepted": 1, "rejected": 0, "reason": ""}], {}, "lines", "9: The note has no line 9."),
    (None, {"delivered_at": timezone.now() + timedelta(days=1)}, "delivered_at",
     "The delivery time cannot be in the future."),
    (None, {"delivered_at": None}, "delivered_at", "Enter when the goods were delivered."),
    (None, {"contact": " "}, "delivery_contact", "Enter who received the goods."),
    (None, {"prefix": "ir"}, "prefix", "The prefix of the reply number is three capital letters or digits, e.g. IRY."),
])
def test_a_partial_acceptance_with_bad_input_is_refused_on_its_field(note, answers, overrides, field, message):
    with pytest.raises(replies.DispatchError) as refused:
        partial(note, answers, **overrides)
    assert refused.value.field == field and message in str(refused.value)
    assert not DispatchReply.objects.exists()  # nothing half-saved


def test_a_delivery_before_the_note_was_issued_is_refused(note):
    with pytest.raises(replies.DispatchError) as refused:
        partial(note, delivered_at=timezone.make_aware(timezone.datetime(2020, 1, 1, 12)))
    assert refused.value.field == "delivered_at" and "before the note was issued" in str(refused.value)


def test_a_note_not_awaiting_an_answer_cannot_be_answered_again(note):
    replies.reply_push(partial(note).pk)
    note.refresh_from_db()
    with pytest.raises(replies.DispatchError) as refused:
        partial(note)
    assert "already on its way" in str(refused.value)
    settle(note.company)
    note.refresh_from_db()
    assert answer_refusal(note) == "This note is not awaiting an answer (its status is “Partially accepted”)."
    with pytest.raises(replies.DispatchError):
        replies.answer_request([note], approve=True, prefix="IRY")
    assert DispatchReply.objects.count() == 1


# --- approve or reject, several at once ------------------------------------------------------------------------------
def test_several_notes_are_accepted_in_one_call_and_followed(sandbox, sandbox_company):
    quick(sandbox, sandbox_company)
    arrive(sandbox, sandbox_company, count=3)
    notes = mirrored(sandbox_company)
    run = replies.answer_request(notes, approve=True, prefix="KAB", delivered_at=delivered_recently(hours=2))
    assert {n.pending_action for n in IncomingNote.objects.all()} == {"approve"}
    assert answered(run) == "3 incoming notes accepted."
    assert RemoteCall.objects.filter(operation="dispatch.reply_approve_reject").count() == 1
    assert set(IncomingNote.objects.values_list("remote_status", flat=True)) == {DispatchStatus.APPROVING}
    assert DispatchReply.objects.filter(way=ReplyWay.APPROVE_REJECT, answer=Answer.ACCEPT).count() == 3
    mirrored(sandbox_company)  # the list names each note's reply: its id and number
    assert not DispatchReply.objects.filter(remote_id="").exists()
    settle(sandbox_company)
    assert set(IncomingNote.objects.values_list("remote_status", flat=True)) == {DispatchStatus.APPROVED}
    assert set(DispatchReply.objects.values_list("remote_status", flat=True)) == {ReplyStatus.APPROVED}


def test_a_rejection_carries_its_reason_and_needs_one(sandbox, sandbox_company):
    quick(sandbox, sandbox_company)
    arrive(sandbox, sandbox_company)
    [note] = mirrored(sandbox_company)
    with pytest.raises(replies.DispatchError) as refused:
        replies.answer_request([note], approve=False, prefix="RED", reason=" ")
    assert refused.value.field == "reason" and not IncomingNote.objects.exclude(pending_action="").exists()
    answered(replies.answer_request([note], approve=False, prefix="RED", reason="Sipariş edilmedi"))
    reply = note.replies.get()
    assert reply.answer == Answer.REJECT and reply.reason == "Sipariş edilmedi"
    settle(sandbox_company)
    note.refresh_from_db()
    assert note.remote_status == DispatchStatus.REJECTED
    mirrored(sandbox_company)  # the list names the reply the platform wrote
    reply.refresh_from_db()
    ubl = documents.REPLY_DOCUMENTS.get(reply, DocumentKind.UBL).file.open("rb").read()
    assert "Sipariş edilmedi".encode() in ubl and reply.receipt_number.encode() in ubl


def test_an_approval_answered_500_after_it_took_effect_is_not_sent_twice(sandbox, sandbox_company):
    quick(sandbox, sandbox_company)
    arrive(sandbox, sandbox_company, count=2)
    notes = mirrored(sandbox_company)
    run = replies.answer_request(notes, approve=True, prefix="KAB")
    sandbox.add_fault(path=APPROVE_PATH, method="POST", error_rate=1, after_apply="error", remaining=1)
    assert answered(run) == "2 incoming notes accepted."
    assert RemoteCall.objects.filter(operation="dispatch.reply_approve_reject").count() == 1  # not sent again
    assert not IncomingNote.objects.exclude(pending_action="").exists()
    page = inbox.inbox_client(sandbox_company).inbox_list(1, 10)
    assert all(item["receiptAdviceId"] for item in page["items"]) and len(page["items"]) == 2


def test_an_approval_of_notes_not_awaiting_an_answer_is_refused(sandbox, sandbox_company):
    arrive(sandbox, sandbox_company, count=2)
    first, second = mirrored(sandbox_company)
    IncomingNote.objects.filter(pk=second.pk).update(remote_status=DispatchStatus.APPROVED)
    second.refresh_from_db()
    with pytest.raises(replies.DispatchError) as refused:
        replies.answer_request([first, second], approve=True, prefix="KAB")
    assert second.despatch_number in str(refused.value) and "not awaiting an answer" in str(refused.value)
    assert not IncomingNote.objects.exclude(pending_action="").exists()


def test_an_approval_dated_in_the_future_is_refused(sandbox, sandbox_company):
    arrive(sandbox, sandbox_company)
    [note] = mirrored(sandbox_company)
    with pytest.raises(replies.DispatchError) as refused:
        replies.answer_request([note], approve=True, prefix="KAB", delivered_at=timezone.now() + timedelta(days=2))
    assert refused.value.field == "delivered_at"


# --- a ReceiptAdvice file, drafts and status changes -----------------------------------------------------------------
def test_a_ubl_draft_makes_the_note_61_and_is_sent_by_the_status_change(note):
    xml = receipt_for(note, {"3": (Decimal(490), Decimal(10), "Eksik")}, uuid=str(uuid.uuid4()))
    reply = ubl_reply(note, name="yanit.xml", data=xml, requested_status=ReplyStatus.DRAFT,
                              manual_number=False, prefix="YNT")
    assert replies.reply_push(reply.pk) == "Sent to the platform."
    reply.refresh_from_db()
    assert reply.remote_status == ReplyStatus.DRAFT and reply.remote_id == reply.uuid
    assert reply.receipt_number.startswith("YNT")
    [note] = mirrored(note.company)
    assert note.remote_status == DispatchStatus.APPROVING  # document 3, 3.3: a draft reply makes it 61
    actions.action_request(DispatchReply, "reply_send", [reply])
    actions.action_run(DispatchReply, "reply_send", [reply.pk])
    settle(note.company)
    reply.refresh_from_db()
    note.refresh_from_db()
    assert reply.remote_status == ReplyStatus.APPROVED and note.remote_status == DispatchStatus.PARTIALLY_ACCEPTED


def test_a_ubl_reply_answered_500_after_it_took_effect_is_not_sent_twice(sandbox, note):
    xml = receipt_for(note, {}, uuid=str(uuid.uuid4()))
    reply = ubl_reply(note, name="yanit.xml", data=xml, requested_status=ReplyStatus.QUEUED,
                              manual_number=False, prefix="YNT")
    sandbox.add_fault(path=REPLY_PATH, method="POST", error_rate=1, after_apply="error", remaining=1)
    with pytest.raises(RemoteError):
        replies.reply_push(reply.pk)
    assert replies.reply_push(reply.pk) == "Found on the platform; not sent again."
    reply.refresh_from_db()
    assert reply.sync_state == SyncState.SYNCED and reply.remote_id == reply.uuid and reply.receipt_number
    assert RemoteCall.objects.filter(operation="dispatch.reply_post").count() == 1


def test_a_failed_reply_goes_back_to_draft_and_is_sent_again(sandbox, note):
    reply = ubl_reply(note, name="yanit.xml", data=receipt_for(note, {}, uuid=str(uuid.uuid4())),
                              requested_status=ReplyStatus.QUEUED, manual_number=False, prefix="YNT")
    replies.reply_push(reply.pk)
    reply.refresh_from_db()
    sandbox.control("POST", "dispatch/reply-status", {**customer(note.company), "id": reply.remote_id, "status": 40,
                                                      "message": "Şema hatası"})
    settle(note.company)
    reply.refresh_from_db()
    note.refresh_from_db()
    assert reply.remote_status == ReplyStatus.ERROR and reply.status_message == "Şema hatası"
    assert note.remote_status == DispatchStatus.APPROVAL_ERROR
    actions.action_request(DispatchReply, "reply_draft", [reply])
    actions.action_run(DispatchReply, "reply_draft", [reply.pk])
    reply.refresh_from_db()
    assert reply.remote_status == ReplyStatus.DRAFT
    with pytest.raises(replies.DispatchError):  # a draft is not sent back to draft
        actions.action_request(DispatchReply, "reply_draft", [reply])
    actions.action_request(DispatchReply, "reply_send", [reply])
    actions.action_run(DispatchReply, "reply_send", [reply.pk])
    settle(note.company)
    reply.refresh_from_db()
    assert reply.remote_status == ReplyStatus.APPROVED


def test_a_ubl_reply_is_checked_against_the_note(note):
    other = receipt_for(note, {}, uuid=str(uuid.uuid4())).replace(note.despatch_number.encode(), b"ABC2020000000001")
    with pytest.raises(replies.DispatchError) as refused:
        ubl_reply(note, name="y.xml", data=other, requested_status=20, manual_number=False, prefix="YNT")
    assert refused.value.field == "file" and "not this one" in str(refused.value)
    too_much = receipt_for(note, {"1": (Decimal(40), Decimal(5), "Fazla")}, uuid=str(uuid.uuid4()))
    with pytest.raises(replies.DispatchError) as refused:
        ubl_reply(note, name="y.xml", data=too_much, requested_status=20, manual_number=False, prefix="YNT")
    assert "exceed the delivered quantity (40)" in str(refused.value)
    with pytest.raises(UblReplyRefused) as refused:
        ubl_reply(note, name="y.xml", data=b"<Invoice/>", requested_status=20, manual_number=False,
                          prefix="YNT")
    assert refused.value.receipt.problems
    assert not DispatchReply.objects.exists()


def test_a_reply_uuid_is_used_once(note):
    same = str(uuid.uuid4())
    reply = ubl_reply(note, name="y.xml", data=receipt_for(note, {}, uuid=same), requested_status=0,
                              manual_number=False, prefix="YNT")
    DispatchReply.objects.filter(pk=reply.pk).update(sync_state=SyncState.FAILED)  # a failed one frees the note
    with pytest.raises(replies.DispatchError) as refused:
        ubl_reply(note, name="y.xml", data=receipt_for(note, {}, uuid=same), requested_status=0,
                          manual_number=False, prefix="YNT")
    assert "UUID" in str(refused.value)


# --- documents -----------------------------------------------------------------------------------------------
def test_documents_of_a_note_and_of_its_reply_are_fetched_once(note):
    pdf = documents.NOTE_DOCUMENTS.get(note, DocumentKind.PDF).file.open("rb").read()
    assert pdf.startswith(b"%PDF")
    assert note.despatch_number in documents.NOTE_DOCUMENTS.get(note, DocumentKind.HTML).file.open("rb").read().decode()
    calls = RemoteCall.objects.count()
    documents.NOTE_DOCUMENTS.get(note, DocumentKind.PDF)
    assert RemoteCall.objects.count() == calls
    reply = partial(note)
    replies.reply_push(reply.pk)
    reply.refresh_from_db()
    for kind in DocumentKind.values:
        assert documents.REPLY_DOCUMENTS.get(reply, kind).file.size > 0
    # Document 3, 4.5: Get ZIP takes isStandartXslt (issue 28), the company's layout too.
    assert documents.REPLY_DOCUMENTS.get(reply, DocumentKind.ZIP, standard=False).file.size > 0
    assert sorted(path.rsplit("/", 1)[1] for path in RemoteCall.objects.filter(
        operation="dispatch.reply_zip").values_list("path", flat=True)) == ["false", "true"]
    assert reply.receipt_number.encode() in documents.REPLY_DOCUMENTS.get(reply, DocumentKind.UBL).file.open("rb").read()


# --- replies to our own notes ----------------------------------------------------------------------------------
def test_a_receivers_partial_acceptance_shows_on_our_outgoing_note(sandbox, make_sandbox_company):
    sender, receiver_company = make_sandbox_company(), make_sandbox_company()
    quick(sandbox, sender)
    quick(sandbox, receiver_company)
    taxpayers.taxpayers_store(services.dispatch_client(sender).taxpayer_list())
    ours = new_note(sender, alias=taxpayers.generic_alias())
    # to the other sandbox company (no dispatch-note user of the list: the generic mailbox)
    type(ours).objects.filter(pk=ours.pk).update(receiver_identifier=sandbox_vkn(receiver_company))
    ours = pushed(ours)
    polling.run(mirror.NOTES_POLL, sender)
    polling.run(mirror.NOTES_POLL, sender)
    ours.refresh_from_db()
    assert ours.remote_status == DispatchStatus.APPROVED
    # it arrived just now: the list reaches it once its endDate (a little behind now) does
    [theirs] = wait_for(lambda: mirrored(receiver_company), timeout=30, interval=0.5,
                        message="the note to arrive in the receiver's incoming list")
    assert theirs.despatch_number == ours.despatch_number and theirs.remote_id == ours.remote_id
    lines = documents.lines_load(theirs)
    answers = [{"line_id": lines[0].line_id, "accepted": lines[0].quantity, "rejected": 0, "reason": ""},
               {"line_id": lines[1].line_id, "accepted": Decimal(2), "rejected": Decimal("0.5"), "reason": "Islak"}]
    replies.reply_push(partial(theirs, answers).pk)
    settle(receiver_company)
    received = wait_for(lambda: inbox.inbox_mirror(sender.pk) and ReceivedReply.objects.filter(
        company=sender).first(), timeout=30, interval=0.5, message="the reply in the sender's receipt list")
    assert received.note_id == ours.pk and received.answer == Answer.PARTIAL and received.lines_read_at
    assert [(line.line_id, line.accepted, line.rejected, line.reason) for line in received.lines.all()] == [
        ("1", 40, 0, ""), ("2", 2, Decimal("0.5"), "Islak")]
    ours.refresh_from_db()  # its status read again with the reply
    assert ours.remote_status == DispatchStatus.PARTIALLY_ACCEPTED


# --- exports -------------------------------------------------------------------------------------------------
def test_an_incoming_excel_export_is_fetched_within_its_window(sandbox, sandbox_company):
    quick(sandbox, sandbox_company)
    sandbox.configure(export_ready_seconds=0)
    arrive(sandbox, sandbox_company, count=2)
    export = INCOMING_EXPORTS.start(company=sandbox_company,
                                    filters={"startDate": (timezone.now() - timedelta(days=1)).isoformat()})
    deadline = time.monotonic() + 30
    while True:
        try:
            INCOMING_EXPORTS.run(export=export)
            break
        except Exception:  # not ready yet: the job would try again
            assert time.monotonic() < deadline, "the export never showed in the history"
            time.sleep(0.2)
    export.refresh_from_db()
    assert export.file and export.state == "ready"
    assert RemoteCall.objects.filter(operation="dispatch.inbox_export").exists()
