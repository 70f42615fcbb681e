"""The ticket pages through the test client: create, nothing half-saved, roles, company scoping, update
rules, list filters and bulk actions (the platform is not called: jobs are only recorded)."""

from decimal import Decimal

import pytest
from django.core.paginator import EmptyPage
from django.urls import reverse
from django.utils import translation

from backoffice.core.choices import SyncState
from backoffice.core.models import DocumentSeries, JobRun
from backoffice.tickets.choices import TicketStatus
from backoffice.tickets.models import EventTicket, PassengerTicket, TicketLine, TicketLineTax
from tests.conftest import form_post, make_user

from .conftest import event_data, login, passenger_data

pytestmark = pytest.mark.django_db

EVENT_ADD = "tickets:eventticket_add"
PASSENGER_ADD = "tickets:passengerticket_add"


@pytest.fixture(autouse=True)
def english():
    with translation.override("en"):
        yield


def post_event(client, **overrides):
    return form_post(client, reverse(EVENT_ADD), event_data(**overrides))


def test_create_event_ticket_allocates_the_number_and_queues_the_push(accountant_client, company):
    response = post_event(accountant_client, requested_status="20", notes_text="Kapı 3\nÖn sıra", lines=(
        {"service_description": "Bilet", "amount": "250.00", "discount_rate": "10", "vat_rate": "20",
         "taxes": [{"tax_code": "9021", "tax_name": "Eğlence vergisi", "taxt_rate": "5"}]},
        {"service_description": "Hizmet bedeli", "amount": "10.05", "vat_rate": "20"},
    ))
    ticket = EventTicket.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("tickets:eventticket_detail",
                                                                           args=[ticket.pk])
    assert ticket.ticket_number == "ETK2026000000001" and ticket.prefix == "ETK"
    assert ticket.requested_status == TicketStatus.QUEUED and ticket.sync_state == SyncState.QUEUED
    assert ticket.company == company and ticket.created_by.username == "muhasebe"
    # 250 - 10% = 225; VAT 45; tax 11.25; 10.05 + VAT 2.01
    assert (ticket.total_amount, ticket.total_discount, ticket.total_vat, ticket.total_taxes, ticket.payable_amount) == (
        Decimal("260.05"), Decimal("25.00"), Decimal("47.01"), Decimal("11.25"), Decimal("293.31"))
    lines = list(ticket.lines.all())
    assert [(line.position, line.discount_amount, line.vat_amount) for line in lines] == [
        (1, Decimal("25.00"), Decimal("45.00")), (2, Decimal("0.00"), Decimal("2.01"))]
    assert list(TicketLineTax.objects.values_list("tax_code", "taxt_amount")) == [("9021", Decimal("11.25"))]
    assert list(ticket.notes.values_list("note", flat=True)) == ["Kapı 3", "Ön sıra"]
    run = JobRun.objects.get()
    assert run.name == "event_ticket_push" and run.target == f"tickets.eventticket:{ticket.pk}"


def test_numbers_are_consecutive_per_prefix_and_year(accountant_client):
    for seat in range(3):
        post_event(accountant_client, seat_number=f"A-{seat}")
    post_event(accountant_client, prefix="ABC", seat_number="C-1")
    post_event(accountant_client, ticket_date="2027-01-02T10:00", seat_number="C-2")
    assert sorted(EventTicket.objects.values_list("ticket_number", flat=True)) == [
        "ABC2026000000001", "ETK2026000000001", "ETK2026000000002", "ETK2026000000003", "ETK2027000000001"]


def test_a_bad_field_saves_nothing_and_allocates_no_number(accountant_client):
    response = post_event(accountant_client, event_city_id="82", lines=({"amount": "-5"},))
    assert response.status_code == 200
    form, formset = response.context["form"], response.context["formset"]
    assert "plate codes 1 to 81" in " ".join(form.errors["event_city_id"])
    assert "greater than or equal to 0" in " ".join(formset.forms[0].errors["amount"])
    assert not EventTicket.objects.exists() and not TicketLine.objects.exists() and not JobRun.objects.exists()
    assert not DocumentSeries.objects.exists()
    html = response.content.decode()
    assert 'aria-invalid="true"' in html and "Please correct the fields marked below." in html


