"""Current accounts and the chart of accounts in a real browser, against the sandbox over HTTP and a real RQ
worker process, as a new accountant does it (the acceptance of issue 12): create an account with its first
address; add a bank record with a wrong IBAN, read the message under the field, fix it; add a second address
and make it the default (the first no longer is, here and on the platform); start the chart from the uniform
chart, add a group and a sub-account and map the account to it; import an xlsx of 50 accounts with 3 bad
rows, read the errors by row and column, fix the file and import it: progress to 100 %, every account synced.
"""

import os
import random

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext
from openpyxl import Workbook
from stdnum import iban

from backoffice.chart_of_accounts.models import Account
from backoffice.core.choices import JobStatus, Role, SyncState
from backoffice.core.models import JobRun
from backoffice.current_accounts import services
from backoffice.current_accounts.models import Address, Bank, CurrentAccount, Mapping
from tests.browser.conftest import CHROMIUM, screenshot, sign_in
from tests.conftest import make_user
from tests.subcompanies.conftest import bad_check_digit, new_vkn
from tests.testapp.testing import output, running_worker, wait_for

pytestmark = [
    pytest.mark.browser,
    pytest.mark.worker,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's Chromium at /usr/bin/chromium"),
    pytest.mark.django_db(transaction=True),
]

WORKER_ENV = {"JOB_RETRY_BASE_SECONDS": "1", "JOB_RETRY_MAX_SECONDS": "2", "PLATFORM_READ_TIMEOUT": "5"}
WRONG_IBAN = "TR330006100519786457841327"  # a valid one with its last digit changed
IBAN = "TR330006100519786457841326"
# The import's columns (English headers of imports.ACCOUNT_SHEET), and where the three bad rows go.
HEADERS = ("Name or title", "Tax or national id", "Tax office", "Address name", "City", "District", "Country",
           "Bank record name", "Bank", "IBAN", "Contact name")
BAD_VKN_ROW, NO_NAME_ROW, BAD_IBAN_ROW = 8, 20, 33  # sheet rows (row 1 is the header)


@pytest.fixture
def rq_worker():
    with running_worker(WORKER_ENV) as process:
        yield process


def new_iban() -> str:
    bban = f"000610{random.randrange(10**15, 10**16)}"
    return f"TR{iban.calc_check_digits('TR00' + bban)}{bban}"


def in_turkish(text) -> str:
    with translation.override("tr"):
        return gettext(str(text))


def synced_label() -> str:
    with translation.override("tr"):
        return str(SyncState.SYNCED.label)


def accounts_sheet(path, rows):
    workbook = Workbook()
    sheet = workbook.active
    sheet.append(HEADERS)
    for row in rows:
        sheet.append([row.get(header, "") for header in HEADERS])
    workbook.save(path)
    return path


def fifty_rows(known):
    """50 accounts with distinct valid VKNs (none of `known`), each with its first address; every tenth
    with a bank record, every seventh with a contact."""
    identifiers = set()
    while len(identifiers) < 50:
        identifier = new_vkn()
        if identifier not in known:
            identifiers.add(identifier)
    rows = []
    for number, identifier in enumerate(sorted(identifiers), start=1):
        row = {"Name or title": f"İthalat Firması {number:02d} Ltd. Şti.", "Tax or national id": identifier,
               "Tax office": "Kadıköy", "Address name": "Merkez", "City": "İstanbul", "District": "Ataşehir",
               "Country": "Türkiye"}
        if number % 10 == 0:
            row.update({"Bank record name": "Ana hesap", "Bank": "Ziraat Bankası", "IBAN": new_iban()})
        if number % 7 == 0:
            row["Contact name"] = f"Yetkili {number}"
        rows.append(row)
    return rows


