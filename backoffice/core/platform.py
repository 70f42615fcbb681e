"""Glue between a Company and the platform client of backoffice.remote."""

import contextlib
import contextvars
import logging
from datetime import timedelta
from urllib.parse import urlsplit

import django_rq
from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.translation import gettext as _

from backoffice.remote import connection, endpoints, ratelimit, tokens
from backoffice.remote.ratelimit import RateLimiter
from backoffice.remote.sessions import TransportPool
from backoffice.remote.tokens import RedisTokenStore
from backoffice.remote.transport import Transport, TransportConfig

from . import crypto
from .choices import service_label
from .failures import unsendable_text
from .models import Company, RemoteCall
from .registry import registry

logger = logging.getLogger(__name__)


def audit_for(company):
    """A transport audit hook that writes one RemoteCall row per HTTP call.

    A plain create: inside a caller's transaction that rolls back the row goes too (acceptable: the
    caller's own record of the attempt goes with it). The savepoint keeps a failed write from breaking
    the caller's transaction, and a failure is logged, never raised. Inside audits_in_bulk() the row is kept
    and written with others instead.
    """

    def audit(record: dict) -> None:
        try:
            row = RemoteCall(
                company_id=company.pk,  # the transport outlives this instance: only its pk counts
                service=record.get("service", "")[:20],
                operation=(record.get("operation") or "")[:60],
                method=record.get("method", "")[:8],
                path=(record.get("path") or "")[:500],
                status=record.get("status"),
                duration_ms=max(0, int(record.get("duration_ms") or 0)),
                correlation_id=(record.get("correlation_id") or "")[:100],
                request_excerpt=record.get("request_excerpt") or "",
                response_excerpt=record.get("response_excerpt") or "",
                error=record.get("error") or "",
            )
        except Exception:
            logger.exception("could not write the audit row of %s", record.get("operation"))
            return
        kept = _kept_audits.get()
        if kept is not None:
            kept.append(row)
        else:
            _write_audits([row])

    return audit


# The audit rows of this thread's calls not written yet, inside audits_in_bulk() (None outside).
_kept_audits: contextvars.ContextVar[list | None] = contextvars.ContextVar("kept_audits", default=None)


@contextlib.contextmanager
def audits_in_bulk():
    """Inside, the audit rows of this thread's (this context's) calls are kept and written together, by
    flush_audits() and at the end: one INSERT for a run of calls instead of one each (core.batch's lanes).
    Each row keeps the time of its call; rows of a process that dies before the flush are lost (the records'
    states, not the audit, decide what is sent again)."""
    token = _kept_audits.set([])
    try:
        yield
    finally:
        try:
            flush_audits()
        finally:
            _kept_audits.reset(token)


def flush_audits() -> None:
    """Write the audit rows kept by audits_in_bulk() so far (nothing outside it)."""
    kept = _kept_audits.get()
    if kept:
        rows = kept[:]
        kept.clear()
        _write_audits(rows)


def _write_audits(rows) -> None:
    try:
        with transaction.atomic():
            if len(rows) == 1:
                rows[0].save()
            else:
                RemoteCall.objects.bulk_create(rows)
    except Exception:
        logger.exception("could not write the audit rows of %s", ", ".join(sorted({row.operation for row in rows})))


def limiter() -> RateLimiter:
    return RateLimiter(django_rq.get_connection("default"), scale=settings.RATE_LIMIT_SCALE,
                       prefix=getattr(settings, "RATE_LIMIT_KEY_PREFIX", "ratelimit"))


def endpoint_of(operation: str) -> endpoints.Endpoint:
    """The operation's method and path, with the deployment's overrides (settings.PLATFORM_ENDPOINTS)."""
    return endpoints.resolve(operation, getattr(settings, "PLATFORM_ENDPOINTS", {}) or {})


def rate_rule(operation: str) -> ratelimit.Rule | None:
    """The documented rate limit of the operation (a ratelimit rule), or None where the documents give none."""
    endpoint = endpoint_of(operation)
    return ratelimit.rule_for(endpoint.method, endpoint.path)


def trusted_origins() -> set[str]:
    """scheme://host[:port] of every URL the operator set (settings.PLATFORM_ENVIRONMENTS, SANDBOX_URL)."""
    return {origin(url) for urls in settings.PLATFORM_ENVIRONMENTS.values() for url in urls.values()}


def origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def typed_urls(company) -> list[str]:
    """The company's own service URLs (typed in the company form) that do not point at an origin the
    operator configured: these go through backoffice.remote.netguard at every call."""
    trusted = trusted_origins()
    return [url for url in company.typed_base_urls() if origin(url) not in trusted]


