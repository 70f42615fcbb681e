"""Posting to accounting needs the customer's current account mapped to a sub-account (document 3, 2.5, 2.6 and
4.2: an account the invoice created has no mapping until one is made, "otherwise the posting step fails"): the
request refuses it from the mirror before any call, naming the customer, the missing mapping and where it is
made; the platform (the sandbox, over HTTP) refuses it too, and its Error stays on the invoice."""

from decimal import Decimal

import pytest
from django.urls import reverse
from django.utils import translation

from backoffice.chart_of_accounts.models import Account
from backoffice.core import actions
from backoffice.core.choices import SyncState
from backoffice.core.models import RemoteCall
from backoffice.current_accounts.models import CurrentAccount, Mapping
from backoffice.current_accounts.services import accounting_client
from backoffice.invoices import services
from backoffice.invoices.choices import InvoiceStatus, RecordType
from backoffice.invoices.models import Invoice, InvoiceLine
from backoffice.remote.accounting import condition
from backoffice.remote.errors import RemoteError

from .test_services import new_invoice

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def english():
    with translation.override("en"):
        yield


def map_customer(account, *, on_platform=True, locally=True):
    """The current account mapped to a pool sub-account, as a user does in the accounting interface: on the
    platform through our own client (the account made there when it is not), and in the mirror."""
    client = accounting_client(account.company)
    sub_fields = {"type": 2, "base_code": "120", "code": "120", "unit_code": "999"}
    remote_sub = ""
    if on_platform:
        found = client.find_current_account(identifier=account.identifier, code=account.code)
        remote = found or client.create_current_account({
            "name": account.name, "identifier": account.identifier, **({"code": account.code} if account.code else {}),
            **({"surname": account.surname or "Yılmaz"} if account.is_person else {})})
        sub = client.find_account(type=2, base_code="120", code="120", unit_code="999") or client.create_account({
            "baseCode": "120", "name": "Yurtiçi Alıcılar (havuz)", "type": 2, "code": "120", "unitCode": "999",
            "isBundleAccount": True, "currencyCodeId": 1})
        remote_sub = str(sub["id"])
        if not client.children("mapping", remote["id"]):
            client.create_child("mapping", {"currentAccountId": int(remote["id"]), "accountId": int(sub["id"])})
    if locally:
        sub, _ = Account.objects.get_or_create(company=account.company, full_code="120.999", defaults={
            **sub_fields, "name": "Yurtiçi Alıcılar (havuz)", "is_bundle_account": True, "currency_code_id": 1,
            "remote_id": remote_sub, "sync_state": SyncState.SYNCED})
        Mapping.objects.get_or_create(company=account.company, current_account=account, account=sub,
                                      defaults={"remote_id": f"m-{account.pk}", "sync_state": SyncState.SYNCED})


def issued(company):
    """An e-archive invoice on the platform, its customer a current account of the mirror without a mapping."""
    invoice = new_invoice(company, lines=[InvoiceLine(inventory_service_code="HZM-01", quantity=Decimal(2),
                                                      unit_price=Decimal("150.00"), vat_rate=Decimal(20))])
    assert services.invoice_push(invoice.pk) == "Sent to the platform."
    invoice.refresh_from_db()
    return invoice


def test_posting_an_invoice_whose_customer_is_not_mapped_is_refused_before_any_call(sandbox_company):
    invoice = issued(sandbox_company)
    account = invoice.current_account
    calls = RemoteCall.objects.count()
    with pytest.raises(services.InvoiceActionRefused) as refused:
        services.posting_request("post", [invoice])
    message = str(refused.value)
    assert "mapped to a sub-account" in message and "nothing was posted" in message
    assert f"{account.name} ({account.identifier}) — no account mapping to a sub-account: {invoice}" in message
    link = reverse("current_accounts:currentaccount_detail", kwargs={"pk": account.pk})
    assert f'(<a href="{link}?tab=mapping">map it here</a>)' in message
    with translation.override("tr"), pytest.raises(services.InvoiceActionRefused) as refused:
        services.posting_request("post", [invoice])
    assert "alt hesaba hesap eşleştirmesi yok" in str(refused.value) and "buradan eşleştirin" in str(refused.value)
    invoice.refresh_from_db()
    assert not invoice.pending_action and RemoteCall.objects.count() == calls  # nothing claimed, nothing sent


