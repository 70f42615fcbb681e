"""Outgoing dispatch notes through the sandbox over HTTP: every operation (create as JSON and as UBL, update,
the status changes, polling until the note settles, the documents, the listing of new notes with isNew, the users'
list, the Excel export), including a create answered 500 after it took effect (found by its localReferenceId, not
created twice), an update answered 500 after it took effect, and a status change the platform refuses. The job
bodies run here; a real worker runs them in test_worker.py."""

import io
import time
import zipfile
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone, translation

from backoffice.core import actions, jobs, polling
from backoffice.core.choices import SyncState
from backoffice.core.models import RemoteCall
from backoffice.dispatch import mirror, push, services, taxpayers
from backoffice.dispatch.choices import DispatchStatus, DocumentKind, Numbering, Source
from backoffice.dispatch.families import DISPATCH_EXPORTS
from backoffice.dispatch.models import DispatchDriver, DispatchLine, DispatchNote, DispatchTaxpayer
from backoffice.remote.errors import RemoteError
from tests.tickets.conftest import login

from .builders import SINGLE_VKN, receiver
from .ubl_samples import despatch_xml

pytestmark = pytest.mark.django_db

CREATE_PATH = "/dispatch/v1/outboxdespatch/create"
UBL_PATH = "/dispatch/v1/outboxdespatch"


@pytest.fixture(autouse=True)
def english():
    with translation.override("en"):
        yield


def customer(company) -> dict:
    return {"customer": str(company.customer_unique_id)}


@pytest.fixture
def quick(sandbox, sandbox_company):
    """Notes settle at once (20 -> 50 -> 60) on the sandbox's next read."""
    sandbox.control("POST", "dispatch/settings", {**customer(sandbox_company), "processing_seconds": 0,
                                                  "approve_seconds": 0, "error_rate": 0})
    return sandbox


@pytest.fixture
def listed(sandbox_company):
    """The users' list as the sandbox hands it over (the mailbox of the receiver is read from it)."""
    taxpayers.taxpayers_store(services.dispatch_client(sandbox_company).taxpayer_list())
    return taxpayers.mailboxes(SINGLE_VKN)


def new_note(company, *, status=DispatchStatus.QUEUED, carrier=False, alias=None, **fields):
    account = receiver(company)
    now = timezone.localtime()
    note = DispatchNote(
        company=company, current_account=account, receiver_identifier=account.identifier, receiver_name=account.name,
        target_alias=alias if alias is not None else taxpayers.mailboxes(account.identifier)[0],
        receiver_city="İstanbul", receiver_district="Kadıköy", delivery_city="İstanbul", delivery_district="Kadıköy",
        delivery_zip_code="34710",
        issue_date=now.date(), issue_time=now.time(), shipment_date=now,
        requested_status=status, plate_number="34ABC123", **{"numbering": Numbering.SERIES, "prefix": "IRS", **fields})
    if carrier:
        note.carrier_title, note.carrier_vkn_tckn = "Hızlı Nakliyat A.Ş.", "3920000003"
    lines = [DispatchLine(product_name="Çimento 50 kg", quantity=40, unit_code="C62", unit_price="125.50", vat_rate=20),
             DispatchLine(product_name="Kum", quantity="2.5", unit_code="TNE", unit_price=0, vat_rate=0)]
    drivers = [] if carrier else [DispatchDriver(name="Ayşe", surname="Yılmaz", tckn="10000000146")]
    return services.note_save(note, lines, drivers)


def on_platform(company, **query):
    return services.dispatch_client(company).list(1, 500, **query)["items"]


def pushed(note):
    push.note_push(note.pk)
    note.refresh_from_db()
    return note


def test_a_note_is_created_sent_and_followed_until_approved(quick, sandbox_company, listed):
    note = pushed(new_note(sandbox_company))
    assert note.sync_state == SyncState.SYNCED and note.remote_id and note.remote_status == DispatchStatus.QUEUED
    assert note.despatch_number == f"IRS{timezone.localdate().year}000000001"
    status = services.dispatch_client(sandbox_company).status(note.remote_id)
    assert status["despatchAdviceNumber"] == note.despatch_number
    polling.run(mirror.NOTES_POLL, sandbox_company)
    polling.run(mirror.NOTES_POLL, sandbox_company)
    note.refresh_from_db()
    assert note.remote_status == DispatchStatus.APPROVED
    assert note.envelope_id and note.envelope_status == "1000"  # given once the envelope exists


