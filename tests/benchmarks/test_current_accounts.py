"""The three benchmarks of current accounts, each against a baseline measured in the same run. They print
both sides and the ratio and assert only ratios, query counts and results, never an absolute time.
Run with `make bench`.

1. Mirroring 100,000 accounts (200 pages of 500 list items) through services.store_current_accounts
   against a bare bulk_create of the same rows: at least 0.5 (BENCH_MIRROR_ACCOUNTS changes the count).
2. Checking an xlsx import of 10,000 rows (core.imports.read + imports.check_accounts) against reading
   the same file with openpyxl alone: at least 0.3 (BENCH_IMPORT_ROWS changes the count).
3. The list page of a company with 1,000,000 accounts against one with 1,000 (PostgreSQL): at most 2x,
   the same number of queries; also searched the Turkish way ("ışık", "İZMİR", "cinar": 100 rows on each side).
"""

import io
import os
import statistics
import time
from decimal import Decimal

import pytest
from django.db import connection
from django.urls import reverse
from django.utils import timezone
from django.utils.encoding import force_str
from openpyxl import Workbook, load_workbook
from stdnum import iban

from backoffice.core.choices import SyncState
from backoffice.core.imports import read
from backoffice.core.models import Company
from backoffice.current_accounts import imports, services
from backoffice.current_accounts.models import CurrentAccount
from tests.tickets.conftest import login
from tests.benchmarks.common import counting_queries, fill, page_time, valid_vkns, value_sql

MIRROR_COUNT = int(os.environ.get("BENCH_MIRROR_ACCOUNTS", 100_000))
PAGE = 500
ROUND = 20  # pages
IMPORT_ROWS = int(os.environ.get("BENCH_IMPORT_ROWS", 10_000))
IMPORT_ROUNDS = 3
BIG, SMALL = 1_000_000, 1_000
SEARCH_MATCHES = 100  # rows of each company that the search cases find
PAGE_ROUNDS = 15

pytestmark = [pytest.mark.bench, pytest.mark.django_db(transaction=True)]


# --- 1. the mirror ----------------------------------------------------------------------------------------
def list_pages(count):
    """The platform's current-account list as its pages bring it: {id, branchId, name, identifier, surname,
    totalBalance, status}, ids as numbers, balances as JSON numbers."""
    identifiers = valid_vkns(count)
    items = [{"id": 7_000_000 + n, "branchId": None if n % 4 else 10 + n % 3, "name": f"Firma {n} Ticaret A.Ş.",
              "identifier": identifiers[n], "surname": None, "totalBalance": round((n % 100_000) * 1.25, 2),
              "status": 1} for n in range(count)]
    return [items[first:first + PAGE] for first in range(0, count, PAGE)]


def bare_rows(company, page, now):
    """The rows the mirror makes of a page, built beforehand: what a bare bulk_create stores."""
    return [CurrentAccount(company_id=company.pk, remote_id=str(item["id"]), branch_id=item["branchId"],
                           name=item["name"], identifier=item["identifier"], surname=item["surname"] or "",
                           total_balance=Decimal(str(item["totalBalance"])).quantize(Decimal("0.01")),
                           remote_status=item["status"], sync_state=SyncState.SYNCED, synced_at=now,
                           status_read_at=now) for item in page]


