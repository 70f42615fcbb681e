"""Rate limits of document 1, section 8, as the platform applies them: per customer and rule.

The windows live in this process's memory under one lock. The sandbox server is one threaded process,
so that is exact; a restart forgets the windows, which is fine for a simulator.
"""

import bisect
import math
import threading
import time
from collections import deque
from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    name: str
    service: str
    endpoints: tuple  # (method, pattern) pairs; "*" is one path segment; paths relative to the service
    minutes: int
    limits: tuple  # requests per window for T1..T9

    def matches(self, service: str, method: str, path: str) -> bool:
        return service == self.service and any(
            method == m and pattern_matches(p, path) for m, p in self.endpoints
        )

    def limit(self, tier: int) -> int:
        return self.limits[tier - 1]


RULES = (
    Rule("status_query", "invoice", (
        ("GET", "/v2/outboxinvoice/*/status"),
        ("GET", "/v2/inboxinvoice/*/status"),
        ("GET", "/v2/earchive/status"),
        ("GET", "/v2/earchive/*/status"),
        ("POST", "/v2/outboxinvoice/status"),
    ), 180, (100, 100, 300, 900, 4400, 13100, 26100, 43500, 86900)),
    Rule("incoming_invoice_list", "invoice", (
        ("GET", "/v1/inboxinvoice/list"),
    ), 15, (6,) * 9),
    Rule("pdf", "invoice", (
        ("POST", "/v2/outboxinvoice/*/pdf/*"),
        ("GET", "/v2/outboxinvoice/*/pdf/*"),
        ("POST", "/v2/inboxinvoice/*/pdf/*"),
        ("GET", "/v2/inboxinvoice/*/pdf"),
        ("GET", "/v2/inboxinvoice/*/pdf/*"),
        ("GET", "/v2/earchive/*/pdf/*"),
        ("GET", "/v2/outboxinvoice/*/pdf"),
    ), 1, (15, 15, 15, 15, 15, 15, 30, 60, 60)),
    Rule("ubl", "invoice", (
        ("GET", "/v2/inboxinvoice/*/ubl"),
        ("GET", "/v2/earchive/*/ubl"),
    ), 1, (30, 30, 30, 45, 45, 45, 45, 75, 75)),
    Rule("shared_pool_usage", "crm", (
        ("GET", "/v1/sharedpoolusage/report"),
    ), 15, (1,) * 9),
)


def split(path: str) -> list[str]:
    return [segment for segment in path.strip("/").split("/") if segment]


def pattern_matches(pattern: str, path: str) -> bool:
    """'*' stands for exactly one segment; everything else matches literally (case-insensitive)."""
    wanted, got = split(pattern), split(path)
    return len(wanted) == len(got) and all(w == "*" or w.lower() == g.lower() for w, g in zip(wanted, got))


def rule_for(service: str, method: str, path: str):
    return next((rule for rule in RULES if rule.matches(service, method, path)), None)


class SlidingWindowLog:
    """A request at t is allowed when fewer than N were allowed in (t - W, t]; refused ones don't count."""

    def __init__(self, clock=time.monotonic):
        self.clock = clock
        self.lock = threading.Lock()
        self.windows: dict[tuple, deque] = {}

    def clear(self):
        with self.lock:
            self.windows.clear()

    def hit(self, key, limit: int, window_seconds: float, at: float | None = None) -> int:
        """0 when allowed (and recorded), else the whole seconds to wait (at least 1).

        `at` is when the request arrived (default: now). Requests are counted at arrival, not at the
        moment their thread gets here, so a caller that paces its sends exactly is not refused for the
        server's own jitter; the log is kept sorted because threads may arrive here out of order.
        """
        with self.lock:
            now = self.clock() if at is None else at
            log = self.windows.setdefault(key, deque())
            while log and log[0] <= now - window_seconds:
                log.popleft()
            if len(log) < limit:
                if not log or now >= log[-1]:
                    log.append(now)
                else:
                    bisect.insort(log, now)
                return 0
            # The oldest of the last `limit` allowed requests leaves the window first.
            frees_at = log[len(log) - limit] + window_seconds
            return max(1, math.ceil(frees_at - now))


limiter = SlidingWindowLog()


def check(customer_id, tier: int, service: str, method: str, path: str, scale: float, at=None) -> int:
    """0 when the request may go on, else the Retry-After seconds of the 429."""
    rule = rule_for(service, method, path)
    if rule is None:
        return 0
    return limiter.hit((customer_id, rule.name), rule.limit(tier), rule.minutes * 60 * scale, at)
