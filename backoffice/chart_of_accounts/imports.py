"""Excel import of chart accounts (the import page is the current accounts' one, which offers both sheets): every
row checked with the page's form and the services' rules, all saved in one transaction or none, then sent."""

from django.db import transaction
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from backoffice.core import resources
from backoffice.core.imports import Column, Sheet, error_on, form_errors

from .choices import currency_ids
from .forms import AccountForm
from .models import Account
from .services import ChartError, check_account

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


def _check_words(checked, number, values, codes, currencies) -> dict:
    """The form data of one row from the sheet's words (type, currency, pool, parent code), each word that
    names nothing put on its cell."""
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
    if type_ is None:
        error_on(checked, number, "type", _("Write main (kebir), group or sub (muavin), or 0, 1 or 2."))
    if values.get("currency") and data["currency_code_id"] == "":
        error_on(checked, number, "currency", _("Unknown currency: use its code, e.g. TRY, USD, EUR."))
    if pool not in YES | NO:
        error_on(checked, number, "is_bundle_account", _("Write yes (evet) or no (hayır)."))
    if parent_code and data["parent"] == "":
        error_on(checked, number, "parent", _("No account with this code in the chart or in earlier rows."))
    return data


def _checked_account(company, checked, number, data):
    """The row's account checked by the form and the chart's rules, unsaved; None with its errors on the row."""
    form = AccountForm(data, company=company)
    if not form.is_valid():
        form_errors(checked, number, form, keys={"currency_code_id": "currency"})
        return None
    account = form.save(commit=False)
    account.company = company
    try:
        check_account(account)
    except ChartError as exc:
        error_on(checked, number, exc.field or "", exc.message)
        return None
    return account


@transaction.atomic
def import_chart(company, checked) -> int:
    """Check and save the chart rows in file order (a parent may come earlier in the file), all or nothing:
    any error rolls every row back. A sub-account without a currency is kept in TRY (issue 29), as on the form.
    Returns how many were saved (0 when checked.errors says why)."""
    codes = dict(Account.objects.filter(company=company).values_list("full_code", "pk"))
    currencies = {code.upper(): number for code, number in currency_ids().items()}
    saved = []
    for number, values in checked.rows:
        data = _check_words(checked, number, values, codes, currencies)
        account = _checked_account(company, checked, number, data)
        if account is None:
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
