"""Current accounts: every rule of document 3, 2.1 to 2.5 that needs the database, every change, the
pushes (core.resources) and the mirror of the platform's lists, each push and read a job of its own. Format
rules (lengths, digits, check digits, IBAN, e-mail, URL) are on the forms (forms.py), which the Excel import
uses too.
"""

from django.db import transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from backoffice.core import domains, jobs, resources, schedule, sync
from backoffice.core.choices import SyncState
from backoffice.core.jobs import enqueue_per_company, job
from backoffice.core.models import Company
from backoffice.core.payloads import amount, camel_names, flag, integer, pushed, text
from backoffice.core.platform import client_for
from backoffice.core.resources import Resource, ResourceError
from backoffice.remote.accounting import AccountingClient
from backoffice.remote.common import field
from backoffice.remote.errors import RemoteError

from .models import Address, Bank, Contact, CurrentAccount, DefaultChild, Mapping

chart_api = domains.api("chart_of_accounts")


class CurrentAccountError(ResourceError):
    """A change refused by a rule of 2.1 to 2.5; `field` is the form field it belongs to."""


def accounting_client(company) -> AccountingClient:
    return client_for(company, AccountingClient)


# --- bodies ----------------------------------------------------------------------------------------------
ACCOUNT_FIELDS = camel_names("name", "identifier", "code", "surname", "tax_office", "maturity", "mersis_number",
                             "registration_number", "professional_chamber", "chamber_registration_number")
CHILD_FIELDS = {
    Address: camel_names("is_default", "address_name", "sub_division_name", "city", "country", "region",
                         "street_name", "building_name", "building_number", "door_number", "postal_zone",
                         "email_address", "fax_number", "phone_number", "web_site"),
    Bank: camel_names("name", "is_default", "bank_name", "bank_branch_name", "bank_account_number", "iban_number",
                      "receiver_name", "type"),
    Contact: camel_names("full_name", "phone_number", "email_address"),
    Mapping: camel_names("name"),
}


def _body(record, names: dict) -> dict:
    """The platform's names; an empty number is left out (a strict reader refuses null for an integer)."""
    body = {platform: value for platform, name in names.items() if (value := getattr(record, name)) is not None}
    if record.branch_id:
        body["branchId"] = record.branch_id
    if record.remote_id:
        body["id"] = int(record.remote_id)
    return body


def account_body(account) -> dict:
    return _body(account, ACCOUNT_FIELDS)


def child_body(child) -> dict:
    body = _body(child, CHILD_FIELDS[type(child)])
    body["currentAccountId"] = int(child.current_account.remote_id)
    if isinstance(child, Mapping):
        body["accountId"] = int(child.account.remote_id)
    return body


# How an answer's value is read into a field (core.payloads); any other field is text.
READERS = {"maturity": integer, "is_default": flag}


def _values(item, names: dict) -> dict:
    """Model fields from an answer (the names the answer has)."""
    found = {name: field(item, platform) for platform, name in names.items()}
    return {name: READERS.get(name, text)(value) for name, value in found.items() if value is not None}


# --- rules ----------------------------------------------------------------------------------------------
def check_identifier(account) -> None:
    """Two current accounts cannot share an identifier unless their codes tell them apart (2.1)."""
    twins = CurrentAccount.objects.filter(company=account.company, identifier=account.identifier,
                                          code=account.code or "").exclude(pk=account.pk)
    if twins.exists():
        message = (_("Another current account has this tax or national id and this code; give this one a different "
                     "code.") if account.code else
                   _("Another current account has this tax or national id; give this one a code to tell them apart."))
        raise CurrentAccountError(message, field="code")


def address_warning(account) -> str:
    """What an invoice for this account will say about its address (2.2: no default address, a warning)."""
    if account.address_set.filter(is_default=True).exclude(pending_action=resources.DELETE).exists():
        return ""
    return _("This current account has no default address: the platform saves its invoices with an address "
             "warning. Add an address.")


def _siblings(child):
    return type(child).objects.filter(current_account=child.current_account).exclude(pk=child.pk)


# --- changes ------------------------------------------------------------------------------------------------
def current_account_save(account, *, user=None, address=None):
    """Save a new or changed account and send it; a new one may come with its first address (2.2: default)."""
    if account.pk and account.is_busy:
        raise CurrentAccountError(_("This current account is on its way to the platform; wait until it is there."))
    with transaction.atomic():
        check_identifier(account)
        if account.pk is None:
            account.created_by = user
        account.save()
        if address is not None:
            address.current_account, address.company, address.is_default = account, account.company, True
            address.save()  # goes inside the account's create body (see _create_account)
        resources.queue_change(account)
    return account


