"""What other domains may use of the chart of accounts: the currencies the platform numbers, the account codes a
company keeps here, and the sub-account a current account's mapping stands on. Nothing else of this app is
imported from outside it."""

from .choices import AccountType, currency_ids
from .models import Account
from .services import sub_account_for


def chart_codes(company):
    """Every account code of the company's chart of accounts here, or None when it keeps none here."""
    codes = frozenset(Account.objects.filter(company=company).values_list("full_code", flat=True))
    return codes or None


__all__ = ["Account", "AccountType", "chart_codes", "currency_ids", "sub_account_for"]
