"""The passenger-list pages: building a list from the passenger-ticket list, roles, company scoping."""

from decimal import Decimal

import pytest
from django.urls import reverse

from backoffice.core.choices import SyncState
from backoffice.core.models import JobRun
from backoffice.passenger_lists.choices import ListState
from backoffice.passenger_lists.models import PassengerList, PassengerListExport
from tests.conftest import form_post, guard_fields

from .conftest import EXPEDITION, OPERATOR, list_data, local_ticket, login

pytestmark = pytest.mark.django_db

ADD = reverse("passenger_lists:passengerlist_add")


OPERATOR_OF_TICKETS = {"vehicle_operating_vkn_tckn": OPERATOR["vehicle_operating_vkn_tckn"],
                       "vehicle_operating_title": "Anadolu Turizm A.Ş.", "vehicle_operating_tax_center": "Kadıköy",
                       "commission_amount": Decimal("10"), "commission_tax_amount": Decimal("2")}


@pytest.fixture
def expedition(company):
    return [local_ticket(company, seat=str(seat), **OPERATOR_OF_TICKETS) for seat in (1, 2, 3)]


def a_list(company, **fields):
    values = {"expedition_number": "S-1001", "expedition_time": EXPEDITION, "vehicle_plate": "34ABC123",
              "remote_id": "11111111-2222-3333-4444-555555555555", "passenger_list_number": "YLS2026000000001",
              "sync_state": SyncState.SYNCED, **fields}
    return PassengerList.objects.create(company=company, **values)


def test_the_passenger_ticket_list_offers_the_build_action_to_those_who_build(client, accountant, manager, company,
                                                                              expedition):
    login(client, accountant, company)
    page = client.get(reverse("tickets:passengerticket_list")).content.decode()
    assert 'data-bulk-action="passenger_list"' in page and f'formaction="{ADD}"' in page
    login(client, manager, company)
    page = client.get(reverse("tickets:passengerticket_list")).content.decode()
    assert 'data-bulk-action="passenger_list"' not in page
    # Event tickets do not get it.
    assert 'data-bulk-action="passenger_list"' not in client.get(reverse("tickets:eventticket_list")).content.decode()


def test_the_selection_comes_back_as_a_filled_form_with_the_expeditions_tickets(client, accountant, company,
                                                                               expedition):
    login(client, accountant, company)
    page = client.post(ADD, {"pk": [expedition[0].pk, expedition[1].pk],
                             "return_url": reverse("tickets:passengerticket_list")})
    assert page.status_code == 200
    form = page.context["form"]
    assert form.initial["expedition_number"] == "S-1001" and form.initial["vehicle_plate"] == "34ABC123"
    # The tickets name one vehicle operator: the list starts with it and the expedition's commissions.
    assert form.initial["vehicle_operating_title"] == "Anadolu Turizm A.Ş."
    assert (form.initial["commission_amount"], form.initial["commission_tax_amount"]) == (Decimal("30.00"),
                                                                                          Decimal("6.00"))
    assert page.context["ticket_sums"] == {"payable": Decimal("1320.00"), "count": 3}
    html = page.content.decode()
    assert all(t.ticket_number in html for t in expedition) and 'id="list-existing"' not in html


def test_a_selection_of_two_expeditions_is_sent_back(client, accountant, company, expedition):
    other = local_ticket(company, seat="9", number="S-2002")
    login(client, accountant, company)
    response = client.post(ADD, {"pk": [expedition[0].pk, other.pk], "return_url": "/tickets/passenger/?q=S"},
                           follow=True)
    assert response.redirect_chain[0][0] == "/tickets/passenger/?q=S"
    assert "A passenger list covers one expedition" in response.content.decode()


