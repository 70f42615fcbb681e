"""The two benchmarks of dispatch notes, each against a baseline measured in the same run. They print both sides
and the ratio and assert only ratios, query counts and results, never an absolute time. Run with `make bench`.

1. Loading the dispatch-note users' directory (a ZIP of one JSON array of 1,000,000 entries, starting with a
   byte-order mark) through taxpayers.taxpayers_store against a bare json.load of the same JSON plus a
   bulk_create of the rows (batch 5000), each into an empty table, in alternating rounds: at least 0.5. Then a
   refresh with the same list less some entries drops them (BENCH_DISPATCH_TAXPAYERS changes the count,
   BENCH_DISPATCH_LOADS the rounds).
2. The dispatch-note list page of a company with 1,000,000 notes against one with 1,000 (PostgreSQL), whole,
   filtered by status, by an issue-date range and by the 7-day invoicing watch: at most 2x, the same number of
   queries.
"""

import io
import json
import os
import time
import zipfile
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from backoffice.core.models import Company
from backoffice.dispatch import taxpayers
from backoffice.dispatch.models import DispatchNote, DispatchTaxpayer
from tests.benchmarks.common import compare_sizes, fill, value_sql
from tests.tickets.conftest import login

TAXPAYERS = int(os.environ.get("BENCH_DISPATCH_TAXPAYERS", 1_000_000))
LOADS = int(os.environ.get("BENCH_DISPATCH_LOADS", 2))  # rounds of (bare, ours)
BATCH = 5000
GONE_EVERY = 1000  # the refresh's list lacks every 1000th entry
BIG, SMALL = 1_000_000, 1_000
PAGE_ROUNDS = 15

pytestmark = [pytest.mark.bench, pytest.mark.django_db(transaction=True)]


# --- 1. the users' directory ------------------------------------------------------------------------------
def entry(n):
    """Entry n of the directory as the platform lists it: two mailboxes for each company (a default and a
    second one), every tenth entry a person (an 11-digit TCKN), Turkish titles, AppType as a JSON number."""
    holder = n // 2
    if holder % 5 == 0:
        identifier, title = f"{10_000_000_000 + holder:011d}", f"Ayşe Yılmaz Çiçekçilik {holder}"
    else:
        identifier, title = f"{1_000_000_000 + holder:010d}", f"Firma {holder} Lojistik Ticaret A.Ş."
    alias = f"urn:mail:{'irsaliyepk' if n % 2 == 0 else 'depo2pk'}@firma{holder}.com.tr"
    return {"Identifier": identifier, "Title": title, "Alias": alias, "AppType": 3}


def directory_archive(count, keep=lambda n: True) -> bytes:
    """The directory's ZIP, its JSON written piece by piece from a generator (never the whole list in memory)."""
    def pieces():
        yield b"\xef\xbb\xbf["
        first = True
        for start in range(0, count, 10_000):
            chunk = [entry(n) for n in range(start, min(start + 10_000, count)) if keep(n)]
            if chunk:
                yield (b"" if first else b",") + json.dumps(chunk, ensure_ascii=False)[1:-1].encode()
                first = False
        yield b"]"

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        with archive.open("eIrsaliyeKullanicilari.json", "w") as member:
            for piece in pieces():
                member.write(piece)
    return buffer.getvalue()


def bare_load(archive: bytes) -> int:
    """The least a load can cost: the whole JSON at once with json.load, then a plain bulk_create of its rows."""
    seen_at = timezone.now()
    with zipfile.ZipFile(io.BytesIO(archive)) as zipped, zipped.open(zipped.namelist()[0]) as member:
        entries = json.load(member)  # bytes: json detects the byte-order mark itself
    rows = [DispatchTaxpayer(identifier=item["Identifier"], alias=item["Alias"], title=item["Title"],
                             app_type=str(item["AppType"]), seen_at=seen_at) for item in entries]
    DispatchTaxpayer.objects.bulk_create(rows, batch_size=BATCH)
    return len(rows)