def test_the_envelope_fields_may_be_missing(sandbox, sandbox_company, listed):
    note = pushed(new_note(sandbox_company, status=DispatchStatus.DRAFT))
    answer = services.dispatch_client(sandbox_company).status(note.remote_id)
    assert answer["status"] == 0 and "envelopeId" not in answer
    assert services.answer_fields(answer)["remote_status"] == 0 and note.envelope_id == ""


def test_a_carrier_company_is_sent_instead_of_drivers(quick, sandbox_company, listed):
    note = pushed(new_note(sandbox_company, carrier=True))
    assert note.sync_state == SyncState.SYNCED
    ubl = mirror.NOTE_DOCUMENTS.get(note, DocumentKind.UBL)
    assert b"H\xc4\xb1zl\xc4\xb1 Nakliyat" in ubl.file.open("rb").read()


def test_a_create_answered_500_after_it_took_effect_is_not_created_twice(sandbox, sandbox_company, listed):
    note = new_note(sandbox_company)
    sandbox.add_fault(path=CREATE_PATH, method="POST", error_rate=1, after_apply="error", remaining=1)
    with pytest.raises(RemoteError):
        push.note_push(note.pk)
    note.refresh_from_db()
    assert note.sync_state == SyncState.QUEUED and not note.remote_id
    assert push.note_push(note.pk) == "Found on the platform; not sent again."
    note.refresh_from_db()
    assert note.sync_state == SyncState.SYNCED and note.remote_id
    assert [item["id"] for item in on_platform(sandbox_company)] == [note.remote_id]


def test_a_note_the_platform_refuses_keeps_its_reason(sandbox_company, listed):
    note = new_note(sandbox_company, alias="urn:mail:yok@baska.com.tr")
    with pytest.raises(RemoteError):
        push.note_push(note.pk)
    note.refresh_from_db()
    assert note.sync_state == SyncState.FAILED and "alias" in note.last_error.lower()
    assert not on_platform(sandbox_company)


def test_a_draft_is_sent_by_the_status_change_and_a_note_in_error_goes_back_to_draft(quick, sandbox, sandbox_company,
                                                                                      listed):
    note = pushed(new_note(sandbox_company, status=DispatchStatus.DRAFT))
    assert note.remote_status == DispatchStatus.DRAFT
    actions.action_request(DispatchNote, "send", [note])
    assert actions.action_run(DispatchNote, "send", [note.pk]) == "1 dispatch note changed to “Queued”."
    note.refresh_from_db()
    assert note.remote_status == DispatchStatus.QUEUED and note.requested_status == DispatchStatus.QUEUED
    sandbox.control("POST", "dispatch/status", {**customer(sandbox_company), "id": note.remote_id, "status": 40,
                                                "message": "Alıcı posta kutusu hatalı"})
    polling.run(mirror.NOTES_POLL, sandbox_company)
    note.refresh_from_db()
    assert note.remote_status == DispatchStatus.ERROR and "posta kutusu" in note.status_message
    actions.action_request(DispatchNote, "draft", [note])
    actions.action_run(DispatchNote, "draft", [note.pk])
    note.refresh_from_db()
    assert note.remote_status == DispatchStatus.DRAFT and note.is_editable


def test_a_status_change_the_platform_refuses_keeps_its_refusal(sandbox, sandbox_company, listed):
    note = pushed(new_note(sandbox_company, status=DispatchStatus.DRAFT))
    note.remote_status = DispatchStatus.ERROR  # the mirror is behind: the platform has approved it meanwhile
    note.save()
    sandbox.control("POST", "dispatch/status", {**customer(sandbox_company), "id": note.remote_id, "status": 60})
    actions.action_request(DispatchNote, "draft", [note])
    with pytest.raises(RemoteError):
        actions.action_run(DispatchNote, "draft", [note.pk])
    note.refresh_from_db()
    assert note.last_error and not note.pending_action and note.last_error_source == "platform"
    assert note.remote_status == DispatchStatus.APPROVED  # the platform's own word, read after the refusal


