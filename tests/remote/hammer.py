"""A worker process for the shared-limiter test: its own Transport and RateLimiter, the test run's Redis.

Imports only backoffice.remote (no Django), as a worker's client would use it.
"""

import time

import redis

from backoffice.remote.errors import RateLimited, RemoteError
from backoffice.remote import ratelimit
from backoffice.remote.ratelimit import RateLimiter
from backoffice.remote.transport import Transport, TransportConfig

INVOICE_ID = "6f1c0a4e-0000-4000-8000-000000000001"


def run(redis_url, scale, prefix, company_key, base_urls, api_key, duration, ready, go, start, results, margin):
    ratelimit.MIN_SAFETY_MARGIN = margin  # this process's limiter: the test's scaled window keeps production's margin
    limiter = RateLimiter(redis.Redis.from_url(redis_url), scale=scale, prefix=prefix)
    transport = Transport(
        TransportConfig(company_key=company_key, tier=1, base_urls=base_urls, api_key=api_key,
                        timeout=(5, 10), max_retries=0),
        limiter=limiter,
    )
    transport.session.trust_env = False
    counts = {"ok": 0, "local_waits": 0, "platform_429": 0, "errors": 0, "slowest_ms": 0}
    # Open the connection first (a call no rule limits), as a long-running worker would have it open.
    transport.call("ledger.list_periods", params={"pageIndex": 1, "pageSize": 1})
    ready.put(True)
    go.wait(60)
    start_at = start.value
    stop_at = start_at + duration
    time.sleep(max(0.0, start_at - time.time()))
    while time.time() < stop_at:
        began = time.monotonic()
        try:
            transport.call("invoice.outbox_status", path_params={"id": INVOICE_ID})
            counts["ok"] += 1
            counts["slowest_ms"] = max(counts["slowest_ms"], round((time.monotonic() - began) * 1000))
        except RateLimited as limited:
            if limited.local:
                counts["local_waits"] += 1
                time.sleep(min(limited.wait, max(0.0, stop_at - time.time())))
            else:
                counts["platform_429"] += 1
        except RemoteError:
            counts["errors"] += 1
    results.put(counts)
