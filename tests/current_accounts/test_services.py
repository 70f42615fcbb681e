"""Current accounts, their children and mappings, and the chart of accounts, through the sandbox over HTTP:
the job bodies run here (a real worker runs them in the browser test)."""

import pytest
from django.utils import translation

from backoffice.chart_of_accounts import services as chart
from backoffice.chart_of_accounts.models import Account
from backoffice.core.choices import SyncState
from backoffice.current_accounts import services
from backoffice.current_accounts.models import Address, Bank, CurrentAccount, Mapping
from backoffice.remote.accounting import AccountingClient, condition
from backoffice.remote.errors import RemoteError

# The database engine matters here (imports written in bulk): CI's SQLite pass runs these too.
pytestmark = [pytest.mark.django_db, pytest.mark.database]

VKN, VKN2 = "1234567890", "4840000006"  # valid check digits (stdnum)
ACCOUNT_PATH = "/accounting/v1/currentaccount"


@pytest.fixture(autouse=True)
def english():
    with translation.override("en"):
        yield


def client(company):
    return services.accounting_client(company)


def platform_accounts(company, identifier=VKN):
    return client(company).current_accounts(conditions=[condition("Identifier", "eşittir", identifier)])["items"]


def new_account(company, **fields):
    values = {"name": "Örnek Ticaret A.Ş.", "identifier": VKN, **fields}
    return CurrentAccount(company=company, **values)


def first_address(**fields):
    values = {"address_name": "Merkez", "sub_division_name": "Kadıköy", "city": "İstanbul", "country": "Türkiye"}
    return Address(**{**values, **fields})


def push(record):
    """The record's push job, run here."""
    if type(record) is Account:
        return chart.account_push(record.pk)
    return services.PUSHES[type(record)](record.pk)


def test_create_with_its_first_address_sends_both_in_one_call(sandbox_company):
    account = services.current_account_save(new_account(sandbox_company), address=first_address())
    assert push(account) == "Sent to the platform."
    account.refresh_from_db()
    address = account.address_set.get()
    assert account.sync_state == SyncState.SYNCED and account.remote_id
    assert address.sync_state == SyncState.SYNCED and address.remote_id and address.is_default
    on_platform = client(sandbox_company).children("address", account.remote_id)
    assert [item["id"] for item in on_platform] == [address.remote_id]
    assert on_platform[0]["isDefault"] is True


def test_a_create_answered_500_after_it_took_effect_is_not_created_twice(sandbox, sandbox_company):
    account = services.current_account_save(new_account(sandbox_company, code="A1"))
    sandbox.add_fault(path=ACCOUNT_PATH, method="POST", error_rate=1, after_apply="error", remaining=1)
    with pytest.raises(RemoteError):
        push(account)
    account.refresh_from_db()
    assert account.sync_state == SyncState.QUEUED and not account.remote_id
    assert push(account) == "Found on the platform; not sent again."
    account.refresh_from_db()
    assert account.sync_state == SyncState.SYNCED
    assert [item["id"] for item in platform_accounts(sandbox_company)] == [account.remote_id]


def test_the_identifier_rule_asks_for_a_code(company):
    services.current_account_save(new_account(company))
    with pytest.raises(services.CurrentAccountError) as refused:
        services.current_account_save(new_account(company))
    assert refused.value.field == "code" and "give this one a code" in refused.value.message
    twin = services.current_account_save(new_account(company, code="ŞUBE-2"))
    assert twin.pk


def test_an_update_is_sent_and_the_platform_keeps_it(sandbox_company):
    account = services.current_account_save(new_account(sandbox_company))
    push(account)
    account.refresh_from_db()
    account.tax_office = "Kadıköy"
    services.current_account_save(account)
    assert push(account) == "Sent to the platform."
    assert client(sandbox_company).current_account(account.remote_id)["taxOffice"] == "Kadıköy"


