"""The dashboard of a company with 1,000,000 invoices (two years of them, both directions, a tenth in US dollars)
and 100,000 each of outgoing dispatch notes, incoming dispatch notes and current accounts, against the same page of
a company with 1,000 invoices and 1,000 of each, measured in the same run (PostgreSQL; rows made by
generate_series). Prints both times and the ratio; asserts the ratio (at most 2x), the same number of queries on
both sides and what the blocks show, never an absolute time. Run with `make bench` (BENCH_DASHBOARD_INVOICES and
BENCH_DASHBOARD_OTHERS change the big side's counts).

The data is spread as a company's history is: the month's invoices are a 24th of two years, the notes still
waiting for an answer the last ten days' arrivals, a few accounts refused. The dashboard reads only the current
month, the waiting notes, the last 37 days of notes and the unsynced accounts, through existing indexes.
"""

import os
import re
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.urls import reverse

from backoffice.core import dashboard
from backoffice.core.models import Company
from backoffice.current_accounts.models import CurrentAccount
from backoffice.dispatch.models import DispatchNote
from backoffice.dispatch_inbox.models import IncomingNote
from backoffice.invoices.models import Invoice
from tests.benchmarks.common import compare_sizes, fill, value_sql
from tests.tickets.conftest import login

BIG = int(os.environ.get("BENCH_DASHBOARD_INVOICES", 1_000_000))
OTHERS = int(os.environ.get("BENCH_DASHBOARD_OTHERS", 100_000))
SMALL = 1_000
DAYS = 730  # two years of documents, the newest today

pytestmark = [pytest.mark.bench, pytest.mark.django_db(transaction=True)]


def _day(count):
    """Row g's day: count rows spread evenly over DAYS days back from today (Istanbul)."""
    return f"(date '{dashboard.today().isoformat()}' - ((g - 1) * {DAYS} / {count}))"


def _invoice_sql(field, company_id, count):
    special = {
        "company_id": str(int(company_id)),
        "remote_id": "md5(g::text)",
        "ettn": "md5(g::text)",
        "remote_status": "(ARRAY[60, 60, 60, 65, 70, 40, 20, 80])[1 + g %% 8]",
        "sync_state": "'synced'",
        "is_send": "g %% 3 <> 0",
        "record_type": "(g %% 4 <> 0)::int",
        "profile": "(ARRAY['TEMELFATURA', 'TICARIFATURA', 'EARSIVFATURA'])[1 + g %% 3]",
        "invoice_type": "'SATIS'",
        "prefix": "'DSH'",
        "invoice_number": "'DSH2026' || lpad(g::text, 9, '0')",
        "record_status": "0",
        "issue_date": _day(count),
        "target_title": "'Firma ' || (g %% 997) || ' Ticaret A.Ş.'",
        "target_vkn_tckn": "lpad((g %% 997)::text, 10, '0')",
        "currency_code": "CASE WHEN g %% 10 = 3 THEN 'USD' ELSE 'TRY' END",
        "currency_id": "CASE WHEN g %% 10 = 3 THEN 2 ELSE 1 END",
        "payable_amount": "(g %% 100000)::numeric * 0.12",
        "total_amount": "(g %% 100000)::numeric * 0.12",
        "created_at": "now()", "updated_at": "now()", "synced_at": "now()", "status_read_at": "now()",
    }
    return value_sql(field, special)


def _outgoing_sql(field, company_id, count, prefix):
    special = {
        "company_id": str(int(company_id)),
        "remote_id": f"md5('{prefix}' || g)",
        "remote_status": "(ARRAY[60, 60, 65, 50, 80, 0])[1 + g %% 6]",
        "requested_status": "20",
        "sync_state": "'synced'",
        "source": "'form'", "numbering": "'series'", "profile": "'TEMELIRSALIYE'", "currency_code": "'TRY'",
        "despatch_number": f"'{prefix}2026' || lpad(g::text, 9, '0')",
        "local_reference_id": f"'{prefix}-' || g",
        "receiver_name": "'Alıcı ' || (g %% 997) || ' A.Ş.'",
        "receiver_identifier": "lpad((g %% 997)::text, 10, '0')",
        "issue_date": _day(count),
        "is_new": "false",
        "ubl_file": "''",
        "created_at": "now()", "updated_at": "now()", "synced_at": "now()", "status_read_at": "now()",
    }
    return value_sql(field, special)


