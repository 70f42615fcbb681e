"""The receiving side after review, through the sandbox over HTTP: a lost answer the incoming list names before the
reply is sent again stays one reply; reply ids read from the note's reply UBL when the list names none; ids in
capitals; an approval never taken for ours when the note was answered otherwise; a reply failed here blocks a second
answer until it is sent again; a reply file from another party; zipped and oversized UBL; a note held at 61 by a
draft not polled; the delivery time sent in Turkish time."""

import io
import uuid
import zipfile
from datetime import datetime
from datetime import timezone as dt_timezone
from decimal import Decimal

import pytest
from django.urls import reverse
from django.utils import timezone, translation
from stdnum.tr import vkn

from backoffice.core import polling
from backoffice.core.choices import SyncState
from backoffice.core.models import RemoteCall
from backoffice.dispatch import receipt
from backoffice.dispatch.choices import Answer, DispatchStatus, DocumentKind, ReplyStatus
from backoffice.dispatch_inbox import documents, polls, replies
from backoffice.dispatch_inbox import mirror as inbox
from backoffice.dispatch_inbox.answers import answer_refusal, ubl_reply
from backoffice.dispatch_inbox.choices import ReplyWay
from backoffice.dispatch_inbox.models import DispatchReply, IncomingDocument, IncomingNote
from backoffice.remote.errors import LOCAL, RemoteError
from tests.conftest import confirm_post, make_user
from tests.dispatch.inbox_helpers import LINES, arrive, mirrored, quick, receipt_for, sandbox_vkn
from tests.dispatch.receipt_samples import receipt_xml
from tests.dispatch.ubl_samples import despatch_xml
from tests.tickets.conftest import login

# the same English messages and the same incoming note awaiting an answer as test_inbox.py
from .test_inbox import APPROVE_PATH, PARTIAL_PATH, answered, english, note, partial, settle  # noqa: F401

pytestmark = pytest.mark.django_db


def calls(operation) -> int:
    return RemoteCall.objects.filter(operation=operation).count()


def another_vkn() -> str:
    return "987654321" + vkn.calc_check_digit("987654321")


# --- a lost answer, the list and the retry ------------------------------------------------------------------------
def test_a_lost_partial_acceptance_the_list_names_first_stays_one_reply(sandbox, note):
    reply = partial(note)
    sandbox.add_fault(path=PARTIAL_PATH, method="POST", error_rate=1, after_apply="error", remaining=1)
    with pytest.raises(RemoteError):
        replies.reply_push(reply.pk)
    mirrored(note.company, walk=True)  # the list names the reply before ours is sent again: no second row
    assert list(note.replies.values_list("pk", flat=True)) == [reply.pk]
    assert replies.reply_push(reply.pk) == "Found on the platform; not sent again."
    reply.refresh_from_db()
    assert reply.sync_state == SyncState.SYNCED and reply.remote_id and reply.receipt_number.startswith("IRY")
    assert DispatchReply.objects.count() == 1 and calls("dispatch.reply_partial_accept") == 1
    settle(note.company)
    note.refresh_from_db()
    assert note.remote_status == DispatchStatus.PARTIALLY_ACCEPTED


def test_a_row_the_list_made_before_an_approval_was_recorded_becomes_the_approval(sandbox, sandbox_company):
    quick(sandbox, sandbox_company)
    arrive(sandbox, sandbox_company)
    [note] = mirrored(sandbox_company)
    run = replies.answer_request([note], approve=True, prefix="KAB")
    # the call went through and the list was read before the job recorded the reply (a second worker's mirror)
    inbox.inbox_client(sandbox_company).approve_reject([note.remote_id], approve=True, prefix="KAB")
    mirrored(sandbox_company, walk=True)
    assert note.replies.get().way == ReplyWay.PLATFORM
    answered(run)  # refused (no longer awaiting), found approved: done
    reply = note.replies.get()
    assert reply.way == ReplyWay.APPROVE_REJECT and reply.prefix == "KAB" and reply.remote_id
    assert reply.answer == Answer.ACCEPT