def transport_config(company, *, interactive=False) -> TransportConfig:
    connect, read = settings.PLATFORM_TIMEOUT
    return TransportConfig(
        company_key=str(company.pk),
        tier=company.tier,
        base_urls=company.base_urls,
        auth_method=company.auth_method,
        api_key=company.api_key or "",
        username=company.service_username or "",
        password=company.service_password or "",
        # A user waiting in the browser gets one attempt and a short read timeout, never three slow tries.
        timeout=(connect, min(read, settings.PLATFORM_INTERACTIVE_READ_TIMEOUT)) if interactive else (connect, read),
        max_retries=0 if interactive else TransportConfig.max_retries,
        endpoints=dict(getattr(settings, "PLATFORM_ENDPOINTS", {}) or {}),
        guarded_urls=tuple(typed_urls(company)),
        allowed_hosts=tuple(settings.PLATFORM_ALLOWED_HOSTS),
    )


# One Session per company and process, the transports over it (backoffice.remote.sessions).
_pool = TransportPool()
_token_stores: dict[tuple, RedisTokenStore] = {}


def token_store() -> RedisTokenStore:
    """The bearer tokens of every process of the deployment: in the queue's Redis, encrypted with the field
    key (core.crypto), under keys hashed with SECRET_KEY (issue 11)."""
    prefix = getattr(settings, "PLATFORM_TOKEN_KEY_PREFIX", "platform-token")
    spec = (repr(settings.RQ_QUEUES.get("default")), prefix)
    store = _token_stores.get(spec)
    if store is None:  # no lock (none to inherit held in a forked child): two threads may make one each, once
        store = _token_stores.setdefault(spec, RedisTokenStore(
            django_rq.get_connection("default"), crypto.encrypt, crypto.decrypt, prefix=prefix,
            key_secret=settings.SECRET_KEY.encode()))
    return store


# forget_tokens() (tests) clears the shared store even in a process that has not used it yet.
tokens.on_forget(lambda: token_store().clear())


def transport_for(company, *, interactive=False) -> Transport:
    """The company's transport in this process: its credentials, tier, base URLs, shared limiter, audit and
    token store, over the company's one Session. Built again when any of these changes.
    interactive=True for a call a user waits for in the browser (one attempt, short read timeout)."""
    config = transport_config(company, interactive=interactive)
    store = token_store()

    def build(session=None):
        return Transport(config, audit=audit_for(company), limiter=limiter(), session=session, token_store=store)

    if company.pk is None:  # not saved (nothing to key it by): a transport of its own
        return build()
    limits = (settings.RATE_LIMIT_SCALE, getattr(settings, "RATE_LIMIT_KEY_PREFIX", "ratelimit"),
              repr(settings.RQ_QUEUES.get("default")))
    return _pool.transport(str(company.pk), config, build, variant="interactive" if interactive else "",
                           extra=(limits, store))


def client_for(company, client_class, *, interactive=False):
    """The client of one service over the company's transport (transport_for), e.g.
    client_for(company, EventTicketClient): each domain names the client it owns."""
    return client_class(transport_for(company, interactive=interactive))


# --- "Test the connection" -------------------------------------------------------------------------------

def register_connection_keeper(service: str, keep) -> None:
    """keep(company, data): what a domain does with a good answer of the connection test's read of `service`
    (subcompanies keeps the usage report, whose one call per 15 minutes the test used)."""
    registry["connection_keepers"][service] = keep


def connection_test(company) -> dict:
    """Check the company's connection now, as a user waits (interactive client): a token or the API key,
    then one harmless read per service (backoffice.remote.connection). Keeps and returns the result
    {"auth_method", "checks": [...]} on the company; never raises for what the platform, the network or
    our guards do."""
    keepers = registry["connection_keepers"]
    try:
        checks = connection.check_connection(
            transport_for(company, interactive=True), today=timezone.localdate(),
            keep=lambda service, data: keepers[service](company, data) if service in keepers else None)
    except Exception:  # building the client (settings, Redis): still a result, never a 500
        logger.exception("connection test of company %s failed", company.pk)
        checks = [connection.Check(connection.AUTH, connection.ERROR, detail="configuration")]
    result = {"auth_method": company.auth_method, "checks": [check.as_dict() for check in checks]}
    now = timezone.now()
    Company.objects.filter(pk=company.pk).update(connection_check=result, connection_checked_at=now)
    company.connection_check, company.connection_checked_at = result, now
    return result


def connection_ok(result: dict) -> bool:
    checks = (result or {}).get("checks") or []
    return bool(checks) and all(check.get("outcome") in (connection.OK, connection.LIMITED, connection.NO_API_KEY)
                                   for check in checks)


_COLORS = {
    connection.OK: "success", connection.REFUSED_CREDENTIALS: "danger", connection.NO_PERMISSION: "danger",
    connection.UNSENDABLE: "danger", connection.REFUSED: "danger", connection.UNEXPECTED: "danger",
    connection.BLOCKED: "danger", connection.ERROR: "danger", connection.UNREACHABLE: "warning",
    connection.TIMED_OUT: "warning", connection.LIMITED: "info", connection.SKIPPED: "secondary",
    connection.NO_API_KEY: "warning",
}


