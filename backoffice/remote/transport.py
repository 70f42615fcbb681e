"""HTTP transport of the platform: authentication, timeouts, retries, rate limits, errors, audit.

Plain Python (requests): remote/ knows no Django model. backoffice.core.platform.client_for()
builds a Transport from a Company (one per company and process, over one Session: remote/sessions.py).
A Transport is shared by the threads of a process: nothing of one call is kept on it.
"""

import collections
import datetime
import json as jsonlib
import logging
import time
import uuid
from dataclasses import dataclass, field
from decimal import Decimal
from email.utils import parsedate_to_datetime
from urllib.parse import urlencode

import requests
import urllib3.exceptions

from . import endpoints as endpoint_table
from . import tokens
from .errors import (
    LOCAL,
    ApiKeyRequired,
    NETWORK,
    PLATFORM,
    AuthenticationFailed,
    CredentialsUnsendable,
    MaybeSent,
    NoAnswer,
    RateLimited,
    RemoteError,
)
from .netguard import guard_session
from .redaction import excerpt, redact
from .refusals import parse_error, refusal_in
from .sessions import new_session

logger = logging.getLogger(__name__)

API_KEY = "api_key"
SERVICE_USER = "service_user"
CLIENT_ID = "serviceApi"  # document 1, section 5
# Retry-After missing on a 429: wait this long rather than hammer the platform.
DEFAULT_RETRY_AFTER = 60.0


@dataclass
class TransportConfig:
    company_key: str
    tier: int
    base_urls: dict[str, str]
    auth_method: str = API_KEY  # "api_key" or "service_user"
    api_key: str = field(default="", repr=False)
    username: str = ""
    password: str = field(default="", repr=False)
    timeout: tuple[float, float] = (5, 30)  # (connect, read) seconds
    max_retries: int = 3
    backoff: float = 0.5
    # settings.PLATFORM_ENDPOINTS: {operation name: (method, path)}
    endpoints: dict = field(default_factory=dict)
    # Base URLs a user typed (not from settings): called only through netguard's checks, on these hosts.
    guarded_urls: tuple[str, ...] = ()
    allowed_hosts: tuple[str, ...] = ()


def forget_tokens() -> None:
    """Drop every cached token, the shared store's included (tests; a changed credential is a new key anyway)."""
    tokens.forget_all()


def printable_ascii(value: str) -> bool:
    """Whether a credential can travel in a request: printable ASCII only (space to ~). An HTTP header
    cannot carry other characters (requests fails with UnicodeEncodeError or InvalidHeader), and the
    platform's portal issues keys, user names and passwords of these characters."""
    return all(" " <= ch <= "~" for ch in value or "")


def _token_lifetime(expires_in) -> float:
    """Seconds to keep a token: expires_in (a string holding seconds) less 60 s of safety.

    Very short lifetimes (test set-ups) keep half instead, so that a token is still reused.
    """
    try:
        seconds = int(float(expires_in))
    except (TypeError, ValueError):
        seconds = 3600
    return seconds - min(60, seconds / 2)


def _retry_after(value) -> float:
    if not value:
        return DEFAULT_RETRY_AFTER
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return DEFAULT_RETRY_AFTER


def jsonable(value):
    """A body with dates, Decimals and UUIDs in the JSON forms the platform takes (Transport.call's `json`)."""
    if isinstance(value, dict):
        return {key: jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(item) for item in value]
    if isinstance(value, (datetime.date, datetime.datetime, datetime.time)):
        return value.isoformat()
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    return value


def _is_json(content: bytes) -> bool:
    try:
        jsonlib.loads(content)
    except ValueError:
        return False
    return True


def _never_sent(exc: requests.RequestException) -> bool:
    """True when the request cannot have reached the platform (no connection was made)."""
    if isinstance(exc, requests.ConnectTimeout):
        return True
    reason = exc.args[0] if exc.args else None
    reason = getattr(reason, "reason", reason)  # MaxRetryError wraps the cause
    return isinstance(reason, (urllib3.exceptions.NewConnectionError, urllib3.exceptions.NameResolutionError))


def _no_answer(exc: requests.RequestException, endpoint, operation) -> RemoteError:
    """The error of a call that got no answer: never sent, maybe sent (a POST), or no answer to a read."""
    if _never_sent(exc):
        return RemoteError(f"{operation}: cannot reach the platform ({type(exc).__name__})", operation=operation,
                           source=NETWORK)
    if not endpoint.idempotent:
        return MaybeSent(operation=operation)
    timed_out = isinstance(exc, requests.Timeout)
    what = "did not answer in time" if timed_out else "dropped the connection"
    return NoAnswer(f"{operation}: the platform {what}", operation=operation, timed_out=timed_out)


