"""Operations of the simulated platform, one module per service; importing them registers them."""

from . import auth, crm, invoice, ledger, passenger_lists, tickets  # noqa: F401