def _incoming_sql(field, company_id, count, prefix):
    received = f"({_day(count)})::timestamp AT TIME ZONE 'Europe/Istanbul' + interval '9 hours'"
    special = {
        "company_id": str(int(company_id)),
        "remote_id": f"md5('{prefix}' || g)",
        # the last ten days' arrivals still wait for an answer; the older ones are answered
        "remote_status": f"CASE WHEN (g - 1) * {DAYS} / {count} < 10 THEN 70 ELSE 60 END",
        "sync_state": "'synced'",
        "despatch_number": f"'{prefix}2026' || lpad(g::text, 9, '0')",
        "sender_title": "'Tedarikçi ' || (g %% 997) || ' A.Ş.'",
        "sender_identifier": "lpad((g %% 997)::text, 10, '0')",
        "received_at": received,
        "issue_date": _day(count),
        "currency_code": "'TRY'",
        "payable_amount": "(g %% 100000)::numeric * 0.12",
        "created_at": "now()", "updated_at": "now()", "synced_at": "now()", "status_read_at": "now()",
    }
    return value_sql(field, special)


def _account_sql(field, company_id, prefix):
    special = {
        "company_id": str(int(company_id)),
        "remote_id": f"md5('{prefix}' || g)",
        # one in a thousand refused, one in a thousand saved here and not sent yet
        "sync_state": "CASE WHEN g %% 1000 = 1 THEN 'failed' WHEN g %% 1000 = 2 THEN 'local' ELSE 'synced' END",
        "name": "'Cari ' || g || ' Ticaret A.Ş.'",
        "identifier": "lpad((g %% 99991)::text, 10, '0')",
        "code": f"'{prefix}' || g",
        "created_at": "now()", "updated_at": "now()",
    }
    return value_sql(field, special)


def build(company, invoices, others, prefix):
    fill(Invoice, invoices, lambda f: _invoice_sql(f, company.pk, invoices))
    fill(DispatchNote, others, lambda f: _outgoing_sql(f, company.pk, others, prefix))
    fill(IncomingNote, others, lambda f: _incoming_sql(f, company.pk, others, prefix))
    fill(CurrentAccount, others, lambda f: _account_sql(f, company.pk, prefix))


def test_dashboard_with_a_million_invoices_against_a_thousand(postgres_only, client, accountant, company):
    small = Company.objects.create(name="Küçük A.Ş.", api_key="key-small-dashboard")
    build(company, BIG, OTHERS, "BIG")
    build(small, SMALL, SMALL, "SML")
    with connection.cursor() as cursor:
        for model in (Invoice, DispatchNote, IncomingNote, CurrentAccount):
            cursor.execute(f"VACUUM ANALYZE {model._meta.db_table}")
    assert Invoice.objects.filter(company=company).count() == BIG

    today = dashboard.today()
    month = Invoice.objects.filter(company=company, issue_date__gte=today.replace(day=1), issue_date__lte=today)
    month_count, outgoing_count = month.count(), month.filter(is_send=True).count()
    waiting = IncomingNote.objects.filter(company=company, remote_status=70).count()
    window = DispatchNote.objects.filter(company=company, remote_status__in=(60, 65, 50),
                                         issue_date__gte=today - timedelta(days=37)).count()
    print(f"\n[bench] dashboard data: {BIG:,} invoices ({month_count:,} this month), {OTHERS:,} outgoing notes "
          f"({window:,} in the last 37 days), {OTHERS:,} incoming notes ({waiting:,} waiting), {OTHERS:,} current "
          f"accounts; against {SMALL:,} of each")

    def check(size, label, page):
        html = page.content.decode()
        for element in ("dashboard-invoices", "dashboard-dispatch-incoming", "dashboard-dispatch-invoicing",
                        "dashboard-ledger", "dashboard-platform"):
            assert f'id="{element}"' in html, element
        assert "data-days-left" in html and re.search(r"\d TRY", html) and "USD" in html
        if size == "1,000,000":  # the month's outgoing invoices, counted in full (Turkish thousands)
            assert f"{outgoing_count:,} fatura".replace(",", ".") in html

    clients = {"1,000": login(client, accountant, small, language="tr"),
               "1,000,000": login(Client(), accountant, company, language="tr")}
    failures = compare_sizes("dashboard", clients, [("whole page", reverse("core:dashboard"))], check)
    assert not failures, failures