def test_create_passenger_ticket(accountant_client, company):
    response = form_post(accountant_client, reverse(PASSENGER_ADD), passenger_data())
    ticket = PassengerTicket.objects.get()
    assert response.status_code == 302
    assert ticket.ticket_number.startswith("YLC2026") and ticket.vehicle_plate == "34ABC123"
    assert ticket.payable_amount == Decimal("440.00") and ticket.requested_status == TicketStatus.DRAFT


def test_the_form_page_shows_province_names_and_the_last_prefix(accountant_client):
    post_event(accountant_client, prefix="KNS")
    page = accountant_client.get(reverse(EVENT_ADD)).content.decode()
    assert 'value="KNS"' in page and ">İstanbul (34)</option>" in page and "js/tickets.js" in page
    assert 'data-line-template' in page and 'name="lines-TOTAL_FORMS"' in page


def test_update_in_draft_keeps_number_and_queues_again(accountant_client):
    post_event(accountant_client)
    ticket = EventTicket.objects.get()
    EventTicket.objects.filter(pk=ticket.pk).update(sync_state=SyncState.SYNCED, remote_id="e-1",
                                                    remote_status=TicketStatus.DRAFT)
    url = reverse("tickets:eventticket_edit", args=[ticket.pk])
    assert accountant_client.get(url).status_code == 200
    data = event_data(event_name="Yaz Konseri", seat_number="", lines=({"amount": "100", "vat_rate": "20"},))
    del data["prefix"]
    response = accountant_client.post(url, data)
    assert response.status_code == 302, response.context["form"].errors
    ticket.refresh_from_db()
    assert ticket.event_name == "Yaz Konseri" and ticket.ticket_number == "ETK2026000000001"
    assert ticket.remote_id == "e-1" and ticket.sync_state == SyncState.QUEUED
    assert ticket.payable_amount == Decimal("120.00") and ticket.lines.count() == 1
    # The first push job never ran here (no worker): it is still waiting and will send the new data.
    assert JobRun.objects.filter(name="event_ticket_push").count() == 1


@pytest.mark.parametrize("status", [TicketStatus.QUEUED, TicketStatus.APPROVED, TicketStatus.CANCELLED])
def test_update_only_in_status_0_or_40(accountant_client, status):
    post_event(accountant_client)
    ticket = EventTicket.objects.get()
    EventTicket.objects.filter(pk=ticket.pk).update(sync_state=SyncState.SYNCED, remote_id="e-1", remote_status=status)
    url = reverse("tickets:eventticket_edit", args=[ticket.pk])
    for response in (accountant_client.get(url, follow=True), accountant_client.post(url, event_data(), follow=True)):
        assert response.redirect_chain[-1][0] == reverse("tickets:eventticket_detail", args=[ticket.pk])
        assert "only a draft or a ticket in error can be updated" in response.content.decode()
    ticket.refresh_from_db()
    assert ticket.sync_state == SyncState.SYNCED


def test_update_in_error_is_allowed(accountant_client):
    post_event(accountant_client)
    ticket = EventTicket.objects.get()
    EventTicket.objects.filter(pk=ticket.pk).update(sync_state=SyncState.SYNCED, remote_id="e-1",
                                                    remote_status=TicketStatus.ERROR)
    data = event_data()
    del data["prefix"]
    response = accountant_client.post(reverse("tickets:eventticket_edit", args=[ticket.pk]), data)
    assert response.status_code == 302


def test_no_update_while_the_ticket_is_being_sent(accountant_client):
    post_event(accountant_client)  # QUEUED: its push has not run
    ticket = EventTicket.objects.get()
    response = accountant_client.get(reverse("tickets:eventticket_edit", args=[ticket.pk]))
    assert response.status_code == 302


def test_managers_read_but_do_not_create(client, company, manager):
    login(client, manager, company)
    assert client.get(reverse("tickets:eventticket_list")).status_code == 200
    assert client.get(reverse(EVENT_ADD)).status_code == 403
    assert client.post(reverse(EVENT_ADD), event_data()).status_code == 403
    assert client.get(reverse("tickets:ticketexport_start", args=["event"])).status_code == 200


def test_a_user_without_a_role_is_refused(client, company):
    login(client, make_user("misafir", None, [company]), company)
    assert client.get(reverse("tickets:eventticket_list")).status_code == 403


