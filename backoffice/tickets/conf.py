"""Tunables of the ticket app: a Django setting of the same name wins, then the environment, then the default."""

from backoffice.core.conf import tunable

DEFAULTS = {
    # First status poll after a ticket was queued (20); the cron polls every minute after that.
    "TICKET_POLL_DELAY_SECONDS": 10.0,
    # A poll asked for by a push or an action asks again at that delay while tickets wait, this long after
    # it was asked; then only the cron's minute (a platform that is slow today is not asked every 10 s).
    "TICKET_POLL_FOLLOW_SECONDS": 60.0,
    # How often an export job asks the history whether its export is ready.
    "TICKET_EXPORT_POLL_SECONDS": 30.0,
    # Tickets a batch push job sends at once (threads): one's database work overlaps another's wait.
    "TICKET_PUSH_CONCURRENCY": 3,
}


def get(name: str) -> float:
    return tunable(name, DEFAULTS)