def empty_directory():
    """An empty table for the next side: TRUNCATE on PostgreSQL, whose DELETE leaves dead index entries that the
    next inserts' unique checks would have to visit."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(f"TRUNCATE {DispatchTaxpayer._meta.db_table}")
    else:
        DispatchTaxpayer.objects.all().delete()


def stored_fields(n):
    row = DispatchTaxpayer.objects.get(identifier=entry(n)["Identifier"], alias=entry(n)["Alias"])
    return {"Identifier": row.identifier, "Title": row.title, "Alias": row.alias, "AppType": row.app_type}, row


def expected_fields(n):
    return {**entry(n), "AppType": "3"}


def test_loading_the_users_directory_against_json_load_and_bulk_create(db):
    started = time.perf_counter()
    archive = directory_archive(TAXPAYERS)
    built_seconds = time.perf_counter() - started
    samples = (0, 1, 10, TAXPAYERS // 2 + 1, TAXPAYERS - 1)  # companies with two mailboxes, people, the last one

    # Alternating rounds, each side into an empty table, so that a busy moment of the machine falls on both
    # sides alike; the last round ends with ours, whose rows the refresh below starts from.
    ours_seconds = bare_seconds = 0.0
    for load in range(LOADS):
        sides = ("bare", "ours") if (LOADS - 1 - load) % 2 == 0 else ("ours", "bare")
        for side in sides:
            empty_directory()
            before = timezone.now()
            start = time.perf_counter()
            stored = taxpayers.taxpayers_store(archive, chunk=BATCH) if side == "ours" else bare_load(archive)
            elapsed = time.perf_counter() - start
            assert stored == TAXPAYERS
            assert DispatchTaxpayer.objects.count() == TAXPAYERS
            if side == "ours":
                ours_seconds += elapsed
                for n in samples:
                    fields, row = stored_fields(n)
                    assert fields == expected_fields(n) and before <= row.seen_at <= timezone.now()
            else:
                bare_seconds += elapsed

    # The next day's list lacks some entries: the refresh drops them and keeps (and stamps) the others.
    refreshed = directory_archive(TAXPAYERS, keep=lambda n: n % GONE_EVERY != GONE_EVERY - 1)
    kept = TAXPAYERS - TAXPAYERS // GONE_EVERY
    before = timezone.now()
    start = time.perf_counter()
    assert taxpayers.taxpayers_store(refreshed, chunk=BATCH) == kept
    refresh_seconds = time.perf_counter() - start
    assert DispatchTaxpayer.objects.count() == kept
    assert DispatchTaxpayer.objects.filter(seen_at__lt=before).count() == 0
    gone = GONE_EVERY - 1
    assert not DispatchTaxpayer.objects.filter(identifier=entry(gone)["Identifier"], alias=entry(gone)["Alias"]
                                               ).exists()
    assert taxpayers.mailboxes(entry(gone)["Identifier"]) == [entry(gone - 1)["Alias"]]  # its other mailbox stays
    fields, row = stored_fields(TAXPAYERS // 2 + 1)
    assert fields == expected_fields(TAXPAYERS // 2 + 1) and row.seen_at >= before

    ours, bare = ours_seconds / LOADS, bare_seconds / LOADS
    ratio = bare / ours
    print(f"\n[bench] loading the dispatch-note users' directory, {TAXPAYERS:,} entries "
          f"({len(archive) / 2**20:.1f} MiB ZIP, built in {built_seconds:.1f} s), {LOADS} rounds on "
          f"{connection.vendor}: taxpayers_store {ours:.1f} s ({TAXPAYERS / ours:,.0f} entries/s); json.load + "
          f"bulk_create {bare:.1f} s ({TAXPAYERS / bare:,.0f} entries/s); ratio {ratio:.2f} (at least 0.5); "
          f"a refresh dropping {TAXPAYERS - kept:,} entries: {refresh_seconds:.1f} s "
          f"({kept / refresh_seconds:,.0f} entries/s)")
    assert ratio >= 0.5


# --- 2. the list page -----------------------------------------------------------------------------------
def _value_sql(field, company_id, prefix, span=727, recent=10):
    """SQL giving field's value for row g of generate_series: mostly approved notes with some drafts, errors and
    notes still on their way, `span` days of issue dates back from today (two years), a thousand receivers; the
    notes of the last `recent` days and one in fifty older ones not invoiced yet."""
    special = {
        "company_id": str(int(company_id)),
        "remote_id": "md5(g::text)",
        "remote_status": "(ARRAY[60, 60, 60, 65, 65, 70, 40, 0, 20, 50])[1 + g %% 10]",
        "requested_status": "20",
        "sync_state": "'synced'",
        "source": "(ARRAY['form', 'form', 'ubl', 'platform'])[1 + g %% 4]",
        "numbering": "'series'",
        "despatch_number": f"'{prefix}2025' || lpad(g::text, 9, '0')",
        "prefix": f"'{prefix}'",
        "local_reference_id": "'ERP-' || g",
        "is_new": "false",
        "profile": "(ARRAY['TEMELIRSALIYE', 'TICARIIRSALIYE'])[1 + g %% 2]",
        # two years back from today; the last ten days' notes and one in fifty older ones not invoiced yet
        "issue_date": f"current_date - (g %% {span})",
        "invoiced_as": f"CASE WHEN g %% {span} < {recent} OR g %% 50 = 0 THEN '' "
                       "ELSE 'FTR2025' || lpad(g::text, 9, '0') END",
        "issue_time": "time '08:00' + (g %% 600) * interval '1 minute'",
        "currency_code": "'TRY'",
        "receiver_identifier": "lpad((g %% 997)::text, 10, '0')",
        "receiver_name": "'Alıcı ' || (g %% 997) || ' Ticaret A.Ş.'",
        "target_alias": "'urn:mail:irsaliyepk@alici' || (g %% 997) || '.com.tr'",
        "receiver_city": "(ARRAY['İstanbul', 'Ankara', 'İzmir', 'Bursa'])[1 + g %% 4]",
        "receiver_country": "'Türkiye'",
        "delivery_city": "(ARRAY['İstanbul', 'Ankara', 'İzmir', 'Bursa'])[1 + g %% 4]",
        "delivery_country": "'Türkiye'",
        "plate_number": "'34 ABC ' || (g %% 1000)",
        "shipment_date": "now() - g * interval '1 second'",
        "line_count": "1 + g %% 3",
        "total_amount": "(g %% 100000)::numeric / 10",
        "tax_total": "(g %% 100000)::numeric / 50",
        "payable_amount": "(g %% 100000)::numeric * 0.12",
        "ubl_file": "''",
        "created_at": "now() - g * interval '1 second'",
        "updated_at": "now() - g * interval '1 second'",
        "synced_at": "now()",
        "status_read_at": "now()",
    }
    return value_sql(field, special)


def test_list_page_with_a_million_notes_against_a_thousand(postgres_only, client, accountant, company):
    small = Company.objects.create(name="Küçük A.Ş.", api_key="key-small")
    fill(DispatchNote, BIG, lambda f: _value_sql(f, company.pk, "BIG"))
    fill(DispatchNote, SMALL, lambda f: _value_sql(f, small.pk, "SML"))
    with connection.cursor() as cursor:
        cursor.execute(f"VACUUM ANALYZE {DispatchNote._meta.db_table}")
    assert DispatchNote.objects.filter(company=company).count() == BIG

    # One client for each company, so that the rounds alternate between them.
    clients = {"1,000": login(client, accountant, small), "1,000,000": login(Client(), accountant, company)}
    shown = {"1,000": (b"SML2025", b"BIG2025"), "1,000,000": (b"BIG2025", b"SML2025")}

    def check(size, label, page):
        ours, other = shown[size]
        assert ours in page.content and other not in page.content

    base = reverse("dispatch:dispatchnote_list")
    month = (timezone.localdate() - timedelta(days=120)).replace(day=1)  # a whole month some months back
    month_end = (month + timedelta(days=32)).replace(day=1) - timedelta(days=1)
    variants = (("list page", base), ("approved only", base + "?remote_status=60"),
                (f"issued in {month:%m.%Y}", f"{base}?date_from={month}&date_to={month_end}"))
    failures = compare_sizes("dispatch-note list", clients, variants, check, rounds=PAGE_ROUNDS)

    # The 7-day invoicing watch (issue 33): against a thousand notes of the last twelve days, none invoiced, so
    # that each filter fills a page on both sides (the million's are the last ten days' and one in fifty older).
    watched = Company.objects.create(name="Yeni Lojistik A.Ş.", api_key="key-watched")
    fill(DispatchNote, SMALL, lambda f: _value_sql(f, watched.pk, "SMW", span=12, recent=12))
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {DispatchNote._meta.db_table}")
    clients = {"1,000": login(Client(), accountant, watched), "1,000,000": clients["1,000,000"]}
    shown["1,000"] = (b"SMW2025", b"BIG2025")
    variants = (("to be invoiced within 7 days", base + "?invoicing=open"),
                ("last day to invoice", base + "?invoicing=last_day"),
                ("7 days ran out, not invoiced", base + "?invoicing=overdue"),
                ("not invoiced, every sent note", base + "?invoicing=not_invoiced"))
    failures += compare_sizes("dispatch-note list", clients, variants, check, rounds=PAGE_ROUNDS)
    assert not failures, failures