# --- a platform whose list names no reply, or writes ids in capitals ---------------------------------------------
def test_reply_ids_are_read_from_the_notes_reply_when_the_list_names_none(sandbox, sandbox_company):
    quick(sandbox, sandbox_company, list_names_replies=False)
    arrive(sandbox, sandbox_company, count=2)
    first, second = mirrored(sandbox_company)
    documents.lines_load(second)
    answered(replies.answer_request([first], approve=False, prefix="RED", reason="Sipariş edilmedi"))
    lost = partial(second)
    sandbox.add_fault(path=PARTIAL_PATH, method="POST", error_rate=1, after_apply="error", remaining=1)
    with pytest.raises(RemoteError):
        replies.reply_push(lost.pk)
    assert replies.reply_push(lost.pk) == "Found on the platform; not sent again."
    mirrored(sandbox_company, walk=True)
    assert set(DispatchReply.objects.values_list("remote_id", flat=True)) == {""}  # the list said nothing
    settle(sandbox_company)
    rejection, acceptance = first.replies.get(), second.replies.get()
    assert rejection.remote_id and rejection.receipt_number.startswith("RED")
    assert acceptance.remote_id and acceptance.receipt_number.startswith("IRY")
    assert rejection.remote_status == acceptance.remote_status == ReplyStatus.APPROVED
    assert calls("dispatch.reply_partial_accept") == 1 and calls("dispatch.reply_approve_reject") == 1
    first.refresh_from_db()
    second.refresh_from_db()
    assert (first.remote_status, second.remote_status) == (DispatchStatus.REJECTED, DispatchStatus.PARTIALLY_ACCEPTED)


def test_an_approval_lost_on_a_platform_writing_ids_in_capitals_is_not_sent_twice(sandbox, sandbox_company):
    quick(sandbox, sandbox_company, upper_case_ids=True)
    arrive(sandbox, sandbox_company, count=2)
    notes = mirrored(sandbox_company)
    run = replies.answer_request(notes, approve=True, prefix="KAB")
    sandbox.add_fault(path=APPROVE_PATH, method="POST", error_rate=1, after_apply="error", remaining=1)
    assert answered(run) == "2 incoming notes accepted."
    assert calls("dispatch.reply_approve_reject") == 1
    settle(sandbox_company)
    assert set(IncomingNote.objects.values_list("remote_status", flat=True)) == {DispatchStatus.APPROVED}


def test_an_approval_of_a_note_rejected_elsewhere_is_not_taken_for_ours(sandbox, sandbox_company):
    quick(sandbox, sandbox_company)
    arrive(sandbox, sandbox_company)
    [note] = mirrored(sandbox_company)
    inbox.inbox_client(sandbox_company).approve_reject([note.remote_id], approve=False, prefix="POR",
                                                       reason="Portaldan reddedildi")
    run = replies.answer_request([note], approve=True, prefix="KAB")  # the mirror still says 70
    with pytest.raises(RemoteError):
        answered(run)
    note.refresh_from_db()
    assert note.pending_action == "" and note.last_error
    assert note.remote_status in (DispatchStatus.REJECTING, DispatchStatus.REJECTED)
    assert not note.replies.filter(answer=Answer.ACCEPT).exists()


# --- a reply failed here ------------------------------------------------------------------------------------------
def test_a_reply_failed_here_blocks_a_new_answer_until_it_is_sent_again(sandbox, note, client):
    reply = partial(note)
    sandbox.add_fault(path=PARTIAL_PATH, method="POST", error_rate=1, after_apply="error", remaining=1)
    with pytest.raises(RemoteError):
        replies.reply_push(reply.pk)
    # as if our own code had failed after the call went out: FAILED, not the platform's refusal
    DispatchReply.objects.filter(pk=reply.pk).update(sync_state=SyncState.FAILED, last_error="Unexpected error.",
                                                     last_error_source=LOCAL)
    note.refresh_from_db()
    assert "may have reached the platform" in answer_refusal(note)
    with pytest.raises(replies.DispatchError):
        partial(note)
    login(client, make_user("depo", "accounting", [note.company]), note.company)
    page = client.get(reverse("dispatch_inbox:incomingnote_detail", args=[note.pk])).content.decode()
    assert 'data-reply-action="resend"' in page and 'id="incoming-answer"' not in page
    response = confirm_post(client, reverse("dispatch_inbox:dispatchreply_bulk", args=["resend"]),
                            {"pk": str(reply.pk), "confirm": "1", "return_url": "/"})
    assert response.status_code == 302
    reply.refresh_from_db()
    assert reply.sync_state in (SyncState.QUEUED, SyncState.SYNCED)
    replies.reply_push(reply.pk)  # the job's body: the platform is asked first
    reply.refresh_from_db()
    assert reply.sync_state == SyncState.SYNCED and reply.remote_id
    assert calls("dispatch.reply_partial_accept") == 1


