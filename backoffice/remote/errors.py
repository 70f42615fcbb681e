"""Errors of the platform client. Plain Python: remote/ knows no Django model."""

# Where a failure comes from (RemoteError.source), so that our own failures are never shown as the
# platform's refusal:
PLATFORM = "platform"  # the platform answered with a refusal or an error (HTTP 4xx other than 401/403, 5xx, 429)
CREDENTIALS = "credentials"  # the platform refused the company's credentials (401, a token refused)
PERMISSION = "permission"  # the credentials were accepted but lack a permission (403)
NETWORK = "network"  # no answer: the platform could not be reached, or did not answer in time
LOCAL = "local"  # stopped here, before or without the platform (our rules, settings, a bug)
SOURCES = (PLATFORM, CREDENTIALS, PERMISSION, NETWORK, LOCAL)


class RemoteError(Exception):
    """The platform refused or failed a call.

    permanent: True when sending the same request again cannot succeed (validation, 4xx); the record
    goes to FAILED with the message. False for 5xx, timeouts and connection errors: retry later.
    source: one of SOURCES; by default from the HTTP status (none: LOCAL).
    """

    def __init__(self, message="", *, status=None, permanent=False, title="", detail="", correlation_id="",
                 body=None, operation="", source=None):
        self.status = status
        self.permanent = permanent
        self.title = title or ""
        self.detail = detail or ""
        self.correlation_id = correlation_id or ""
        self.body = body
        self.operation = operation
        self.source = source or self._source_from_status()
        super().__init__(message or self.user_message())

    def _source_from_status(self) -> str:
        if self.status == 401:
            return CREDENTIALS
        if self.status == 403:
            return PERMISSION
        if self.status and self.status >= 400:
            return PLATFORM
        return LOCAL

    def user_message(self) -> str:
        """The platform's own words when it gave any (title / detail / Error text), else the status."""
        parts = [p for p in (self.title, self.detail) if p]
        if parts:
            return ": ".join(parts)
        if self.status:
            return f"HTTP {self.status}"
        if self.args and self.args[0]:  # our own words ("cannot reach the platform (ConnectionError)")
            return str(self.args[0])
        return self.__class__.__name__


class RateLimited(RemoteError):
    """Wait `wait` seconds before calling again. local=True: our own limiter stopped the call before
    it was sent (the normal case); False: the platform answered 429."""

    def __init__(self, wait: float, *, local=True, **kwargs):
        self.wait = max(0.0, float(wait))
        self.local = local
        kwargs.setdefault("status", None if local else 429)
        kwargs.setdefault("source", LOCAL if local else PLATFORM)
        super().__init__(f"rate limited: wait {self.wait:.1f} s", permanent=False, **kwargs)


class AuthenticationFailed(RemoteError):
    """Credentials refused (401 that persists after one renewal, or a token request refused)."""

    def __init__(self, message="", **kwargs):
        kwargs.setdefault("permanent", True)
        kwargs.setdefault("source", CREDENTIALS)
        super().__init__(message, **kwargs)


# The credential fields of a company, as the messages name them.
CREDENTIAL_FIELDS = {"api_key": "API key", "service_username": "service user name",
                     "service_password": "service user password"}


class CredentialsUnsendable(RemoteError):
    """A credential holds characters that cannot travel in the request (only printable ASCII can): refused
    here, before anything is sent. Permanent, and ours (LOCAL), never the platform's refusal.

    field: "api_key", "service_username" or "service_password" (the company's field to correct).
    """

    def __init__(self, field: str, *, operation="", **kwargs):
        self.field = field
        kwargs.setdefault("permanent", True)
        kwargs.setdefault("source", LOCAL)
        words = CREDENTIAL_FIELDS.get(field, field)
        prefix = f"{operation}: " if operation else ""
        super().__init__(f"{prefix}the company's {words} contains characters that cannot be sent (only printable "
                         f"ASCII letters, digits and signs can); nothing was sent to the platform",
                         operation=operation, **kwargs)

    def user_message(self) -> str:
        return str(self.args[0]) if self.args else "the company's credentials cannot be sent"


class NoAnswer(RemoteError):
    """A call that may be repeated got no answer in time (or the connection dropped): transient.
    timed_out: True when no answer came in time, False when the connection dropped."""

    def __init__(self, message="", *, timed_out=True, **kwargs):
        self.timed_out = timed_out
        kwargs.setdefault("permanent", False)
        kwargs.setdefault("source", NETWORK)
        super().__init__(message or "the platform did not answer in time", **kwargs)

    def user_message(self) -> str:
        return str(self.args[0]) if self.args else "the platform did not answer in time"


class MaybeSent(RemoteError):
    """A non-idempotent call timed out after the request was sent: the platform may have acted on it.

    Never repeat it blindly: ask the platform first (status / lookup) and reconcile.
    """

    def __init__(self, message="", **kwargs):
        kwargs.setdefault("permanent", False)
        kwargs.setdefault("source", NETWORK)
        super().__init__(message or "the call timed out after it was sent; the platform may have received it", **kwargs)


class ApiKeyRequired(RemoteError):
    """A call to a service that takes only an API key (company management, document 1, section 5, rule 2)
    for a company that has none: refused here, nothing sent. Permanent, and ours (LOCAL)."""

    def __init__(self, *, operation="", **kwargs):
        kwargs.setdefault("permanent", True)
        kwargs.setdefault("source", LOCAL)
        prefix = f"{operation}: " if operation else ""
        super().__init__(f"{prefix}the company-management service takes only an API key and the company has none; "
                         "nothing was sent to the platform", operation=operation, **kwargs)
