"""Report totals split into issued, cancelled and net (issue 9, point 4), with hand-computed examples.

Items: 100.00 / VAT 18.00, 250.50 / 45.09, and a cancelled one of 40.00 / 7.20 (payable 118.00, 295.59, 47.20):
issued 3 tickets, 390.50 / 70.29 / 460.79; cancelled 1, 40.00 / 7.20 / 47.20; net 2, 350.50 / 63.09 / 413.59.
"""

import re
from datetime import date
from decimal import Decimal

import pytest
from django.urls import reverse
from django.utils import timezone

from backoffice.core.reports import ReportState
from backoffice.tickets.choices import TicketKind
from backoffice.tickets.models import EventTicketReportItem, PassengerTicketReportItem, ReportRun
from backoffice.tickets.views import split_totals

from .conftest import login

# The database engine matters here (report totals summed by the database): CI's SQLite pass runs these too.
pytestmark = [pytest.mark.django_db, pytest.mark.database]

DAY = date(2026, 3, 14)
ITEMS = [  # (amount, VAT, payable, cancelled)
    ("100.00", "18.00", "118.00", False),
    ("250.50", "45.09", "295.59", False),
    ("40.00", "7.20", "47.20", True),
]


def store(company, kind, items=ITEMS, current=True):
    run = ReportRun.objects.create(company=company, kind=kind, report_date=DAY, state=ReportState.DONE,
                                   is_current=current, item_count=len(items), finished_at=timezone.now())
    model = EventTicketReportItem if kind == TicketKind.EVENT else PassengerTicketReportItem
    extra = (lambda payable: {}) if kind == TicketKind.EVENT else (lambda payable: {"payable_amount": Decimal(payable)})
    model.objects.bulk_create([
        model(company=company, run=run, report_date=DAY, ticket_number=f"ETK2026{i:09d}", total_amount=Decimal(amount),
              total_vat=Decimal(vat), canceled=cancelled, canceled_date=timezone.now() if cancelled else None,
              **extra(payable))
        for i, (amount, vat, payable, cancelled) in enumerate(items, start=1)])
    return run


def test_the_aggregate_splits_issued_cancelled_and_net(company):
    run = store(company, TicketKind.PASSENGER)
    totals = split_totals(PassengerTicketReportItem.objects.filter(run=run),
                                         ("total_amount", "total_vat", "payable_amount"))
    assert totals["issued"] == {"count": 3, "total_amount": Decimal("390.50"), "total_vat": Decimal("70.29"),
                                "payable_amount": Decimal("460.79")}
    assert totals["cancelled"] == {"count": 1, "total_amount": Decimal("40.00"), "total_vat": Decimal("7.20"),
                                   "payable_amount": Decimal("47.20")}
    assert totals["net"] == {"count": 2, "total_amount": Decimal("350.50"), "total_vat": Decimal("63.09"),
                             "payable_amount": Decimal("413.59")}
    # The older keys keep their meaning: every item, cancelled ones included.
    assert (totals["count"], totals["canceled"], totals["total_amount"]) == (3, 1, Decimal("390.50"))


def test_an_empty_report_totals_zero_everywhere(company):
    totals = split_totals(EventTicketReportItem.objects.none())
    for part in ("issued", "cancelled", "net"):
        assert totals[part] == {"count": 0, "total_amount": Decimal(0), "total_vat": Decimal(0)}


def test_nothing_cancelled_makes_net_equal_issued(company):
    run = store(company, TicketKind.EVENT, items=ITEMS[:2])
    totals = split_totals(EventTicketReportItem.objects.filter(run=run))
    assert totals["cancelled"]["count"] == 0 and totals["cancelled"]["total_amount"] == 0
    assert totals["net"] == totals["issued"] == {"count": 2, "total_amount": Decimal("350.50"),
                                                  "total_vat": Decimal("63.09")}


def card(html, part):
    match = re.search(rf'<div class="card[^"]*" data-part="{part}">(.*?)</dl>', html, re.DOTALL)
    assert match, part
    body = match.group(1)
    values = dict(re.findall(r'data-total="(\w+)">([^<]*)<', body))
    caption = re.search(r"data-caption>([^<]*)<", body).group(1)
    return values, caption


def test_the_passenger_report_page_shows_the_three_lines_in_turkish(client, accountant, company):
    store(company, TicketKind.PASSENGER)
    store(company, TicketKind.PASSENGER, items=[("999.99", "1.00", "1000.99", False)], current=False)  # not shown
    login(client, accountant, company, language="tr")
    html = client.get(reverse("tickets:passengerticketreportitem_list"), {"date": DAY.isoformat()}).content.decode()
    issued, issued_caption = card(html, "issued")
    cancelled, cancelled_caption = card(html, "cancelled")
    net, net_caption = card(html, "net")
    assert issued == {"count": "3", "total_amount": "390,50", "total_vat": "70,29", "payable_amount": "460,79"}
    assert cancelled == {"count": "1", "total_amount": "40,00", "total_vat": "7,20", "payable_amount": "47,20"}
    assert net == {"count": "2", "total_amount": "350,50", "total_vat": "63,09", "payable_amount": "413,59"}
    # Each card says what it includes.
    assert issued_caption and cancelled_caption and net_caption and len({issued_caption, cancelled_caption,
                                                                         net_caption}) == 3


def test_the_event_report_page_says_what_each_card_includes(client, accountant, company):
    store(company, TicketKind.EVENT, items=ITEMS + [("1250.75", "225.14", "0", False)])
    login(client, accountant, company)
    html = client.get(reverse("tickets:eventticketreportitem_list"), {"date": DAY.isoformat()}).content.decode()
    issued, issued_caption = card(html, "issued")
    net, net_caption = card(html, "net")
    assert issued == {"count": "4", "total_amount": "1,641.25", "total_vat": "295.43"}  # no payable on event tickets
    assert net == {"count": "3", "total_amount": "1,601.25", "total_vat": "288.23"}
    assert "cancelled ones included" in issued_caption
    assert "Issued minus cancelled" in net_caption
