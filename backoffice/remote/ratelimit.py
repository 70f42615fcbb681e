"""Rate limits of document 1, section 8: one sliding window per company and rule, shared in Redis.

A job asks acquire() before each call. 0.0 means "go" (the slot is taken); anything else is the
number of seconds until a slot frees, and nothing was recorded: the job re-enqueues itself for then
instead of earning a 429 (and instead of sleeping in a worker).
"""

import re
import uuid
from dataclasses import dataclass

# Requests per period in minutes, T1..T9, copied from document 1, section 8.
TIERS = tuple(range(1, 10))


@dataclass(frozen=True)
class Rule:
    name: str
    label: str
    patterns: tuple[str, ...]  # "METHOD /path" with * standing for exactly one path segment
    limits: tuple[tuple[int, int], ...]  # (requests, minutes) for T1..T9

    def limit(self, tier: int) -> tuple[int, int]:
        return self.limits[min(max(int(tier), 1), 9) - 1]


def _same(requests, minutes):
    return tuple((requests, minutes) for _ in TIERS)


RULES = (
    Rule(
        "status_query", "Status query",
        ("GET /v2/outboxinvoice/*/status", "GET /v2/inboxinvoice/*/status", "GET /v2/earchive/status",
         "GET /v2/earchive/*/status", "POST /v2/outboxinvoice/status"),
        tuple((n, 180) for n in (100, 100, 300, 900, 4400, 13100, 26100, 43500, 86900)),
    ),
    Rule("incoming_invoice_listing", "Incoming invoice listing", ("GET /v1/inboxinvoice/list",), _same(6, 15)),
    Rule(
        "pdf_generation", "PDF generation",
        ("POST /v2/outboxinvoice/*/pdf/*", "GET /v2/outboxinvoice/*/pdf/*", "POST /v2/inboxinvoice/*/pdf/*",
         "GET /v2/inboxinvoice/*/pdf", "GET /v2/inboxinvoice/*/pdf/*", "GET /v2/earchive/*/pdf/*",
         "GET /v2/outboxinvoice/*/pdf"),
        tuple((n, 1) for n in (15, 15, 15, 15, 15, 15, 30, 60, 60)),
    ),
    Rule(
        "ubl_viewing", "UBL viewing",
        ("GET /v2/inboxinvoice/*/ubl", "GET /v2/earchive/*/ubl"),
        tuple((n, 1) for n in (30, 30, 30, 45, 45, 45, 45, 75, 75)),
    ),
    Rule("shared_pool_usage", "Shared pool usage", ("GET /v1/sharedpoolusage/report",), _same(1, 15)),
)
RULES_BY_NAME = {rule.name: rule for rule in RULES}


def _compile(pattern):
    method, path = pattern.split(" ", 1)
    regex = "/".join("[^/]+" if part == "*" else re.escape(part) for part in path.split("/"))
    return method, re.compile(regex + r"/?\Z", re.IGNORECASE)


_MATCHERS = [(rule, *_compile(pattern)) for rule in RULES for pattern in rule.patterns]


def rule_for(method: str, path: str) -> Rule | None:
    """The rule a call falls under; path is relative to the service base URL, without query."""
    method = method.upper()
    path = path.split("?", 1)[0]
    for rule, rule_method, regex in _MATCHERS:
        if rule_method == method and regex.match(path):
            return rule
    return None


# {tier: [{rule, label, requests, minutes}]}: what the UI shows for a company's tier.
LIMITS_BY_TIER = {tier: [{"rule": r.name, "label": r.label, "requests": r.limit(tier)[0], "minutes": r.limit(tier)[1]}
                         for r in RULES] for tier in TIERS}


def safety_margin(window: float) -> float:
    """Extra seconds added to our window.

    The platform (and the sandbox) count a call when it arrives; we record it a little earlier, when
    the slot is granted. If an old call was slow on the wire and the call that reuses its slot is fast,
    the platform would see both inside its window (N+1 calls) and answer 429. Widening our window by
    more than that difference in latency rules this out: 2% of the window (1.2 s for the shortest real
    window of 1 minute, at a cost of 2% of throughput), and never under 0.5 s, which covers the jitter
    of a loaded machine (calls of 300 ms seen) when tests scale the windows down to seconds.
    """
    return max(0.02 * window, MIN_SAFETY_MARGIN)


MIN_SAFETY_MARGIN = 0.5


# Sliding-window log: a sorted set of grant times (ms, from the Redis server's clock so that every
# process shares one clock). Atomic as a script: check and record cannot interleave between workers.
_ACQUIRE = """
if redis.replicate_commands then pcall(redis.replicate_commands) end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
if count < limit then
  redis.call('ZADD', KEYS[1], now, now .. ':' .. ARGV[3])
  redis.call('PEXPIRE', KEYS[1], window)
  return 0
end
local oldest = redis.call('ZRANGE', KEYS[1], count - limit, count - limit, 'WITHSCORES')
local wait = tonumber(oldest[2]) + window - now
if wait < 1 then wait = 1 end
return wait
"""


class RateLimiter:
    def __init__(self, redis_connection, scale: float = 1.0, *, prefix: str = "ratelimit"):
        self.redis = redis_connection
        self.scale = float(scale)
        self.prefix = prefix
        self._script = redis_connection.register_script(_ACQUIRE)

    def window(self, rule: Rule, tier: int) -> float:
        """Our window in seconds for the rule and tier: the platform's, scaled, plus the margin."""
        base = rule.limit(tier)[1] * 60 * self.scale
        return base + safety_margin(base)

    def key(self, company_key: str, rule: Rule) -> str:
        return f"{self.prefix}:{company_key}:{rule.name}"

    def acquire(self, company_key: str, tier: int, method: str, path: str) -> float:
        """0.0: go, the slot is recorded. Otherwise the seconds to wait; nothing recorded."""
        rule = rule_for(method, path)
        if rule is None:
            return 0.0
        window_ms = max(1, round(self.window(rule, tier) * 1000))
        wait_ms = self._script(keys=[self.key(company_key, rule)],
                               args=[window_ms, rule.limit(tier)[0], uuid.uuid4().hex])
        return int(wait_ms) / 1000.0

    def wait_time(self, company_key: str, tier: int, method: str, path: str) -> float:
        """What acquire() would answer now (0.0: a slot is free), without recording a call.

        Read-only, for the UI (a button disabled while the window is closed); not atomic with acquire().
        """
        rule = rule_for(method, path)
        if rule is None:
            return 0.0
        window_ms = max(1, round(self.window(rule, tier) * 1000))
        limit = rule.limit(tier)[0]
        now_ms = self._now_ms()
        # Live entries are those acquire() would keep: score > now - window.
        live = self.redis.zrangebyscore(self.key(company_key, rule), f"({now_ms - window_ms}", "+inf",
                                        withscores=True)
        if len(live) < limit:
            return 0.0
        oldest = live[len(live) - limit][1]
        return max(1.0, oldest + window_ms - now_ms) / 1000.0

    def used(self, company_key: str, tier: int, rule: Rule) -> int:
        """Calls granted in the current window (for the UI; not atomic with acquire)."""
        start = self._now_ms() - round(self.window(rule, tier) * 1000) + 1
        return self.redis.zcount(self.key(company_key, rule), start, "+inf")

    def _now_ms(self) -> int:
        """The Redis server's clock in ms, the one acquire() records with."""
        now_s, now_us = self.redis.time()
        return now_s * 1000 + now_us // 1000