def test_a_status_change_already_done_on_the_platform_is_success(sandbox, sandbox_company, listed):
    note = pushed(new_note(sandbox_company, status=DispatchStatus.DRAFT))
    note.remote_status = DispatchStatus.ERROR  # the mirror is behind: the platform has the draft already
    note.save()
    actions.action_request(DispatchNote, "draft", [note])
    actions.action_run(DispatchNote, "draft", [note.pk])
    note.refresh_from_db()
    assert note.remote_status == DispatchStatus.DRAFT and not note.last_error and not note.pending_action


def test_a_status_change_is_refused_here_for_a_note_in_the_wrong_status(sandbox_company, listed):
    note = pushed(new_note(sandbox_company))
    with pytest.raises(services.DispatchError, match="Only notes in status “Draft”"):
        actions.action_request(DispatchNote, "send", [note])
    assert not RemoteCall.objects.filter(operation="dispatch.outbox_update_status").exists()


def test_a_note_in_error_is_updated_and_an_update_lost_after_it_took_effect_is_not_sent_again(
        sandbox, sandbox_company, listed):
    note = pushed(new_note(sandbox_company, status=DispatchStatus.DRAFT))
    note.notes = "Kapıda teslim"
    note.requested_status = DispatchStatus.QUEUED
    lines = list(note.lines.all())[:1]
    services.note_save(note, lines, list(note.drivers.all()))
    sandbox.add_fault(path=f"{CREATE_PATH}/{note.remote_id}", method="PUT", error_rate=1, after_apply="error",
                      remaining=1)
    with pytest.raises(RemoteError):
        push.note_push(note.pk)
    assert push.note_push(note.pk) == "Found on the platform; not sent again."
    note.refresh_from_db()
    assert note.remote_status not in (DispatchStatus.DRAFT, DispatchStatus.ERROR) and note.line_count == 1
    assert len(on_platform(sandbox_company)) == 1


def test_a_ubl_note_is_sent_zipped_with_its_own_number(quick, sandbox_company, listed):
    number = f"UBL{timezone.localdate().year}000000042"
    xml = despatch_xml(number=number, issue_date=timezone.localdate().isoformat(),
                       despatch_date=timezone.localdate().isoformat())
    [note] = services.ubl_upload(company=sandbox_company, user=None, name="irsaliye.xml", data=xml,
                                 requested_status=DispatchStatus.QUEUED, numbering=Numbering.MANUAL)
    assert note.source == Source.UBL and note.despatch_number == number
    note = pushed(note)
    assert note.sync_state == SyncState.SYNCED and note.despatch_number == number
    ubl = mirror.NOTE_DOCUMENTS.get(note, DocumentKind.UBL).file.open("rb").read()
    assert number.encode() in ubl


def test_a_ubl_note_numbered_by_the_platform_from_a_prefix(quick, sandbox_company, listed):
    xml = despatch_xml(number="", issue_date=timezone.localdate().isoformat(),
                       despatch_date=timezone.localdate().isoformat())
    [note] = services.ubl_upload(company=sandbox_company, user=None, name="irsaliye.xml", data=xml,
                                 requested_status=DispatchStatus.DRAFT, numbering=Numbering.PLATFORM, prefix="ERP")
    note = pushed(note)
    assert note.despatch_number.startswith(f"ERP{timezone.localdate().year}")


