"""Copy of a dispatch note (issue 29, section 5): a new note with the same receiver, shipment, drivers and lines, dated
today, with a new number and ERP reference, saved as a draft as the form saves one (it reaches the platform as status
0, nothing is sent to the receiver); refused for notes not written here; another company's note is a 404; a double
submission makes one copy; and through the sandbox: the copy's draft sent by the status change and approved."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.template.loader import render_to_string
from django.test import RequestFactory
from django.urls import reverse
from django.utils import timezone, translation

from backoffice.core import actions, polling
from backoffice.core.choices import SyncState
from backoffice.core.models import DocumentSeries, RemoteCall
from backoffice.dispatch import copies, mirror, push, services, taxpayers
from backoffice.dispatch.choices import DispatchStatus, Numbering, Source
from backoffice.dispatch.models import DispatchDriver, DispatchLine, DispatchNote
from tests.conftest import form_post, guard_fields, make_user
from tests.testapp.testing import wait_for
from tests.tickets.conftest import login

from .builders import SINGLE_ALIAS, SINGLE_VKN, receiver

# The database engine matters here (the mirror's bulk upserts): CI's SQLite pass runs these too.
pytestmark = [pytest.mark.django_db, pytest.mark.database]


@pytest.fixture(autouse=True)
def english():
    with translation.override("en"):
        yield


@pytest.fixture
def web(client, accountant, company):
    return login(client, accountant, company)


def approved_note(company, *, numbering=Numbering.SERIES, number=None, source=Source.FORM, lines=True, **fields):
    """A note as it stands once the platform approved it: its id, number, status and envelope are the platform's."""
    account = receiver(company)
    issued = timezone.localtime() - timedelta(days=5)
    year = issued.year
    if number is None and numbering == Numbering.SERIES:
        number = DocumentSeries.allocate(company=company, kind=services.SERIES_KIND, prefix="IRS", year=year)
    note = DispatchNote.objects.create(
        company=company, current_account=account, receiver_identifier=account.identifier, receiver_name=account.name,
        target_alias=SINGLE_ALIAS, receiver_city="İstanbul", receiver_district="Kadıköy", delivery_city="Ankara",
        delivery_district="Çankaya", delivery_zip_code="06690", numbering=numbering, prefix=(number or "")[:3],
        despatch_number=number or f"GIB{year}000000007", issue_date=issued.date(), issue_time=issued.time(),
        shipment_date=issued, plate_number="34ABC123", source=source, local_reference_id="ERP-7781",
        remote_id="b0c1e2d3-0000-4000-8000-000000000001", remote_status=DispatchStatus.APPROVED,
        requested_status=DispatchStatus.QUEUED, sync_state=SyncState.SYNCED, envelope_id="env-1",
        envelope_status="1300", status_message="Onaylandı", notes="Kırılacak eşya", **fields)
    if lines:
        DispatchLine.objects.create(note=note, position=1, product_name="Çimento 50 kg", product_code="CIM-50",
                                    quantity=Decimal(40), unit_code="C62", unit_price=Decimal("125.50"),
                                    vat_rate=Decimal(20))
        DispatchLine.objects.create(note=note, position=2, product_name="Kum", quantity=Decimal("2.5"),
                                    unit_code="TNE", unit_price=Decimal(0), vat_rate=Decimal(0))
    DispatchDriver.objects.create(note=note, position=1, name="Ayşe", surname="Yılmaz", tckn="10000000146")
    services.apply_totals(note, list(note.lines.all()))
    note.save()
    return note


def copy_url(note):
    return reverse("dispatch:dispatchnote_copy", args=[note.pk])


def line_values(note):
    return list(note.lines.values_list("position", "product_name", "product_code", "quantity", "unit_code",
                                       "unit_price", "vat_rate"))


def the_copy(original):
    return DispatchNote.objects.exclude(pk=original.pk).get()


def test_a_copy_is_a_draft_with_the_receiver_and_lines_dated_today_with_a_new_number(web, company):
    original = approved_note(company)
    response = form_post(web, copy_url(original), {})
    copy = the_copy(original)
    assert response.status_code == 302 and response["Location"] == reverse("dispatch:dispatchnote_detail",
                                                                          args=[copy.pk])
    assert (copy.current_account, copy.receiver_identifier, copy.target_alias, copy.delivery_city, copy.plate_number,
            copy.notes) == (original.current_account, SINGLE_VKN, SINGLE_ALIAS, "Ankara", "34ABC123", "Kırılacak eşya")
    assert line_values(copy) == line_values(original)
    assert list(copy.drivers.values_list("name", "surname", "tckn")) == [("Ayşe", "Yılmaz", "10000000146")]
    now = timezone.localtime()
    assert copy.issue_date == now.date() and copy.shipment_date >= now - timedelta(minutes=2)
    # A new number of the same prefix, a new ERP reference, none of the platform's values.
    year = now.year
    assert copy.despatch_number == f"IRS{year}000000002" != original.despatch_number
    assert copy.local_reference_id.startswith("BO-") and copy.local_reference_id != original.local_reference_id
    assert (copy.remote_id, copy.remote_status, copy.envelope_id, copy.status_message) == ("", None, "", "")
    assert copy.payable_amount == original.payable_amount == Decimal("6024.00")
    # Saved as a new note of the form is: a draft (status 0) on its way to the platform, nothing sent yet.
    assert copy.requested_status == DispatchStatus.DRAFT and copy.source == Source.FORM
    assert copy.sync_state == SyncState.QUEUED and not RemoteCall.objects.exists()
    assert copy.created_by.username == "muhasebe"
    assert "saved as a draft dated today" in web.get(response["Location"]).content.decode()


