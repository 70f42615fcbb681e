"""The three benchmarks of the receiving side of dispatch notes (issue 16), each against a baseline measured in the
same run. They print both sides and the ratio and assert only ratios, query counts and results, never an absolute
time. PostgreSQL only (rows made by generate_series). Run with `make bench`.

1. The incoming list page (/dispatch/incoming/) of a company with 1,000,000 incoming notes against one with 1,000:
   whole, what needs an answer (?view=awaiting, the oldest first), one sender and one month of arrival dates: at
   most 2x, the same number of queries (BENCH_DISPATCH_INCOMING changes the big side's count).
2. The list of replies received to our notes (/dispatch/receipts/), 1,000,000 replies each linked to one of our
   1,000,000 notes, against 1,000: at most 2x, the same number of queries (BENCH_DISPATCH_RECEIPTS).
3. Storing pages of 500 incoming list items through the inbox mirror's path (core.resources.mirror_store with
   inbox.incoming_fields) into a table already holding 1,000,000 notes, against a bare bulk_create of the same
   rows: at most 5x; a second store of the same page adds nothing and writes nothing (BENCH_DISPATCH_INBOX_TABLE
   the table's count, BENCH_DISPATCH_INBOX_PAGES the pages a side).

When a page is over its limit, the plan of its slowest statement at the big size is printed (EXPLAIN ANALYZE).
"""

import os
import re
import time
import uuid
from datetime import date, datetime, timedelta
from datetime import timezone as dt_timezone
from decimal import Decimal

import pytest
from django.db import connection
from django.db.models import Max, Min
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from backoffice.core import resources
from backoffice.core.choices import SyncState
from backoffice.core.models import Company
from backoffice.dispatch.models import DispatchNote, ReceivedReply
from backoffice.dispatch_inbox import mirror as inbox
from backoffice.dispatch_inbox.choices import AWAITING_ANSWER
from backoffice.dispatch_inbox.models import IncomingNote
from backoffice.remote import dispatch_inbox
from tests.benchmarks.common import compare_sizes, counting_queries, fill, valid_vkns, value_sql
from tests.tickets.conftest import login

INCOMING = int(os.environ.get("BENCH_DISPATCH_INCOMING", 1_000_000))
RECEIPTS = int(os.environ.get("BENCH_DISPATCH_RECEIPTS", 1_000_000))
TABLE = int(os.environ.get("BENCH_DISPATCH_INBOX_TABLE", 1_000_000))
STORE_PAGES = int(os.environ.get("BENCH_DISPATCH_INBOX_PAGES", 10))  # pages of 500 a side, in alternating rounds
SMALL = 1_000
PAGE = 500  # the platform's list page (inbox.PAGE_SIZE)
PAGE_ROUNDS = 15
AWAITING_EVERY = 20  # 5% of the incoming notes wait for an answer
SENDERS = 997
SMALL_SENDERS = 10
# Arrival times run back a year from here, the newest first (g = 1).
NEWEST = "timestamptz '2026-07-01 00:00:00+03'"
YEAR_SECONDS = 365 * 86_400

pytestmark = [pytest.mark.bench, pytest.mark.django_db(transaction=True)]


def received_sql(count):
    """received_at of row g: count rows spread evenly over the year before NEWEST."""
    return f"{NEWEST} - g * interval '{YEAR_SECONDS / count:.6f} seconds'"


def number(prefix, g):
    return f"{prefix}2026{g:09d}"


@pytest.fixture
def small_company(db):
    return Company.objects.create(name="Küçük Lojistik A.Ş.", api_key="key-small-inbox")


