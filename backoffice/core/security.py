"""Small security helpers shared by views and settings: the client's address and ids taken from requests."""

import re

from axes.models import AccessAttempt
from django.conf import settings
from django.db.models import Sum
from django.utils import timezone

# Primary keys are BigAutoField: at most 2**63 - 1, which has 19 digits. 18 digits always fit, on SQLite
# and PostgreSQL alike; anything longer, signed, spaced or non-ASCII (int("²") fails, "²".isdigit() is
# True) is not an id of ours.
ID_PATTERN = r"[0-9]{1,18}"
_ID = re.compile(ID_PATTERN)


def parse_id(value) -> int | None:
    """An id from a request (query, form, path): a positive int that fits the database, else None."""
    if not isinstance(value, str) or not _ID.fullmatch(value):
        return None
    number = int(value)
    return number if number > 0 else None


def parse_ids(values) -> list[int]:
    """The valid ids of a list of request values, in order, without repeats; the rest is ignored."""
    seen = {}
    for value in values:
        number = parse_id(value)
        if number is not None:
            seen.setdefault(number, None)
    return list(seen)


class IdConverter:
    """<id:pk> in URL patterns: what parse_id accepts, so a 30-digit pk is a 404, never a 500."""

    regex = ID_PATTERN

    def to_python(self, value):
        number = parse_id(value)
        if number is None:
            raise ValueError(value)
        return number

    def to_url(self, value):
        return str(value)


def client_ip(request) -> str:
    """The client's address for sign-in throttling: REMOTE_ADDR, or behind TRUSTED_PROXY_COUNT reverse
    proxies the address the outermost trusted proxy saw (X-Forwarded-For read from the right, so a value
    the client wrote itself is never taken)."""
    remote = request.META.get("REMOTE_ADDR", "")
    proxies = getattr(settings, "TRUSTED_PROXY_COUNT", 0)
    if proxies <= 0:
        return remote
    forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if part.strip()]
    if len(forwarded) >= proxies:
        return forwarded[-proxies]
    return remote


def is_locked_out(username: str) -> bool:
    """Whether django-axes refuses this user name now (its failures within the cool-off reached the
    limit), counted as axes counts them: the sum over the name's attempt rows."""
    since = timezone.now() - settings.AXES_COOLOFF_TIME
    failures = (AccessAttempt.objects.filter(username=username, attempt_time__gte=since)
                .aggregate(n=Sum("failures_since_start"))["n"] or 0)
    return failures >= settings.AXES_FAILURE_LIMIT
