"""Every page in Turkish, as each role (issue 9): a crawl from the dashboard through every link of a working
day's data fails on English words left untranslated, on Turkish words capitalised with the English rule
("Işletmeci", "Ilçe" for "İşletmeci", "İlçe") and on raw API or field names shown to users."""

import html
import re
from collections import defaultdict
from urllib.parse import urldefrag, urlsplit

import pytest
from django.utils import timezone

from backoffice.core.choices import Role
from backoffice.core.middleware import SESSION_KEY
from backoffice.core import codes
from backoffice.invoices.models import Taxpayer
from tests.conftest import form_post, make_user
from tests.core.test_views_i18n import CATALOGUE, parse_po
from tests.tickets.conftest import event_data, passenger_data

pytestmark = pytest.mark.django_db

WORD = re.compile(r"[A-Za-zÇĞİIÖŞÜçğıiöşü]+")
# Words that are the same in both languages, names and codes people know (not to be translated).
SHARED = {
    "api", "vkn", "tckn", "ettn", "xslt", "excel", "english", "türkçe", "sandbox", "url", "id", "uuid", "http",
    "https", "html", "pdf", "zip", "xml", "json", "rq", "ok", "mersis", "try", "usd", "eur", "kdv", "e", "no",
    "iban", "csv", "xlsx", "utc", "tr", "en", "min", "max", "sms", "ip", "e-posta", "demo", "etk", "ylc", "ana",
    "a", "b", "c", "ş", "ltd", "salon", "bahar", "konseri", "ayşe", "yılmaz", "bileti", "yolcu", "ankara",
    "kadıköy", "istanbul", "acme", "get", "post", "put", "delete", "patch",
}
CAMEL_OR_SNAKE = re.compile(r"\b(?:[a-z]+[A-Z][A-Za-z]+|[a-z]+_[a-z_]+)\b")


def vocabulary():
    english, turkish = set(), set()
    for entry in parse_po(CATALOGUE / "django.po"):
        if not entry["msgid"]:
            continue
        source = re.sub(r"%\(\w+\)[sd]|\{\w+\}|<[^>]+>", " ", entry["msgid"] + " " + entry.get("msgid_plural", ""))
        english.update(w.lower() for w in WORD.findall(source))
        for msgstr in entry["msgstr"]:
            turkish.update(lower_tr(w) for w in WORD.findall(msgstr))
    return english, turkish


def lower_tr(word):
    return word.replace("I", "ı").replace("İ", "i").lower()


def visible_text(page):
    page = re.sub(r"(?s)<(script|style|template)\b.*?</\1>", " ", page)
    page = re.sub(r"(?s)<!--.*?-->", " ", page)
    # Attributes people read: titles, placeholders, labels of buttons without text.
    attributes = " ".join(re.findall(r'(?:title|placeholder|aria-label)="([^"]*)"', page))
    text = re.sub(r"<[^>]+>", " ", page)
    # Addresses (the service URLs a company uses) are what they are, in no language.
    return re.sub(r"https?://\S+", " ", html.unescape(text + " " + attributes))


def problems(text, english, turkish, data_words):
    found = []
    for word in set(WORD.findall(text)):
        low = lower_tr(word)
        if low in SHARED or low in data_words or len(word) < 3:
            continue
        if word[0] == "I" and len(word) > 1 and word[1:].islower():
            dotted = "i" + lower_tr(word[1:])
            if dotted in turkish and low not in turkish:
                found.append(f"English-rule capital: {word} (İ{word[1:]})")
                continue
        if word.lower() in english and low not in turkish and word.lower() not in turkish:
            found.append(f"untranslated: {word}")
    for name in set(CAMEL_OR_SNAKE.findall(text)):
        if name.lower() not in data_words:
            found.append(f"raw name: {name}")
    return found


def working_day(company):
    """A company with a few records of each kind, made the way the pages make them."""
    from backoffice.core.models import JobRun

    accountant = make_user("muhasebe", Role.ACCOUNTING, [company])
    return accountant, JobRun


def crawl(client, start="/", limit=400):
    seen, queue, pages = set(), [start], {}
    while queue and len(seen) < limit:
        url = queue.pop(0)
        if url in seen:
            continue
        seen.add(url)
        response = client.get(url)
        assert response.status_code != 500, url
        if response.status_code != 200 or "text/html" not in response.get("Content-Type", ""):
            continue
        body = response.content.decode()
        pages[url] = body
        for href in re.findall(r'href="([^"#][^"]*)"', body):
            href = urldefrag(html.unescape(href))[0]
            parts = urlsplit(href)
            if parts.scheme or parts.netloc or not href.startswith("/"):
                continue
            if re.search(r"/(logout|admin|i18n|static|media)/|export=xlsx|/download/|/html/", href):
                continue
            if parts.query and re.search(r"(^|&)(page|sort|per_page)=", parts.query):
                continue  # the same page again, in another order
            if href not in seen:
                queue.append(href)
    return pages