def test_the_platform_refuses_a_reused_erp_reference_of_a_ubl_note(sandbox_company, listed):
    today = timezone.localdate()
    first = services.ubl_upload(company=sandbox_company, user=None, name="a.xml", requested_status=0,
                                numbering=Numbering.MANUAL, local_reference_id="ERP-7", data=despatch_xml(
                                    number=f"AAA{today.year}000000001", issue_date=today.isoformat(),
                                    despatch_date=today.isoformat()))[0]
    pushed(first)
    # Written elsewhere with the same ERP reference: the platform's duplicate check (checkLocalReferenceId).
    DispatchNote.objects.filter(pk=first.pk).update(local_reference_id="ERP-7-old")
    second = services.ubl_upload(company=sandbox_company, user=None, name="b.xml", requested_status=0,
                                 numbering=Numbering.MANUAL, local_reference_id="ERP-7", data=despatch_xml(
                                     number=f"AAA{today.year}000000002", issue_date=today.isoformat(),
                                     despatch_date=today.isoformat(), uuid="1d6e9a7b-1111-4c1e-9a4b-2f1e0c9d8b77"))[0]
    with pytest.raises(RemoteError):
        push.note_push(second.pk)
    second.refresh_from_db()
    assert second.sync_state == SyncState.FAILED and "ERP-7" in second.last_error


def test_documents_are_fetched_once_at_a_status(quick, sandbox_company, listed):
    note = pushed(new_note(sandbox_company, xslt_code="FIRMA"))
    pdf = mirror.NOTE_DOCUMENTS.get(note, DocumentKind.PDF).file.open("rb").read()
    assert pdf.startswith(b"%PDF") and pdf.rstrip().endswith(b"%%EOF")
    html = mirror.NOTE_DOCUMENTS.get(note, DocumentKind.HTML).file.open("rb").read().decode()
    assert note.despatch_number in html
    company_html = mirror.NOTE_DOCUMENTS.get(note, DocumentKind.HTML, standard=False).file.open("rb").read().decode()
    assert "FIRMA" in company_html
    archive = mirror.NOTE_DOCUMENTS.get(note, DocumentKind.ZIP).file.open("rb").read()
    with zipfile.ZipFile(io.BytesIO(archive)) as zipped:
        assert any(name.endswith(".xml") for name in zipped.namelist())
    calls = RemoteCall.objects.count()
    mirror.NOTE_DOCUMENTS.get(note, DocumentKind.PDF)
    assert RemoteCall.objects.count() == calls  # kept: no second call


def test_new_notes_are_listed_once(sandbox, sandbox_company, listed):
    sandbox.control("POST", "dispatch/seed", {**customer(sandbox_company), "count": 7})
    mine = pushed(new_note(sandbox_company))
    assert mirror.outbox_mirror(sandbox_company.pk) == "7 new dispatch notes read."
    assert DispatchNote.objects.filter(company=sandbox_company, source=Source.PLATFORM).count() == 7
    mine.refresh_from_db()
    assert not mine.is_new and DispatchNote.objects.filter(company=sandbox_company).count() == 8
    assert on_platform(sandbox_company, isNew=True) == []  # the platform returns them no more
    assert mirror.outbox_mirror(sandbox_company.pk) == "0 new dispatch notes read."


def test_the_users_list_is_read_from_the_platform(sandbox_company):
    assert taxpayers.taxpayers_refresh().endswith("read.")
    assert DispatchTaxpayer.objects.filter(identifier="1234567890").count() == 2


def test_an_excel_export_is_fetched_within_its_window(quick, sandbox_company, listed):
    quick.configure(export_ready_seconds=0)
    pushed(new_note(sandbox_company))
    start = timezone.localtime() - timedelta(days=1)
    export = DISPATCH_EXPORTS.start(company=sandbox_company, filters={"startDate": start.isoformat()})
    from backoffice.core.jobs import TryLater

    deadline = time.monotonic() + 20
    while True:  # as the job runner does: again after each TryLater, until ready
        try:
            DISPATCH_EXPORTS.run(export=export)
            break
        except TryLater:
            assert time.monotonic() < deadline, "the export never showed in the history"
            time.sleep(0.2)
    export.refresh_from_db()
    assert export.file and export.state == "ready"


# --- after review: the paths where a note could be shown sent when what it shows never left ----------------------
def test_an_action_waits_for_the_notes_update_and_the_update_leaves_with_its_new_content(sandbox, sandbox_company,
                                                                                         listed):
    note = pushed(new_note(sandbox_company, status=DispatchStatus.DRAFT))
    note.notes = "DÜZELTİLMİŞ: 40 yerine 4 çuval"
    line = note.lines.first()
    line.quantity = 4
    services.note_save(note, [line], list(note.drivers.all()))
    with pytest.raises(services.DispatchError, match="on its way to the platform"):
        actions.action_request(DispatchNote, "send", [DispatchNote.objects.get(pk=note.pk)])
    assert push.note_push(note.pk) == "Sent to the platform."  # not "found": an update of a draft is sent
    ubl = services.dispatch_client(sandbox_company).ubl(note.remote_id)[0]
    assert "DÜZELTİLMİŞ".encode() in ubl


