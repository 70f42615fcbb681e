"""The event-ticket list page of a company with 1,000,000 tickets against the same page of a company with
1,000 (PostgreSQL), plain and searched for a customer the Turkish way. Prints both times and the ratio, measured in the same run; asserts the ratio (at most
2x) and that both pages run the same number of queries, never an absolute time. Run with `make bench`.
"""

import statistics

import pytest
from django.db import connection
from django.urls import reverse

from backoffice.core.models import Company
from backoffice.tickets.models import EventTicket
from tests.tickets.conftest import login
from tests.benchmarks.common import fill, page_time, value_sql

BIG, SMALL = 1_000_000, 1_000
SEARCH_MATCHES = 100  # tickets of each company the search cases find
ROUNDS = 15

pytestmark = [pytest.mark.bench, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _value_sql(field, company_id, prefix, every):
    """SQL giving field's value for row g of generate_series; every `every`-th customer is "İSMAİL IŞIK" (what
    the search cases look for: the same 100 tickets in both companies)."""
    special = {
        "company_id": str(int(company_id)),
        "ticket_number": f"'{prefix}2026' || lpad(g::text, 9, '0')",
        "prefix": f"'{prefix}'",
        "remote_id": "md5(g::text)",
        "remote_status": "(ARRAY[0, 40, 60, 60, 60, 100])[1 + g %% 6]",
        "sync_state": "'synced'",
        "currency_code": "'TRY'",
        "payment_type": "(ARRAY['NAKIT', 'KREDIKARTI', 'BANKAKARTI'])[1 + g %% 3]",
        "customer_first_name": f"CASE WHEN g %% {int(every)} = 7 THEN 'İSMAİL' ELSE 'Ad' || (g %% 997) END",
        "customer_last_name": f"CASE WHEN g %% {int(every)} = 7 THEN 'IŞIK' ELSE 'Soyad' || (g %% 991) END",
        "event_name": "'Etkinlik ' || (g %% 500)",
        "event_location": "'Salon'",
        "event_municipality": "'Kadıköy'",
        "event_city_id": "1 + g %% 81",
        "event_organizer_vkn_tckn": "'1234567890'",
        "seat_number": "'S' || (g %% 300)",
        "created_at": "now() - g * interval '1 second'",
        "updated_at": "now() - g * interval '1 second'",
        "ticket_date": "now() - g * interval '1 second'",
        "attempts": "1",
    }
    return value_sql(field, special)


def test_list_page_with_a_million_tickets_against_a_thousand(postgres_only, client, accountant, company):
    small = Company.objects.create(name="Küçük A.Ş.", api_key="key-small")
    fill(EventTicket, BIG, lambda f: _value_sql(f, company.pk, "BIG", BIG // SEARCH_MATCHES))
    fill(EventTicket, SMALL, lambda f: _value_sql(f, small.pk, "SML", SMALL // SEARCH_MATCHES))
    with connection.cursor() as cursor:
        cursor.execute(f"VACUUM ANALYZE {EventTicket._meta.db_table}")
    assert EventTicket.objects.filter(company=company).count() == BIG

    base = reverse("tickets:eventticket_list")
    failures = []
    # the plain list, and the customer searched the Turkish way on the folded, trigram-indexed column (issue 29)
    for label, url in (("list page", base), ("search 'ismail ışık'", base + "?q=ismail%20%C4%B1%C5%9F%C4%B1k"),
                       ("search 'IŞIK'", base + "?q=I%C5%9EIK")):
        results = {}
        for size, target in (("1,000", small), ("1,000,000", company)):
            login(client, accountant, target)
            for _ in range(3):  # warm caches and plans
                page_time(client, url)
            queries = []
            with connection.execute_wrapper(lambda execute, sql, *rest: queries.append(sql) or execute(sql, *rest)):
                page = client.get(url)
            if "q=" in url:  # the same matches on both sides
                assert page.context["table"].paginator.count == SEARCH_MATCHES
            times = [page_time(client, url) for _ in range(ROUNDS)]
            results[size] = (statistics.median(times), len(queries))
        (small_time, small_queries), (big_time, big_queries) = results["1,000"], results["1,000,000"]
        ratio = big_time / small_time
        print(f"\n[bench] event-ticket {label} on {connection.vendor}: 1,000 rows {small_time * 1000:.1f} ms "
              f"({small_queries} queries); 1,000,000 rows {big_time * 1000:.1f} ms ({big_queries} queries); "
              f"ratio {ratio:.2f}x (limit 2x)")
        if big_queries != small_queries or ratio > 2.0:
            failures.append(f"{label}: {ratio:.2f}x, {small_queries} vs {big_queries} queries")
    assert not failures, failures