# --- a reply file from another party --------------------------------------------------------------------------------
@pytest.mark.parametrize("change, message", [
    ("supplier", "as the note's sender (DespatchSupplierParty), but the note came from 4840000006"),
    ("customer", "answers in the name of 9876543217 (DeliveryCustomerParty), but the note was sent to"),
    ("date", "(DespatchDocumentReference/IssueDate), but the note is dated"),
])
def test_a_reply_file_written_for_another_party_or_note_is_refused_on_the_file(note, change, message):
    now = timezone.localtime()
    parties = {"supplier": (note.sender_identifier, note.sender_title),
               "customer": (sandbox_vkn(note.company), "Alıcı A.Ş.")}
    if change in parties:
        parties[change] = (another_vkn(), "Başka Ticaret A.Ş.")
    lines = [{"line_id": line.line_id, "name": line.product_name, "unit_code": line.unit_code,
              "received": line.quantity, "rejected": 0, "reason": ""} for line in note.lines.all()]
    xml = receipt_xml(
        uuid=str(uuid.uuid4()), number=None, issue_date=now.date(), issue_time="10:00:00",
        despatch_number=note.despatch_number,
        despatch_issue_date=note.issue_date.replace(year=note.issue_date.year - 1) if change == "date"
        else note.issue_date, delivery_datetime=None, delivery_contact="Ayşe Yılmaz", lines=lines, prefix="YNT",
        **parties)
    with pytest.raises(replies.DispatchError) as refused:
        ubl_reply(note, name="y.xml", data=xml, requested_status=20, manual_number=False, prefix="YNT")
    assert refused.value.field == "file" and message in str(refused.value)
    assert not DispatchReply.objects.exists()


# --- what the platform returns -----------------------------------------------------------------------------------
def test_a_notes_ubl_kept_from_its_button_does_not_stop_its_lines_being_read(sandbox, sandbox_company):
    arrive(sandbox, sandbox_company)
    [note] = mirrored(sandbox_company)
    documents.NOTE_DOCUMENTS.get(note, DocumentKind.UBL)  # the UBL button before the page read the lines
    assert [line.line_id for line in documents.lines_load(note)] == ["1", "2", "3"]
    assert IncomingDocument.objects.filter(note=note, kind=DocumentKind.UBL).count() == 1


def test_a_zipped_ubl_is_read_as_its_xml():
    xml = despatch_xml()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("irsaliye.xml", xml)
    assert receipt.read_despatch(buffer.getvalue()) == receipt.read_despatch(xml)
    with pytest.raises(ValueError, match="cannot be opened"):
        receipt.read_despatch(b"PK\x03\x04 not really a zip")


def test_a_quantity_too_large_to_keep_is_said_on_the_page_not_a_500(sandbox, sandbox_company, client):
    arrive(sandbox, sandbox_company, lines=[*LINES[:2], {"name": "Kum", "quantity": 10 ** 13, "unit_code": "TNE"}])
    [note] = mirrored(sandbox_company)
    with pytest.raises(replies.DispatchError, match="not a number this back office can keep"):
        documents.lines_load(note)
    login(client, make_user("depo", "accounting", [sandbox_company]), sandbox_company)
    response = client.get(reverse("dispatch_inbox:incomingnote_detail", args=[note.pk]))
    assert response.status_code == 200
    assert "not a number this back office can keep" in response.content.decode()
    assert not note.lines.exists()


def test_a_note_held_at_61_by_a_draft_reply_is_not_polled(note):
    xml = receipt_for(note, {"3": (Decimal(490), Decimal(10), "Eksik")}, uuid=str(uuid.uuid4()))
    reply = ubl_reply(note, name="yanit.xml", data=xml, requested_status=ReplyStatus.DRAFT,
                              manual_number=False, prefix="YNT")
    replies.reply_push(reply.pk)
    note.refresh_from_db()
    assert note.remote_status == DispatchStatus.APPROVING
    asked = calls("dispatch.inbox_status")
    settle(note.company)
    assert calls("dispatch.inbox_status") == asked
    assert not polling.waiting(polls.REPLIES_POLL, note.company)
    assert not polling.waiting(polls.ANSWERS_POLL, note.company)


def test_the_delivery_time_is_sent_in_turkish_time():
    moment = datetime(2026, 11, 27, 21, 30, tzinfo=dt_timezone.utc)
    assert replies.platform_moment(moment) == "2026-11-28T00:30:00+03:00"
    assert replies.platform_moment(moment.isoformat()) == "2026-11-28T00:30:00+03:00"
    assert replies.platform_moment(None) is None
