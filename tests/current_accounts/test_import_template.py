"""Issue 29: the import templates' example rows are never imported. The template is downloaded through the page,
filled as a user fills it (the header and the example kept, rows added below), uploaded through the page, and
exactly the user's rows are imported; the page says how many rows it read, skipped and refused."""

import io

import pytest
from django.urls import reverse
from openpyxl import load_workbook

from backoffice.chart_of_accounts.models import Account
from backoffice.core.choices import SyncState
from backoffice.current_accounts import imports
from backoffice.current_accounts.models import Address, CurrentAccount
from tests.conftest import form_post
from tests.tickets.conftest import login

pytestmark = pytest.mark.django_db

IMPORT = reverse("current_accounts:currentaccount_import")


def template_url(kind):
    return reverse("current_accounts:currentaccount_import_template", kwargs={"kind": kind})


def download(web, kind):
    response = web.get(template_url(kind))
    assert response.status_code == 200
    return load_workbook(io.BytesIO(response.content))


def fill(book, rows) -> io.BytesIO:
    """The user's rows added below the template's example, each by the header it goes under ({header: value})."""
    sheet = book.worksheets[0]
    headers = [cell.value for cell in sheet[1]]
    for row in rows:
        sheet.append([row.get(header.rstrip(" *")) for header in headers])
    out = io.BytesIO()
    book.save(out)
    out.seek(0)
    out.name = "cari-hesaplar.xlsx"
    return out


def messages_of(response):
    return [str(message) for message in response.context["messages"]] if response.context else []


def test_the_filled_template_imports_exactly_the_users_three_rows(client, accountant, company):
    web = login(client, accountant, company, language="tr")
    # A real account already has the example's identifier and code: the example, imported, would be refused.
    CurrentAccount.objects.create(company=company, name="Gerçek Örnek A.Ş.", identifier="1234567890",
                                  code="120.01.001")
    book = download(web, "accounts")
    sheet = book.worksheets[0]
    assert sheet["A2"].value == "Örnek Ticaret A.Ş." and sheet["C2"].value == "1234567890"  # the example is there
    assert book.sheetnames[1] == "Açıklama"
    upload = fill(book, [
        {"Ad ya da unvan": "Çağrı Işıkoğlu Gıda Ltd. Şti.", "VKN ya da TCKN": "4840000006",
         "Hesap kodu": "120.01.101", "Adres adı": "Merkez", "İl": "İzmir", "İlçe": "Karşıyaka",
         "Vade (gün)": "45"},
        {"Ad ya da unvan": "Şükrü", "Soyadı": "Öztürk", "VKN ya da TCKN": "10000000146",
         "Adres adı": "Ev", "İl": "Iğdır", "İlçe": "Merkez"},
        {"Ad ya da unvan": "Ümit İnşaat A.Ş.", "VKN ya da TCKN": "1000000018",
         "Hesap kodu": "120.01.103", "Vergi dairesi": "Üsküdar"},
    ])
    response = form_post(web, IMPORT, {"kind": "accounts", "file": upload}, follow=True)
    assert not response.context.get("errors"), [vars(error) for error in response.context["errors"]]
    imported = CurrentAccount.objects.filter(company=company).exclude(name="Gerçek Örnek A.Ş.")
    assert sorted(imported.values_list("name", "identifier")) == [
        ("Çağrı Işıkoğlu Gıda Ltd. Şti.", "4840000006"), ("Ümit İnşaat A.Ş.", "1000000018"),
        ("Şükrü", "10000000146")]
    assert not imported.filter(name="Örnek Ticaret A.Ş.").exists()
    assert all(account.sync_state == SyncState.QUEUED for account in imported)
    assert Address.objects.get(current_account__identifier="4840000006").city == "İzmir"
    assert imported.get(identifier="4840000006").maturity == 45
    assert any("4 satır okundu" in message and "örnek satırı atlandı (satır: 2)" in message
               for message in messages_of(response)), messages_of(response)


def test_an_example_row_changed_in_one_cell_is_a_real_row(client, accountant, company):
    web = login(client, accountant, company)
    book = download(web, "accounts")
    book.worksheets[0]["B2"] = "Yılmaz"  # a surname added to the example row: it is the user's row now
    upload = fill(book, [])
    response = form_post(web, IMPORT, {"kind": "accounts", "file": upload}, follow=True)
    assert list(CurrentAccount.objects.values_list("name", "surname")) == [("Örnek Ticaret A.Ş.", "Yılmaz")]
    assert any("1 row(s) read." in message for message in messages_of(response)), messages_of(response)


def test_the_example_alone_is_refused_on_the_file_field(client, accountant, company):
    web = login(client, accountant, company)
    upload = fill(download(web, "accounts"), [])
    response = form_post(web, IMPORT, {"kind": "accounts", "file": upload})
    assert response.status_code == 200
    assert "only the template's example row" in " ".join(response.context["form"].errors["file"])
    assert not CurrentAccount.objects.exists()


def test_refused_rows_are_counted_with_their_numbers_and_nothing_is_imported(client, accountant, company):
    web = login(client, accountant, company)
    upload = fill(download(web, "accounts"), [
        {"Name or title": "Bir", "Tax or national id": "4840000006"},
        {"Name or title": "İki", "Tax or national id": "12345"},
        {"Name or title": "Üç", "Tax or national id": "1000000018"},
        {"Name or title": "", "Tax or national id": "1000000026"},
    ])
    response = form_post(web, IMPORT, {"kind": "accounts", "file": upload})
    assert {error.row for error in response.context["errors"]} == {4, 6}
    summary = response.context["summary"]
    assert summary == "5 row(s) read; the template's example (row 2) skipped; 2 row(s) refused: 4, 6."
    assert 'id="import-summary"' in response.content.decode()
    assert not CurrentAccount.objects.exists()


def test_the_chart_template_example_is_skipped_and_a_sub_account_defaults_to_try(client, accountant, company):
    web = login(client, accountant, company, language="tr")
    book = download(web, "chart")
    assert [cell.value for cell in book.worksheets[0][2]][:2] == ["muavin", "120"]
    upload = fill(book, [
        {"Hesap türü": "kebir", "Ana hesap kodu": "320", "Hesap adı": "Satıcılar"},
        {"Hesap türü": "muavin", "Üst hesap kodu": "320", "Birim kodu": "001", "Hesap adı": "Çiçekçi Şükran"},
        {"Hesap türü": "MUAVİN", "Üst hesap kodu": "320", "Birim kodu": "002", "Hesap adı": "Dış alım",
         "Para birimi": "EUR"},
    ])
    response = form_post(web, IMPORT, {"kind": "chart", "file": upload}, follow=True)
    assert sorted(Account.objects.values_list("full_code", "currency_code_id")) == [
        ("320", None), ("320.001", 1), ("320.002", 3)], messages_of(response)
    assert any("4 satır okundu" in message for message in messages_of(response)), messages_of(response)


def test_every_template_shipping_an_example_recognises_it():
    """Each sheet's example, as the reader reads it back, is known as the example; one cell off is not."""
    from backoffice.core.imports import is_example

    for sheet in (imports.ACCOUNT_SHEET, imports.SHEETS["chart"]):
        example = sheet.example()
        assert any(example.values()) and is_example(dict(example), example)
        for key, value in example.items():
            assert not is_example({**example, key: value + "x"}, example), key