def child_save(child):
    """Save a new or changed address, bank record, contact or mapping and send it (2.2 to 2.5 rules)."""
    if child.pk and child.is_busy:
        raise CurrentAccountError(_("This record is on its way to the platform; wait until it is there."))
    with transaction.atomic():
        CurrentAccount.objects.select_for_update().filter(pk=child.current_account_id).first()  # one writer per account
        if isinstance(child, DefaultChild):
            _default_rules(child)
        if isinstance(child, Mapping):
            _mapping_rules(child)
        child.company = child.current_account.company
        child.save()
        if isinstance(child, DefaultChild) and child.is_default:
            # The platform sets the others false itself (2.2): ours follow without a call of their own.
            _siblings(child).filter(is_default=True).update(is_default=False)
        resources.queue_change(child)
    return child


def _default_rules(child) -> None:
    """The first address (bank record) is the default; the default cannot be unset, only replaced."""
    siblings = _siblings(child).exclude(pending_action=resources.DELETE)
    if not siblings.exists():
        child.is_default = True
    elif child.pk and not child.is_default and type(child).objects.filter(pk=child.pk, is_default=True).exists():
        raise CurrentAccountError(
            _("The account needs a default address; make another one default instead.") if isinstance(child, Address)
            else _("The account needs a default bank record; make another one default instead."), field="is_default")


def _mapping_rules(mapping) -> None:
    """2.5: a sub-account only; a non-pool account to one current account only; never twice to the same one."""
    account = mapping.account
    if account.type != chart_api.AccountType.SUB:
        raise CurrentAccountError(_("Choose a sub-account: only sub-accounts are mapped to current accounts."),
                                  field="account")
    others = Mapping.objects.filter(account=account).exclude(pk=mapping.pk)
    if others.filter(current_account=mapping.current_account).exists():
        raise CurrentAccountError(_("This sub-account is already mapped to this current account."), field="account")
    taken = others.exclude(current_account=mapping.current_account).select_related("current_account").first()
    if taken is not None and not account.is_bundle_account:
        raise CurrentAccountError(
            _("This sub-account is mapped to “%(account)s” already and is not a pool account: only a pool account "
              "can be mapped to several current accounts.") % {"account": taken.current_account}, field="account")


def invoice_accounts(company, pairs) -> dict:
    """{(identifier, code): the company's current account or None} of the (identifier, code) pairs an
    invoice names its customer by (2.1: the code tells apart accounts sharing an identifier)."""
    pairs = set(pairs)
    found = CurrentAccount.objects.filter(company=company, identifier__in={identifier for identifier, _code in pairs})
    accounts = {(account.identifier, account.code): account for account in found.order_by("pk")}
    return {pair: accounts.get(pair) for pair in pairs}


def mapped_account_ids(accounts) -> set:
    """The pks of the accounts mapped to a sub-account on the platform (2.5): a mapping that is there and not
    being deleted. One still on its way does not count yet: a posting sent now would fail (2.6)."""
    return set(Mapping.objects.filter(current_account__in=accounts).exclude(remote_id="")
               .exclude(pending_action=resources.DELETE).values_list("current_account_id", flat=True))


def child_make_default(child):
    """Make this address (bank record) the default; the platform clears the others."""
    child.is_default = True
    return child_save(child)


def child_delete(child) -> bool:
    """Delete a child record (a default address or bank record cannot be deleted: 2.2, 2.3). Returns True
    when it went at once (the platform never had it)."""
    if isinstance(child, DefaultChild) and child.is_default and (child.remote_id or _siblings(child).exists()):
        raise CurrentAccountError(_("The default record cannot be deleted; make another one default first."))
    try:
        return resources.request_delete(child)
    except ResourceError as exc:
        raise CurrentAccountError(exc.message) from None


# --- pushes ------------------------------------------------------------------------------------------------
def _create_account(account) -> dict:
    body = account_body(account)
    address = account.address_set.filter(remote_id="", sync_state=SyncState.LOCAL).order_by("pk").first()
    if address is not None:
        # Sent inside the account: counted as an attempt, so that its own push asks the platform first.
        Address.objects.filter(pk=address.pk).update(attempts=F("attempts") + 1)
        body["currentAccountAddress"] = {**_body(address, CHILD_FIELDS[Address]), "isDefault": True}
    answer = accounting_client(account.company).create_current_account(body)
    embedded = text(field(field(answer, "currentAccountAddress"), "id"))
    if address is not None and embedded:
        Address.objects.filter(pk=address.pk, remote_id="").update(
            remote_id=embedded, sync_state=SyncState.SYNCED, synced_at=timezone.now())
    return _account_fields(answer)


