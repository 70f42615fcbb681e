"""Storing a by-date report of 100,000 items (200 pages of 500, as the client returned them from the
sandbox) through the report service against a bare bulk_create of the same rows. Prints both rates and
their ratio, measured in the same run; asserts the ratio (at least 0.5) and the stored count, never an
absolute time. Run with `make bench` (BENCH_REPORT_ITEMS changes the count).
"""

import os
import time
from datetime import date

import pytest
from django.db import connection

from backoffice.core.platform import client_for
from backoffice.remote.tickets import PassengerTicketClient
from backoffice.core import reports
from backoffice.tickets.families import TEXT_LIMITS, TICKET_REPORTS
from backoffice.tickets.choices import TicketKind
from backoffice.tickets.models import PassengerTicketReportItem, ReportRun

COUNT = int(os.environ.get("BENCH_REPORT_ITEMS", 100_000))
DAY = date(2026, 3, 14)
ROUND = 20  # pages

pytestmark = [pytest.mark.bench, pytest.mark.django_db(transaction=True)]


def test_storing_report_pages_against_a_bare_bulk_create(sandbox, sandbox_company):
    sandbox.add_report_items("passenger_ticket", DAY, COUNT, customer_unique_id=str(sandbox_company.customer_unique_id))
    client = client_for(sandbox_company, PassengerTicketClient)
    pages = list(client.report_pages(DAY))  # fetched first: only storing is measured
    assert sum(len(page["items"]) for page in pages) == COUNT and len(pages) == -(-COUNT // 500)

    # The same rows, already built, for the bare bulk_create (another run, so that both sets coexist).
    run = ReportRun.objects.create(company=sandbox_company, kind=TicketKind.PASSENGER, report_date=DAY)
    baseline_run = ReportRun.objects.create(company=sandbox_company, kind=TicketKind.PASSENGER,
                                            report_date=date(2026, 3, 15))
    bare_pages = [[PassengerTicketReportItem(company_id=sandbox_company.pk, run_id=baseline_run.pk, report_date=DAY,
                                             **reports.item_fields(TICKET_REPORTS.fields(TicketKind.PASSENGER), raw,
                                                                          TEXT_LIMITS))
                   for raw in page["items"]] for page in pages]

    # Alternating rounds of 20 pages, so that a busy moment of the machine falls on both sides alike:
    # the service converts each page and stores it with the run's progress in one transaction; the bare
    # side is one bulk_create of the same rows.
    service_seconds = bare_seconds = 0.0
    for first in range(0, len(pages), ROUND):
        start = time.perf_counter()
        for index in range(first, min(first + ROUND, len(pages))):
            TICKET_REPORTS.store_page(run=run, page_index=index + 1, envelope=pages[index])
        service_seconds += time.perf_counter() - start
        rows = [row for page in bare_pages[first:first + ROUND] for row in page]
        start = time.perf_counter()
        PassengerTicketReportItem.objects.bulk_create(rows, batch_size=1000)
        bare_seconds += time.perf_counter() - start
    start = time.perf_counter()
    reports.report_finish(run=run)
    service_seconds += time.perf_counter() - start

    assert PassengerTicketReportItem.objects.filter(run=run).count() == COUNT
    assert PassengerTicketReportItem.objects.filter(run=baseline_run).count() == COUNT
    run.refresh_from_db()
    assert (run.pages_done, run.item_count, run.is_current) == (len(pages), COUNT, True)

    ratio = bare_seconds / service_seconds
    print(f"\n[bench] storing {COUNT:,} passenger report items ({len(pages)} pages) on {connection.vendor}: "
          f"service {COUNT / service_seconds:,.0f} items/s; bare bulk_create {COUNT / bare_seconds:,.0f} items/s; "
          f"ratio {ratio:.2f} (at least 0.5)")
    assert ratio >= 0.5