def test_a_retried_create_does_not_take_over_another_note_with_the_same_erp_reference(sandbox_company, listed):
    other = pushed(new_note(sandbox_company, local_reference_id="ERP-9"))
    DispatchNote.objects.filter(pk=other.pk).delete()  # written elsewhere, not mirrored here yet
    mine = new_note(sandbox_company, local_reference_id="ERP-9")
    DispatchNote.objects.filter(pk=mine.pk).update(attempts=1)  # an earlier attempt may have gone: it reconciles
    with pytest.raises(RemoteError):
        push.note_push(mine.pk)
    mine.refresh_from_db()
    assert mine.sync_state == SyncState.FAILED and not mine.remote_id
    assert "already has the ERP reference ERP-9" in mine.last_error
    assert len(on_platform(sandbox_company)) == 1


def test_a_note_whose_erp_reference_is_on_the_platform_already_is_not_sent(sandbox_company, listed):
    other = pushed(new_note(sandbox_company, local_reference_id="ERP-10"))
    DispatchNote.objects.filter(pk=other.pk).delete()
    mine = new_note(sandbox_company, local_reference_id="ERP-10")
    with pytest.raises(RemoteError):
        push.note_push(mine.pk)
    mine.refresh_from_db()
    assert mine.sync_state == SyncState.FAILED and "ERP-10" in mine.last_error
    assert [item["localReferenceId"] for item in on_platform(sandbox_company)] == ["ERP-10"]


def test_one_note_the_platform_does_not_know_does_not_stop_the_polling(quick, sandbox_company, listed):
    good = pushed(new_note(sandbox_company))
    DispatchNote.objects.create(company=sandbox_company, remote_id="0a0a0a0a-1111-2222-3333-444444444444",
                                remote_status=20, sync_state=SyncState.SYNCED, local_reference_id="BO-GHOST",
                                issue_date=timezone.localdate())
    DispatchNote.objects.filter(local_reference_id="BO-GHOST").update(updated_at=timezone.now() - timedelta(hours=1))
    polling.run(mirror.NOTES_POLL, sandbox_company)
    polling.run(mirror.NOTES_POLL, sandbox_company)
    good.refresh_from_db()
    assert good.remote_status == DispatchStatus.APPROVED


def test_a_kept_document_is_fetched_again_after_an_update(quick, sandbox_company, listed):
    note = pushed(new_note(sandbox_company, status=DispatchStatus.DRAFT))
    assert "06ZZZ999" not in mirror.NOTE_DOCUMENTS.get(note, DocumentKind.HTML).file.open("rb").read().decode()
    note.plate_number = "06ZZZ999"
    services.note_save(note, list(note.lines.all()), list(note.drivers.all()))
    note = pushed(note)
    assert "06ZZZ999" in mirror.NOTE_DOCUMENTS.get(note, DocumentKind.HTML).file.open("rb").read().decode()


def test_an_update_does_not_list_the_note_as_new_again(quick, sandbox_company, listed):
    note = pushed(new_note(sandbox_company, status=DispatchStatus.DRAFT))
    mirror.outbox_mirror(sandbox_company.pk)
    note.refresh_from_db()
    note.plate_number = "06ZZZ998"
    services.note_save(note, list(note.lines.all()), list(note.drivers.all()))
    pushed(note)
    assert on_platform(sandbox_company, isNew=True) == []