def _account_fields(answer) -> dict:
    return pushed(answer, is_used="isUsed")


def _find_account(account):
    found = accounting_client(account.company).find_current_account(identifier=account.identifier,
                                                                     code=account.code)
    return _account_fields(found) if found else None


def _account_landed(account) -> None:
    """Children that waited for the account go now (the first address went inside its create)."""
    for model in (Address, Bank, Contact, Mapping):
        for child in model.objects.filter(current_account=account, sync_state__in=[SyncState.LOCAL, SyncState.QUEUED]):
            if child.sync_state == SyncState.LOCAL:
                resources.queue_change(child)
            else:
                sync.enqueue_push(model, child.pk, child.company_id, join_running=False)


def _child_create(child) -> dict:
    answer = accounting_client(child.company).create_child(child.part, child_body(child))
    return {"remote_id": answer["id"]}


def _child_update(child) -> dict:
    answer = accounting_client(child.company).update_child(child.part, child_body(child))
    return {"remote_id": answer["id"]}


def _same_child(child, item) -> bool:
    if isinstance(child, Mapping):
        return text(field(item, "accountId")) == child.account.remote_id
    platform = {name: platform for platform, name in CHILD_FIELDS[type(child)].items()}[child.label_field]
    return text(field(item, platform)) == getattr(child, child.label_field)


def _child_find(child):
    """The platform's record this child's lost create made: the same name (mapping: sub-account), not
    already known here."""
    known = set(type(child).objects.filter(current_account=child.current_account).exclude(remote_id="")
                .values_list("remote_id", flat=True))
    items = accounting_client(child.company).children(child.part, child.current_account.remote_id,
                                                      branch_id=child.branch_id)
    for item in items:
        if item["id"] not in known and _same_child(child, item):
            return {"remote_id": item["id"]}
    return None


def _child_delete(child) -> None:
    accounting_client(child.company).delete_child(child.part, child.remote_id, branch_id=child.branch_id)


def _child_exists(child) -> bool:
    items = accounting_client(child.company).children(child.part, child.current_account.remote_id,
                                                      branch_id=child.branch_id)
    return any(item["id"] == child.remote_id for item in items)


def _child_waits(child) -> str:
    if not child.current_account.remote_id:
        return _("Waits for its current account to reach the platform.")
    if isinstance(child, Mapping) and not child.account.remote_id:
        return _("Waits for its sub-account to reach the platform.")
    return ""


ACCOUNTS = Resource(CurrentAccount, create=_create_account, update=lambda a: _account_fields(
    accounting_client(a.company).update_current_account(account_body(a))), find=_find_account, after=_account_landed)
CHILDREN = {model: Resource(model, create=_child_create, update=_child_update, find=_child_find,
                            delete=_child_delete, exists=_child_exists, waits_for=_child_waits)
            for model in (Address, Bank, Contact, Mapping)}


@job(gettext_lazy("Send current account"))
def current_account_push(pk) -> str:
    return resources.push(ACCOUNTS, pk)


@job(gettext_lazy("Send address"))
def address_push(pk) -> str:
    return resources.push(CHILDREN[Address], pk)


@job(gettext_lazy("Send bank record"))
def bank_push(pk) -> str:
    return resources.push(CHILDREN[Bank], pk)


@job(gettext_lazy("Send contact"))
def contact_push(pk) -> str:
    return resources.push(CHILDREN[Contact], pk)


@job(gettext_lazy("Send account mapping"))
def mapping_push(pk) -> str:
    return resources.push(CHILDREN[Mapping], pk)


# Each kind's push job (registered as pushable at the end of this module).
PUSHES = {CurrentAccount: current_account_push, Address: address_push, Bank: bank_push, Contact: contact_push,
          Mapping: mapping_push}


def mappings_waiting_for(sender, account, **kwargs) -> None:
    """Mappings that waited for this sub-account to reach the platform go now (the chart's account_landed)."""
    for mapping in Mapping.objects.filter(account=account, sync_state=SyncState.QUEUED):
        sync.enqueue_push(Mapping, mapping.pk, mapping.company_id, join_running=False)


# --- the mirror -------------------------------------------------------------------------------------------
# The list's fields (it has fewer than an account read whole): {platform name: (model field, reader)}.
LIST_FIELDS = {"name": ("name", text), "identifier": ("identifier", text), "surname": ("surname", text),
               "branchId": ("branch_id", integer), "totalBalance": ("total_balance", amount),
               "status": ("remote_status", integer)}