def test_a_second_address_made_default_clears_the_first_here_and_there(sandbox_company):
    account = services.current_account_save(new_account(sandbox_company), address=first_address())
    push(account)
    first = Address.objects.get(current_account=account)
    second = services.child_save(first_address(current_account=account, address_name="Depo", is_default=True))
    first.refresh_from_db()
    assert second.is_default and not first.is_default
    push(second)
    on_platform = {item["addressName"]: item["isDefault"] for item in
                   client(sandbox_company).children("address", CurrentAccount.objects.get(pk=account.pk).remote_id)}
    assert on_platform == {"Merkez": False, "Depo": True}
    assert services.address_warning(account) == ""


def test_the_default_cannot_be_unset_or_deleted(company):
    account = services.current_account_save(new_account(company))
    address = services.child_save(first_address(current_account=account))
    assert address.is_default  # the first is the default whatever was asked
    CurrentAccount.objects.filter(pk=account.pk).update(sync_state=SyncState.SYNCED)
    Address.objects.filter(pk=address.pk).update(sync_state=SyncState.SYNCED, remote_id="7")
    address.refresh_from_db()
    address.is_default = False
    services.child_save(first_address(current_account=account, address_name="Depo"))
    with pytest.raises(services.CurrentAccountError) as refused:
        services.child_save(address)
    assert refused.value.field == "is_default"
    address.refresh_from_db()
    with pytest.raises(services.CurrentAccountError, match="default record cannot be deleted"):
        services.child_delete(address)


def test_no_default_address_gives_the_invoice_warning(company):
    account = services.current_account_save(new_account(company))
    assert "no default address" in services.address_warning(account)


def chart_tree(company):
    main = chart.account_save(Account(company=company, type=0, base_code="120", name="Alıcılar"))
    group = chart.account_save(Account(company=company, type=1, parent=main, unit_code="01", name="Yurtiçi"))
    sub = chart.account_save(Account(company=company, type=2, parent=group, unit_code="001", name="A Müşterisi",
                                     currency_code_id=1))
    return main, group, sub


def test_the_chart_goes_parent_first_and_sub_accounts_wait_for_their_parent(sandbox_company):
    main, group, sub = chart_tree(sandbox_company)
    assert sub.full_code == "120.01.001" and sub.code == "120.01" and sub.base_code == "120"
    assert "Waits for its parent" in push(group)
    push(main)
    push(group)
    push(sub)
    sub.refresh_from_db()
    assert sub.sync_state == SyncState.SYNCED and sub.remote_id
    codes = {item["code"] for item in client(sandbox_company).accounts()["items"]}
    assert {"120", "120.01"} <= codes


def test_an_account_cannot_be_added_twice(company):
    chart_tree(company)
    with pytest.raises(chart.ChartError, match="cannot be added twice"):
        chart.account_save(Account(company=company, type=0, base_code="120", name="Alıcılar"))


def test_mapping_rules_pool_and_non_pool(company):
    _main, _group, sub = chart_tree(company)
    first = services.current_account_save(new_account(company))
    second = services.current_account_save(new_account(company, identifier=VKN2))
    services.child_save(Mapping(current_account=first, account=sub))
    with pytest.raises(services.CurrentAccountError, match="already mapped to this current account"):
        services.child_save(Mapping(current_account=first, account=sub))
    with pytest.raises(services.CurrentAccountError, match="not a pool account"):
        services.child_save(Mapping(current_account=second, account=sub))
    Account.objects.filter(pk=sub.pk).update(is_bundle_account=True)
    sub.refresh_from_db()
    assert services.child_save(Mapping(current_account=second, account=sub)).pk
    sub.is_bundle_account = False
    with pytest.raises(chart.ChartError):
        chart.account_save(sub)


