"""A company's connection, checked: its credentials, then one harmless read per service.

Plain Python, like all of remote/: takes a Transport, returns one Check per row, each with an outcome code
that the caller words in the user's language. Nothing here raises: network trouble, refusals of our own
guards, HTML answers of whatever host answered and bugs all become an outcome.

Reads (GET, nothing changes on the platform):
  ticket: the event-ticket report of one day, one item per page (document 2; also needs the e-ticket
          listing permission, document 1 section 5 rule 5, which the report pages of the back-office use);
  crm:    the shared pool usage report (document 1, 2.1). The platform allows it once per 15 minutes: our
          limiter holds it back while the window is closed (outcome "limited", with the wait) and this
          check uses the window's call otherwise.
"""

import datetime
import functools
import json
import logging
from dataclasses import asdict, dataclass

from .errors import (
    ApiKeyRequired,
    CREDENTIALS,
    PERMISSION,
    AuthenticationFailed,
    CredentialsUnsendable,
    NoAnswer,
    RateLimited,
    RemoteError,
)

logger = logging.getLogger(__name__)

# Outcomes of one row.
OK = "ok"
REFUSED_CREDENTIALS = "credentials"  # the platform refused the credentials (401, a token refused)
NO_PERMISSION = "permission"  # 403: accepted, but not allowed this read
UNREACHABLE = "unreachable"  # no connection (DNS, refused connection, dropped)
TIMED_OUT = "timeout"  # no answer in time
REFUSED = "refused"  # the platform (or whatever answered) refused the read otherwise (404, 5xx, ...)
UNEXPECTED = "unexpected"  # answered 2xx, but not with the platform's JSON (a proxy's or login page)
LIMITED = "limited"  # not asked now: the rate limit's window is closed (wait seconds)
UNSENDABLE = "unsendable"  # a credential cannot be sent (not printable ASCII): nothing sent
BLOCKED = "blocked"  # stopped here by our own rules (a typed URL's guard, a missing setting, ...)
SKIPPED = "skipped"  # not tried: the credentials were refused already
NO_API_KEY = "no_api_key"  # an API-key-only service (company management) and the company has no key: not sent
ERROR = "error"  # a bug of ours

AUTH = "auth"
SERVICES = ("ticket", "crm")


@dataclass
class Check:
    service: str  # "auth" for the credentials row, else a service of endpoints.SERVICES
    outcome: str
    status: int | None = None  # HTTP status of the answer, when there was one
    detail: str = ""  # the platform's title/detail or our technical reason (redacted by the transport)
    wait: float | None = None  # LIMITED: seconds until the read may be asked
    field: str = ""  # UNSENDABLE: the company's field to correct
    operation: str = ""

    def as_dict(self) -> dict:
        return asdict(self)


# The read of each service: its operation, and the call's arguments on a day.
READS = {"ticket": ("event_ticket.report", lambda today: {"path_params": {"reportDate": today.isoformat()},
                                                          "params": {"pageIndex": 1, "pageSize": 1}}),
         "crm": ("crm.usage_report", lambda today: {})}


def _platform_json(content: bytes, content_type: str) -> bool:
    """A JSON object or array, as the platform answers; an HTML or text page is someone else's."""
    if "json" not in (content_type or "").lower():
        return False
    try:
        data = json.loads(content or b"null")
    except ValueError:
        return False
    return isinstance(data, (dict, list))


def outcome_of(exc: BaseException, service: str, operation: str = "") -> Check:
    """The row of a failed step."""
    row = functools.partial(Check, service, operation=getattr(exc, "operation", "") or operation)
    if isinstance(exc, CredentialsUnsendable):
        return row(UNSENDABLE, field=exc.field, detail=exc.user_message())
    if isinstance(exc, ApiKeyRequired):
        return row(NO_API_KEY)
    if isinstance(exc, RateLimited):
        if exc.local:
            return row(LIMITED, wait=exc.wait)
        return row(LIMITED, status=exc.status, wait=exc.wait, detail=exc.user_message())
    if isinstance(exc, RemoteError):
        detail = exc.user_message()
        if isinstance(exc, AuthenticationFailed) or exc.source == CREDENTIALS:
            return row(REFUSED_CREDENTIALS, status=exc.status, detail=detail)
        if exc.source == PERMISSION:
            return row(NO_PERMISSION, status=exc.status, detail=detail)
        if isinstance(exc, NoAnswer):
            return row(TIMED_OUT if exc.timed_out else UNREACHABLE, detail=detail)
        if exc.source == "network":
            return row(UNREACHABLE, detail=str(exc))
        if exc.status:
            return row(REFUSED, status=exc.status, detail=detail or f"HTTP {exc.status}")
        return row(BLOCKED, detail=str(exc))
    logger.exception("connection check of %s failed", service)
    return row(ERROR, detail=exc.__class__.__name__)


def check_read(transport, service: str, today: datetime.date, keep=None) -> Check:
    """One read; `keep(service, data)` receives a good answer (the usage report is rationed to one call per
    15 minutes: the caller keeps it instead of throwing the window's call away)."""
    operation, arguments = READS[service]
    try:
        content, content_type = transport.call(operation, raw=True, **arguments(today))
    except Exception as exc:  # noqa: BLE001 (every failure is a row, never a 500)
        return outcome_of(exc, service, operation)
    if not _platform_json(content, content_type):
        return Check(service, UNEXPECTED, status=200, detail=f"{content_type or 'no content type'}",
                     operation=operation)
    if keep is not None:
        try:
            keep(service, json.loads(content))
        except Exception:  # keeping is a bonus: the connection works all the same
            logger.exception("keeping the %s answer of a connection check failed", service)
    return Check(service, OK, status=200, operation=operation)


def check_connection(transport, *, today: datetime.date, services=SERVICES, keep=None) -> list[Check]:
    """The credentials row, then one row per service, in this order.

    Service user: the credentials row is a fresh token's answer; when refused, the reads are skipped.
    API key: nothing to ask for a key alone, so the reads check it: the credentials row says what they
    learnt (refused at the first 401, after which the other reads are skipped).
    """
    service_user = transport.config.auth_method == "service_user"
    rows = []
    if service_user:
        try:
            transport.authenticate()
            auth = Check(AUTH, OK, operation="auth.token")
        except Exception as exc:  # noqa: BLE001 (every failure is a row)
            auth = outcome_of(exc, AUTH, "auth.token")
        if auth.outcome != OK:
            return [auth] + [Check(service, SKIPPED) for service in services]
    else:
        try:
            transport.check_credentials()
            auth = None
        except CredentialsUnsendable as exc:
            return [outcome_of(exc, AUTH)] + [Check(service, SKIPPED) for service in services]
    refused = False
    for service in services:
        if refused:
            rows.append(Check(service, SKIPPED))
            continue
        row = check_read(transport, service, today, keep)
        refused = row.outcome == REFUSED_CREDENTIALS
        rows.append(row)
    if auth is None:  # API key: what the reads learnt of it
        if refused:
            first = next(row for row in rows if row.outcome == REFUSED_CREDENTIALS)
            auth = Check(AUTH, REFUSED_CREDENTIALS, status=first.status, detail=first.detail,
                         operation=first.operation)
        elif any(row.outcome in (OK, NO_PERMISSION) or (row.outcome == LIMITED and row.status) for row in rows):
            auth = Check(AUTH, OK)
        else:  # no read reached the platform: the key was not checked
            auth = Check(AUTH, SKIPPED)
    return [auth] + rows
