"""Excel import of current accounts (each with its first address, bank record and contact) and of chart
accounts: every row checked with the pages' forms and the services' rules before anything is saved, all
saved in one transaction or none, then sent in the background with progress (core.imports)."""

from dataclasses import replace

from django.db import transaction
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from backoffice.core import jobs, resources
from backoffice.core.choices import SyncState
from backoffice.core.imports import Column, Sheet, error_on, form_errors
from backoffice.remote.errors import RateLimited, RemoteError

from backoffice.chart_of_accounts import services as chart_services
from backoffice.chart_of_accounts.choices import currency_ids
from backoffice.chart_of_accounts.forms import AccountForm
from backoffice.chart_of_accounts.models import Account

from . import services
from .forms import BankForm, ContactForm, CurrentAccountForm, FirstAddressForm
from .models import Address, Bank, Contact, CurrentAccount

ACCOUNT_SHEET = Sheet(gettext_lazy("Current accounts"), (
    Column("name", gettext_lazy("Name or title"), True, "Örnek Ticaret A.Ş."),
    Column("surname", gettext_lazy("Surname"), False, ""),
    Column("identifier", gettext_lazy("Tax or national id"), True, "1234567890"),
    Column("code", gettext_lazy("Account code"), False, "120.01.001"),
    Column("tax_office", gettext_lazy("Tax office"), False, "Kadıköy"),
    Column("maturity", gettext_lazy("Payment term (days)"), False, "30"),
    Column("mersis_number", gettext_lazy("MERSIS number")),
    Column("registration_number", gettext_lazy("Trade registry number")),
    Column("address-address_name", gettext_lazy("Address name"), False, "Merkez"),
    Column("address-country", gettext_lazy("Country"), False, "Türkiye"),
    Column("address-city", gettext_lazy("City"), False, "İstanbul"),
    Column("address-sub_division_name", gettext_lazy("District"), False, "Kadıköy"),
    Column("address-street_name", gettext_lazy("Street")),
    Column("address-building_number", gettext_lazy("Building number")),
    Column("address-postal_zone", gettext_lazy("Postal code")),
    Column("address-phone_number", gettext_lazy("Phone number"), False, "0216 123 45 67"),
    Column("address-email_address", gettext_lazy("E-mail address"), False, "bilgi@ornekticaret.com.tr"),
    Column("bank-name", gettext_lazy("Bank record name"), False, "Ana hesap"),
    Column("bank-bank_name", gettext_lazy("Bank")),
    Column("bank-iban_number", gettext_lazy("IBAN")),
    Column("contact-full_name", gettext_lazy("Contact name")),
    Column("contact-phone_number", gettext_lazy("Contact phone")),
    Column("contact-email_address", gettext_lazy("Contact e-mail")),
))

CHART_SHEET = Sheet(gettext_lazy("Chart of accounts"), (
    Column("type", gettext_lazy("Account type"), True, "muavin"),
    Column("base_code", gettext_lazy("Main account code"), False, "120"),
    Column("parent", gettext_lazy("Parent account code"), False, "120.01"),
    Column("unit_code", gettext_lazy("Unit code"), False, "001"),
    Column("name", gettext_lazy("Account name"), True, "Yurtiçi alıcılar"),
    Column("currency", gettext_lazy("Currency"), False, "TRY"),
    Column("is_bundle_account", gettext_lazy("Pool account"), False, "hayır"),
))
TYPE_WORDS = {"0": 0, "kebir": 0, "ana": 0, "ana hesap": 0, "main": 0, "1": 1, "grup": 1, "ara": 1, "group": 1,
              "2": 2, "muavin": 2, "alt": 2, "alt hesap": 2, "sub": 2, "sub-account": 2}
YES = {"1", "evet", "e", "yes", "y", "true", "doğru", "x"}
NO = {"", "0", "hayır", "h", "no", "n", "false", "yanlış"}

