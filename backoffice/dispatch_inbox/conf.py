"""Tunables of the receiving side: a Django setting of the same name wins, then the environment, then the default.
The polling pace and the list's clock margin are the dispatch service's (dispatch.api.setting)."""

from django.conf import settings

from backoffice.core import domains
from backoffice.core.conf import tunable

dispatch_api = domains.api("dispatch")

DEFAULTS = {
    "DISPATCH_ANSWER_DAYS": 7,  # days a receiver has to answer an incoming note: the inbox counts them down
    "DISPATCH_INBOX_SECONDS": 300,  # how often the incoming list and the receipt list are read
    "DISPATCH_INBOX_OVERLAP_SECONDS": 600,  # each read starts this much before where the last one stopped
    "DISPATCH_INBOX_WALK_DAYS": 30,  # once a day the incoming notes of this many days are read again
    "DISPATCH_INBOX_WALK_SECONDS": 86400,
}


def setting(name):
    return tunable(name, DEFAULTS) if name in DEFAULTS else dispatch_api.setting(name)


def reply_prefix() -> str:
    """The reply number's prefix the answer forms offer first (setting DISPATCH_REPLY_PREFIX)."""
    return getattr(settings, "DISPATCH_REPLY_PREFIX", "IRY")