def test_another_companys_ticket_is_a_404(accountant_client, company, other_company):
    ticket = EventTicket.objects.create(company=other_company, ticket_number="ETK2026000000009", prefix="ETK",
                                        event_name="x", event_location="y", event_city_id=6,
                                        event_municipality="z", event_organizer_vkn_tckn="1234567890",
                                        payment_type="NAKIT")
    for name in ("eventticket_detail", "eventticket_edit", "eventticket_html"):
        assert accountant_client.get(reverse(f"tickets:{name}", args=[ticket.pk])).status_code == 404
    response = accountant_client.post(reverse("tickets:eventticket_bulk", args=["cancel"]),
                                      {"pk": [ticket.pk], "confirm": "1"}, follow=True)
    assert "Select at least one record first." in response.content.decode()


def test_list_filters_and_detail(accountant_client):
    post_event(accountant_client, customer_last_name="Demir")
    post_event(accountant_client, prefix="ABC", event_name="Tiyatro")
    EventTicket.objects.filter(prefix="ABC").update(remote_status=TicketStatus.APPROVED, sync_state=SyncState.SYNCED,
                                                    remote_id="e-2")
    url = reverse("tickets:eventticket_list")
    page = accountant_client.get(url).content.decode()
    assert "ETK2026000000001" in page and "ABC2026000000001" in page and "Platform Excel export" in page
    assert "ABC2026000000001" not in accountant_client.get(url, {"number": "etk"}).content.decode()
    assert "ETK2026000000001" not in accountant_client.get(url, {"remote_status": "60"}).content.decode()
    assert "ABC2026000000001" not in accountant_client.get(url, {"sync_state": "queued"}).content.decode()
    assert "ABC2026000000001" not in accountant_client.get(url, {"q": "Demir"}).content.decode()
    assert "ETK2026000000001" in accountant_client.get(url, {"date_from": "2026-03-14", "date_to": "2026-03-14"}
                                                       ).content.decode()
    assert "ETK2026000000001" not in accountant_client.get(url, {"date_from": "2026-03-15"}).content.decode()
    ticket = EventTicket.objects.get(prefix="ABC")
    detail = accountant_client.get(reverse("tickets:eventticket_detail", args=[ticket.pk])).content.decode()
    assert "Tiyatro" in detail and "Approved" in detail and 'data-action="cancel"' in detail
    assert 'hx-trigger="every 3s"' not in detail  # settled: no live refresh


def test_excel_of_the_list(accountant_client):
    post_event(accountant_client)
    response = accountant_client.get(reverse("tickets:eventticket_list"), {"export": "xlsx"})
    assert response.status_code == 200 and response["Content-Type"].startswith("application/vnd.openxmlformats")


def test_bulk_status_change_refuses_wrong_transitions_locally(accountant_client):
    post_event(accountant_client)
    ticket = EventTicket.objects.get()
    EventTicket.objects.filter(pk=ticket.pk).update(sync_state=SyncState.SYNCED, remote_id="e-1",
                                                    remote_status=TicketStatus.APPROVED)
    url = reverse("tickets:eventticket_bulk", args=["send"])
    response = accountant_client.post(url, {"pk": [ticket.pk], "confirm": "1",
                                            "return_url": reverse("tickets:eventticket_list")}, follow=True)
    assert "Only tickets in status “Draft” can be changed to “Queued”" in response.content.decode()
    ticket.refresh_from_db()
    assert ticket.pending_action == "" and not JobRun.objects.filter(name="tickets_update_status").exists()


def test_bulk_cancel_asks_for_confirmation_then_enqueues(accountant_client):
    for seat in range(2):
        post_event(accountant_client, seat_number=f"A-{seat}")
    EventTicket.objects.update(sync_state=SyncState.SYNCED, remote_status=TicketStatus.APPROVED)
    for i, ticket in enumerate(EventTicket.objects.all()):
        EventTicket.objects.filter(pk=ticket.pk).update(remote_id=f"e-{i}")
    pks = list(EventTicket.objects.values_list("pk", flat=True))
    url = reverse("tickets:eventticket_bulk", args=["cancel"])
    confirm = accountant_client.post(url, {"pk": pks})
    assert confirm.status_code == 200 and "cannot be undone" in confirm.content.decode()
    assert not JobRun.objects.filter(name="tickets_cancel").exists()
    accountant_client.post(url, {"pk": pks, "confirm": "1"})
    run = JobRun.objects.get(name="tickets_cancel")
    assert set(EventTicket.objects.values_list("pending_action", flat=True)) == {"cancel"}
    assert run.target.startswith("tickets.eventticket:")
    # a second request while the first waits is refused
    response = accountant_client.post(url, {"pk": pks, "confirm": "1"}, follow=True)
    assert "Another action on these tickets is still running" in response.content.decode()


