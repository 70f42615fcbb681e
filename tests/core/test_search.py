"""Search the Turkish way (issue 29, 2): one fold in core, a folded column the database keeps, every list filter
and the current-account lookup on it."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.db.models import F
from django.urls import reverse
from django.utils import timezone

from backoffice.chart_of_accounts.models import Account
from backoffice.core.choices import SyncState
from backoffice.core.search import FoldedSearchField, folded_search_field, search_filter
from backoffice.core.text import fold, search_fold
from backoffice.current_accounts import services
from backoffice.current_accounts.lookup import find_accounts
from backoffice.current_accounts.models import CurrentAccount
from backoffice.dispatch.models import DispatchNote, DispatchTaxpayer, ReceivedReply
from backoffice.dispatch_inbox.models import IncomingNote
from backoffice.invoices.models import Invoice, Taxpayer
from backoffice.passenger_lists.models import PassengerList
from backoffice.subcompanies.models import SubCompany
from backoffice.tickets.models import EventTicket, PassengerTicket
from tests.tickets.conftest import login

# The database engine matters here (Turkish folding and trigram search differ by database (core.search)): CI's SQLite
# pass runs these too.
pytestmark = pytest.mark.database

# Each word as it is stored, and as a user types it: the other case, and without Turkish letters.
WORDS = [("izmir", "İZMİR"), ("İZMİR", "izmir"), ("ışık", "IŞIK"), ("IŞIK", "ışık"), ("çınar", "ÇINAR"),
         ("ÇINAR", "çınar"), ("IŞIK", "isik"), ("Çınar", "cinar"), ("İzmir", "IZMIR")]
OTHER = "Ankara Gıda"  # a row no word names


def test_fold_is_turkish_lower_case():
    assert fold("İZMİR") == "izmir" == fold("izmir")
    assert fold("IŞIK") == "ışık" == fold("ışık")
    assert fold("ÇINAR") == "çınar"
    assert fold("I\u0307") == "i" and fold("i\u0307") == "i"  # decomposed capital İ, and str.lower()'s own
    assert "İ".lower() != "i"  # why fold() exists


@pytest.mark.parametrize("stored, typed", WORDS)
def test_search_fold_makes_every_spelling_one(stored, typed):
    assert search_fold(stored) == search_fold(typed)
    assert search_fold(stored).isascii() and search_fold(stored) == search_fold(stored).lower()


def test_search_fold_keeps_words_apart():
    assert search_fold("izmir") != search_fold("izmit")
    assert search_fold("50%_x") == "50%_x"  # LIKE's wildcards stay as typed (the lookup escapes them)


TEXTS = ["İSTANBUL Şubesi", "ığüşöç ĞÜŞİÖÇ", "Âlâ Îmar Ûmran", "NESTLÉ", "I\u0307", "plain ascii 123",
         "Straße Ελλάδα"]


@pytest.mark.django_db
@pytest.mark.parametrize("text", TEXTS)
def test_the_database_folds_as_python_does(company, text):
    CurrentAccount.objects.create(company=company, name=text, surname="Yılmaz", identifier="1234567890",
                                  code="120.İ")
    stored = CurrentAccount.objects.values_list("search_text", flat=True).get()
    assert stored == search_fold(f"{text} Yılmaz 1234567890 120.İ")


def test_search_columns_are_declared_on_the_searched_models():
    for model in (CurrentAccount, Invoice, Taxpayer, DispatchNote, DispatchTaxpayer, IncomingNote, ReceivedReply,
                  EventTicket, PassengerTicket, PassengerList):
        field = folded_search_field(model)
        assert isinstance(field, FoldedSearchField) and field.sources, model
    assert {"target_title", "target_vkn_tckn"} <= set(folded_search_field(Invoice).sources)
    assert "receiver_name" in folded_search_field(DispatchNote).sources
    assert {"customer_first_name", "customer_last_name"} <= set(folded_search_field(EventTicket).sources)


# --- find_accounts --------------------------------------------------------------------------------------------
@pytest.mark.django_db
@pytest.mark.parametrize("stored, typed", WORDS)
def test_find_accounts_matches_the_turkish_way(company, other_company, stored, typed):
    wanted = CurrentAccount.objects.create(company=company, name=f"{stored} Ticaret A.Ş.", identifier="1234567890")
    CurrentAccount.objects.create(company=company, name=OTHER, identifier="2234567890")
    CurrentAccount.objects.create(company=other_company, name=f"{stored} Ticaret A.Ş.", identifier="1234567890")
    assert find_accounts(company, typed) == [wanted]
    assert find_accounts(company, f"  {typed} tic") == [wanted]  # a part of the title, spaces around


@pytest.mark.django_db
def test_find_accounts_by_surname_code_and_identifier(company):
    person = CurrentAccount.objects.create(company=company, name="Ayşe", surname="IŞIKÇI", identifier="12345678901",
                                           code="C-İZ")
    firm = CurrentAccount.objects.create(company=company, name="Işık Ltd.", identifier="1299999999")
    nines = CurrentAccount.objects.create(company=company, name="Dokuz", identifier="9999999999")
    assert find_accounts(company, "ışıkçı") == [person]
    assert find_accounts(company, "ayşe ışık") == [person]  # name and surname as one
    assert find_accounts(company, "c-iz") == [person]
    assert find_accounts(company, "ışık") == [person, firm]  # by name: "Ayşe" before "Işık"
    assert find_accounts(company, "12") == [person, firm]
    assert find_accounts(company, "1234 · C-İZ") == [person]
    assert find_accounts(company, "129") == [firm]
    assert find_accounts(company, "1300") == []
    assert find_accounts(company, "99") == [nines]
    assert find_accounts(company, "I") == [] and find_accounts(company, "") == []  # under two characters
    assert find_accounts(company, "%") == []
    assert len(find_accounts(company, "ı", limit=1)) == 0
    assert len(find_accounts(company, "ış", limit=1)) == 1


# --- every write path fills the column --------------------------------------------------------------------------
def _item(n, name):
    return {"id": 7_000_000 + n, "branchId": None, "name": name, "identifier": f"{1234567890 + n}",
            "surname": None, "totalBalance": 10.5, "status": 1}


@pytest.mark.django_db
def test_the_mirror_fills_the_column_on_bulk_create_and_bulk_update(company):
    assert services.store_current_accounts(company, [_item(1, "ÇINAR Yapı"), _item(2, "İZMİR Gıda")]) == 2
    assert [a.name for a in find_accounts(company, "çınar")] == ["ÇINAR Yapı"]
    assert [a.name for a in find_accounts(company, "izmir")] == ["İZMİR Gıda"]

    services.store_current_accounts(company, [_item(1, "IŞIK Yapı")])  # renamed on the platform: bulk_update
    assert [a.name for a in find_accounts(company, "ışık")] == ["IŞIK Yapı"]
    assert find_accounts(company, "çınar") == []


@pytest.mark.django_db
def test_queryset_update_and_save_refill_the_column(company):
    account = CurrentAccount.objects.create(company=company, name="Eski", identifier="1234567890")
    CurrentAccount.objects.filter(pk=account.pk).update(name="Çınar", surname=F("name"))
    assert find_accounts(company, "ÇINAR eski") == [account]
    account.refresh_from_db()
    account.name = "İzmir"
    account.save()
    assert find_accounts(company, "IZMIR") == [account] and find_accounts(company, "çınar") == []


@pytest.mark.django_db
def test_taxpayer_directory_upsert_refills_the_column():
    now = timezone.now()
    rows = [Taxpayer(identifier="1234567890", alias="urn:mail:defaultpk@x.com", title="IŞIK A.Ş.", seen_at=now)]
    Taxpayer.objects.bulk_create(rows, update_conflicts=True, unique_fields=["identifier", "alias", "app_type"],
                                 update_fields=["title", "seen_at"])
    rows[0].title = "ÇINAR A.Ş."
    Taxpayer.objects.bulk_create(rows, update_conflicts=True, unique_fields=["identifier", "alias", "app_type"],
                                 update_fields=["title", "seen_at"])
    assert Taxpayer.objects.get().search_text.startswith("1234567890 cinar a.s.")


# --- the list pages ---------------------------------------------------------------------------------------------
def _account(company, n, name):
    return CurrentAccount.objects.create(company=company, name=name, identifier=f"{1234567890 + n}",
                                         code=f"KOD-{n:03d}")


def _invoice(company, n, title):
    return Invoice.objects.create(company=company, invoice_number=f"ABC2026{n:09d}", target_title=title,
                                  target_vkn_tckn="1234567890", issue_date=timezone.localdate())


def _dispatch_note(company, n, name):
    return DispatchNote.objects.create(company=company, despatch_number=f"IRS2026{n:09d}", receiver_name=name,
                                       receiver_identifier="1234567890", issue_date=timezone.localdate())


def _ticket(company, n, name):
    first, _space, last = name.partition(" ")
    return EventTicket.objects.create(
        company=company, ticket_number=f"ETK2026{n:09d}", prefix="ETK", ticket_date=timezone.now(),
        payment_type="NAKIT", customer_first_name=first, customer_last_name=last or "Soyad", seat_number=f"S{n}",
        event_name="Bahar Konseri", event_location="Salon", event_city_id=34, event_municipality="Kadıköy",
        event_organizer_vkn_tckn="1234567890", total_amount=Decimal("100"), payable_amount=Decimal("120"),
        sync_state=SyncState.LOCAL)


def _incoming(company, n, title):
    return IncomingNote.objects.create(company=company, remote_id=f"in-{n}", despatch_number=f"GLN2026{n:09d}",
                                       sender_title=title, received_at=timezone.now() - timedelta(hours=n))


def _chart_account(company, n, name):
    return Account.objects.create(company=company, type=0, base_code=f"9{n:02d}", name=name)


LISTS = [
    ("current_accounts:currentaccount_list", _account, lambda row: row.code),
    ("chart_of_accounts:account_list", _chart_account, lambda row: f'>{row.full_code}<'),
    ("invoices:invoice_list", _invoice, lambda row: row.invoice_number),
    ("dispatch:dispatchnote_list", _dispatch_note, lambda row: row.despatch_number),
    ("tickets:eventticket_list", _ticket, lambda row: row.ticket_number),
    ("dispatch_inbox:incomingnote_list", _incoming, lambda row: row.despatch_number),
]


@pytest.mark.django_db
@pytest.mark.parametrize("url_name, make, shown", LISTS, ids=[name for name, _m, _s in LISTS])
def test_list_search_matches_the_turkish_way(client, accountant, company, other_company, url_name, make, shown):
    login(client, accountant, company)
    rows = {stored: make(company, n, f"{stored} Ticaret") for n, stored in enumerate(
        {stored for stored, _typed in WORDS}, start=1)}
    other = make(company, 90, OTHER)
    hidden = make(other_company, 91, "İZMİR Ticaret")  # another company's row is never found
    url = reverse(url_name)
    for stored, typed in WORDS:
        page = client.get(url, {"q": typed})
        assert page.status_code == 200
        text = page.content.decode()
        wanted = {s for s in rows if search_fold(s) == search_fold(typed)}
        assert stored in wanted
        for candidate, row in rows.items():
            assert (shown(row) in text) == (candidate in wanted), (typed, candidate)
        assert shown(other) not in text and shown(hidden) not in text
    assert shown(other) in client.get(url, {"q": "GIDA"}).content.decode()


@pytest.mark.django_db
def test_list_search_still_finds_by_number_and_id(client, accountant, company):
    login(client, accountant, company)
    invoice = _invoice(company, 7, "Işık A.Ş.")
    url = reverse("invoices:invoice_list")
    assert invoice.invoice_number in client.get(url, {"q": "abc2026000000007"}).content.decode()
    assert invoice.invoice_number in client.get(url, {"q": "4567890"}).content.decode()
    assert invoice.invoice_number not in client.get(url, {"q": "9999999"}).content.decode()


@pytest.mark.django_db
def test_subcompany_search_matches_the_turkish_way(company, other_company):
    izmir = SubCompany.objects.create(company=company, name="İZMİR Işık Ticaret", identifier="1234567890")
    SubCompany.objects.create(company=company, name="Ankara Gıda", identifier="1234567891")
    for typed in ("izmir", "IŞIK", "ışık", "isik"):
        found = SubCompany.objects.filter(company=company).filter(search_filter(SubCompany, typed))
        assert list(found) == [izmir], typed