def _word(words: dict, text: str):
    """A word of the sheet looked up whatever its case, the Turkish way first ("MUAVİN", "HAYIR"), then the
    English way ("MAIN")."""
    text = " ".join(text.split())
    turkish = text.replace("İ", "i").replace("I", "ı").lower()
    return words.get(turkish, words.get(text.lower()))


PARTS = (("address", FirstAddressForm), ("bank", BankForm), ("contact", ContactForm))


def _has(values: dict, prefix: str) -> bool:
    return any(value for key, value in values.items() if key.startswith(prefix + "-") and key != "address-country")


class RowForm:
    """One form checking every row in turn: the page's own form and rules, bound to each row's values. A form
    built per row would copy its fields each time; the model-level checks left out (_post_clean) are the
    constraints, which need the database and are checked for the whole file at once."""

    def __init__(self, form_class, prefix=None):
        self.form = form_class(data={}, prefix=prefix)
        self.form._post_clean = lambda: None

    def check(self, values):
        """The row's cleaned values, or None with its errors in self.form.errors."""
        form = self.form
        form.data, form._errors = values, None
        return dict(form.cleaned_data) if form.is_valid() else None


def check_accounts(company, checked) -> list:
    """Check every row (the forms, then the identifier rule within the file and against the company's
    accounts). Returns [(row number, account values, {part: values})] of the rows; checked.errors holds the
    problems."""
    account_form = RowForm(CurrentAccountForm)
    part_forms = {part: RowForm(form_class, prefix=part) for part, form_class in PARTS}
    checked_rows = []
    for number, values in checked.rows:
        account = account_form.check(values)
        if account is None:
            form_errors(checked, number, account_form.form)
        children = {}
        for part, row_form in part_forms.items():
            if not _has(values, part):
                continue
            children[part] = row_form.check(values)
            if children[part] is None:
                form_errors(checked, number, row_form.form)
        checked_rows.append((number, account, children))
    _check_identifiers(company, checked, checked_rows)
    return checked_rows


def _check_identifiers(company, checked, checked_rows) -> None:
    """Two accounts cannot share an identifier unless their codes tell them apart (2.1): in the file and
    against the accounts the company has (one query)."""
    pairs = {}
    for number, account, _children in checked_rows:
        if account is not None:
            pairs.setdefault((account["identifier"], account.get("code") or ""), []).append(number)
    identifiers = {identifier for identifier, _code in pairs}
    known = set(CurrentAccount.objects.filter(company=company, identifier__in=identifiers)
                .values_list("identifier", "code"))
    for (identifier, code), numbers in pairs.items():
        for number in numbers[1:]:
            error_on(checked, number, "code", _("Row %(first)s has the same tax or national id and code; give one of "
                                                "them a different code.") % {"first": numbers[0]})
        if (identifier, code) in known:
            error_on(checked, numbers[0], "code", _("A current account with this tax or national id and code exists "
                                                    "already; give this one a different code."))


PART_MODELS = {"address": Address, "bank": Bank, "contact": Contact}


@transaction.atomic
def save_accounts(company, checked_rows, user) -> list:
    """Save every checked row at once (bulk), each account waiting to be sent with its children."""
    accounts = [CurrentAccount(company=company, created_by=user, sync_state=SyncState.QUEUED, **values)
                for _number, values, _parts in checked_rows]
    CurrentAccount.objects.bulk_create(accounts, batch_size=500)
    made = {model: [] for model in PART_MODELS.values()}
    for account, (_number, _values, parts) in zip(accounts, checked_rows):
        for part, values in parts.items():
            model = PART_MODELS[part]
            # The first of its kind is the default (2.2, 2.3).
            defaults = {"is_default": True} if model in (Address, Bank) else {}
            made[model].append(model(current_account=account, company=company, sync_state=SyncState.QUEUED,
                                     **{**values, **defaults}))
    for model, records in made.items():
        model.objects.bulk_create(records, batch_size=500)
    pks = [account.pk for account in accounts]
    from . import jobs as app_jobs

    jobs.enqueue(app_jobs.current_accounts_import_push, company=company.pk, args=[company.pk, pks],
                 join_running=False)
    return pks


