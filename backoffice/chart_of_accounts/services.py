"""The chart of accounts: the rules of document 3, 2.7 and 4.3 that need the database, its changes, its
push (core.resources) and its mirror; the uniform chart (uniform.py) as a company's starting point."""

from django.db import transaction
from django.db.models import OuterRef, Subquery
from django.dispatch import Signal
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from backoffice.core import jobs, resources, sync
from backoffice.core.choices import SyncState
from backoffice.core.jobs import job
from backoffice.core.models import Company
from backoffice.core.payloads import flag, integer, pushed, text
from backoffice.core.platform import client_for
from backoffice.core.resources import Resource, ResourceError
from backoffice.remote.accounting import AccountingClient
from backoffice.remote.common import field

from . import uniform
from .choices import AccountType
from .models import Account, full_code

# Sent with `account` when a chart account has reached the platform: what waited for it (a current account's
# mapping to it) goes now. The chart knows nothing of who listens (current accounts connect at the end of their services).
account_landed = Signal()


class ChartError(ResourceError):
    """A change refused by a rule of 2.7 / 4.3; `field` is the form field it belongs to."""


def chart_client(company) -> AccountingClient:
    return client_for(company, AccountingClient)


def account_body(account) -> dict:
    body = {"baseCode": account.base_code, "name": account.name, "type": int(account.type)}
    if account.type != AccountType.MAIN:
        body["code"] = account.code
        if account.unit_code:
            body["unitCode"] = account.unit_code
        if account.parent_id and account.parent.remote_id:
            body["parentId"] = int(account.parent.remote_id)
    if account.type == AccountType.SUB:
        body["isBundleAccount"] = account.is_bundle_account
        body["currencyCodeId"] = account.currency_code_id
    if account.remote_id:
        body["id"] = int(account.remote_id)
    return body


# --- rules ---------------------------------------------------------------------------------------------
def mapped_accounts(account) -> int:
    """How many current accounts this account is mapped to (here)."""
    return account.mappings.values("current_account").distinct().count() if account.pk else 0


def check_account(account) -> None:
    """2.7 and 4.3, the rules that need the database: the parent's code, no account twice, a used account
    unchanged, a pool account mapped to several current accounts stays a pool account."""
    if account.type != AccountType.MAIN:
        if account.parent is None:
            raise ChartError(_("Choose the parent account: group and sub-accounts sit under one."), field="parent")
        if account.parent.type >= account.type:
            raise ChartError(_("The parent must be a main account, or a group account for a sub-account."),
                             field="parent")
        account.code, account.base_code = account.parent.full_code, account.parent.base_code
    else:
        account.parent, account.code, account.unit_code = None, "", ""
    if account.type != AccountType.SUB:
        account.is_bundle_account, account.currency_code_id = False, None
    code = full_code(account.type, account.base_code, account.code, account.unit_code)
    if Account.objects.filter(company=account.company, full_code=code).exclude(pk=account.pk).exists():
        raise ChartError(_("The account %(code)s is in the chart already; an account cannot be added twice.")
                         % {"code": code}, field="unit_code" if account.type != AccountType.MAIN else "base_code")
    if account.pk:
        before = Account.objects.get(pk=account.pk)
        if account.mappings.exists() and _changed(before, account):
            raise ChartError(_("This account is used (mapped to current accounts): the platform does not allow "
                               "changing it."))
        if before.is_bundle_account and not account.is_bundle_account and mapped_accounts(account) > 1:
            raise ChartError(_("This account is mapped to several current accounts: it must stay a pool account."),
                             field="is_bundle_account")


def _changed(before, after) -> bool:
    names = ("type", "base_code", "name", "parent_id", "unit_code", "is_bundle_account", "currency_code_id")
    return any(getattr(before, name) != getattr(after, name) for name in names)


def account_save(account, *, user=None):
    """Save a new or changed chart account and send it."""
    if account.pk and account.is_busy:
        raise ChartError(_("This account is on its way to the platform; wait until it is there."))
    with transaction.atomic():
        check_account(account)
        account.save()
        resources.queue_change(account)
    return account