@pytest.mark.slow
def test_accounts_children_default_mapping_and_import(live_server, browser_page, sandbox, make_sandbox_company,
                                                      rq_worker, tmp_path):
    """Slow (over 10 s): accounts, their children, the default mapping and an import in a real browser through a real
    worker."""
    for role in Role:
        Group.objects.get_or_create(name=role.value)
    company = make_sandbox_company(name="Boğaziçi Ticaret A.Ş.")
    make_user("deniz", Role.ACCOUNTING, [company])
    page = browser_page
    url = live_server.url

    def wait(predicate, message, timeout=90):
        try:
            return wait_for(predicate, timeout=timeout, interval=0.2, message=message)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n--- worker output ---\n{output(rq_worker)[-5000:]}") from None

    def synced(model, **lookup):
        return model.objects.filter(sync_state=SyncState.SYNCED, **lookup).exists()

    sign_in(page, live_server, "deniz")

    # 1. A new account with its first address, from the list's Add button.
    page.goto(f"{url}{reverse('current_accounts:currentaccount_list')}")
    page.click(f"a.btn-primary[href='{reverse('current_accounts:currentaccount_add')}']")
    identifier = new_vkn()
    page.fill("#id_name", "Anadolu Kırtasiye A.Ş.")
    page.fill("#id_identifier", identifier)
    page.fill("#id_tax_office", "Üsküdar")
    page.fill("#id_address-address_name", "Merkez")
    page.fill("#id_address-city", "İstanbul")
    page.fill("#id_address-sub_division_name", "Üsküdar")
    page.click("#account-save")
    page.wait_for_selector("#account-tabs")
    account = CurrentAccount.objects.get(company=company, identifier=identifier)
    assert page.url.startswith(f"{url}{reverse('current_accounts:currentaccount_detail', args=[account.pk])}")
    first = Address.objects.get(current_account=account)
    assert first.is_default
    assert page.locator(f"#address-{first.pk}[data-default=true]").count() == 1

    # The bank record: a wrong IBAN is refused under its field; fixed, it saves.
    page.click("#tab-bank")
    page.wait_for_selector("#pane-bank.show #form-bank")
    page.fill("#id_bank-name", "Ana hesap")
    page.fill("#id_bank-bank_name", "Ziraat Bankası")
    page.fill("#id_bank-iban_number", WRONG_IBAN)
    page.click("#save-bank")
    page.wait_for_selector("#id_bank-iban_number_errors")
    assert page.locator("#pane-bank.show #id_bank-iban_number.is-invalid").count() == 1
    assert page.locator("#id_bank-iban_number_errors").inner_text() == in_turkish(
        "This IBAN is not valid: its check digits do not match.")
    assert not Bank.objects.exists()
    page.fill("#id_bank-iban_number", IBAN)
    page.click("#save-bank")
    page.wait_for_url("**?tab=bank")
    bank = Bank.objects.get(current_account=account)
    assert bank.iban_number == IBAN and bank.is_default
    assert page.locator(f"#pane-bank.show #bank-{bank.pk}[data-default=true]").count() == 1
    assert page.locator("#id_bank-iban_number_errors").count() == 0

    # 2. A second address; once it is on the platform, "Make default" moves the default to it.
    wait(lambda: synced(CurrentAccount, pk=account.pk) and synced(Bank, pk=bank.pk), "the account and its bank")
    page.goto(f"{url}{reverse('current_accounts:currentaccount_detail', args=[account.pk])}?tab=address")
    page.fill("#id_address-address_name", "Depo")
    page.fill("#id_address-city", "Kocaeli")
    page.fill("#id_address-sub_division_name", "Gebze")
    page.click("#save-address")
    page.wait_for_url("**?tab=address")
    second = Address.objects.exclude(pk=first.pk).get(current_account=account)
    assert not second.is_default
    wait(lambda: synced(Address, pk=second.pk), "the second address to reach the platform")
    page.reload()
    assert page.locator(f"#address-{first.pk} .make-default").count() == 0  # the default has no such button
    with page.expect_navigation():
        page.click(f"#address-{second.pk} button.make-default")
    page.wait_for_selector(f"#address-{second.pk}[data-default=true]")
    assert page.locator(f"#address-{first.pk}[data-default=false]").count() == 1
    assert page.locator(f"#address-{second.pk} .default-badge").count() == 1
    assert page.locator(f"#address-{first.pk} .default-badge").count() == 0

    account.refresh_from_db()
    first.refresh_from_db()
    second.refresh_from_db()
    client = services.accounting_client(company)

    def platform_defaults():
        return {item["id"]: item["isDefault"] for item in client.children("address", account.remote_id)}

    expected = {first.remote_id: False, second.remote_id: True}
    wait(lambda: synced(Address, pk=second.pk) and platform_defaults() == expected,
         "the platform to hold the new default")
    # Read back from the platform by the page's own button: the same, and still two addresses.
    read_before = CurrentAccount.objects.get(pk=account.pk).details_read_at
    with page.expect_navigation():
        page.click("#account-read")
    wait(lambda: CurrentAccount.objects.get(pk=account.pk).details_read_at not in (None, read_before),
         "the account to be read again from the platform")
    page.reload()
    assert page.locator("#rows-address tbody tr[data-default]").count() == 2
    assert page.locator(f"#address-{first.pk}[data-default=false]").count() == 1
    assert page.locator(f"#address-{second.pk}[data-default=true]").count() == 1

    # 3. The chart: from the uniform chart, then a group and a sub-account with the chart form.
    page.goto(f"{url}{reverse('chart_of_accounts:account_list')}")
    page.click("#chart-uniform")
    page.wait_for_selector("#uniform-form")
    assert page.locator("#code-120:checked").count() == 1  # the usual accounts are chosen already
    page.click("#uniform-add")
    page.wait_for_url(f"{url}{reverse('chart_of_accounts:account_list')}")
    main = Account.objects.get(company=company, full_code="120")

    def add_chart_account(type_, parent, unit_code, name, currency=None):
        page.goto(f"{url}{reverse('chart_of_accounts:account_list')}")
        page.click(f"a.btn-primary[href='{reverse('chart_of_accounts:account_add')}']")
        page.wait_for_selector("#id_type")
        page.select_option("#id_type", str(type_))
        page.select_option("#id_parent", str(parent.pk))
        page.fill("#id_unit_code", unit_code)
        page.fill("#id_name", name)
        if currency:
            page.select_option("#id_currency_code_id", label=currency)
        page.click("form.edit-form button[type=submit]")
        page.wait_for_selector(".alert-success")
        return Account.objects.get(company=company, full_code=f"{parent.full_code}.{unit_code}")

    group = add_chart_account(1, main, "01", "Yurtiçi Alıcılar")
    sub = add_chart_account(2, group, "001", "Kırtasiye Müşterileri", currency="TRY")
    assert (group.parent_id, sub.parent_id, sub.currency) == (main.pk, group.pk, "TRY")

    # The mapping, on the account's page; it goes once the sub-account is on the platform.
    page.goto(f"{url}{reverse('current_accounts:currentaccount_detail', args=[account.pk])}")
    page.click("#tab-mapping")
    page.wait_for_selector("#pane-mapping.show #form-mapping")
    page.select_option("#id_mapping-account", str(sub.pk))
    page.fill("#id_mapping-name", "Yurtiçi satışlar")
    page.click("#save-mapping")
    page.wait_for_url("**?tab=mapping")
    mapping = Mapping.objects.get(current_account=account)
    assert mapping.account_id == sub.pk
    wait(lambda: synced(Mapping, pk=mapping.pk), "the mapping to reach the platform")
    page.reload()
    assert page.locator(f"#pane-mapping.show #mapping-{mapping.pk}").inner_text().count(synced_label()) == 1
    mapping.refresh_from_db()
    assert [item["id"] for item in client.children("mapping", account.remote_id)] == [mapping.remote_id]
    page.click("#tab-address")
    # The pane fades in: the picture waits for the end of the transition.
    page.wait_for_function("() => getComputedStyle(document.getElementById('pane-address')).opacity === '1'")
    screenshot(page, "current-account-detail")

    wait(lambda: not Account.objects.filter(company=company).exclude(sync_state=SyncState.SYNCED).exists(),
         "the chart to reach the platform")
    page.goto(f"{url}{reverse('chart_of_accounts:account_list')}?per_page=100")
    page.wait_for_selector("#object-list tbody tr")
    assert f"{sub.full_code}" in page.locator("#object-list").inner_text()
    screenshot(page, "chart-of-accounts")

    # 4. The import: 50 accounts, 3 of them wrong (a bad VKN, no name, a bad IBAN): nothing imported.
    rows = fifty_rows({identifier})
    good = {number: dict(row) for number, row in enumerate(rows, start=2)}
    rows[BAD_VKN_ROW - 2]["Tax or national id"] = bad_check_digit(rows[BAD_VKN_ROW - 2]["Tax or national id"])
    rows[NO_NAME_ROW - 2]["Name or title"] = ""
    rows[BAD_IBAN_ROW - 2].update({"Bank record name": "Ana hesap", "IBAN": WRONG_IBAN})
    page.goto(f"{url}{reverse('current_accounts:currentaccount_list')}")
    page.click("#accounts-import")
    page.wait_for_selector("#import-form")
    page.set_input_files("#id_file", str(accounts_sheet(tmp_path / "cari-hatali.xlsx", rows)))
    page.click("#import-submit")
    page.wait_for_selector("#import-errors")
    errors = page.locator("#import-errors tbody tr")
    assert errors.count() == 3, page.locator("#import-errors").inner_text()[:3000]
    found = {(int(row.get_attribute("data-row")), row.get_attribute("data-column")) for row in errors.all()}
    assert found == {(BAD_VKN_ROW, "B"), (NO_NAME_ROW, "A"), (BAD_IBAN_ROW, "J")}
    assert "Tax or national id" in page.locator(f"#import-errors tr[data-row='{BAD_VKN_ROW}']").inner_text()
    assert "IBAN" in page.locator(f"#import-errors tr[data-row='{BAD_IBAN_ROW}']").inner_text()
    screenshot(page, "current-accounts-import-errors")
    assert CurrentAccount.objects.filter(company=company).count() == 1
    page.goto(f"{url}{reverse('current_accounts:currentaccount_list')}")
    page.wait_for_selector("#object-list tbody tr")
    assert page.locator("#object-list tbody tr").count() == 1
    assert "Anadolu Kırtasiye" in page.locator("#object-list tbody").inner_text()

    # The file fixed: 50 imported, sent in the background with progress, every account synced.
    page.click("#accounts-import")
    page.wait_for_selector("#import-form")
    page.set_input_files("#id_file", str(accounts_sheet(tmp_path / "cari.xlsx", list(good.values()))))
    with page.expect_navigation():
        page.click("#import-submit")
    page.wait_for_selector("#import-runs")
    assert page.locator("#import-errors").count() == 0 and page.locator(".alert-success").count() == 1
    assert CurrentAccount.objects.filter(company=company).count() == 51
    try:
        page.wait_for_selector("#import-runs .progress-bar[data-width='100']", timeout=180_000)
    except Exception:
        raise AssertionError("the import did not reach 100 %\n" + output(rq_worker)[-5000:]) from None
    assert page.locator("#import-runs .progress-bar").first.inner_text() == "100%"
    run = JobRun.objects.get(company=company, name="current_accounts_import_push")
    assert run.status == JobStatus.SUCCEEDED, run.message
    screenshot(page, "current-accounts-import-done")
    wait(lambda: CurrentAccount.objects.filter(company=company, sync_state=SyncState.SYNCED).count() == 51,
         "every imported account to be synced")
    page.goto(f"{url}{reverse('current_accounts:currentaccount_list')}?sync_state=synced&per_page=100")
    page.wait_for_function("() => document.querySelectorAll('#object-list tbody tr').length === 51")
    assert page.locator("#object-list tbody").inner_text().count(synced_label()) == 51
    banks = Bank.objects.filter(company=company, current_account__identifier__in=[
        row["Tax or national id"] for row in good.values()])
    assert banks.count() == 5 and not banks.exclude(sync_state=SyncState.SYNCED).exists()
    assert rq_worker.poll() is None, output(rq_worker)
