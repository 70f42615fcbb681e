"""Excel import of current accounts (each with its first address, bank record and contact): every row checked
with the pages' forms and the services' rules before anything is saved, all saved in one transaction or none,
then sent in the background with progress (core.imports). The same page imports the chart of accounts, whose
sheet and rows are the chart's (chart_of_accounts.api)."""

from dataclasses import replace

from django.db import transaction
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from backoffice.core import domains, jobs, resources
from backoffice.core.choices import SyncState
from backoffice.core.imports import Column, Sheet, error_on, form_errors
from backoffice.remote.errors import RateLimited, RemoteError

from . import services
from .forms import BankForm, ContactForm, CurrentAccountForm, FirstAddressForm
from .models import Address, Bank, Contact, CurrentAccount

chart_api = domains.api("chart_of_accounts")

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

# The page's sheets by the kind it asks for.
SHEETS = {"accounts": ACCOUNT_SHEET, "chart": chart_api.CHART_SHEET}

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
    jobs.enqueue(current_accounts_import_push, company=company.pk, args=[company.pk, pks], join_running=False)
    return pks


def import_accounts(company, checked, user):
    """Check, then save all or nothing. Returns the saved pks ([] when checked.errors says why)."""
    rows = check_accounts(company, checked)
    return [] if checked.errors else save_accounts(company, rows, user)


# The import job sends each account and then its children itself, instead of a job each.
_ACCOUNT_ONLY = replace(services.ACCOUNTS, after=None)


@jobs.job(gettext_lazy("Import current accounts"))
def current_accounts_import_push(company_id, pks) -> str:
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