def test_a_delete_refused_by_the_platform_keeps_the_record_with_its_error(sandbox, sandbox_company):
    main, group, sub = chart_tree(sandbox_company)
    for record in (main, group, sub):
        push(record)
    account = services.current_account_save(new_account(sandbox_company))
    push(account)
    mapping = services.child_save(Mapping(current_account=account, account=Account.objects.get(pk=sub.pk),
                                          name="Satış"))
    push(mapping)
    mapping.refresh_from_db()
    sandbox.control("POST", "accounting/use", {"customer_unique_id": sandbox_company.customer_unique_id,
                                               "kind": "mapping", "id": int(mapping.remote_id)})
    assert services.child_delete(mapping) is False
    with pytest.raises(RemoteError):
        push(mapping)
    mapping.refresh_from_db()
    assert mapping.sync_state == SyncState.SYNCED and mapping.pending_action == ""
    assert "refused to delete" in mapping.last_error and "used" in mapping.last_error


def test_a_delete_that_took_effect_before_a_500_is_done(sandbox, sandbox_company):
    account = services.current_account_save(new_account(sandbox_company), address=first_address())
    push(account)
    bank = services.child_save(Bank(current_account=account, name="Ana", iban_number="TR330006100519786457841326"))
    push(bank)
    second = services.child_save(Bank(current_account=account, name="Yedek", is_default=True))
    push(second)
    bank.refresh_from_db()
    sandbox.add_fault(path="/accounting/v1/currentaccount/bank/", method="DELETE", error_rate=1,
                      after_apply="error", remaining=1)
    services.child_delete(bank)
    assert push(bank) == "Deleted on the platform."
    assert not Bank.objects.filter(pk=bank.pk).exists()
    remote = client(sandbox_company).children("bank", CurrentAccount.objects.get(pk=account.pk).remote_id)
    assert [item["name"] for item in remote] == ["Yedek"]


def test_the_mirror_walks_every_page_and_then_only_new_ones(sandbox, sandbox_company):
    sandbox.control("POST", "accounting/seed-current-accounts",
                    {"customer_unique_id": sandbox_company.customer_unique_id, "count": 1201})
    assert services.current_accounts_mirror(sandbox_company.pk, full=True) == "1201 new current account(s) read."
    assert CurrentAccount.objects.filter(company=sandbox_company, sync_state=SyncState.SYNCED).count() == 1201
    # One page read, nothing new.
    assert services.current_accounts_mirror(sandbox_company.pk) == "0 new current account(s) read."
    sandbox.control("POST", "accounting/seed-current-accounts",
                    {"customer_unique_id": sandbox_company.customer_unique_id, "count": 3})
    assert services.current_accounts_mirror(sandbox_company.pk) == "3 new current account(s) read."


def test_details_read_the_child_lists_and_drop_what_the_platform_no_longer_has(sandbox_company):
    account = services.current_account_save(new_account(sandbox_company), address=first_address())
    push(account)
    account.refresh_from_db()
    remote = AccountingClient(services.accounting_client(sandbox_company).transport)
    remote.create_child("contact", {"currentAccountId": int(account.remote_id), "fullName": "Ayşe Yılmaz"})
    assert services.current_account_details(account.pk) == \
        "Read: 1 address(es), 0 bank record(s), 1 contact(s), 0 mapping(s)."
    assert account.contact_set.get().full_name == "Ayşe Yılmaz"


def test_an_address_create_answered_500_after_it_took_effect_is_found(sandbox, sandbox_company):
    account = services.current_account_save(new_account(sandbox_company))
    push(account)
    address = services.child_save(first_address(current_account=account, address_name="Şube"))
    sandbox.add_fault(path=ACCOUNT_PATH + "/address", method="POST", error_rate=1, after_apply="error", remaining=1)
    with pytest.raises(RemoteError):
        push(address)
    assert push(address) == "Found on the platform; not sent again."
    remote = client(sandbox_company).children("address", CurrentAccount.objects.get(pk=account.pk).remote_id)
    assert [item["addressName"] for item in remote] == ["Şube"]