def test_mirroring_list_pages_against_a_bare_bulk_create(company):
    pages = list_pages(MIRROR_COUNT)
    bare_company = Company.objects.create(name="Bare A.Ş.", api_key="key-bare-0001")
    now = timezone.now()
    bare_pages = [bare_rows(bare_company, page, now) for page in pages]

    # Alternating rounds of 20 pages, so that a busy moment of the machine falls on both sides alike.
    ours_seconds = bare_seconds = 0.0
    new = 0
    for first in range(0, len(pages), ROUND):
        start = time.perf_counter()
        for page in pages[first:first + ROUND]:
            new += services.store_current_accounts(company, page)
        ours_seconds += time.perf_counter() - start
        rows = [row for page in bare_pages[first:first + ROUND] for row in page]
        start = time.perf_counter()
        CurrentAccount.objects.bulk_create(rows, batch_size=500)
        bare_seconds += time.perf_counter() - start

    assert new == MIRROR_COUNT
    stored = CurrentAccount.objects.filter(company=company)
    assert stored.filter(sync_state=SyncState.SYNCED).count() == MIRROR_COUNT
    assert set(stored.values_list("remote_id", flat=True)) == {str(item["id"]) for page in pages for item in page}
    assert CurrentAccount.objects.filter(company=bare_company).count() == MIRROR_COUNT
    sample = stored.get(remote_id=str(pages[-1][-1]["id"]))
    assert (sample.name, sample.identifier, sample.remote_status) == (
        pages[-1][-1]["name"], pages[-1][-1]["identifier"], 1)

    # A second walk over the same pages: every account known and unchanged, one SELECT a page.
    with counting_queries() as queries:
        assert services.store_current_accounts(company, pages[0]) == 0
    assert len(queries) == 1, [sql[:200] for sql in queries]
    start = time.perf_counter()
    again = sum(services.store_current_accounts(company, page) for page in pages)
    again_seconds = time.perf_counter() - start
    assert again == 0 and stored.count() == MIRROR_COUNT

    ratio = bare_seconds / ours_seconds
    print(f"\n[bench] mirroring {MIRROR_COUNT:,} current accounts ({len(pages)} pages) on {connection.vendor}: "
          f"store_current_accounts {MIRROR_COUNT / ours_seconds:,.0f} accounts/s; "
          f"bare bulk_create {MIRROR_COUNT / bare_seconds:,.0f} rows/s; ratio {ratio:.2f} (at least 0.5); "
          f"second pass, all known and unchanged: {MIRROR_COUNT / again_seconds:,.0f} accounts/s")
    assert ratio >= 0.5


# --- 2. the import check ---------------------------------------------------------------------------------
def tr_iban(number):
    """A Turkish IBAN with its check digits: bank code, the reserved 0, a 16-digit account number."""
    bban = f"000620{number:016d}"
    return "TR" + iban.calc_check_digits("TR00" + bban) + bban


def import_values(n, identifier):
    """Every column of the account sheet, filled with valid values."""
    return {
        "name": f"Örnek Ticaret {n} A.Ş.", "surname": "Yılmaz", "identifier": identifier, "code": f"120.01.{n:05d}",
        "tax_office": "Kadıköy", "maturity": 30 + n % 60, "mersis_number": f"0{n:015d}",
        "registration_number": f"{100000 + n}", "address-address_name": "Merkez", "address-country": "Türkiye",
        "address-city": "İstanbul", "address-sub_division_name": "Kadıköy", "address-street_name": "Bağdat Caddesi",
        "address-building_number": str(1 + n % 200), "address-postal_zone": "34710",
        "address-phone_number": f"0216 {100 + n % 900} {n % 100:02d} {n // 100 % 100:02d}",
        "address-email_address": f"info{n}@ornek.com.tr", "bank-name": "Ana hesap", "bank-bank_name": "Garanti BBVA",
        "bank-iban_number": tr_iban(n), "contact-full_name": f"Ayşe Demir {n}",
        "contact-phone_number": f"0532 {100 + n % 900} {n % 100:02d} {n // 100 % 100:02d}",
        "contact-email_address": f"ayse{n}@ornek.com.tr",
    }


def import_file(count) -> bytes:
    workbook = Workbook(write_only=True)
    sheet = workbook.create_sheet(force_str(imports.ACCOUNT_SHEET.title))
    columns = imports.ACCOUNT_SHEET.columns
    sheet.append([force_str(column.label) for column in columns])
    for n, identifier in enumerate(valid_vkns(count, start=200_000_000)):
        values = import_values(n, identifier)
        sheet.append([values[column.key] for column in columns])
    out = io.BytesIO()
    workbook.save(out)
    return out.getvalue()


def openpyxl_alone(data: bytes) -> int:
    """The least reading the file can cost: openpyxl's read-only mode, every row's values."""
    workbook = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    cells = 0
    for values in workbook.worksheets[0].iter_rows(values_only=True):
        cells += len(values)
    workbook.close()
    return cells