# --- 1. the incoming list -------------------------------------------------------------------------------------
def _incoming_sql(field, company_id, prefix, count, senders=SENDERS):
    """SQL of field's value for incoming note g: 5% awaiting an answer (70), the others answered (accepted, some
    automatically, rejected or partly accepted; those carry the reply's number), 997 senders, arrivals spread
    over a year, the note's date a day or two before its arrival."""
    special = {
        "company_id": str(int(company_id)),
        "remote_id": f"md5('{prefix}' || g)",
        "remote_status": f"CASE WHEN g %% {AWAITING_EVERY} = 0 THEN {AWAITING_ANSWER} "
                         "ELSE (ARRAY[60, 60, 60, 65, 80, 90])[1 + g %% 6] END",
        "sync_state": "'synced'",
        "despatch_number": f"'{prefix}2026' || lpad(g::text, 9, '0')",
        "sender_identifier": f"lpad((1000000000 + g %% {senders})::text, 10, '0')",
        "sender_title": f"'Tedarikçi ' || (g %% {senders}) || ' Nakliyat ve Ticaret A.Ş.'",
        "profile": "(ARRAY['TEMELIRSALIYE', 'TEMELIRSALIYE', 'TICARIIRSALIYE'])[1 + g %% 3]",
        "received_at": received_sql(count),
        "issue_date": f"(({received_sql(count)}) AT TIME ZONE 'Europe/Istanbul')::date - (1 + g %% 2)",
        "issue_time": "time '08:00' + (g %% 600) * interval '1 minute'",
        "line_count": "1 + g %% 3",
        "payable_amount": "(g %% 100000)::numeric * 0.12",
        "currency_code": "'TRY'",
        "receipt_id": f"CASE WHEN g %% {AWAITING_EVERY} = 0 THEN '' ELSE md5('reply' || g) END",
        "receipt_number": f"CASE WHEN g %% {AWAITING_EVERY} = 0 THEN '' ELSE 'YNT2026' || lpad(g::text, 9, '0') END",
        "created_at": received_sql(count),
        "updated_at": received_sql(count),
        "synced_at": "now()",
        "status_read_at": "now()",
    }
    return value_sql(field, special)


def incoming_fill(company, prefix, count, senders=SENDERS):
    fill(IncomingNote, count, lambda f: _incoming_sql(f, company.pk, prefix, count, senders))


def awaiting_shown(page) -> int:
    """The count on the "Needs an answer" tab."""
    found = re.search(rb'id="incoming-awaiting-count">([^<]*)<', page.content)
    assert found, "the awaiting count is missing"
    return int(re.sub(rb"\D", b"", found.group(1)))