def test_a_mapping_still_on_its_way_or_being_deleted_does_not_count(sandbox_company):
    invoice = issued(sandbox_company)
    sub = Account.objects.create(company=sandbox_company, type=2, base_code="120", code="120", unit_code="001",
                                 name="Alıcılar", currency_code_id=1, remote_id="5", sync_state=SyncState.SYNCED)
    mapping = Mapping.objects.create(company=sandbox_company, current_account=invoice.current_account, account=sub,
                                     sync_state=SyncState.QUEUED)
    with pytest.raises(services.InvoiceActionRefused, match="no account mapping"):
        services.posting_request("post", [invoice])
    Mapping.objects.filter(pk=mapping.pk).update(remote_id="9", pending_action="delete")
    with pytest.raises(services.InvoiceActionRefused, match="no account mapping"):
        services.posting_request("post", [invoice])


def test_an_invoice_read_from_the_platform_is_matched_to_its_account_by_identifier_and_code(sandbox_company):
    mapped = CurrentAccount.objects.create(company=sandbox_company, name="Kodlu", identifier="4840000006", code="K1",
                                           remote_id="77", sync_state=SyncState.SYNCED)
    CurrentAccount.objects.create(company=sandbox_company, name="Kodsuz", identifier="4840000006", remote_id="78",
                                  sync_state=SyncState.SYNCED)
    map_customer(mapped, on_platform=False)

    def mirrored(remote_id, **fields):
        return Invoice.objects.create(company=sandbox_company, remote_id=remote_id, ettn=remote_id, line_count=1,
                                      sync_state=SyncState.SYNCED, remote_status=InvoiceStatus.APPROVED,
                                      record_type=RecordType.EARCHIVE, target_vkn_tckn="4840000006", **fields)

    coded = mirrored("e7d3c3a0-0000-4000-8000-000000000001", current_account_code="K1", invoice_number="ABC1")
    uncoded = mirrored("e7d3c3a0-0000-4000-8000-000000000002", target_title="Kodsuz", invoice_number="ABC2")
    stranger = mirrored("e7d3c3a0-0000-4000-8000-000000000003", target_title="Bilinmeyen Ltd.",
                        invoice_number="ABC3", current_account_code="ZZ")
    with pytest.raises(services.InvoiceActionRefused) as refused:
        services.posting_request("post", [coded, uncoded, stranger])
    message = str(refused.value)
    assert "ABC1" not in message  # its account (identifier and code K1) is mapped
    assert "Kodsuz (4840000006) — no account mapping to a sub-account: ABC2" in message
    assert "Bilinmeyen Ltd. · ZZ — no account mapping to a sub-account: ABC3" in message
    assert "read the current accounts from the platform, then map it" in message  # not in the mirror at all


def test_once_mapped_the_invoice_is_posted(sandbox_company):
    invoice = issued(sandbox_company)
    map_customer(invoice.current_account)
    services.posting_request("post", [invoice])
    assert actions.action_run(Invoice, "post", [invoice.pk]) == "1 invoice(s) posted to accounting."
    invoice.refresh_from_db()
    assert invoice.is_posted and not invoice.last_error


def test_a_mapping_the_mirror_has_but_the_platform_not_is_the_platforms_refusal_on_the_invoice(sandbox_company):
    invoice = issued(sandbox_company)
    map_customer(invoice.current_account, on_platform=False)  # a stale mirror: deleted on the platform meanwhile
    services.posting_request("post", [invoice])
    with pytest.raises(RemoteError):
        actions.action_run(Invoice, "post", [invoice.pk])
    invoice.refresh_from_db()
    assert not invoice.is_posted and not invoice.pending_action
    assert "has no account mapping" in invoice.last_error and invoice.current_account.identifier in invoice.last_error


def test_the_list_shows_the_refusal_with_a_link_to_the_mapping(client, sandbox_company):
    from tests.conftest import confirm_post, make_user
    from tests.tickets.conftest import login

    invoice = issued(sandbox_company)
    web = login(client, make_user("muhasebe-eslestirme", "accounting", [sandbox_company]), sandbox_company)
    url = reverse("invoices:invoice_bulk", kwargs={"action": "post"})
    page = confirm_post(web, url, {"pk": [invoice.pk], "confirm": "1"}, follow=True).content.decode()
    link = reverse("current_accounts:currentaccount_detail", kwargs={"pk": invoice.current_account_id})
    assert f'<a href="{link}?tab=mapping">map it here</a>' in page
    assert "no account mapping to a sub-account" in page
    assert not Invoice.objects.exclude(pending_action="").exists()


def test_the_sandbox_finds_the_account_our_client_filters_by(sandbox_company):
    account = CurrentAccount.objects.create(company=sandbox_company, name="Süzgeç", identifier="1234567890",
                                            sync_state=SyncState.SYNCED)
    map_customer(account, locally=False)
    client = accounting_client(sandbox_company)
    items = client.current_accounts(conditions=[condition("Identifier", "eşittir", "1234567890")],
                                    sorted_column="Id", is_desc=True)["items"]
    assert [item["identifier"] for item in items] == ["1234567890"]
