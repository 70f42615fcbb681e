"""DocumentSeries.allocate against the least a counter can cost: one UPDATE in its own transaction.

Prints both rates and their ratio; asserts only correctness (consecutive numbers), never a time.
Run with `make bench`.
"""

import time

import pytest
from django.db import connection, transaction
from django.db.models import F

from backoffice.core.models import DocumentSeries

ROUNDS = 300


def rate(fn, rounds=ROUNDS):
    start = time.perf_counter()
    for _ in range(rounds):
        fn()
    return rounds / (time.perf_counter() - start)


@pytest.mark.bench
@pytest.mark.django_db(transaction=True)  # real commits, as in production: no enclosing test transaction
def test_allocate_throughput_against_a_bare_update(company):
    numbers = []
    allocate_rate = rate(lambda: numbers.append(
        DocumentSeries.allocate(company=company, kind="invoice", prefix="GIB", year=2026)))
    assert numbers == [f"GIB2026{n:09d}" for n in range(1, ROUNDS + 1)]

    baseline = DocumentSeries.objects.create(company=company, kind="baseline", prefix="BAS", year=2026)

    def bare_update():
        with transaction.atomic():
            DocumentSeries.objects.filter(pk=baseline.pk).update(last_counter=F("last_counter") + 1)

    baseline_rate = rate(bare_update)
    baseline.refresh_from_db()
    assert baseline.last_counter == ROUNDS

    print(f"\n[bench] DocumentSeries.allocate on {connection.vendor}: {allocate_rate:,.0f}/s; "
          f"bare UPDATE in a transaction: {baseline_rate:,.0f}/s; "
          f"allocate costs {baseline_rate / allocate_rate:.2f}x the bare UPDATE")
