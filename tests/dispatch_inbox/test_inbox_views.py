"""The receiving side's pages: every answer form fed bad input (the message on the field that is wrong, nothing
saved, never a server error), roles and tenant scoping (another company's incoming note or reply is a 404),
Back-and-resubmit, the inbox with its days left, and our outgoing note showing what the receiver answered. Notes are
built here with their lines read, so the pages make no platform call."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.urls import reverse
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backoffice.core.choices import SyncState
from backoffice.dispatch.choices import Answer, DispatchStatus, ReplyStatus
from backoffice.dispatch.models import DispatchLine, DispatchNote, ReceivedReply, ReceivedReplyLine
from backoffice.dispatch_inbox.choices import ReplyWay
from backoffice.dispatch_inbox.models import DispatchReply, IncomingLine, IncomingNote
from tests.conftest import form_post, guard_fields
from tests.dispatch.inbox_helpers import delivered_recently
from tests.tickets.conftest import login
from tests.properties import examples

pytestmark = pytest.mark.django_db

_ids = iter(range(1, 10_000))


def incoming(company, *, status=DispatchStatus.AWAITING_APPROVAL, days_ago=2, number=None):
    index = next(_ids)
    note = IncomingNote.objects.create(
        company=company, remote_id=f"0f8e6a52-0000-4c1e-9a4b-{index:012d}", remote_status=status,
        sync_state=SyncState.SYNCED, despatch_number=number or f"TKL2026{index:09d}", sender_identifier="4840000006",
        sender_title="Tek Kutu Lojistik A.Ş.", issue_date=timezone.localdate() - timedelta(days=days_ago),
        received_at=timezone.now() - timedelta(days=days_ago), lines_read_at=timezone.now())
    IncomingLine.objects.bulk_create([
        IncomingLine(note=note, position=1, line_id="1", product_name="Çimento 50 kg", quantity=40, unit_code="C62"),
        IncomingLine(note=note, position=2, line_id="2", product_name="Kum", quantity=12, unit_code="TNE"),
        IncomingLine(note=note, position=3, line_id="3", product_name="Tuğla", quantity=500, unit_code="C62")])
    return note


@pytest.fixture
def web(client, accountant, company):
    return login(client, accountant, company)


def partial_url(note):
    return reverse("dispatch_inbox:incomingnote_partial", args=[note.pk])


def partial_data(note, **changes):
    lines = {line.line_id: line.pk for line in note.lines.all()}
    data = {"delivered_at": delivered_recently().strftime("%Y-%m-%dT%H:%M"),
            "delivery_contact": "Ayşe Yılmaz", "prefix": "IRY",
            f"accepted_{lines['1']}": "40", f"rejected_{lines['1']}": "0", f"reason_{lines['1']}": "",
            f"accepted_{lines['2']}": "12", f"rejected_{lines['2']}": "", f"reason_{lines['2']}": "",
            f"accepted_{lines['3']}": "450", f"rejected_{lines['3']}": "50", f"reason_{lines['3']}": "Kırık"}
    for name, value in changes.items():
        kind, _sep, line_id = name.partition("_")
        data[f"{kind}_{lines[line_id]}" if line_id in lines else name] = value
    return data


def field_of(note, kind, line_id):
    return f"{kind}_{note.lines.get(line_id=line_id).pk}"


def test_a_partial_acceptance_is_saved_with_its_lines_and_queued(web, company):
    note = incoming(company)
    response = form_post(web, partial_url(note), partial_data(note))
    assert response.status_code == 302 and response.url == reverse("dispatch_inbox:incomingnote_detail", args=[note.pk])
    reply = DispatchReply.objects.get()
    assert reply.way == ReplyWay.PARTIAL and reply.answer == Answer.PARTIAL and reply.sync_state == SyncState.QUEUED
    assert reply.delivery_contact == "Ayşe Yılmaz" and reply.prefix == "IRY"
    assert [(line.line_id, line.accepted, line.rejected, line.reason) for line in reply.lines.all()] == [
        ("1", 40, 0, ""), ("2", 12, 0, ""), ("3", 450, 50, "Kırık")]


def test_quantities_are_read_the_turkish_way(web, company):
    note = incoming(company)
    data = partial_data(note, accepted_3="449,5", rejected_3="50,5", accepted_2="11,75")
    assert form_post(web, partial_url(note), data).status_code == 302
    lines = {line.line_id: (line.accepted, line.rejected) for line in DispatchReply.objects.get().lines.all()}
    assert lines["3"] == (Decimal("449.5"), Decimal("50.5")) and lines["2"] == (Decimal("11.75"), 0)
    # "1.250,75" is a thousand and more: above the 500 bricks delivered, refused on the field
    second = incoming(company)
    response = form_post(web, partial_url(second), partial_data(second, accepted_3="1.250,75", rejected_3="0"))
    assert response.status_code == 400
    errors = response.context["form"].errors[field_of(second, "accepted", "3")]
    assert "exceed the delivered quantity (500)" in " ".join(errors)


@pytest.mark.parametrize("changes, field, words", [
    ({"accepted_1": "41"}, ("accepted", "1"), "exceed the delivered quantity (40)"),
    ({"accepted_3": "460", "rejected_3": "50"}, ("rejected", "3"), "exceed the delivered quantity (500)"),
    ({"rejected_3": "50", "reason_3": ""}, ("reason", "3"), "Give the reason for the rejected quantity."),
    ({"accepted_2": "-1"}, ("accepted", "2"), "greater than or equal to 0"),
    ({"accepted_2": "abc"}, ("accepted", "2"), "number"),
    ({"accepted_2": ""}, ("accepted", "2"), "required"),
    ({"delivered_at": "2099-01-01T10:00"}, "delivered_at", "cannot be in the future"),
    ({"delivered_at": "2001-01-01T10:00"}, "delivered_at", "before the note was issued"),
    ({"delivered_at": ""}, "delivered_at", "required"),
    ({"delivery_contact": ""}, "delivery_contact", "required"),
    ({"prefix": "i1"}, "prefix", "three capital letters"),
])
def test_each_rule_of_a_partial_acceptance_gives_its_message_on_the_field(web, company, changes, field, words):
    note = incoming(company)
    response = form_post(web, partial_url(note), partial_data(note, **changes))
    assert response.status_code == 400
    name = field_of(note, *field) if isinstance(field, tuple) else field
    errors = response.context["form"].errors
    assert name in errors and words in " ".join(errors[name]), errors
    assert not DispatchReply.objects.exists()


def test_back_and_submit_again_makes_no_second_reply(web, company):
    note = incoming(company)
    key = guard_fields(web.get(partial_url(note)).content.decode())
    first = web.post(partial_url(note), {**key, **partial_data(note)})
    second = web.post(partial_url(note), {**key, **partial_data(note)})
    assert first.status_code == second.status_code == 302
    assert DispatchReply.objects.count() == 1


def test_a_second_tab_answering_the_same_note_is_refused(web, company):
    note = incoming(company)
    form_post(web, partial_url(note), partial_data(note))
    response = web.post(partial_url(note), {**guard_fields(""), **partial_data(note)})
    assert DispatchReply.objects.count() == 1
    assert response.status_code in (302, 400)


def test_a_note_not_awaiting_an_answer_sends_the_user_back_with_the_reason(web, company):
    note = incoming(company, status=DispatchStatus.APPROVED)
    response = web.get(partial_url(note))
    assert response.status_code == 302
    assert "not awaiting an answer" in str(list(response.wsgi_request._messages)[0])
    page = web.get(reverse("dispatch_inbox:incomingnote_detail", args=[note.pk])).content.decode()
    assert 'id="incoming-answer"' not in page


def test_a_rejection_without_a_reason_is_refused_on_the_reason(web, company):
    note = incoming(company)
    url = reverse("dispatch_inbox:incomingnote_bulk", kwargs={"action": "reject"})
    page = web.post(url, {"pk": [note.pk]})
    assert page.status_code == 200 and 'id="answer-form"' in page.content.decode()
    response = web.post(url, {"pk": [note.pk], "confirm": "1", "decision": "reject", "prefix": "RED", "reason": ""})
    assert response.status_code == 400
    assert "Give the reason for the rejection" in " ".join(response.context["form"].errors["reason"])
    response = web.post(url, {"pk": [note.pk], "confirm": "1", "decision": "approve", "prefix": "KAB",
                              "delivered_at": "2099-01-01T10:00"})
    assert response.status_code == 400 and "future" in " ".join(response.context["form"].errors["delivered_at"])
    note.refresh_from_db()
    assert note.pending_action == ""


def test_several_notes_are_answered_from_the_list(web, company):
    notes = [incoming(company), incoming(company)]
    url = reverse("dispatch_inbox:incomingnote_bulk", kwargs={"action": "approve"})
    response = web.post(url, {"pk": [n.pk for n in notes], "confirm": "1", "decision": "approve", "prefix": "KAB"})
    assert response.status_code == 302
    assert set(IncomingNote.objects.values_list("pending_action", flat=True)) == {"approve"}


def test_an_answer_to_a_note_not_awaiting_one_is_refused_on_the_page(web, company):
    waiting, answered = incoming(company), incoming(company, status=DispatchStatus.REJECTED)
    url = reverse("dispatch_inbox:incomingnote_bulk", kwargs={"action": "approve"})
    response = web.post(url, {"pk": [waiting.pk, answered.pk], "confirm": "1", "decision": "approve", "prefix": "KAB"})
    assert response.status_code == 400
    assert "not awaiting an answer" in response.content.decode()
    assert not IncomingNote.objects.exclude(pending_action="").exists()


def test_a_reply_file_that_is_no_receipt_advice_is_refused_before_any_call(web, company):
    note = incoming(company)
    url = reverse("dispatch_inbox:incomingnote_reply_upload", args=[note.pk])
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = SimpleUploadedFile("yanit.xml", b"<?xml version='1.0'?><Invoice/>", content_type="text/xml")
    response = form_post(web, url, {"file": upload, "numbering": "series", "prefix": "IRY", "requested_status": "20"})
    assert response.status_code == 400 and 'id="ubl-findings"' in response.content.decode()
    assert not DispatchReply.objects.exists()


def test_the_inbox_shows_what_needs_an_answer_and_the_days_left(web, company):
    late = incoming(company, days_ago=9)
    fresh = incoming(company, days_ago=1)
    incoming(company, status=DispatchStatus.APPROVED)
    page = web.get(reverse("dispatch_inbox:incomingnote_list") + "?view=awaiting").content.decode()
    assert late.despatch_number in page and fresh.despatch_number in page
    assert page.index(late.despatch_number) < page.index(fresh.despatch_number)  # the oldest first
    assert 'data-days-left="6"' in page and 'data-days-left="-2"' in page
    assert 'id="incoming-awaiting-count">2<' in page


def test_another_companys_incoming_note_and_reply_are_a_404(web, company, other_company):
    note = incoming(other_company)
    reply = DispatchReply.objects.create(company=other_company, note=note, way=ReplyWay.PARTIAL, answer=Answer.ACCEPT,
                                         remote_id="abc", remote_status=ReplyStatus.APPROVED,
                                         sync_state=SyncState.SYNCED)
    for name, args in (("dispatch_inbox:incomingnote_detail", [note.pk]), ("dispatch_inbox:incomingnote_partial", [note.pk]),
                       ("dispatch_inbox:incomingnote_reply_upload", [note.pk]),
                       ("dispatch_inbox:incomingnote_document", [note.pk, "pdf"]),
                       ("dispatch_inbox:dispatchreply_detail", [reply.pk]),
                       ("dispatch_inbox:dispatchreply_document", [reply.pk, "ubl"])):
        assert web.get(reverse(name, args=args)).status_code == 404, name
    response = web.post(reverse("dispatch_inbox:incomingnote_bulk", kwargs={"action": "approve"}),
                        {"pk": [note.pk], "confirm": "1", "decision": "approve", "prefix": "KAB"})
    assert response.status_code == 302
    note.refresh_from_db()
    assert note.pending_action == ""


def test_managers_read_but_do_not_answer(client, manager, company):
    note = incoming(company)
    login(client, manager, company)
    assert client.get(reverse("dispatch_inbox:incomingnote_list")).status_code == 200
    assert client.get(reverse("dispatch_inbox:incomingnote_detail", args=[note.pk])).status_code == 200
    assert client.get(partial_url(note)).status_code == 403
    response = client.post(reverse("dispatch_inbox:incomingnote_bulk", kwargs={"action": "approve"}),
                           {"pk": [note.pk], "confirm": "1", "decision": "approve", "prefix": "KAB"})
    assert response.status_code == 403


def test_pages_render(web, company):
    note = incoming(company)
    for url in (reverse("dispatch_inbox:incomingnote_list"), reverse("dispatch_inbox:incomingnote_detail", args=[note.pk]),
                partial_url(note), reverse("dispatch_inbox:incomingnote_reply_upload", args=[note.pk]),
                reverse("dispatch_inbox:dispatchreply_list"), reverse("dispatch:receivedreply_list"),
                reverse("dispatch_inbox:incomingexport_list"), reverse("dispatch_inbox:incomingexport_start")):
        assert web.get(url).status_code == 200, url


def test_our_note_shows_the_receivers_answer_per_line(web, company):
    ours = DispatchNote.objects.create(company=company, remote_id="6f1c1b9e-6b53-4c29-9d8e-0f0d3c2f4a11",
                                       remote_status=DispatchStatus.PARTIALLY_ACCEPTED, sync_state=SyncState.SYNCED,
                                       despatch_number="IRS2026000000009", receiver_identifier="4840000006",
                                       issue_date=timezone.localdate(), local_reference_id="BO-X")
    DispatchLine.objects.bulk_create([DispatchLine(note=ours, position=1, product_name="Çimento", quantity=40),
                                      DispatchLine(note=ours, position=2, product_name="Kum", quantity=12)])
    received = ReceivedReply.objects.create(company=company, remote_id="r1", receipt_number="ALC2026000000001",
                                            note=ours, answer=Answer.PARTIAL, lines_read_at=timezone.now(),
                                            remote_status=ReplyStatus.APPROVED, sender_title="Alıcı A.Ş.")
    ReceivedReplyLine.objects.bulk_create([
        ReceivedReplyLine(reply=received, line_id="1", accepted=40, rejected=0),
        ReceivedReplyLine(reply=received, line_id="2", accepted=Decimal("9.5"), rejected=Decimal("2.5"),
                          reason="Islak")])
    page = web.get(reverse("dispatch:dispatchnote_detail", args=[ours.pk])).content.decode()
    assert 'id="dispatch-receipt" data-answer="partial"' in page
    assert "Islak" in page and "ALC2026000000001" in page
    listing = web.get(reverse("dispatch:receivedreply_list")).content.decode()
    assert "ALC2026000000001" in listing and reverse("dispatch:dispatchnote_detail", args=[ours.pk]) in listing


text_or_junk = st.one_of(st.text(max_size=20), st.sampled_from(["", "0", "-1", "40", "1,5", "1.000,25", "9" * 30,
                                                                 "2026-02-30T10:00", "IRY"]))


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from(["accepted_1", "rejected_1", "reason_1", "accepted_3", "rejected_3",
                                        "delivered_at", "delivery_contact", "prefix"]), text_or_junk, max_size=5))
def test_no_input_gives_a_server_error(web, company, changes):
    note = IncomingNote.objects.filter(company=company).first() or incoming(company)
    DispatchReply.objects.all().delete()
    response = form_post(web, partial_url(note), partial_data(note, **changes))
    assert response.status_code in (302, 400)


# --- the answer and upload forms, each rule on its field (after review) ------------------------------------------
@pytest.mark.parametrize("changes, field, words", [
    ({"prefix": "ab"}, "prefix", "three capital letters"),
    ({"prefix": ""}, "prefix", "required"),
    ({"delivered_at": "2001-01-01T10:00"}, "delivered_at", "before the note was issued"),
    ({"decision": "maybe"}, "decision", "Select a valid choice"),
])
def test_each_rule_of_an_approval_gives_its_message_on_the_field(web, company, changes, field, words):
    note = incoming(company)
    url = reverse("dispatch_inbox:incomingnote_bulk", kwargs={"action": "approve"})
    data = {"pk": [note.pk], "confirm": "1", "decision": "approve", "prefix": "KAB", **changes}
    response = web.post(url, data)
    assert response.status_code == 400
    assert words.lower() in " ".join(response.context["form"].errors[field]).lower()
    note.refresh_from_db()
    assert note.pending_action == "" and not DispatchReply.objects.exists()


def _upload(web, note, content, **changes):
    from django.core.files.uploadedfile import SimpleUploadedFile

    url = reverse("dispatch_inbox:incomingnote_reply_upload", args=[note.pk])
    data = {"file": SimpleUploadedFile("yanit.xml", content, content_type="text/xml"), "numbering": "series",
            "prefix": "IRY", "requested_status": "20", **changes}
    return form_post(web, url, data)


def test_each_rule_of_a_reply_file_gives_its_message_on_the_field(web, company):
    from tests.dispatch.inbox_helpers import receipt_for

    note = incoming(company)
    good = receipt_for(note, {}, uuid="3c9e7f50-8a4b-4f3e-9d2a-5b7c1e0f2a61")
    response = _upload(web, note, good, prefix="")
    assert response.status_code == 400 and response.context["form"].errors["prefix"]
    response = _upload(web, note, b"<" + b"x" * (10 * 1024 * 1024) + b"/>")
    assert response.status_code == 400
    assert "larger than 10 MB" in " ".join(response.context["form"].errors["file"])
    too_much = receipt_for(note, {"1": (Decimal(41), Decimal(0), "")}, uuid="3c9e7f50-8a4b-4f3e-9d2a-5b7c1e0f2a62")
    response = _upload(web, note, too_much)
    assert response.status_code == 400
    assert "exceed the delivered quantity (40)" in " ".join(response.context["form"].errors["file"])
    assert not DispatchReply.objects.exists()