@pytest.fixture
def working_company(company, other_company, administrator):
    """Tickets of both kinds made through the forms (one refused by the platform), so that lists, details,
    edit forms and job pages have something to show."""
    from django.test import Client

    from backoffice.core.choices import SyncState
    from backoffice.tickets.models import EventTicket

    client = Client()
    client.force_login(administrator)
    session = client.session
    session[SESSION_KEY] = company.pk
    session.save()
    assert form_post(client, "/tickets/event/add/", event_data()).status_code == 302
    assert form_post(client, "/tickets/passenger/add/", passenger_data()).status_code == 302
    assert form_post(client, "/tickets/event/add/", event_data(seat_number="C-3")).status_code == 302
    failed = EventTicket.objects.get(seat_number="C-3")
    EventTicket.objects.filter(pk=failed.pk).update(sync_state=SyncState.FAILED, last_error="Geçersiz alan",
                                                    updated_at=timezone.now())
    # The other kinds of record, as the platform's answers leave them.
    from backoffice.core.models import JobRun
    from backoffice.passenger_lists.models import PassengerList
    from backoffice.subcompanies.models import SubCompany
    from backoffice.tickets.models import TicketExport
    from tests.subcompanies.conftest import new_vkn

    PassengerList.objects.create(
        company=company, expedition_number="S-1001", expedition_time=timezone.now(), vehicle_plate="34ABC123",
        remote_id="11111111-2222-3333-4444-555555555555", passenger_list_number="YLS2026000000001",
        sync_state=SyncState.SYNCED)
    SubCompany.objects.create(company=company, name="Bekleyen A.Ş.", identifier=new_vkn(),
                              sync_state=SyncState.SYNCED)
    SubCompany.objects.create(company=company, name="Red A.Ş.", identifier=new_vkn(), sync_state=SyncState.FAILED,
                              last_error="Geçersiz vergi numarası")
    TicketExport.objects.create(company=company, kind="event", filters={"ids": []})
    JobRun.objects.create(name="usage_report_refresh", company=company, status="failed", message="Zaman aşımı")
    from backoffice.chart_of_accounts.models import Account
    from backoffice.current_accounts.models import Address, CurrentAccount, Mapping

    main = Account.objects.create(company=company, type=0, base_code="120", name="Alıcılar",
                                  sync_state=SyncState.SYNCED, remote_id="1")
    sub = Account.objects.create(company=company, type=2, base_code="120", code="120", unit_code="001",
                                 name="Yurtiçi Alıcılar", parent=main, currency_code_id=1)
    account = CurrentAccount.objects.create(company=company, name="Örnek Ticaret A.Ş.", identifier="1234567890",
                                            sync_state=SyncState.SYNCED, remote_id="5")
    Address.objects.create(company=company, current_account=account, address_name="Merkez", city="İstanbul",
                           sub_division_name="Kadıköy", is_default=True, sync_state=SyncState.SYNCED, remote_id="9")
    Mapping.objects.create(company=company, current_account=account, account=sub, name="Satış")
    from decimal import Decimal

    from backoffice.invoices.models import Invoice, InvoiceLine, PdfBundle, Taxpayer

    issued = Invoice.objects.create(
        company=company, remote_id="6f1c0a4e-0000-4000-8000-000000000009", ettn="6f1c0a4e-0000-4000-8000-000000000009",
        invoice_number="ABC2026000000001", current_account=account, target_vkn_tckn="1234567890",
        target_title="Örnek Ticaret A.Ş.", prefix="ABC", issue_date=timezone.localdate(), description="Danışmanlık",
        currency_code="USD", exchange_rate=Decimal("32.5"), exchange_rate_source="TCMB", exchange_rate_comment="Satış",
        remote_status=60, record_status=1, sync_state=SyncState.SYNCED, line_count=1, payable_amount=Decimal("120"),
        detail_read_at=timezone.now(), notes="Teşekkürler")
    InvoiceLine.objects.create(invoice=issued, position=1, inventory_service_code="HZM-01", quantity=1,
                               unit_price=100, vat_rate=20, withholding_code="602", line_extension_amount=100,
                               vat_amount=20)
    Invoice.objects.create(company=company, remote_id="6f1c0a4e-0000-4000-8000-00000000000a", is_send=False,
                           invoice_number="GLN2026000000007", record_type=1, profile="TEMELFATURA",
                           target_title="Tedarikçi Ltd.", remote_status=40, status_message="Hata: belge doğrulanamadı",
                           sync_state=SyncState.SYNCED, detail_read_at=timezone.now(),
                           detail={"invoiceLines": [{"inventoryServiceCode": "URN-02", "amount": 2, "unitPrice": 5,
                                                     "lineExtensionAmount": 10, "vatAmount": 2, "vatRate": 20}]})
    Taxpayer.objects.create(identifier="1234567890", alias="urn:mail:defaultpk@ornek.com.tr", title="Örnek Ticaret",
                            app_type="1", seen_at=timezone.now())
    PdfBundle.objects.create(company=company, total=3, fetched=1)
    from datetime import date

    from backoffice.ledger.models import BookEntry, Finding, Journal, Part, Period

    period = Period.objects.create(company=company, remote_id="1201", remote_status=30, fiscal_year_start=date(2025, 3, 1),
                                   fiscal_year_end=date(2025, 3, 31), split_size=10, task_status=3, task_progress=100,
                                   sync_state=SyncState.SYNCED)
    part = Part.objects.create(company=company, period=period, remote_id="51", index_number=1, entry_number_start=1,
                               entry_number_end=3, line_number_start=1, line_number_end=6, debit=Decimal("3750"),
                               credit=Decimal("3750"))
    BookEntry.objects.create(company=company, part=part, remote_id="91", generalbook_type=1, status=10)
    journal = Journal.objects.create(company=company, start_date=date(2025, 4, 1), end_date=date(2025, 4, 30),
                                     source_kind="txt", source_name="yevmiye-nisan.txt", check_state="errors",
                                     findings_count=1, findings_by_rule={"debit_credit_code": 1}, line_count=7,
                                     entry_count=2)
    Finding.objects.create(journal=journal, line=3, field="debitCreditCode", column=8, rule="debit_credit_code",
                           found="X", expected="D, C")
    Journal.objects.create(company=company, start_date=date(2025, 3, 1), end_date=date(2025, 3, 31), source_kind="txt",
                           source_name="yevmiye-mart.txt", check_state="passed", line_count=10, entry_count=3,
                           remote_id="1201", period=period, sync_state=SyncState.SYNCED)
    from backoffice.dispatch.models import DispatchDriver, DispatchLine, DispatchNote, DispatchTaxpayer

    note = DispatchNote.objects.create(
        company=company, remote_id="7a2d0a4e-0000-4000-8000-000000000301", despatch_number="IRS2026000000001",
        prefix="IRS", current_account=account, receiver_identifier="1234567890", receiver_name="Örnek Ticaret A.Ş.",
        target_alias="urn:mail:defaultpk@ornek.com.tr", delivery_city="İstanbul", delivery_district="Kadıköy",
        delivery_zip_code="34710", issue_date=timezone.localdate(), shipment_date=timezone.now(),
        plate_number="34ABC123", local_reference_id="ERP-1", remote_status=50, envelope_status="1000",
        envelope_id="b1f0c2d4-1111-4000-8000-000000000001", sync_state=SyncState.SYNCED, line_count=1)
    DispatchLine.objects.create(note=note, position=1, product_name="Çimento", quantity=4, unit_price=10, vat_rate=20,
                                line_amount=40, vat_amount=8)
    DispatchDriver.objects.create(note=note, position=1, name="Ayşe", surname="Yılmaz", tckn="10000000146")
    DispatchNote.objects.create(company=company, remote_id="7a2d0a4e-0000-4000-8000-000000000302",
                                despatch_number="IRS2026000000002", remote_status=40, status_message="Hata: alıcı yok",
                                sync_state=SyncState.SYNCED, local_reference_id="ERP-2")
    DispatchTaxpayer.objects.create(identifier="1234567890", alias="urn:mail:defaultpk@ornek.com.tr", title="Örnek",
                                    app_type="3", seen_at=timezone.now())
    from tests.dispatch.inbox_helpers import incoming_day

    incoming_day(company, timezone.now(), ours=note)
    return company


@pytest.mark.parametrize("role", [Role.ACCOUNTING, Role.MANAGER, Role.ADMINISTRATOR])
def test_every_page_reads_as_turkish(client, working_company, role):
    user = make_user(f"kullanici-{role.value}", role, [working_company])
    client.force_login(user)
    client.cookies["django_language"] = "tr"
    session = client.session
    session[SESSION_KEY] = working_company.pk
    session.save()
    english, turkish = vocabulary()
    data_words = {lower_tr(w) for w in WORD.findall(" ".join(
        [working_company.name, user.username, *event_data().values(), *passenger_data().values(),
         *Taxpayer.objects.values_list("alias", flat=True),
         # The code lists' names are data in their own languages (COU: "Unidad de Valor Real").
         *(label for name in (codes.CURRENCIES, codes.COUNTRIES) for _code, label in codes.choices(name))]))}

    pages = crawl(client)

    assert len(pages) > 15, sorted(pages)
    report = defaultdict(list)
    for url, body in pages.items():
        for problem in problems(visible_text(body), english, turkish, data_words):
            report[problem].append(url)
    assert not report, "\n".join(f"{problem}  ← {', '.join(sorted(urls)[:3])}" for problem, urls in sorted(report.items()))