def test_incoming_list_with_a_million_notes_against_a_thousand(postgres_only, client, accountant, company,
                                                                small_company):
    incoming_fill(company, "BIG", INCOMING)
    # the small side's notes come from fewer senders, so that one sender fills a page there too (the same rows
    # rendered on both sides)
    incoming_fill(small_company, "SML", SMALL, senders=SMALL_SENDERS)
    with connection.cursor() as cursor:
        cursor.execute(f"VACUUM ANALYZE {IncomingNote._meta.db_table}")
    assert IncomingNote.objects.filter(company=company).count() == INCOMING
    awaiting = {size: IncomingNote.objects.filter(company=target, remote_status=AWAITING_ANSWER).count()
                for size, target in (("small", small_company), ("big", company))}
    assert awaiting == {"small": SMALL // AWAITING_EVERY, "big": INCOMING // AWAITING_EVERY}

    big_label, small_label = f"{INCOMING:,}", f"{SMALL:,}"
    clients = {small_label: login(client, accountant, small_company),
               big_label: login(Client(), accountant, company)}
    sizes = {small_label: ("SML", SMALL, small_company, b"BIG2026"),
             big_label: ("BIG", INCOMING, company, b"SML2026")}
    sender = f"{1_000_000_000 + 5:010d}"  # g % 10 == 5: 100 notes of the small company; g % 997 == 5: ~1,000

    def check(size, label, page):
        prefix, count, target, other = sizes[size]
        assert other not in page.content, "another company's note is shown"
        assert awaiting_shown(page) == count // AWAITING_EVERY
        notes = IncomingNote.objects.filter(company=target)
        if label == "needs an answer, oldest first":
            # the oldest note waiting for an answer heads the page; no answered note is on it
            oldest = count - count % AWAITING_EVERY
            assert number(prefix, oldest).encode() in page.content
            assert number(prefix, 1).encode() not in page.content
        elif label == "one sender":
            newest = notes.filter(sender_identifier=sender).order_by("-received_at", "-id").first()
            assert newest.despatch_number.encode() in page.content and sender.encode() in page.content
            assert f"{1_000_000_000 + 6:010d}".encode() not in page.content
        elif label == "7 days to answer ran out":
            # every waiting note arrived months ago: the newest of them heads the page
            assert number(prefix, AWAITING_EVERY).encode() in page.content
            assert number(prefix, 1).encode() not in page.content
        elif label == "to be answered within 7 days":
            assert number(prefix, 1).encode() not in page.content  # none arrived in the last 7 days
        elif label == "received in March 2026":
            first = notes.filter(received_at__date__range=(date(2026, 3, 1), date(2026, 3, 31))).order_by(
                "-received_at", "-id").first()
            assert first.despatch_number.encode() in page.content
            assert number(prefix, 1).encode() not in page.content
        else:
            assert number(prefix, 1).encode() in page.content  # the newest arrival first

    base = reverse("dispatch_inbox:incomingnote_list")
    variants = (("whole list", base), ("needs an answer, oldest first", base + "?view=awaiting"),
                ("one sender", f"{base}?sender={sender}"),
                ("received in March 2026", base + "?date_from=2026-03-01&date_to=2026-03-31"),
                ("7 days to answer ran out", base + "?answer_due=overdue"),
                ("to be answered within 7 days", base + "?answer_due=open"))
    failures = compare_sizes("incoming dispatch-note list", clients, variants, check, rounds=PAGE_ROUNDS)
    assert not failures, failures


# --- 2. replies received to our notes -----------------------------------------------------------------------------
def _note_sql(field, company_id, prefix):
    """Our outgoing note g, as much of it as the replies' list shows (its number) and links to."""
    special = {
        "company_id": str(int(company_id)),
        "remote_id": f"md5('{prefix}' || g)",
        "remote_status": "(ARRAY[60, 60, 80, 90])[1 + g %% 4]",
        "requested_status": "20",
        "sync_state": "'synced'",
        "source": "'form'",
        "numbering": "'series'",
        "despatch_number": f"'{prefix}2026' || lpad(g::text, 9, '0')",
        "prefix": f"'{prefix}'",
        "is_new": "false",
        "profile": "'TEMELIRSALIYE'",
        "currency_code": "'TRY'",
        "receiver_identifier": f"lpad((2000000000 + g %% {SENDERS})::text, 10, '0')",
        "receiver_name": f"'Alıcı ' || (g %% {SENDERS}) || ' Ticaret A.Ş.'",
        "created_at": "now()",
        "updated_at": "now()",
    }
    return value_sql(field, special)


def _receipt_sql(field, company_id, prefix, count, first_note):
    """The reply to our note g (the note with id first_note + g - 1): accepted, rejected or partly accepted,
    arrivals spread over a year, its lines read."""
    special = {
        "company_id": str(int(company_id)),
        "remote_id": f"md5('reply-{prefix}' || g)",
        "receipt_number": "'YNT2026' || lpad(g::text, 9, '0')",
        "remote_status": "60",
        "received_at": received_sql(count),
        "despatch_id": f"md5('{prefix}' || g)",
        "despatch_number": f"'{prefix}2026' || lpad(g::text, 9, '0')",
        "note_id": f"{int(first_note) - 1} + g",
        "sender_identifier": f"lpad((2000000000 + g %% {SENDERS})::text, 10, '0')",
        "sender_title": f"'Alıcı ' || (g %% {SENDERS}) || ' Ticaret A.Ş.'",
        "answer": "(ARRAY['accept', 'accept', 'accept', 'reject', 'partial'])[1 + g %% 5]",
        "lines_read_at": "now()",
    }
    return value_sql(field, special)


def receipts_fill(company, prefix, count):
    """count of our notes, then one reply to each."""
    fill(DispatchNote, count, lambda f: _note_sql(f, company.pk, prefix))
    ids = DispatchNote.objects.filter(company=company).aggregate(first=Min("id"), last=Max("id"))
    assert ids["last"] - ids["first"] + 1 == count  # one INSERT: consecutive ids, which the replies point to
    fill(ReceivedReply, count, lambda f: _receipt_sql(f, company.pk, prefix, count, ids["first"]))


def test_received_replies_with_a_million_against_a_thousand(postgres_only, client, accountant, company,
                                                            small_company):
    receipts_fill(company, "BIG", RECEIPTS)
    receipts_fill(small_company, "SML", SMALL)
    with connection.cursor() as cursor:
        cursor.execute(f"VACUUM ANALYZE {DispatchNote._meta.db_table}")
        cursor.execute(f"VACUUM ANALYZE {ReceivedReply._meta.db_table}")
    linked = ReceivedReply.objects.filter(company=company, note__company=company,
                                          note__despatch_number__startswith="BIG")
    assert linked.count() == RECEIPTS

    big_label, small_label = f"{RECEIPTS:,}", f"{SMALL:,}"
    clients = {small_label: login(client, accountant, small_company),
               big_label: login(Client(), accountant, company)}
    prefixes = {small_label: ("SML", b"BIG2026"), big_label: ("BIG", b"SML2026")}

    def check(size, label, page):
        prefix, other = prefixes[size]
        newest = ReceivedReply.objects.get(company__in=[company, small_company], despatch_number=number(prefix, 1))
        # the newest reply first, with a link to the note it answers
        assert newest.receipt_number.encode() in page.content
        assert reverse("dispatch:dispatchnote_detail", args=[newest.note_id]).encode() in page.content
        assert other not in page.content

    variants = (("whole list", reverse("dispatch:receivedreply_list")),)
    failures = compare_sizes("list of replies to our dispatch notes", clients, variants, check, rounds=PAGE_ROUNDS)
    assert not failures, failures


# --- 3. storing list pages --------------------------------------------------------------------------------------
SENDER_VKNS = valid_vkns(97, start=400_000_000)


def utc_stamp(moment):
    """createdDate as the list gives it: UTC with milliseconds and "Z"."""
    return moment.astimezone(dt_timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def raw_item(n):
    """Incoming note n as the platform's list answers: an answered one every fourth (with its reply), the others
    waiting for an answer; amounts as JSON numbers."""
    arrived = datetime(2026, 6, 1, 6, 0, tzinfo=dt_timezone.utc) + timedelta(seconds=37 * n)
    answered = n % 4 == 3
    return {"id": str(uuid.uuid5(uuid.NAMESPACE_URL, f"bench-inbox-{n}")).upper(),
            "despatchNumber": f"TDR2026{n:09d}", "status": 60 if answered else AWAITING_ANSWER,
            "createdDate": utc_stamp(arrived), "issueDate": (arrived.date() - timedelta(days=1)).isoformat(),
            "issueTime": f"{8 + n % 10:02d}:{n % 60:02d}:00", "senderVknTckn": SENDER_VKNS[n % len(SENDER_VKNS)],
            "senderTitle": f"Tedarikçi {n % 97} Nakliyat ve Ticaret A.Ş.",
            "profile": "TICARIIRSALIYE" if n % 2 else "TEMELIRSALIYE", "lineCount": 1 + n % 4,
            "payableAmount": round(150 + (n % 4000) * 2.35, 2), "currencyCode": "TRY",
            "receiptAdviceId": str(uuid.uuid5(uuid.NAMESPACE_URL, f"bench-reply-{n}")) if answered else None,
            "receiptNumber": f"YNT2026{n:09d}" if answered else None}



def bare_row(company, raw, now):
    """The row the mirror makes of a list item, built by hand beforehand: what a bare bulk_create stores."""
    return IncomingNote(
        company_id=company.pk, remote_id=raw["id"].lower(), remote_status=raw["status"],
        despatch_number=raw["despatchNumber"], sender_identifier=raw["senderVknTckn"],
        sender_title=raw["senderTitle"], profile=raw["profile"],
        received_at=datetime.fromisoformat(raw["createdDate"].replace("Z", "+00:00")),
        issue_date=date.fromisoformat(raw["issueDate"]),
        issue_time=datetime.strptime(raw["issueTime"], "%H:%M:%S").time(), line_count=raw["lineCount"],
        payable_amount=Decimal(str(raw["payableAmount"])).quantize(Decimal("0.01")), currency_code="TRY",
        receipt_id=raw["receiptAdviceId"] or "", receipt_number=raw["receiptNumber"] or "",
        sync_state=SyncState.SYNCED, synced_at=now, status_read_at=now)


# What a list item fills in; a stored row is compared with the hand-built one on all of them.
ITEM_FIELDS = ("remote_id", "remote_status", "despatch_number", "sender_identifier", "sender_title", "profile",
               "received_at", "issue_date", "issue_time", "line_count", "payable_amount", "currency_code",
               "receipt_id", "receipt_number", "sync_state")


def test_storing_an_incoming_page_into_a_million_notes_against_a_bare_bulk_create(postgres_only, company):
    incoming_fill(company, "OLD", TABLE)
    with connection.cursor() as cursor:
        cursor.execute(f"VACUUM ANALYZE {IncomingNote._meta.db_table}")
    bare_company = Company.objects.create(name="Bare Lojistik A.Ş.", api_key="key-bare-inbox")
    # Items exactly as the client hands them over (dispatch_inbox.incoming of the platform's answer).
    raw_pages = [[raw_item(n) for n in range(first, first + PAGE)] for first in range(0, STORE_PAGES * PAGE, PAGE)]
    pages = [[dispatch_inbox.incoming(raw) for raw in page] for page in raw_pages]
    now = timezone.now()
    bare_pages = [[bare_row(bare_company, raw, now) for raw in page] for page in raw_pages]

    # Alternating rounds of one page a side, the order swapped each round.
    ours_seconds = bare_seconds = 0.0
    new = 0
    for index, (page, rows) in enumerate(zip(pages, bare_pages)):
        for side in (("ours", "bare") if index % 2 == 0 else ("bare", "ours")):
            start = time.perf_counter()
            if side == "ours":
                new += resources.mirror_store(IncomingNote, page, company=company,
                                              fields_of=inbox.incoming_fields)
                ours_seconds += time.perf_counter() - start
            else:
                IncomingNote.objects.bulk_create(rows, batch_size=PAGE)
                bare_seconds += time.perf_counter() - start

    stored_count = STORE_PAGES * PAGE
    assert new == stored_count
    assert IncomingNote.objects.filter(company=company).count() == TABLE + stored_count
    assert IncomingNote.objects.filter(company=bare_company).count() == stored_count
    # An answered note and one awaiting an answer, field by field against the rows built by hand.
    for index in (stored_count - 1, stored_count - 2):
        expected = bare_pages[index // PAGE][index % PAGE]
        sample = IncomingNote.objects.get(company=company, remote_id=expected.remote_id)
        assert {name: getattr(sample, name) for name in ITEM_FIELDS} == {name: getattr(expected, name)
                                                                          for name in ITEM_FIELDS}

    # The same page a second time: every note known and unchanged, one SELECT and no write.
    page_ids = [item["id"].lower() for item in pages[0]]
    read_before = dict(IncomingNote.objects.filter(company=company, remote_id__in=page_ids)
                       .values_list("remote_id", "status_read_at"))
    start = time.perf_counter()
    with counting_queries() as queries:
        again = resources.mirror_store(IncomingNote, pages[0], company=company, fields_of=inbox.incoming_fields)
    again_seconds = time.perf_counter() - start
    assert again == 0
    assert len(queries) == 1 and queries[0].lstrip().upper().startswith("SELECT"), [sql[:200] for sql in queries]
    assert IncomingNote.objects.filter(company=company).count() == TABLE + stored_count
    assert dict(IncomingNote.objects.filter(company=company, remote_id__in=page_ids)
                .values_list("remote_id", "status_read_at")) == read_before

    ours, bare = ours_seconds / STORE_PAGES, bare_seconds / STORE_PAGES
    ratio = ours / bare
    print(f"\n[bench] storing a page of {PAGE} incoming notes into {TABLE:,} on {connection.vendor} "
          f"({STORE_PAGES} pages a side): mirror_store {ours * 1000:.1f} ms a page; bare bulk_create "
          f"{bare * 1000:.1f} ms a page; ratio {ratio:.2f}x (limit 5x); the same page again, nothing new: "
          f"{again_seconds * 1000:.1f} ms, {len(queries)} query")
    assert ratio <= 5.0
