"""Issue 29: a dispatch note is never sent by accident. The form, the UBL upload and the corrected file save drafts
(pushed as status 0) and offer no "send now"; sending is the status change 0 -> 20 behind a confirmation that shows
the receiver, its mailbox and the total and needs a box ticked; a second POST sends nothing again; notes that are
not drafts are refused by number."""

from decimal import Decimal

import pytest
from django.urls import reverse
from django.utils import timezone

from backoffice.core.choices import SyncState
from backoffice.core.models import JobRun
from backoffice.dispatch import forms, push, services
from backoffice.dispatch.choices import DispatchStatus
from backoffice.dispatch.models import DispatchNote
from tests.conftest import form_post
from tests.tickets.conftest import login

from .builders import OUTSIDER_VKN, RECEIVER_VKN, SINGLE_ALIAS, directory, note_data, receiver

pytestmark = pytest.mark.django_db

ADD = reverse("dispatch:dispatchnote_add")
SEND = reverse("dispatch:dispatchnote_bulk", kwargs={"action": "send"})


@pytest.fixture
def web(client, accountant, company):
    receiver(company)
    receiver(company, RECEIVER_VKN, name="Örnek Ticaret A.Ş.")
    receiver(company, OUTSIDER_VKN, name="Kağıt Alıcı Ltd.")
    directory()
    return login(client, accountant, company)


def on_platform(company, number, status=DispatchStatus.DRAFT, payable="6024.00"):
    """A note the platform holds in `status` (as the push of a draft leaves it)."""
    return DispatchNote.objects.create(
        company=company, remote_id=f"7a2d0a4e-0000-4000-8000-{number[-12:]}", despatch_number=number, prefix="IRS",
        receiver_identifier="4840000006", receiver_name="Tek Kutu Lojistik A.Ş.", target_alias=SINGLE_ALIAS,
        issue_date=timezone.localdate(), remote_status=status, requested_status=status, payable_amount=payable,
        total_amount=payable, line_count=1, sync_state=SyncState.SYNCED, local_reference_id=f"ERP-{number}")


def sends():
    return JobRun.objects.filter(name="dispatch_send").count()


def test_the_forms_offer_no_send_now():
    assert "requested_status" not in forms.DispatchNoteForm.base_fields
    assert "requested_status" not in forms.UblUploadForm.base_fields
    assert "requested_status" not in forms.UblReplaceForm.base_fields
    assert not hasattr(forms, "SEND_CHOICES")


def test_the_form_saves_a_draft_even_when_asked_to_send(web, company):
    response = form_post(web, ADD, note_data(requested_status="20"))  # an old page's field: ignored
    note = DispatchNote.objects.get(company=company)
    assert response.status_code == 302 and note.requested_status == DispatchStatus.DRAFT
    assert note.sync_state == SyncState.QUEUED  # the draft goes to the platform as status 0
    assert push.note_body(note)["status"] == DispatchStatus.DRAFT
    page = web.get(ADD).content.decode()
    assert "Save and send now" not in page and 'name="requested_status"' not in page and "Save draft" in page


def test_the_confirmation_shows_receiver_mailbox_and_total_and_needs_the_box(web, company):
    note = on_platform(company, "IRS2026000000001")
    detail = reverse("dispatch:dispatchnote_detail", args=[note.pk])
    assert 'data-action="send"' in web.get(detail).content.decode()
    # The note page's button posts the note: the confirmation, nothing sent.
    shown = web.post(SEND, {"pk": note.pk, "return_url": detail})
    text = shown.content.decode()
    assert shown.status_code == 200 and sends() == 0
    assert "It will be sent to the tax authority (GİB); this cannot be undone." in text
    assert "Tek Kutu Lojistik A.Ş." in text and "4840000006" in text and SINGLE_ALIAS in text
    assert "6,024.00 TRY" in text
    assert web.get(SEND, {"pk": note.pk}).status_code == 200 and sends() == 0  # a GET only shows it too
    unchecked = web.post(SEND, {"pk": note.pk, "return_url": detail, "confirm": "1"})
    assert unchecked.status_code == 400 and sends() == 0
    done = web.post(SEND, {"pk": note.pk, "return_url": detail, "confirm": "1", "checked": "1"})
    assert done.status_code == 302 and done.url == detail and sends() == 1
    note.refresh_from_db()
    assert note.pending_action == "send"
    again = web.post(SEND, {"pk": note.pk, "return_url": detail, "confirm": "1", "checked": "1"}, follow=True)
    assert "Already sent" in again.content.decode() and sends() == 1
    # Once the platform has it queued (the job done), a resubmission is still "already sent".
    DispatchNote.objects.filter(pk=note.pk).update(pending_action="", remote_status=DispatchStatus.QUEUED,
                                                   requested_status=DispatchStatus.QUEUED)
    with pytest.raises(push.AlreadySent):
        push.send_request([DispatchNote.objects.get(pk=note.pk)])
    assert sends() == 1


def test_bulk_send_refuses_notes_that_are_not_drafts_by_number(web, company):
    first = on_platform(company, "IRS2026000000001")
    second = on_platform(company, "IRS2026000000002", payable="100.00")
    error = on_platform(company, "IRS2026000000003", status=DispatchStatus.ERROR)
    pks = [first.pk, second.pk, error.pk]
    text = web.post(SEND, {"pk": pks}).content.decode()
    assert 'id="send-refused"' in text and "IRS2026000000003" in text and "6,124.00 TRY" not in text
    refused = web.post(SEND, {"pk": pks, "confirm": "1", "checked": "1"}, follow=True).content.decode()
    assert "IRS2026000000003" in refused and sends() == 0
    assert set(DispatchNote.objects.values_list("pending_action", flat=True)) == {""}
    text = web.post(SEND, {"pk": pks[:2]}).content.decode()
    assert "6,124.00 TRY" in text and 'id="send-refused"' not in text
    assert web.post(SEND, {"pk": pks[:2], "confirm": "1", "checked": "1"}).status_code == 302 and sends() == 1


def test_a_draft_not_on_the_platform_yet_is_not_sent(web, company):
    form_post(web, ADD, note_data())
    note = DispatchNote.objects.get(company=company)
    assert push.send_refusal(note)
    with pytest.raises(services.DispatchError):
        push.send_request([note])
    assert sends() == 0


def test_receiver_lookup_fills_the_only_mailbox_and_offers_several(web):
    url = reverse("dispatch:dispatchnote_receiver")
    single = web.get(url, {"account": "4840000006"}).content.decode()
    assert f'data-fill-target="id_target_alias" data-fill-value="{SINGLE_ALIAS}"' in single
    several = web.get(url, {"account": RECEIVER_VKN}).content.decode()
    assert several.count('data-fill-on="click"') == 2


def test_total_shown_is_the_payable(company):
    note = on_platform(company, "IRS2026000000001", payable="118450.75")
    note.refresh_from_db()
    [row] = push.send_rows([note])
    assert (row["recipient"], row["identifier"], row["mailbox"], row["total"], row["currency"]) == (
        "Tek Kutu Lojistik A.Ş.", "4840000006", SINGLE_ALIAS, Decimal("118450.75"), "TRY")
