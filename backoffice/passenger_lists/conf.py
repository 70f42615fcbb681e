"""Tunables of the passenger-list app: a Django setting of the same name wins, then the environment, then the
default."""

from backoffice.core.conf import tunable

DEFAULTS = {
    # How long a list's push waits when some of its tickets are still being sent.
    "PASSENGER_LIST_TICKET_WAIT_SECONDS": 3.0,
    # How often an export job asks the history whether its export is ready.
    "PASSENGER_LIST_EXPORT_POLL_SECONDS": 30.0,
}


def get(name: str) -> float:
    return tunable(name, DEFAULTS)