def test_back_to_draft_leaves_no_old_envelope(sandbox, sandbox_company, listed):
    note = pushed(new_note(sandbox_company))
    sandbox.control("POST", "dispatch/status", {**customer(sandbox_company), "id": note.remote_id, "status": 40})
    # An envelope read before the note failed (the status answer leaves it out at 40, so it stays here).
    DispatchNote.objects.filter(pk=note.pk).update(remote_status=40, envelope_id="b1f0c2d4-0000-4000-8000-00000000000e",
                                                   envelope_status="1000")
    note.refresh_from_db()
    actions.action_request(DispatchNote, "draft", [note])
    actions.action_run(DispatchNote, "draft", [note.pk])
    note.refresh_from_db()
    assert note.remote_status == DispatchStatus.DRAFT and (note.envelope_id, note.envelope_status) == ("", "")


@pytest.mark.parametrize("carrier", [False, True])
def test_the_ubl_the_platform_writes_of_a_json_note_passes_our_own_check(quick, sandbox_company, listed, carrier):
    from backoffice.dispatch import ubl

    note = pushed(new_note(sandbox_company, carrier=carrier))
    xml = services.dispatch_client(sandbox_company).ubl(note.remote_id)[0]
    assert ubl.check_xml("json.xml", xml, manual_number=True).problems == []


def test_a_zip_holding_one_uuid_twice_is_refused_whole(sandbox_company, listed):
    from .ubl_samples import zipped

    year = timezone.localdate().year
    data = zipped({"a.xml": despatch_xml(number=f"ZZZ{year}000000001"),
                   "b.xml": despatch_xml(number=f"ZZZ{year}000000002")})  # the same cbc:UUID
    with pytest.raises(services.DispatchError, match="cbc:UUID is used once"):
        services.ubl_upload(company=sandbox_company, user=None, name="two.zip", data=data, requested_status=20,
                            numbering=Numbering.MANUAL)
    assert not DispatchNote.objects.exists()


def test_a_ubl_note_in_error_is_corrected_by_its_file(quick, sandbox, sandbox_company, listed):
    today = timezone.localdate()
    number = f"UBL{today.year}000000077"
    [note] = services.ubl_upload(company=sandbox_company, user=None, name="a.xml", requested_status=20,
                                 numbering=Numbering.MANUAL, data=despatch_xml(number=number))
    note = pushed(note)
    sandbox.control("POST", "dispatch/status", {**customer(sandbox_company), "id": note.remote_id, "status": 40,
                                                "message": "Teslimat adresi hatalı"})
    polling.run(mirror.NOTES_POLL, sandbox_company)
    note.refresh_from_db()
    assert note.remote_status == DispatchStatus.ERROR and not services.replace_refusal(note)
    with pytest.raises(services.DispatchError, match="keeps the note's cbc:UUID"):
        services.ubl_replace(note, name="b.xml", requested_status=20, data=despatch_xml(
            number=number, uuid="1d6e9a7b-1111-4c1e-9a4b-2f1e0c9d8b77"))
    services.ubl_replace(note, name="b.xml", requested_status=20, data=despatch_xml(
        number=number, uuid=note.remote_id, plate="06DEF456"))
    assert push.note_push(note.pk) == "Sent to the platform."
    note.refresh_from_db()
    assert note.remote_status not in (DispatchStatus.ERROR, DispatchStatus.DRAFT) and note.plate_number == "06DEF456"
    assert b"06DEF456" in services.dispatch_client(sandbox_company).ubl(note.remote_id)[0]
    assert len(on_platform(sandbox_company)) == 1