def _service_label(service: str, auth_method: str) -> str:
    if service == connection.AUTH:
        return _("API key") if auth_method != "service_user" else _("Service user (token)")
    return str(service_label(service))


def _outcome_label(outcome: str) -> str:
    return {
        connection.OK: _("working"), connection.REFUSED_CREDENTIALS: _("credentials refused"),
        connection.NO_PERMISSION: _("no permission"), connection.UNREACHABLE: _("not reachable"),
        connection.TIMED_OUT: _("timed out"), connection.REFUSED: _("refused"),
        connection.UNEXPECTED: _("unexpected answer"), connection.LIMITED: _("not checked now"),
        connection.UNSENDABLE: _("cannot be sent"), connection.BLOCKED: _("stopped here"),
        connection.SKIPPED: _("not tried"), connection.ERROR: _("error here"), connection.NO_API_KEY: _("no API key"),
    }.get(outcome, outcome)


def _fixed_texts() -> dict:
    """What to do after the outcomes whose advice does not depend on the check, in the active language."""
    return {
        connection.NO_PERMISSION: _(
            "The credentials were accepted, but they may not use this service. Have the permission granted in the "
            "platform's portal (for ticket reports: the e-ticket listing permission) and test again."),
        connection.UNREACHABLE: _(
            "No connection to the service could be made. Check the environment and the service URLs of the "
            "company; if they are right, the platform or the network may be down: test again later."),
        connection.TIMED_OUT: _(
            "The service did not answer in time. The platform may be slow right now: test again in a few minutes."),
        connection.UNEXPECTED: _(
            "Something answered, but not as the platform does (not JSON). Check the service URL of the company: it "
            "may point at a web page or a proxy."),
        connection.NO_API_KEY: _(
            "Company management takes only an API key and this company has none, so it was not tried. Add the API "
            "key in the company's form to manage sub-companies and credit offers here."),
    }


def _outcome_text(check: dict, auth_method: str, checked_at) -> str:
    outcome, service = check.get("outcome"), check.get("service")
    is_auth = service == connection.AUTH
    fixed = _fixed_texts().get(outcome)
    if fixed:
        return fixed
    if outcome == connection.OK:
        return _("The platform accepted the credentials.") if is_auth else _("The platform answered a read.")
    if outcome == connection.REFUSED_CREDENTIALS:
        if not is_auth:
            return _("The platform refused the credentials for this service; what to do is on the first line.")
        if auth_method == "service_user":
            return _("The platform refused the service user name or password. Check them in the user management "
                     "module of the platform's portal, correct them in the company's form and test again.")
        return _("The platform refused the API key. Copy the key again from the API management module of the "
                 "platform's portal, paste it in the company's form and test again.")
    if outcome == connection.REFUSED:
        return _("The service answered with an error (%(answer)s). If it persists, check the service URL of the "
                 "company or ask the platform's support.") % {"answer": check.get("detail") or check.get("status")}
    if outcome == connection.LIMITED:
        after = checked_at + timedelta(seconds=check.get("wait") or 0) if checked_at else None
        when = date_format(timezone.localtime(after), "H:i") if after else "—"
        if check.get("status"):
            return _("The platform answered but asks to wait (too many requests); the connection works. Test again "
                     "after %(time)s.") % {"time": when}
        return _("The platform allows this read only a few times per period and it was used recently; test again "
                 "after %(time)s.") % {"time": when}
    if outcome == connection.UNSENDABLE:
        return unsendable_text(check.get("field") or "")
    if outcome == connection.BLOCKED:
        return _("The back-office did not send this read: %(reason)s. Check the company's service URLs and the "
                 "settings.") % {"reason": check.get("detail") or "—"}
    if outcome == connection.SKIPPED:
        if is_auth:
            return _("The API key could not be checked because no service could be reached.")
        return _("Not tried: the credentials must work first.")
    return _("An unexpected error of the back-office (%(error)s); the details are in the server's log.") % {
        "error": check.get("detail") or "—"}


def connection_rows(company) -> list[dict]:
    """The last connection test of the company, worded in the active language: one row per check."""
    result = company.connection_check or {}
    auth_method = result.get("auth_method") or company.auth_method
    rows = []
    for check in result.get("checks") or []:
        outcome = check.get("outcome", "")
        rows.append({"service": check.get("service", ""), "outcome": outcome,
                     "label": _service_label(check.get("service", ""), auth_method),
                     "state": _outcome_label(outcome), "color": _COLORS.get(outcome, "secondary"),
                     "text": _outcome_text(check, auth_method, company.connection_checked_at)})
    return rows
