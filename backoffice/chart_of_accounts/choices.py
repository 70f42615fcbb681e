"""Kinds of chart accounts (document 3, 2.7) and the currencies a sub-account is kept in."""

from django.conf import settings
from django.utils.translation import gettext_lazy as _

from backoffice.core.choices import ColoredIntegerChoices, paint


class AccountType(ColoredIntegerChoices):
    MAIN = 0, _("Main account (kebir)")
    GROUP = 1, _("Group account")
    SUB = 2, _("Sub-account (muavin)")


paint(AccountType, primary=[AccountType.MAIN], info=[AccountType.GROUP])


# currencyCodeId of 2.7 is an integer whose list is "not shown": these ids are our default, to be confirmed
# with the provider (settings.ACCOUNTING_CURRENCY_IDS replaces them).
DEFAULT_CURRENCY_IDS = {"TRY": 1, "USD": 2, "EUR": 3, "GBP": 4, "CHF": 5, "JPY": 6, "SAR": 7, "RUB": 8}


def currency_ids() -> dict:
    return getattr(settings, "ACCOUNTING_CURRENCY_IDS", None) or DEFAULT_CURRENCY_IDS


def currency_choices():
    return [(number, code) for code, number in currency_ids().items()]


def currency_code(number) -> str:
    """The ISO code of a currencyCodeId ("" when unknown); the platform sends the id as a string."""
    try:
        number = int(number)
    except (TypeError, ValueError):
        return ""
    return next((code for code, value in currency_ids().items() if value == number), str(number))
