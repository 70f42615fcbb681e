"""Errors of the platform client. Plain Python: remote/ knows no Django model."""


class RemoteError(Exception):
    """The platform refused or failed a call.

    permanent: True when sending the same request again cannot succeed (validation, 4xx); the record
    goes to FAILED with the message. False for 5xx, timeouts and connection errors: retry later.
    """

    def __init__(self, message="", *, status=None, permanent=False, title="", detail="", correlation_id="",
                 body=None, operation=""):
        self.status = status
        self.permanent = permanent
        self.title = title or ""
        self.detail = detail or ""
        self.correlation_id = correlation_id or ""
        self.body = body
        self.operation = operation
        super().__init__(message or self.user_message())

    def user_message(self) -> str:
        """The platform's own words when it gave any (title / detail / Error text), else the status."""
        parts = [p for p in (self.title, self.detail) if p]
        if parts:
            return ": ".join(parts)
        if self.status:
            return f"HTTP {self.status}"
        return self.__class__.__name__


class RateLimited(RemoteError):
    """Wait `wait` seconds before calling again. local=True: our own limiter stopped the call before
    it was sent (the normal case); False: the platform answered 429."""

    def __init__(self, wait: float, *, local=True, **kwargs):
        self.wait = max(0.0, float(wait))
        self.local = local
        kwargs.setdefault("status", None if local else 429)
        super().__init__(f"rate limited: wait {self.wait:.1f} s", permanent=False, **kwargs)


class AuthenticationFailed(RemoteError):
    """Credentials refused (401 that persists after one renewal, or a token request refused)."""

    def __init__(self, message="", **kwargs):
        kwargs.setdefault("permanent", True)
        super().__init__(message, **kwargs)


class NoAnswer(RemoteError):
    """A call that may be repeated got no answer in time (or the connection dropped): transient."""

    def __init__(self, message="", **kwargs):
        kwargs.setdefault("permanent", False)
        super().__init__(message or "the platform did not answer in time", **kwargs)

    def user_message(self) -> str:
        return str(self.args[0]) if self.args else "the platform did not answer in time"


class MaybeSent(RemoteError):
    """A non-idempotent call timed out after the request was sent: the platform may have acted on it.

    Never repeat it blindly: ask the platform first (status / lookup) and reconcile.
    """

    def __init__(self, message="", **kwargs):
        kwargs.setdefault("permanent", False)
        super().__init__(message or "the call timed out after it was sent; the platform may have received it", **kwargs)