def start_from_uniform(company, codes) -> int:
    """Add the chosen main accounts of the uniform chart (Tekdüzen Hesap Planı) that the chart has not yet,
    and send them. Returns how many were added."""
    wanted = [code for code in dict.fromkeys(codes) if uniform.level(code) == uniform.MAIN]
    known = set(Account.objects.filter(company=company, full_code__in=wanted).values_list("full_code", flat=True))
    new = [code for code in wanted if code not in known]
    with transaction.atomic():
        for code in new:
            account = Account(company=company, type=AccountType.MAIN, base_code=code, name=uniform.name_of(code))
            account.save()
            resources.queue_change(account)
    return len(new)


# --- push ----------------------------------------------------------------------------------------------
def _fields(answer) -> dict:
    return pushed(answer, has_child="hasChild")


def _find(account):
    found = chart_client(account.company).find_account(type=int(account.type), base_code=account.base_code,
                                                       code=account.code, unit_code=account.unit_code)
    return _fields(found) if found else None


def _waits(account) -> str:
    if account.parent_id and not account.parent.remote_id:
        return _("Waits for its parent account to reach the platform.")
    return ""


def _landed(account) -> None:
    """Accounts that waited for this one go now, and whatever else waited for it (account_landed)."""
    for child in Account.objects.filter(parent=account, sync_state=SyncState.QUEUED):
        sync.enqueue_push(Account, child.pk, child.company_id, join_running=False)
    account_landed.send(sender=Account, account=account)


ACCOUNTS = Resource(
    Account, create=lambda a: _fields(chart_client(a.company).create_account(account_body(a))),
    update=lambda a: _fields(chart_client(a.company).update_account(account_body(a))), find=_find,
    waits_for=_waits, after=_landed)


@job(gettext_lazy("Send chart account"))
def account_push(pk) -> str:
    return resources.push(ACCOUNTS, pk)


# --- mirror ---------------------------------------------------------------------------------------------
def _item(item):
    type_ = integer(field(item, "type"))
    type_ = type_ if type_ in AccountType.values else AccountType.SUB
    code, unit = text(field(item, "code")), text(field(item, "unitCode"))
    base = text(field(item, "baseCode")) or code.split(".")[0]
    parent = text(field(item, "parentId"))
    values = {"type": type_, "name": text(field(item, "name"))[:250], "code": code[:50], "unit_code": unit[:50],
              "base_code": base[:50], "is_bundle_account": flag(field(item, "isBundleAccount")),
              "currency_code_id": integer(field(item, "currencyCodeId")), "has_child": flag(field(item, "hasChild")),
              "parent_remote_id": "" if parent == "0" else parent,
              "full_code": full_code(type_, base, code, unit)[:160]}
    return text(field(item, "id")), values


@job(gettext_lazy("Read the chart of accounts from the platform"))
def chart_mirror(company_id) -> str:
    """Walk the platform's chart into the mirror (every page: the chart is small and has no date of change),
    then link each account to its parent."""
    company = Company.objects.get(pk=company_id)
    new = 0
    for page in sync.pages_with_progress(chart_client(company).account_pages()):
        new += resources.mirror_store(Account, page["items"], company=company, fields_of=_item)
    parents = Account.objects.filter(company=company, remote_id=OuterRef("parent_remote_id")).values("pk")[:1]
    Account.objects.filter(company=company).exclude(parent_remote_id="").update(parent=Subquery(parents))
    return _("%(count)s new account(s) read.") % {"count": new}


def mirror_request(company):
    return jobs.enqueue(chart_mirror, company=company.pk, args=[company.pk])


def sub_account_for(company, mapping_item) -> Account:
    """The sub-account a mapping of the platform names, stored from the mapping's own fields when the chart
    was not read yet (the next read of the chart completes it)."""
    nested = field(mapping_item, "account") or {}
    remote_id = text(field(mapping_item, "accountId") or field(nested, "id"))
    account = Account.objects.filter(company=company, remote_id=remote_id).first()
    if account is not None:
        return account
    code = text(field(mapping_item, "accountCode") or field(nested, "code")) or remote_id
    account, _created = Account.objects.get_or_create(
        company=company, full_code=code, defaults={
            "remote_id": remote_id, "type": AccountType.SUB, "code": code, "base_code": code.split(".")[0],
            "name": (text(field(mapping_item, "accountName")) or code)[:250], "sync_state": SyncState.SYNCED,
            "is_bundle_account": flag(field(mapping_item, "isBundleAccount")),
            "currency_code_id": integer(field(mapping_item, "accountCurrencyCodeId")) or None})
    return account


# --- what core runs for this domain (read when the app is ready: core.domains) --------------------------------------
sync.register_pushable(Account, account_push)