# --- issue 28: the rules left partial or wrong ---------------------------------------------------------------
def test_a_note_with_an_undefined_prefix_keeps_the_platforms_warning_and_shows_it(quick, sandbox, sandbox_company,
                                                                                   listed, client, accountant):
    """Document 3, 2.9: an undefined prefix gives a no-prefix-found warning; the note keeps it, its page shows it."""
    sandbox.control("POST", "dispatch/settings", {**customer(sandbox_company), "prefixes": ["IRS"]})
    today = timezone.localdate().isoformat()
    [note] = services.ubl_upload(company=sandbox_company, user=None, name="irsaliye.xml", requested_status=0,
                                 numbering=Numbering.PLATFORM, prefix="ERP",
                                 data=despatch_xml(number="", issue_date=today, despatch_date=today))
    note = pushed(note)
    assert note.sync_state == SyncState.SYNCED
    assert note.despatch_number.startswith(f"EIR{timezone.localdate().year}")  # the default series
    assert note.platform_warning.startswith("No prefix found: 'ERP'")
    for language, heading in (("tr", "Platformun irsaliyeyi alırken verdiği uyarı"),
                              ("en", "The platform's warning when it took the note")):
        page = login(client, accountant, sandbox_company, language=language).get(
            reverse("dispatch:dispatchnote_detail", args=[note.pk])).content.decode()
        assert heading in page and "No prefix found: &#x27;ERP&#x27;" in page
    [defined] = services.ubl_upload(company=sandbox_company, user=None, name="b.xml", requested_status=0,
                                    numbering=Numbering.PLATFORM, prefix="IRS", data=despatch_xml(
                                        number="", issue_date=today, despatch_date=today,
                                        uuid="1d6e9a7b-2222-4c1e-9a4b-2f1e0c9d8b77"))
    defined = pushed(defined)
    assert defined.despatch_number.startswith("IRS") and defined.platform_warning == ""


def test_an_undefined_prefix_is_still_said_when_the_answer_carrying_the_warning_was_lost(quick, sandbox,
                                                                                           sandbox_company, listed):
    sandbox.control("POST", "dispatch/settings", {**customer(sandbox_company), "prefixes": ["IRS"]})
    today = timezone.localdate().isoformat()
    [note] = services.ubl_upload(company=sandbox_company, user=None, name="irsaliye.xml", requested_status=0,
                                 numbering=Numbering.PLATFORM, prefix="ERP",
                                 data=despatch_xml(number="", issue_date=today, despatch_date=today))
    sandbox.add_fault(path=UBL_PATH, method="POST", error_rate=1, after_apply="error", remaining=1)
    with pytest.raises(RemoteError):
        push.note_push(note.pk)
    assert push.note_push(note.pk) == "Found on the platform; not sent again."
    note.refresh_from_db()
    assert note.despatch_number.startswith(f"EIR{timezone.localdate().year}")
    assert "from another series than the prefix ERP asked: the prefix is not defined there" in note.platform_warning


def test_a_zip_is_fetched_with_is_standart_xslt(quick, sandbox_company, listed):
    """Document 3, 4.5: Get ZIP takes isStandartXslt; the company's layout is asked with false."""
    note = pushed(new_note(sandbox_company, xslt_code="FIRMA"))
    standard = mirror.NOTE_DOCUMENTS.get(note, DocumentKind.ZIP).file.open("rb").read()
    ours = mirror.NOTE_DOCUMENTS.get(note, DocumentKind.ZIP, standard=False).file.open("rb").read()
    paths = list(RemoteCall.objects.filter(operation="dispatch.outbox_zip").values_list("path", flat=True))
    assert sorted(path.rsplit("/", 2)[1:] for path in paths) == [["zip", "false"], ["zip", "true"]]
    with zipfile.ZipFile(io.BytesIO(ours)) as archive:
        page = next(archive.read(name) for name in archive.namelist() if name.endswith(".html")).decode()
    assert "FIRMA" in page and standard != ours


def test_a_retried_create_does_not_take_over_a_note_of_another_date_under_its_reference(sandbox_company, listed):
    """Issue 28: the note found by our localReferenceId is ours only when its content matches (here its date)."""
    other = new_note(sandbox_company, local_reference_id="ERP-11")
    yesterday = timezone.localdate() - timedelta(days=1)
    DispatchNote.objects.filter(pk=other.pk).update(numbering=Numbering.PLATFORM, despatch_number="", prefix="",
                                                    issue_date=yesterday)
    pushed(DispatchNote.objects.get(pk=other.pk))
    DispatchNote.objects.filter(pk=other.pk).delete()  # written elsewhere: same ERP reference, same receiver
    mine = new_note(sandbox_company, local_reference_id="ERP-11")
    DispatchNote.objects.filter(pk=mine.pk).update(numbering=Numbering.PLATFORM, despatch_number="", prefix="",
                                                   attempts=1)  # an earlier attempt may have gone: it reconciles
    with pytest.raises(RemoteError):
        push.note_push(mine.pk)
    mine.refresh_from_db()
    assert mine.sync_state == SyncState.FAILED and not mine.remote_id
    assert f"dated {yesterday.isoformat()}" in mine.last_error and "already has the ERP reference ERP-11" in \
        mine.last_error and "Give this note another ERP reference" in mine.last_error
    assert len(on_platform(sandbox_company)) == 1


