"""What other domains may use of current accounts (an invoice's customer, a dispatch note's receiver): finding
them as a user types, reading a typed name back, the address warning shown beside a chosen one, and the
accounting mappings of a document's accounts. Nothing else of this app is imported from outside it."""

from .forms import resolve_account
from .lookup import MIN_LENGTH, find_accounts
from .services import address_warning, invoice_accounts, mapped_account_ids

__all__ = ["MIN_LENGTH", "address_warning", "find_accounts", "invoice_accounts", "mapped_account_ids",
           "resolve_account"]