def test_a_used_chart_account_refused_by_the_platform_shows_its_error(sandbox, sandbox_company):
    main = chart.account_save(Account(company=sandbox_company, type=0, base_code="100", name="Kasa"))
    push(main)
    main.refresh_from_db()
    sandbox.control("POST", "accounting/use", {"customer_unique_id": sandbox_company.customer_unique_id,
                                               "kind": "account", "id": int(main.remote_id)})
    main.name = "Kasa Hesabı"
    chart.account_save(main)
    with pytest.raises(RemoteError):
        push(main)
    main.refresh_from_db()
    assert main.sync_state == SyncState.FAILED and "used" in main.last_error


def test_a_mapping_update_and_a_contact_update_and_delete_reach_the_platform(sandbox_company):
    from backoffice.current_accounts.models import Contact

    main, group, sub = chart_tree(sandbox_company)
    for record in (main, group, sub):
        push(record)
    account = services.current_account_save(new_account(sandbox_company))
    push(account)
    mapping = services.child_save(Mapping(current_account=account, account=Account.objects.get(pk=sub.pk)))
    push(mapping)
    mapping.refresh_from_db()
    mapping.name = "Yurtiçi satış"
    services.child_save(mapping)
    assert push(mapping) == "Sent to the platform."
    remote_id = CurrentAccount.objects.get(pk=account.pk).remote_id
    assert [item["name"] for item in client(sandbox_company).children("mapping", remote_id)] == ["Yurtiçi satış"]
    contact = services.child_save(Contact(current_account=account, full_name="Ayşe"))
    push(contact)
    contact.refresh_from_db()
    contact.phone_number = "05321234567"
    services.child_save(contact)
    push(contact)
    assert client(sandbox_company).children("contact", remote_id)[0]["phoneNumber"] == "05321234567"
    contact.refresh_from_db()
    services.child_delete(contact)
    assert push(contact) == "Deleted on the platform."
    assert client(sandbox_company).children("contact", remote_id) == []


def test_the_chart_mirror_reads_the_tree_with_its_parents(sandbox_company, company):
    main, group, sub = chart_tree(sandbox_company)
    for record in (main, group, sub):
        push(record)
    Account.objects.filter(company=sandbox_company).update(parent=None)
    Account.objects.filter(company=sandbox_company).delete()
    assert chart.chart_mirror(sandbox_company.pk) == "3 new account(s) read."
    read = {account.full_code: account for account in Account.objects.filter(company=sandbox_company)}
    assert set(read) == {"120", "120.01", "120.01.001"}
    assert read["120.01.001"].parent == read["120.01"] and read["120.01"].parent == read["120"]
    assert read["120.01.001"].currency == "TRY" and read["120.01.001"].type == 2
    assert chart.chart_mirror(sandbox_company.pk) == "0 new account(s) read."


def test_the_uniform_start_sends_main_accounts_the_platform_can_take(sandbox_company):
    assert chart.start_from_uniform(sandbox_company, ["100", "102", "120", "12"]) == 3
    for account in Account.objects.filter(company=sandbox_company):
        push(account)
    names = {item["code"]: item["name"] for item in client(sandbox_company).accounts()["items"]}
    assert names == {"100": "Kasa", "102": "Bankalar", "120": "Alıcılar"}
    assert chart.start_from_uniform(sandbox_company, ["100"]) == 0


def test_a_platform_that_refuses_the_sort_or_the_filter_is_walked_whole(sandbox, sandbox_company):
    sandbox.control("POST", "accounting/seed-current-accounts",
                    {"customer_unique_id": sandbox_company.customer_unique_id, "count": 3})
    sandbox.add_fault(path=ACCOUNT_PATH, method="GET", error_rate=1, error_status=400, remaining=1)
    assert services.current_accounts_mirror(sandbox_company.pk) == "3 new current account(s) read."
    account = services.current_account_save(new_account(sandbox_company, code="F1"))
    push(account)
    account.refresh_from_db()
    sandbox.add_fault(path=ACCOUNT_PATH, method="GET", error_rate=1, error_status=400, remaining=1)
    found = client(sandbox_company).find_current_account(identifier=VKN, code="F1")
    assert found["id"] == account.remote_id
