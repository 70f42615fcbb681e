"""Glue between a Company and the platform client of backoffice.remote."""

import logging
from urllib.parse import urlsplit

import django_rq
from django.conf import settings
from django.db import transaction

from backoffice.remote.client import PlatformClient
from backoffice.remote.ratelimit import RateLimiter
from backoffice.remote.transport import Transport, TransportConfig

from .models import RemoteCall

logger = logging.getLogger(__name__)


def audit_for(company):
    """A transport audit hook that writes one RemoteCall row per HTTP call.

    A plain create: inside a caller's transaction that rolls back the row goes too (acceptable: the
    caller's own record of the attempt goes with it). The savepoint keeps a failed write from breaking
    the caller's transaction, and a failure is logged, never raised.
    """

    def audit(record: dict) -> None:
        try:
            with transaction.atomic():
                RemoteCall.objects.create(
                    company=company,
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

    return audit


def limiter() -> RateLimiter:
    return RateLimiter(django_rq.get_connection("default"), scale=settings.RATE_LIMIT_SCALE,
                       prefix=getattr(settings, "RATE_LIMIT_KEY_PREFIX", "ratelimit"))


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


def client_for(company, *, interactive=False) -> PlatformClient:
    """The platform client of a company: its credentials, tier, base URLs, shared limiter and audit.
    interactive=True for a call a user waits for in the browser (one attempt, short read timeout)."""
    return PlatformClient(Transport(transport_config(company, interactive=interactive), audit=audit_for(company),
                                    limiter=limiter()))
