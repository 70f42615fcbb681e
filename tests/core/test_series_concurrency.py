"""Eight allocators at once get 1..N with no gap and no duplicate (CI runs this on PostgreSQL)."""

import threading

import pytest
from django.db import connection, connections

from backoffice.core.models import Company, DocumentSeries

# The database engine matters here (row locks and transactions of the series): CI's SQLite pass runs these too.
pytestmark = pytest.mark.database

ALLOCATORS = 8
PER_ALLOCATOR = 25


@pytest.mark.django_db(transaction=True)
def test_concurrent_allocators_give_consecutive_numbers():
    company = Company.objects.create(name="Acme", api_key="k-000001")
    barrier = threading.Barrier(ALLOCATORS)
    numbers, errors = [], []
    lock = threading.Lock()

    def allocator():
        try:
            barrier.wait()
            mine = [DocumentSeries.allocate(company=company, kind="event_ticket", prefix="ETK", year=2026)
                     for _ in range(PER_ALLOCATOR)]
            with lock:
                numbers.extend(mine)
        except Exception as exc:  # surfaced by the assertion below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=allocator) for _ in range(ALLOCATORS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)

    assert errors == []
    total = ALLOCATORS * PER_ALLOCATOR
    assert sorted(numbers) == [f"ETK2026{n:09d}" for n in range(1, total + 1)]
    assert DocumentSeries.objects.get(company=company).last_counter == total
    print(f"{connection.vendor}: {total} numbers from {ALLOCATORS} allocators, no gap, no duplicate")


@pytest.mark.django_db(transaction=True)
def test_rolled_back_allocation_returns_its_number():
    from django.db import transaction

    company = Company.objects.create(name="Acme", api_key="k-000001")
    with pytest.raises(RuntimeError):
        with transaction.atomic():
            DocumentSeries.allocate(company=company, kind="event_ticket", prefix="ETK", year=2026)
            raise RuntimeError("the document failed to save")
    assert DocumentSeries.allocate(company=company, kind="event_ticket", prefix="ETK", year=2026) == "ETK2026000000001"