def test_a_retried_create_whose_number_another_note_has_is_refused_on_the_number(sandbox_company, listed):
    """Issue 28: found by our number under another reference, the platform's note is not ours: refused as taken,
    saying what to do (not sent again to be refused by the platform in its own words)."""
    other = pushed(new_note(sandbox_company, local_reference_id="ERP-12"))
    number = other.despatch_number
    DispatchNote.objects.filter(pk=other.pk).delete()
    mine = new_note(sandbox_company, local_reference_id="ERP-13")
    DispatchNote.objects.filter(pk=mine.pk).update(despatch_number=number, attempts=1)
    with pytest.raises(RemoteError):
        push.note_push(mine.pk)
    mine.refresh_from_db()
    assert mine.sync_state == SyncState.FAILED and not mine.remote_id
    assert f"The number {number} is taken on the platform by another note" in mine.last_error
    assert "Write it as a new note with another number or prefix." in mine.last_error
    assert RemoteCall.objects.filter(operation="dispatch.outbox_post_json").count() == 1  # the other's only
    assert len(on_platform(sandbox_company)) == 1


def test_a_single_push_waits_while_the_number_before_it_is_on_its_way(sandbox, sandbox_company, listed):
    """Issue 28: a 503 on N, then N+1 pushed by its own job: N+1 waits (its job runs again shortly, nothing sent)
    until N is on the platform, so the platform never sees N+1 before N. A note numbered by hand waits for
    nothing."""
    first = new_note(sandbox_company)
    sandbox.add_fault(path=CREATE_PATH, method="POST", error_rate=1, error_status=503, remaining=1)
    with pytest.raises(RemoteError):
        push.note_push(first.pk)
    first.refresh_from_db()
    assert first.sync_state == SyncState.QUEUED
    second = new_note(sandbox_company)
    with pytest.raises(jobs.TryLater, match=f"Waiting for dispatch note {first.despatch_number}"):
        push.note_push(second.pk)
    second.refresh_from_db()
    assert second.sync_state == SyncState.QUEUED and second.attempts == 0 and on_platform(sandbox_company) == []
    typed = new_note(sandbox_company, numbering=Numbering.MANUAL, despatch_number=f"{first.despatch_number[:7]}"
                                                                                   "000000099")
    assert pushed(typed).sync_state == SyncState.SYNCED
    assert pushed(first).sync_state == SyncState.SYNCED and pushed(second).sync_state == SyncState.SYNCED
    arrived = [item["despatchAdviceNumber"] for item in on_platform(sandbox_company)]  # in the order created
    assert arrived == [typed.despatch_number, first.despatch_number, second.despatch_number]


@pytest.mark.parametrize("item,ours", [
    ({}, True),  # an item that carries nothing to compare: found by our reference or number alone
    ({"localReferenceId": "BO-1", "targetVknTckn": SINGLE_VKN}, True),
    ({"localReferenceId": None}, False),  # a portal note without a reference, found by our number: not ours
    ({"issueDate": None}, False),
    ({"targetVknTckn": "9999999999"}, False),  # what it carries must be ours
    ({"issueDate": "2020-01-01T00:00:00"}, False),
    ({"despatchAdviceNumber": "IRS2026000000002"}, False),
    ({"localReferenceId": "ERP-7"}, False),
    ({"despatchAdviceNumber": "IRS2026000000001", "localReferenceId": "BO-1", "targetVknTckn": SINGLE_VKN,
      "issueDate": "2026-03-05T00:00:00+03:00"}, True),
])
def test_a_note_found_is_ours_when_what_its_item_carries_matches(item, ours):
    note = DispatchNote(despatch_number="IRS2026000000001", local_reference_id="BO-1",
                        receiver_identifier=SINGLE_VKN, issue_date=timezone.datetime(2026, 3, 5).date())
    assert push._is_ours(note, {"id": "x", **item}) is ours