def import_accounts(company, checked, user):
    """Check, then save all or nothing. Returns the saved pks ([] when checked.errors says why)."""
    rows = check_accounts(company, checked)
    if checked.errors:
        return []
    return save_accounts(company, rows, user)


# The import job sends each account and then its children itself, instead of a job each.
_ACCOUNT_ONLY = replace(services.ACCOUNTS, after=None)


def push_imported(company_id, pks) -> str:
    """Send the imported accounts one by one with their children, showing progress. A refusal stays on its
    record and the rest go on; the rate limit defers the job, which then goes on where it was."""
    sent = failed = 0
    total = len(pks)
    for index, pk in enumerate(pks, start=1):
        jobs.set_progress(100 * (index - 1) / max(total, 1),
                          _("Account %(index)s of %(total)s") % {"index": index, "total": total})
        try:
            resources.push(_ACCOUNT_ONLY, pk)
            for model in (Address, Bank, Contact):
                for child_pk in model.objects.filter(current_account_id=pk, sync_state=SyncState.QUEUED).values_list(
                        "pk", flat=True):
                    resources.push(services.CHILDREN[model], child_pk)
        except RateLimited:
            raise
        except RemoteError:
            failed += 1
            continue
        sent += 1
    jobs.set_progress(100, "")
    return _("%(sent)s account(s) sent, %(failed)s refused or left for a retry (see each account).") % {
        "sent": sent, "failed": failed}


# --- chart of accounts ----------------------------------------------------------------------------------
@transaction.atomic
def import_chart(company, checked) -> int:
    """Check and save the chart rows in file order (a parent may come earlier in the file), all or nothing:
    any error rolls every row back. A sub-account without a currency is kept in TRY (issue 29), as on the form.
    Returns how many were saved (0 when checked.errors says why)."""
    codes = dict(Account.objects.filter(company=company).values_list("full_code", "pk"))
    saved = []
    currencies = {code.upper(): number for code, number in currency_ids().items()}
    for number, values in checked.rows:
        type_ = _word(TYPE_WORDS, values.get("type", ""))
        pool = values.get("is_bundle_account", "").strip()
        pool = _word({word: word for word in YES | NO}, pool) or pool.lower()
        data = {"type": "" if type_ is None else type_, "base_code": values.get("base_code", ""),
                "unit_code": values.get("unit_code", ""), "name": values.get("name", ""),
                "currency_code_id": currencies.get(values.get("currency", "").strip().upper() or "TRY", ""),
                "is_bundle_account": "on" if pool in YES else ""}
        parent_code = values.get("parent", "").strip()
        if parent_code:
            data["parent"] = codes.get(parent_code, "")
        form = AccountForm(data, company=company)
        if type_ is None:
            error_on(checked, number, "type", _("Write main (kebir), group or sub (muavin), or 0, 1 or 2."))
        if values.get("currency") and data["currency_code_id"] == "":
            error_on(checked, number, "currency", _("Unknown currency: use its code, e.g. TRY, USD, EUR."))
        if pool not in YES | NO:
            error_on(checked, number, "is_bundle_account", _("Write yes (evet) or no (hayır)."))
        if parent_code and data["parent"] == "":
            error_on(checked, number, "parent", _("No account with this code in the chart or in earlier rows."))
        if not form.is_valid():
            for name, messages in form.errors.items():
                key = {"currency_code_id": "currency"}.get(name, name)
                for message in messages:
                    error_on(checked, number, key if name != "__all__" else "", message)
            continue
        account = form.save(commit=False)
        account.company = company
        try:
            chart_services.check_account(account)
        except chart_services.ChartError as exc:
            error_on(checked, number, exc.field or "", exc.message)
            continue
        account.save()
        codes[account.full_code] = account.pk
        saved.append(account)
    if checked.errors:
        transaction.set_rollback(True)
        return 0
    for account in saved:
        resources.queue_change(account)
    return len(saved)

