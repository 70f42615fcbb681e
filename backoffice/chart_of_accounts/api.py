"""What other domains may use of the chart of accounts: the currencies the platform numbers, the account codes a
company keeps here, the sub-accounts a current account is mapped to (the one a mapping of the platform stands on,
and the signal sent when an account reached the platform), and the chart's Excel sheet. Nothing else of this app
is imported from outside it."""

from .choices import AccountType, currency_ids
from .imports import CHART_SHEET, import_chart
from .models import Account
from .services import account_landed, sub_account_for


def chart_codes(company):
    """Every account code of the company's chart of accounts here, or None when it keeps none here."""
    codes = frozenset(Account.objects.filter(company=company).values_list("full_code", flat=True))
    return codes or None


def sub_accounts(company):
    """The company's sub-accounts (muavin), the only accounts a current account is mapped to (2.5)."""
    return Account.objects.filter(company=company, type=AccountType.SUB).order_by("full_code")


__all__ = ["Account", "AccountType", "CHART_SHEET", "account_landed", "chart_codes", "currency_ids", "import_chart",
           "sub_account_for", "sub_accounts"]