def test_checking_an_import_against_reading_it_with_openpyxl_alone(company):
    data = import_file(IMPORT_ROWS)
    columns = len(imports.ACCOUNT_SHEET.columns)

    # Alternating rounds; the medians are compared.
    bare_times, ours_times = [], []
    for _ in range(IMPORT_ROUNDS):
        start = time.perf_counter()
        assert openpyxl_alone(data) == (IMPORT_ROWS + 1) * columns
        bare_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        checked = read(io.BytesIO(data), imports.ACCOUNT_SHEET)
        rows = imports.check_accounts(company, checked)
        ours_times.append(time.perf_counter() - start)
        assert not checked.errors, checked.errors[:5]
        assert len(rows) == IMPORT_ROWS
        assert set(checked.columns) == {column.key for column in imports.ACCOUNT_SHEET.columns}
        assert all(values is not None and set(parts) == {"address", "bank", "contact"} for _n, values, parts in rows)

    bare, ours = statistics.median(bare_times), statistics.median(ours_times)
    ratio = bare / ours
    print(f"\n[bench] checking an import of {IMPORT_ROWS:,} current accounts ({columns} columns) on "
          f"{connection.vendor}: read + check_accounts {ours:.2f} s ({IMPORT_ROWS / ours:,.0f} rows/s); "
          f"openpyxl alone {bare:.2f} s ({IMPORT_ROWS / bare:,.0f} rows/s); ratio {ratio:.2f} (at least 0.3)")
    assert ratio >= 0.3


# --- 3. the list page -----------------------------------------------------------------------------------
def _value_sql(field, company_id, every):
    """SQL giving field's value for row g of generate_series; every `every`-th row is named in Turkish capitals
    (what the search cases look for: the same 100 matches in both companies)."""
    special = {
        "company_id": str(int(company_id)),
        "remote_id": "g::text",
        "remote_status": "1",
        "sync_state": "'synced'",
        "name": f"CASE WHEN g %% {int(every)} = 7 THEN 'IŞIK ÇINAR İZMİR Ticaret ' || g ELSE 'Firma ' || md5(g::text) END",
        "identifier": "lpad(g::text, 10, '0')",
        "code": "'120.' || (g %% 1000)",
        "surname": "''",
        "tax_office": "(ARRAY['Kadıköy', 'Beşiktaş', 'Çankaya', 'Konak'])[1 + g %% 4]",
        "total_balance": "(g %% 100000)::numeric / 100",
        "created_at": "now() - g * interval '1 second'",
        "updated_at": "now() - g * interval '1 second'",
        "synced_at": "now()",
        "status_read_at": "now()",
    }
    return value_sql(field, special)


def test_list_page_with_a_million_accounts_against_a_thousand(postgres_only, client, accountant, company):
    small = Company.objects.create(name="Küçük A.Ş.", api_key="key-small")
    fill(CurrentAccount, BIG, lambda f: _value_sql(f, company.pk, BIG // SEARCH_MATCHES))
    fill(CurrentAccount, SMALL, lambda f: _value_sql(f, small.pk, SMALL // SEARCH_MATCHES))
    with connection.cursor() as cursor:
        cursor.execute(f"VACUUM ANALYZE {CurrentAccount._meta.db_table}")
    assert CurrentAccount.objects.filter(company=company).count() == BIG

    base = reverse("current_accounts:currentaccount_list")
    failures = []
    for label, url in (("list page", base), ("sorted by name", base + "?sort=name"),
                       ("sorted by name, descending", base + "?sort=-name"),
                       # the folded, trigram-indexed search column (issue 29): 100 matches of 1,000,000
                       ("search 'ışık'", base + "?q=%C4%B1%C5%9F%C4%B1k"),
                       ("search 'İZMİR'", base + "?q=%C4%B0ZM%C4%B0R"),
                       ("search 'cinar', sorted by name", base + "?q=cinar&sort=name")):
        results = {}
        for size, target in (("1,000", small), ("1,000,000", company)):
            login(client, accountant, target)
            for _ in range(3):  # warm caches and plans
                page_time(client, url)
            with counting_queries() as queries:
                page = client.get(url)
            if "q=" in url:  # the same matches on both sides
                assert page.context["table"].paginator.count == SEARCH_MATCHES
            times = [page_time(client, url) for _ in range(PAGE_ROUNDS)]
            results[size] = (statistics.median(times), len(queries))
        (small_time, small_queries), (big_time, big_queries) = results["1,000"], results["1,000,000"]
        ratio = big_time / small_time
        print(f"\n[bench] current-account {label} on {connection.vendor}: 1,000 rows {small_time * 1000:.1f} ms "
              f"({small_queries} queries); 1,000,000 rows {big_time * 1000:.1f} ms ({big_queries} queries); "
              f"ratio {ratio:.2f}x (limit 2x)")
        if big_queries != small_queries or ratio > 2.0:
            failures.append(f"{label}: {ratio:.2f}x, {small_queries} vs {big_queries} queries")
    assert not failures, failures