def test_report_and_export_pages_render(accountant_client):
    for name in ("tickets:eventticketreportitem_list", "tickets:passengerticketreportitem_list",
                 "tickets:ticketexport_list"):
        assert accountant_client.get(reverse(name)).status_code == 200
    assert accountant_client.get(reverse("tickets:eventticketreportitem_list"), {"date": "1999-01-01"}
                                 ).status_code == 200
    assert accountant_client.get(reverse("tickets:ticket_list")).status_code == 302
    assert accountant_client.get(reverse("tickets:ticketexport_start", args=["nope"])).status_code == 404


def test_menu_entry_is_enabled(accountant_client):
    page = accountant_client.get(reverse("core:dashboard")).content.decode()
    assert f'href="{reverse("tickets:ticket_list")}"' in page


def test_update_keeps_untouched_lines_and_drops_deleted_ones(accountant_client):
    post_event(accountant_client, lines=({"service_description": "A", "amount": "100"},
                                         {"service_description": "B", "amount": "50"}))
    ticket = EventTicket.objects.get()
    EventTicket.objects.filter(pk=ticket.pk).update(sync_state=SyncState.SYNCED, remote_id="e-1",
                                                    remote_status=TicketStatus.DRAFT)
    url = reverse("tickets:eventticket_edit", args=[ticket.pk])
    page = accountant_client.get(url)
    formset = page.context["formset"]
    assert formset.initial_form_count() == 2 and len(formset.forms) == 3  # two lines and an empty one
    data = event_data(lines=({"service_description": "A", "amount": "100.00", "discount_rate": "", "vat_rate": ""},
                             {"service_description": "B", "amount": "50.00", "DELETE": "on"}))
    data.update({"lines-INITIAL_FORMS": "2", "lines-TOTAL_FORMS": "3"})
    del data["prefix"]
    assert accountant_client.post(url, data).status_code == 302
    assert list(ticket.lines.values_list("service_description", "amount")) == [("A", Decimal("100.00"))]


def test_a_long_list_counts_up_to_a_cap_and_every_page_stays_reachable(accountant_client, company, monkeypatch):
    from backoffice.core.generic.tables import CappedCountPaginator

    for seat in range(5):
        post_event(accountant_client, seat_number=f"A-{seat}")
    queryset = EventTicket.objects.order_by("pk")
    monkeypatch.setattr(CappedCountPaginator, "cap", 3)
    paginator = CappedCountPaginator(queryset, 2)
    assert (paginator.count, paginator.count_is_capped, paginator.num_pages) == (3, True, 2)
    assert [t.ticket_number[-1] for t in paginator.page(3)] == ["5"]  # past the counted pages
    with pytest.raises(EmptyPage):
        paginator.page(4)
    uncapped = CappedCountPaginator(queryset[:2], 2)
    assert (uncapped.count, uncapped.count_is_capped) == (2, False)
    page = accountant_client.get(reverse("tickets:eventticket_list")).content.decode()
    assert "≥ " in page  # "≥ 3 records": counted only up to the cap


def test_passenger_pages_and_the_admin_render(accountant_client, client, company):
    form_post(accountant_client, reverse(PASSENGER_ADD), passenger_data(vehicle_operating_vkn_tckn="1234567890",
                                                                  vehicle_operating_title="Anadolu Turizm",
                                                                  vehicle_operating_tax_center="Kadıköy",
                                                                  commission_amount="40", commission_tax_amount="8"))
    ticket = PassengerTicket.objects.get()
    detail = accountant_client.get(reverse("tickets:passengerticket_detail", args=[ticket.pk])).content.decode()
    assert "S-1001" in detail and "34ABC123" in detail and "Anadolu Turizm" in detail
    assert accountant_client.get(reverse("tickets:passengerticket_list"), {"expedition_number": "S-1001"}
                                 ).status_code == 200
    superuser = make_user("kok", None, [company])
    superuser.is_superuser = superuser.is_staff = True
    superuser.save()
    login(client, superuser, company)
    for name in ("admin:tickets_passengerticket_changelist", "admin:tickets_ticketexport_changelist",
                 "admin:tickets_reportrun_changelist"):
        assert client.get(reverse(name)).status_code == 200
    assert client.get(reverse("admin:tickets_passengerticket_change", args=[ticket.pk])).status_code == 200
