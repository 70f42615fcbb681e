"""What other domains may use of current accounts (an invoice's customer, a dispatch note's receiver): finding
them as a user types, reading a typed name back, the address warning shown beside a chosen one, and the
accounting mappings of a document's accounts. Nothing else of this app is imported from outside it."""

from backoffice.core.generic.lines import Lookup

from .forms import resolve_account
from .lookup import MIN_LENGTH, find_accounts
from .services import address_warning, invoice_accounts, mapped_account_ids


def account_lookup(**shown) -> Lookup:
    """The typeahead of a document's account (an invoice's customer, a dispatch note's receiver): `shown` is how
    the chosen account is shown beside the field (its template and details)."""
    return Lookup(find=find_accounts, resolve=resolve_account, min_length=MIN_LENGTH, **shown)


__all__ = ["MIN_LENGTH", "account_lookup", "address_warning", "find_accounts", "invoice_accounts",
           "mapped_account_ids", "resolve_account"]