class Transport:
    def __init__(self, config: TransportConfig, *, audit=None, limiter=None, session=None, token_store=None):
        """session: the company's shared Session (guards of typed URLs are mounted where missing);
        token_store: where bearer tokens are kept (remote/tokens.py; this process's store by default)."""
        self.config = config
        self.audit = audit
        self.limiter = limiter
        self.session = guard_session(session, config.guarded_urls, config.allowed_hosts) if session else \
            new_session(config.guarded_urls, config.allowed_hosts)
        self.token_store = token_store or tokens.DEFAULT_STORE
        self._token = ""  # the last token used, and a few before it: redacted wherever they could show
        self._seen_tokens = collections.deque(maxlen=4)

    # --- public ---------------------------------------------------------------------------------------
    def call(self, operation, *, path_params=None, params=None, json=None, data=None, files=None, headers=None,
             raw=False):
        """Call one operation of the endpoint table.

        Returns the parsed JSON (None for an empty body), or (bytes, content_type) with raw=True.
        Raises RateLimited (our limiter or a 429), AuthenticationFailed, MaybeSent (a POST that may
        have arrived), RemoteError (permanent for 4xx and for a 2xx whose body carries an Error, raw
        downloads included; transient for 5xx and network trouble).
        """
        endpoint = endpoint_table.resolve(operation, self.config.endpoints)
        json = jsonable(json)
        path = endpoint_table.fill_path(endpoint.path, path_params)
        url = self._base_url(endpoint.service) + path
        bearer = self.config.auth_method == SERVICE_USER and endpoint.service not in endpoint_table.API_KEY_ONLY
        self.check_credentials(operation, bearer=bearer)  # before the limiter: a call that cannot go uses no slot
        retries = 0
        renewed = False
        while True:
            self._ask_limiter(endpoint, path)
            auth_headers, token = self._auth_headers(bearer)
            if hasattr(data, "seek"):  # a streamed body sent again (a renewed token): from its start
                data.seek(0)
            try:
                response = self._send(endpoint, path, url, params=params, json=json, data=data, files=files,
                                      headers={**(headers or {}), **auth_headers})
            except requests.RequestException as exc:
                if endpoint.idempotent and retries < self.config.max_retries:
                    retries = self._pause(retries)
                    continue
                raise _no_answer(exc, endpoint, operation) from None

            status = response.status_code
            if status == 401:
                if bearer and not renewed:
                    # Expired: drop only this token (another caller may have renewed it), ask once, retry once.
                    self.token_store.drop(self._token_key(), token)
                    renewed = True
                    continue
                raise self._error(AuthenticationFailed, response, operation,
                                  message=self._auth_message(operation, bearer))
            if status == 429:
                raise self._error(RateLimited, response, operation, _retry_after(response.headers.get("Retry-After")),
                                  local=False)
            if status >= 500:
                if endpoint.idempotent and retries < self.config.max_retries:
                    retries = self._pause(retries)
                    continue
                raise self._error(RemoteError, response, operation, permanent=False)
            if status >= 400:
                raise self._error(RemoteError, response, operation, permanent=True)
            if 300 <= status < 400:  # never followed: credentials must not travel to where a redirect points
                raise RemoteError(f"{operation}: the platform answered with a redirect (HTTP {status}), which is "
                                  "not followed; check the service URL", status=status, permanent=True,
                                  operation=operation, source=LOCAL)
            if refusal_in(response.content) is not None:  # "null, or Error": a refusal though the status says 2xx
                raise self._error(RemoteError, response, operation, permanent=True, source=PLATFORM)
            if raw:
                return response.content, response.headers.get("Content-Type", "")
            return self._parse(response)

    # --- authentication -------------------------------------------------------------------------------
    def check_credentials(self, operation="", *, bearer=None) -> None:
        """Raise CredentialsUnsendable when a credential the call needs cannot be sent (not printable ASCII):
        our own clear, permanent error instead of a UnicodeEncodeError from the depths of http.client, and
        nothing sent; ApiKeyRequired when an API-key-only service is called without one.
        bearer: whether the call goes with the service user's token (default: the company's method)."""
        if bearer is None:
            bearer = self.config.auth_method == SERVICE_USER
        if bearer:
            fields = (("service_username", self.config.username), ("service_password", self.config.password))
        else:
            if not self.config.api_key and self.config.auth_method == SERVICE_USER:
                raise ApiKeyRequired(operation=operation)
            fields = (("api_key", self.config.api_key),)
        for name, value in fields:
            if not printable_ascii(value):
                raise CredentialsUnsendable(name, operation=operation)

    def authenticate(self) -> None:
        """Check the credentials now (the connection test): a service user gets a new token (the cached one
        is not trusted); an API key has nothing to ask for and is checked by the platform at the next call.
        Raises CredentialsUnsendable, AuthenticationFailed or RemoteError."""
        self.check_credentials("auth.token" if self.config.auth_method == SERVICE_USER else "")
        if self.config.auth_method == SERVICE_USER:
            self._bearer_token(fresh=True)

    def _auth_headers(self, bearer: bool) -> tuple[dict, str]:
        """The credential headers of one call, and the bearer token they carry ("" with an API key)."""
        if bearer:
            token = self._bearer_token()
            return {"Authorization": f"Bearer {token}"}, token
        return {"x-api-key": self.config.api_key}, ""

    def _auth_message(self, operation, bearer) -> str:
        if bearer:
            return (f"{operation}: the platform refused the service user's token (HTTP 401) even after a new "
                    f"token was issued; check the service user and its permissions")
        return f"{operation}: the platform refused the API key (HTTP 401); check the company's API key"

    def _token_url(self) -> str:
        return self._base_url("auth") + endpoint_table.resolve("auth.token", self.config.endpoints).path

    def _token_key(self) -> tuple:
        return tokens.token_key(self._token_url(), self.config.username, self.config.password)

    def _token_wait(self) -> float:
        """How long a caller waits for another's token fetch: that fetch's own time limit, and a little."""
        return sum(self.config.timeout) + 5

    def _bearer_token(self, *, fresh: bool = False) -> str:
        """The stored token, or a new one when none is stored or when fresh (the stored one is not trusted)."""
        key = self._token_key()
        token = None if fresh else self.token_store.get(key)
        if not token:
            # One fetch per key at a time: whoever waited for it reuses the token it brought.
            with self.token_store.lock(key, self._token_wait()):
                token = None if fresh else self.token_store.get(key)
                if not token:
                    token, lifetime = self._fetch_token()
                    self.token_store.put(key, token, lifetime)
        return self._remember(token)

    def _remember(self, token: str) -> str:
        if token not in self._seen_tokens:
            self._seen_tokens.append(token)
        self._token = token
        return token

    def _fetch_token(self) -> tuple[str, float]:
        endpoint = endpoint_table.resolve("auth.token", self.config.endpoints)
        url = self._token_url()
        form = {"username": self.config.username, "password": self.config.password, "client_id": CLIENT_ID}
        try:
            response = self._send(endpoint, endpoint.path, url, data=form, headers={"Cache-Control": "no-cache"})
        except requests.RequestException as exc:
            raise NoAnswer(f"auth.token: cannot reach the token issuer ({type(exc).__name__})",
                           operation="auth.token", timed_out=isinstance(exc, requests.Timeout)) from None
        if response.status_code in (400, 401, 403):
            raise self._error(AuthenticationFailed, response, "auth.token",
                              message="auth.token: the token issuer refused the service user name or password "
                                      f"(HTTP {response.status_code})")
        if response.status_code >= 300:
            raise self._error(RemoteError, response, "auth.token", permanent=response.status_code < 500)
        try:
            body = response.json()
            token = body["access_token"]
        except (ValueError, KeyError, TypeError):
            raise AuthenticationFailed("auth.token: the token issuer's answer has no access_token",
                                       status=response.status_code, operation="auth.token", source=PLATFORM) from None
        if not token or not isinstance(token, str):
            raise AuthenticationFailed("auth.token: the token issuer returned an empty token", operation="auth.token",
                                       source=PLATFORM)
        if not printable_ascii(token):
            raise AuthenticationFailed("auth.token: the token issuer returned a token that cannot be sent in a header",
                                       operation="auth.token", source=PLATFORM)
        return token, _token_lifetime(body.get("expires_in"))

    # --- plumbing -------------------------------------------------------------------------------------
    def _base_url(self, service: str) -> str:
        try:
            return self.config.base_urls[service].rstrip("/")
        except KeyError:
            raise RemoteError(f"no base URL for the {service} service", permanent=True) from None

    def _ask_limiter(self, endpoint, path) -> None:
        if self.limiter is None:
            return
        try:
            wait = self.limiter.acquire(self.config.company_key, self.config.tier, endpoint.method, path)
        except Exception as exc:  # noqa: BLE001 (Redis down, whatever the error): never send unthrottled
            raise RemoteError(f"rate limiter unavailable ({type(exc).__name__})", operation=endpoint.name) from None
        if wait > 0:
            logger.debug("%s held back by the rate limiter for %.1f s", endpoint.name, wait)
            raise RateLimited(wait, local=True, operation=endpoint.name)

    def _pause(self, retries: int) -> int:
        time.sleep(self.config.backoff * (2**retries))
        return retries + 1

    def _secrets(self) -> list[str]:
        return [s for s in (self.config.api_key, self.config.password, *tuple(self._seen_tokens)) if s]

    def _send(self, endpoint, path, url, *, params=None, json=None, data=None, files=None, headers=None):
        """One HTTP request, audited whatever happens."""
        started = time.monotonic()
        response = None
        error = ""
        try:
            response = self.session.request(endpoint.method, url, params=params, json=json, data=data, files=files,
                                            headers=headers, timeout=self.config.timeout, allow_redirects=False)
            return response
        except requests.RequestException as exc:
            error = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            duration_ms = int((time.monotonic() - started) * 1000)
            status = response.status_code if response is not None else None
            logger.debug("%s %s %s -> %s in %d ms", endpoint.method, endpoint.service, path, status or "no answer",
                         duration_ms)
            self._audit({
                "service": endpoint.service,
                "operation": endpoint.name,
                "method": endpoint.method,
                "path": path,
                "status": status,
                "duration_ms": duration_ms,
                "correlation_id": response.headers.get("X-Correlation-Id", "") if response is not None else "",
                "request_excerpt": excerpt(self._describe_request(params, json, data, files), self._secrets()),
                "response_excerpt": excerpt(self._describe_response(response), self._secrets()),
                "error": excerpt(error or self._response_error(response), self._secrets()),
            })

    def _audit(self, record: dict) -> None:
        if self.audit is None:
            return
        try:
            self.audit(record)
        except Exception:  # the audit must never break the call
            logger.exception("audit of %s failed", record.get("operation"))

    @staticmethod
    def _describe_request(params, json, data, files) -> str:
        parts = []
        if params:
            parts.append("?" + urlencode(params, doseq=True))
        if json is not None:
            parts.append(jsonlib.dumps(json, ensure_ascii=False, default=str))
        if data is not None:
            parts.append(urlencode(data, doseq=True) if isinstance(data, dict) else
                         f"<{len(data)} bytes>" if isinstance(data, (bytes, bytearray)) else str(data))
        if files:
            parts.append("files: " + ", ".join(str(name) for name in files))
        return "\n".join(parts)

    @staticmethod
    def _describe_response(response) -> str:
        """What the audit keeps of an answer: the platform's own JSON (first 4,000 characters); of anything
        else (HTML pages, files, a login page of whatever host answered) only its size and type."""
        if response is None:
            return ""
        content_type = response.headers.get("Content-Type", "")
        if "json" in content_type.lower() and _is_json(response.content):
            return response.content[:4000].decode("utf-8", errors="replace")
        return f"<{len(response.content)} bytes {content_type or 'without a content type'}>"

    @staticmethod
    def _response_error(response) -> str:
        if response is None or (response.status_code < 400 and refusal_in(response.content) is None):
            return ""
        title, detail, _ = parse_error(response.content)
        return ": ".join(p for p in (f"HTTP {response.status_code}", title, detail) if p)

    def _error(self, cls, response, operation, *args, message="", **kwargs):
        """An error of class cls from a platform answer: its title / detail / Error text, redacted."""
        title, detail, body = parse_error(response.content)
        secrets = self._secrets()
        if message:
            kwargs["message"] = redact(message, secrets)
        return cls(*args, status=response.status_code, title=redact(title, secrets), detail=redact(detail, secrets),
                   correlation_id=response.headers.get("X-Correlation-Id", ""), body=body, operation=operation,
                   **kwargs)

    @staticmethod
    def _parse(response):
        if not response.content or not response.content.strip():
            return None
        try:
            return response.json()
        except ValueError:
            return response.text