def test_building_sends_the_list_and_shows_its_totals(client, accountant, company, expedition):
    login(client, accountant, company)
    response = form_post(client, ADD, list_data(pk=[expedition[0].pk]))
    plist = PassengerList.objects.get()
    assert response.status_code == 302 and response["Location"] == plist.get_absolute_url()
    assert (plist.sync_state, plist.is_new_list, plist.created_by, plist.ticket_count) == (
        SyncState.QUEUED, True, accountant, 3)
    assert JobRun.objects.filter(name="passenger_list_push", target=f"passenger_lists.passengerlist:{plist.pk}")
    page = client.get(plist.get_absolute_url())
    html = page.content.decode()
    assert 'data-total="total_payable_amount">1,320.00' in html
    assert 'data-total="total_commission_amount">30.00' in html  # the tickets' commissions, no operator given
    assert 'data-total="total_commission_tax_amount">6.00' in html
    assert all(t.ticket_number in html for t in expedition)


def test_the_list_names_the_vehicle_operator_and_its_commission_wins(client, accountant, company, expedition):
    login(client, accountant, company)
    form_post(client, ADD, list_data(**OPERATOR))
    plist = PassengerList.objects.get()
    assert (plist.total_commission_amount, plist.total_commission_tax_amount) == (Decimal("120.50"),
                                                                                  Decimal("24.10"))


def test_no_matching_ticket_is_said_on_the_plate_and_nothing_is_built(client, accountant, company, expedition):
    login(client, accountant, company)
    page = form_post(client, ADD, list_data(vehicle_plate="06 XYZ 99"))
    assert page.status_code == 200 and not PassengerList.objects.exists()
    assert 'id="id_vehicle_plate_errors"' in page.content.decode()


def test_building_again_warns_that_the_old_list_is_replaced(client, accountant, company, expedition):
    old = a_list(company)
    login(client, accountant, company)
    page = client.post(ADD, {"pk": [expedition[0].pk]}).content.decode()
    assert 'id="list-existing"' in page and old.passenger_list_number in page
    assert reverse("passenger_lists:passengerlist_edit", args=[old.pk]) in page


def test_update_page_and_a_reported_list(client, accountant, company, expedition):
    plist = a_list(company)
    login(client, accountant, company)
    edit = reverse("passenger_lists:passengerlist_edit", args=[plist.pk])
    page = client.get(edit)
    assert page.status_code == 200 and page.context["form"].fields["expedition_number"].disabled
    response = client.post(edit, list_data(**OPERATOR))
    plist.refresh_from_db()
    assert response.status_code == 302 and (plist.is_new_list, plist.sync_state) == (False, SyncState.QUEUED)
    PassengerList.objects.filter(pk=plist.pk).update(state=ListState.REPORTED, sync_state=SyncState.SYNCED)
    response = client.get(edit, follow=True)
    assert "was reported to the tax authority and cannot be updated" in response.content.decode()
    assert client.post(edit, list_data()).status_code == 302
    plist.refresh_from_db()
    assert plist.sync_state == SyncState.SYNCED  # nothing sent
    detail = client.get(plist.get_absolute_url()).content.decode()
    assert 'id="list-edit"' not in detail and 'id="list-rebuild"' in detail


def test_rebuild_creates_a_new_list(client, accountant, company, expedition):
    old = a_list(company)
    login(client, accountant, company)
    detail = client.get(old.get_absolute_url()).content.decode()
    guard = guard_fields(detail)
    url = reverse("passenger_lists:passengerlist_rebuild", args=[old.pk])
    response = client.post(url, guard)
    new = PassengerList.objects.exclude(pk=old.pk).get()
    assert response["Location"] == new.get_absolute_url() and new.is_new_list and new.ticket_count == 3
    # A second click, Back or another tab with the same page: the list already built, no third one.
    again = client.post(url, guard)
    assert again["Location"] == new.get_absolute_url() and PassengerList.objects.count() == 2
    # Without the page's key nothing is built.
    client.post(url)
    assert PassengerList.objects.count() == 2