TEXT_LENGTHS = {name: CurrentAccount._meta.get_field(name).max_length for name in ("name", "identifier", "surname")}


def _list_item(item):
    values = {name: read(field(item, platform)) for platform, (name, read) in LIST_FIELDS.items()}
    for name, length in TEXT_LENGTHS.items():
        values[name] = values[name][:length]
    return text(field(item, "id")), values


def store_current_accounts(company, items) -> int:
    """One page of the platform's current-account list into the mirror (bulk): how many were new."""
    return resources.mirror_store(CurrentAccount, items, company=company, fields_of=_list_item)


@job(gettext_lazy("Read current accounts from the platform"))
def current_accounts_mirror(company_id, full: bool = False) -> str:
    """Walk the platform's list into the mirror, 500 a page. Not full: newest first (by id, descending),
    stopping after the first page that brings nothing new, which is all the platform allows to tell (its
    list has no date of change); full: every page, which also takes changed names and balances."""
    company = Company.objects.get(pk=company_id)
    client = accounting_client(company)
    new = 0
    pages = client.current_account_pages(sorted_column="Id", is_desc=True)
    try:
        for page in sync.pages_with_progress(pages):
            added = store_current_accounts(company, page["items"])
            new += added
            if not full and not added:
                break
    except RemoteError as exc:
        if exc.status not in (400, 422) or new:
            raise
        # A platform that does not sort by id: without an order, only every page can tell what is new.
        for page in sync.pages_with_progress(client.current_account_pages()):
            new += store_current_accounts(company, page["items"])
    return _("%(count)s new current account(s) read.") % {"count": new}


@job(gettext_lazy("Read current accounts of every company"))
def current_accounts_mirror_all():
    return enqueue_per_company(current_accounts_mirror, name="current_accounts_mirror")


def _child_fields(model, account):
    """How one of the platform's records of this kind is read into the mirror, under `account`."""

    def fields_of(item):
        values = _values(item, CHILD_FIELDS[model])
        if field(item, "branchId") not in (None, ""):
            values["branch_id"] = integer(field(item, "branchId"))
        if model is Mapping:
            values["account_id"] = chart_api.sub_account_for(account.company, item).pk
        return item["id"], values

    return fields_of


@job(gettext_lazy("Read a current account from the platform"))
def current_account_details(pk) -> str:
    """Read one account in full and its child lists from the platform into the mirror."""
    account = CurrentAccount.objects.select_related("company").get(pk=pk)
    counts = {}
    if account.remote_id:
        client = accounting_client(account.company)
        full = client.current_account(account.remote_id)
        values = {**_values(full, ACCOUNT_FIELDS), **_account_fields(full)}
        if account.sync_state == SyncState.SYNCED:
            CurrentAccount.objects.filter(pk=account.pk, sync_state=SyncState.SYNCED).update(**values)
        for model in (Address, Bank, Contact, Mapping):
            items = client.children(model.part, account.remote_id, branch_id=account.branch_id)
            resources.mirror_store(model, items, company=account.company, fields_of=_child_fields(model, account),
                                   current_account=account)
            resources.prune_missing(model, company=account.company, keep=[item["id"] for item in items],
                                    current_account=account)
            counts[model.part] = len(items)
        CurrentAccount.objects.filter(pk=account.pk).update(details_read_at=timezone.now())
    return _("Read: %(addresses)s address(es), %(banks)s bank record(s), %(contacts)s contact(s), %(mappings)s "
             "mapping(s).") % {"addresses": counts.get("address", 0), "banks": counts.get("bank", 0),
                               "contacts": counts.get("contact", 0), "mappings": counts.get("mapping", 0)}


# --- background work ---------------------------------------------------------------------------------
def mirror_request(company, *, full: bool = False):
    return jobs.enqueue(current_accounts_mirror, company=company.pk, args=[company.pk, full])


def details_request(account):
    return jobs.enqueue(current_account_details, company=account.company_id,
                        target=sync.record_target(CurrentAccount, account.pk), args=[account.pk])


# --- what core runs for this domain (read when the app is ready: core.domains) --------------------------------------
for _model, _push in PUSHES.items():
    sync.register_pushable(_model, _push)
# A mapping waiting for its sub-account goes when the chart says the sub-account reached the platform.
chart_api.account_landed.connect(mappings_waiting_for, dispatch_uid="current_accounts.mappings_waiting_for")
# New accounts made on the platform (another program, its portal) reach the mirror within the hour.
schedule.register(func=current_accounts_mirror_all, interval=3600, name="current_accounts_mirror", job_timeout=600)
