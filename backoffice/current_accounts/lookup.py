"""Finding a company's current accounts as a user types (the customer of an invoice, the receiver of a dispatch
note): the public lookup other domains call."""

import re

from backoffice.core.search import search_filter

from .models import CurrentAccount

MIN_LENGTH = 2


def find_accounts(company, text, limit=20) -> list:
    """The accounts of `company` that `text` names, by name: a tax or national id's first digits when the text
    starts with a digit ("1234", "1234567890 · 120.01"), else a part of the name, surname or code matched the
    Turkish way ("izmir", "İZMİR", "IŞIK", "çınar" and "isik" find what they name; core.search). Fewer than two
    characters find nothing."""
    text = (text or "").strip()
    if len(text) < MIN_LENGTH or company is None:
        return []
    accounts = CurrentAccount.objects.filter(company=company)
    if text[0].isdigit():
        digits = re.match(r"\d+", text).group()
        # The range lets the (company, identifier) index serve a prefix under any collation (LIKE 'digits%'
        # alone would not); startswith keeps it exact.
        accounts = accounts.filter(identifier__gte=digits, identifier__startswith=digits)
        if digits.strip("9"):  # "1239" -> below "1240"; "99" has no end: every id from "99" on starts so
            accounts = accounts.filter(identifier__lt=str(int(digits) + 1).zfill(len(digits)))
    else:
        accounts = accounts.filter(search_filter(CurrentAccount, text))
    return list(accounts.order_by("name", "pk")[:limit])