def test_a_note_numbered_by_hand_is_copied_with_the_next_number_of_its_prefix(company):
    year = timezone.localdate().year
    original = approved_note(company, numbering=Numbering.MANUAL, number=f"MAN{year}000000123")
    copy = copies.note_copy(original)
    assert copy.numbering == Numbering.SERIES and copy.despatch_number == f"MAN{year}000000001"


def test_a_note_numbered_by_the_platform_is_numbered_by_it_again(company):
    original = approved_note(company, numbering=Numbering.PLATFORM)
    copy = copies.note_copy(original)
    assert copy.numbering == Numbering.PLATFORM and copy.despatch_number == ""


@pytest.mark.parametrize(("fields", "message"), [
    ({"source": Source.UBL}, "This note came from a UBL file"),
    ({"source": Source.PLATFORM, "lines": False}, "its lines are not kept here, so it cannot be copied"),
])
def test_a_note_not_written_here_is_not_copied(web, company, fields, message):
    original = approved_note(company, **fields)
    response = form_post(web, copy_url(original), {})
    assert response["Location"] == reverse("dispatch:dispatchnote_detail", args=[original.pk])
    assert DispatchNote.objects.count() == 1
    assert message in web.get(response["Location"]).content.decode()
    assert message in web.get(copy_url(original)).content.decode()


def test_the_copy_page_asks_first_and_a_double_submission_makes_one_copy(web, company):
    original = approved_note(company)
    page = web.get(copy_url(original))
    assert page.status_code == 200 and DispatchNote.objects.count() == 1
    fields = guard_fields(page.content.decode())
    first, second = web.post(copy_url(original), fields), web.post(copy_url(original), fields)
    assert DispatchNote.objects.count() == 2 and first["Location"] == second["Location"]


def test_another_companys_note_is_not_found_and_a_manager_may_not_copy(client, web, company, other_company):
    theirs = approved_note(other_company)
    assert web.get(copy_url(theirs)).status_code == 404
    assert web.post(copy_url(theirs), {"submission_key": "6f1c1f4e-4a39-4b55-9a57-2d0c8b2e6a12",
                                       "opened_for": str(other_company.pk)}).status_code == 404
    manager = login(client, make_user("okur", "manager", [company]), company)
    assert manager.post(copy_url(theirs), {}).status_code == 403
    assert DispatchNote.objects.count() == 1


def test_the_buttons_offer_copy_and_print(accountant, company):
    original = approved_note(company)
    request = RequestFactory().get("/")
    request.user, request.company = accountant, company
    html = render_to_string("dispatch/includes/copy_actions.html", {"object": original}, request=request)
    pdf = reverse("dispatch:dispatchnote_document", kwargs={"pk": original.pk, "kind": "pdf"})
    assert f'action="{copy_url(original)}"' in html and f'href="{pdf}" target="_blank"' in html
    assert 'name="submission_key"' in html


# --- through the sandbox: the copy's draft sent by the status change and approved ----------------------------
def test_a_copy_goes_as_a_draft_is_sent_by_the_status_change_and_is_approved(sandbox, sandbox_company):
    sandbox.control("POST", "dispatch/settings", {"customer": str(sandbox_company.customer_unique_id),
                                                  "processing_seconds": 0, "approve_seconds": 0, "error_rate": 0})
    taxpayers.taxpayers_store(services.dispatch_client(sandbox_company).taxpayer_list())
    account = receiver(sandbox_company)
    now = timezone.localtime()
    original = services.note_save(DispatchNote(
        company=sandbox_company, current_account=account, receiver_identifier=account.identifier,
        receiver_name=account.name, target_alias=taxpayers.mailboxes(account.identifier)[0], receiver_city="İstanbul",
        receiver_district="Kadıköy", delivery_city="İstanbul", delivery_district="Kadıköy", numbering=Numbering.SERIES,
        prefix="IRS", issue_date=now.date(), issue_time=now.time(), shipment_date=now, plate_number="34ABC123",
        requested_status=DispatchStatus.QUEUED),
        [DispatchLine(product_name="Çimento 50 kg", quantity=40, unit_code="C62", unit_price="125.50", vat_rate=20)],
        [DispatchDriver(name="Ayşe", surname="Yılmaz", tckn="10000000146")])
    push.note_push(original.pk)

    def approved(note):
        def settled():
            polling.run(mirror.NOTES_POLL, sandbox_company)
            return DispatchNote.objects.get(pk=note.pk).remote_status == DispatchStatus.APPROVED
        wait_for(settled, timeout=30, message="the note approved")

    approved(original)
    copy = copies.note_copy(DispatchNote.objects.get(pk=original.pk))
    push.note_push(copy.pk)
    copy.refresh_from_db()
    # On the platform as a draft: nothing has gone to the receiver.
    assert copy.sync_state == SyncState.SYNCED and copy.remote_id and copy.remote_status == DispatchStatus.DRAFT
    assert services.dispatch_client(sandbox_company).status(copy.remote_id)["status"] == DispatchStatus.DRAFT
    actions.action_request(DispatchNote, "send", [copy])
    actions.action_run(DispatchNote, "send", [copy.pk])
    approved(copy)
    copy.refresh_from_db()
    original.refresh_from_db()
    assert copy.despatch_number and copy.despatch_number != original.despatch_number
    assert copy.remote_id != original.remote_id
    items = services.dispatch_client(sandbox_company).list(1, 500)["items"]
    assert {item["id"] for item in items} == {original.remote_id, copy.remote_id}