def test_managers_read_but_do_not_build(client, manager, company, expedition):
    plist = a_list(company)
    login(client, manager, company)
    assert client.get(reverse("passenger_lists:passengerlist_list")).status_code == 200
    assert client.get(plist.get_absolute_url()).status_code == 200
    assert client.post(ADD, list_data()).status_code == 403
    assert client.get(reverse("passenger_lists:passengerlist_edit", args=[plist.pk])).status_code == 403
    assert client.post(reverse("passenger_lists:passengerlist_rebuild", args=[plist.pk])).status_code == 403
    assert client.post(reverse("passenger_lists:passengerlist_query")).status_code == 403
    # ... and export.
    response = client.post(reverse("passenger_lists:passengerlist_export", args=[plist.pk]))
    export = PassengerListExport.objects.get()
    assert response["Location"] == export.get_absolute_url() and export.filters == {"ids": [plist.remote_id]}


def test_administrators_build(client, administrator, company, expedition):
    login(client, administrator, company)
    assert form_post(client, ADD, list_data()).status_code == 302


def test_another_companys_list_is_not_found(client, accountant, company, other_company, expedition):
    theirs = a_list(other_company)
    ticket = local_ticket(other_company, seat="5")
    login(client, accountant, company)
    assert client.get(theirs.get_absolute_url()).status_code == 404
    assert client.get(reverse("passenger_lists:passengerlist_edit", args=[theirs.pk])).status_code == 404
    assert client.post(reverse("passenger_lists:passengerlist_rebuild", args=[theirs.pk])).status_code == 404
    assert theirs.passenger_list_number not in client.get(
        reverse("passenger_lists:passengerlist_list")).content.decode()
    # Their tickets cannot be selected into our list.
    response = client.post(ADD, {"pk": [ticket.pk]}, follow=True)
    assert "Select the passenger tickets of one expedition first." in response.content.decode()


def test_the_list_page_filters_and_exports_to_excel(client, accountant, company):
    a_list(company)
    a_list(company, expedition_number="S-2", remote_id="x-2", passenger_list_number="YLS2026000000002")
    login(client, accountant, company)
    url = reverse("passenger_lists:passengerlist_list")
    page = client.get(url, {"expedition_number": "S-2"})
    assert [r.record.expedition_number for r in page.context["table"].rows] == ["S-2"]
    excel = client.get(url, {"export": "xlsx"})
    assert excel.status_code == 200 and excel["Content-Disposition"].endswith('.xlsx"')


def test_bulk_export_of_selected_lists(client, manager, company):
    plist = a_list(company)
    login(client, manager, company)
    url = reverse("passenger_lists:passengerlist_bulk", args=["export"])
    client.post(url, {"pk": [plist.pk], "confirm": "1"})
    assert PassengerListExport.objects.get().filters == {"ids": [plist.remote_id]}


def test_export_start_and_report_fetch_views(client, accountant, company):
    login(client, accountant, company)
    response = client.post(reverse("passenger_lists:passengerlistexport_start"),
                           {"startDate": "2026-05-01T00:00", "endDate": "2026-05-31T23:59"})
    export = PassengerListExport.objects.get()
    assert response["Location"] == export.get_absolute_url()
    assert export.filters == {"startDate": "2026-05-01T00:00:00+03:00", "endDate": "2026-05-31T23:59:00+03:00"}
    assert 'hx-trigger="every 2s"' in client.get(response["Location"]).content.decode()
    bad = client.post(reverse("passenger_lists:passengerlistexport_start"), {"startDate": "2026-05-31T00:00",
                                                                             "endDate": "2026-05-01T00:00"})
    assert bad.status_code == 200 and "The end is before the start." in bad.content.decode()
    response = client.post(reverse("passenger_lists:passengerlistreportitem_fetch"), {"date": "2026-03-14"})
    assert response["Location"].endswith("?date=2026-03-14")
    assert JobRun.objects.filter(name="passenger_list_report_sync").count() == 1


def test_the_menu_entry_is_lit(client, accountant, company):
    login(client, accountant, company)
    url = reverse("passenger_lists:passengerlist_list")
    page = client.get(url).content.decode()
    assert f'<a class="nav-link active" href="{url}" aria-current="page">' in page
