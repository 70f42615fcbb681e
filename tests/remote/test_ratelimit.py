import time
import uuid

import pytest

from backoffice.core.tiers import tier_for_credits
from backoffice.remote.ratelimit import LIMITS_BY_TIER, RULES, RULES_BY_NAME, RateLimiter, rule_for, safety_margin

# One concrete call per rule.
CALLS = {
    "status_query": ("GET", "/v2/outboxinvoice/6f1c0a4e-0000-4000-8000-000000000001/status"),
    "incoming_invoice_listing": ("GET", "/v1/inboxinvoice/list"),
    "pdf_generation": ("GET", "/v2/outboxinvoice/6f1c0a4e-0000-4000-8000-000000000001/pdf/true"),
    "ubl_viewing": ("GET", "/v2/inboxinvoice/6f1c0a4e-0000-4000-8000-000000000001/ubl"),
    "shared_pool_usage": ("GET", "/v1/sharedpoolusage/report"),
}
# Document 1, section 8, by tier (T1..T9).
TABLE = {
    "status_query": ([100, 100, 300, 900, 4400, 13100, 26100, 43500, 86900], 180),
    "incoming_invoice_listing": ([6] * 9, 15),
    "pdf_generation": ([15, 15, 15, 15, 15, 15, 30, 60, 60], 1),
    "ubl_viewing": ([30, 30, 30, 45, 45, 45, 45, 75, 75], 1),
    "shared_pool_usage": ([1] * 9, 15),
}
EDGES = [(1_000, 1), (5_000, 1), (10_000, 2), (50_000_000, 8), (50_000_001, 9)]


@pytest.fixture
def limiter(redis_connection):
    return RateLimiter(redis_connection, prefix=f"test-ratelimit:{uuid.uuid4().hex}")


def test_table_is_document_1_section_8():
    assert [rule.name for rule in RULES] == list(TABLE)
    for name, (counts, minutes) in TABLE.items():
        assert [RULES_BY_NAME[name].limit(tier) for tier in range(1, 10)] == [(n, minutes) for n in counts]
    assert LIMITS_BY_TIER[7][2] == {"rule": "pdf_generation", "label": "PDF generation", "requests": 30, "minutes": 1}


@pytest.mark.parametrize("method,path,rule", [
    ("GET", "/v2/outboxinvoice/abc/status", "status_query"),
    ("GET", "/v2/inboxinvoice/abc/status", "status_query"),
    ("GET", "/v2/earchive/status", "status_query"),
    ("GET", "/v2/earchive/abc/status", "status_query"),
    ("POST", "/v2/outboxinvoice/status", "status_query"),
    ("GET", "/v1/inboxinvoice/list", "incoming_invoice_listing"),
    ("POST", "/v2/outboxinvoice/abc/pdf/true", "pdf_generation"),
    ("GET", "/v2/outboxinvoice/abc/pdf/false", "pdf_generation"),
    ("GET", "/v2/outboxinvoice/abc/pdf", "pdf_generation"),
    ("POST", "/v2/inboxinvoice/abc/pdf/true", "pdf_generation"),
    ("GET", "/v2/inboxinvoice/abc/pdf", "pdf_generation"),
    ("GET", "/v2/inboxinvoice/abc/pdf/true", "pdf_generation"),
    ("GET", "/v2/earchive/abc/pdf/true", "pdf_generation"),
    ("GET", "/v2/inboxinvoice/abc/ubl", "ubl_viewing"),
    ("GET", "/v2/earchive/abc/ubl", "ubl_viewing"),
    ("GET", "/v1/sharedpoolusage/report", "shared_pool_usage"),
    # * is exactly one segment; the method counts; other paths are not limited.
    ("GET", "/v2/outboxinvoice/a/b/status", None),
    ("GET", "/v2/outboxinvoice/status", None),
    ("POST", "/v2/outboxinvoice/abc/status", None),
    ("GET", "/v2/earchive/abc/pdf", None),
    ("POST", "/v1/inboxinvoice/list", None),
    ("GET", "/v1/event-ticket", None),
])
def test_rule_for(method, path, rule):
    found = rule_for(method, path)
    assert (found.name if found else None) == rule


@pytest.mark.parametrize("credits,tier", EDGES)
@pytest.mark.parametrize("rule_name", list(TABLE))
def test_limit_per_rule_and_tier_edge(limiter, redis_connection, rule_name, credits, tier):
    assert tier_for_credits(credits) == tier
    rule = RULES_BY_NAME[rule_name]
    limit = TABLE[rule_name][0][tier - 1]
    method, path = CALLS[rule_name]
    company = f"c{credits}"
    if limit > 200:
        # Large limits: record limit - 1 grants at once instead of thousands of round trips.
        now_s, now_us = redis_connection.time()
        now_ms = now_s * 1000 + now_us // 1000
        redis_connection.zadd(limiter.key(company, rule), {f"{now_ms}:{i}": now_ms for i in range(limit - 1)})
        assert limiter.acquire(company, tier, method, path) == 0.0
    else:
        assert [limiter.acquire(company, tier, method, path) for _ in range(limit)] == [0.0] * limit
    wait = limiter.acquire(company, tier, method, path)
    window = TABLE[rule_name][1] * 60
    # Refused: the wait is about one full window (plus our safety margin), and nothing was recorded.
    assert window * 0.99 < wait <= window + safety_margin(window) + 0.001
    assert limiter.used(company, tier, rule) == limit
    # Another company and another rule are not affected.
    assert limiter.acquire("someone-else", tier, method, path) == 0.0


def test_unmatched_path_goes_and_records_nothing(limiter, redis_connection):
    assert all(limiter.acquire("c", 1, "GET", "/v1/event-ticket") == 0.0 for _ in range(50))
    assert not redis_connection.keys(f"{limiter.prefix}:*")


def test_window_slides_and_wait_is_exact(redis_connection):
    # 1-minute PDF rule scaled to 0.3 s: 15 calls, then wait about 0.3 s plus the 0.5 s minimum margin.
    limiter = RateLimiter(redis_connection, scale=0.3 / 60, prefix=f"test-ratelimit:{uuid.uuid4().hex}")
    method, path = CALLS["pdf_generation"]
    started = time.monotonic()
    assert [limiter.acquire("c", 1, method, path) for _ in range(15)] == [0.0] * 15
    wait = limiter.acquire("c", 1, method, path)
    answered = time.monotonic()  # the wait counts from the refused call (a slow machine spends time in the 15)
    assert 0.8 - (answered - started) - 0.01 < wait <= 0.8 + 0.01
    assert limiter.window(RULES_BY_NAME["pdf_generation"], 1) == pytest.approx(0.8)
    time.sleep(max(0.0, wait - (time.monotonic() - answered)) + 0.02)
    assert limiter.acquire("c", 1, method, path) == 0.0


def test_safety_margin():
    assert safety_margin(2.0) == 0.5
    assert safety_margin(10800.0) == pytest.approx(216.0)
