"""Document 1, section 8: the five rules, per customer and tier, as the sandbox enforces them."""

import itertools
import time

import pytest

from backoffice.core.tiers import tier_for_credits
from backoffice.sandbox.ratelimit import SlidingWindowLog, rule_for


def status_calls(n):
    for i, kind in zip(range(n), itertools.cycle(range(5))):
        yield [
            ("GET", f"/v2/outboxinvoice/o{i}/status", {}),
            ("GET", f"/v2/inboxinvoice/i{i}/status", {}),
            ("GET", "/v2/earchive/status", {"params": {"id": f"e{i}"}}),
            ("GET", f"/v2/earchive/e{i}/status", {}),
            ("POST", "/v2/outboxinvoice/status", {"json": [f"o{i}"]}),
        ][kind]


def pdf_calls(n):
    for i, kind in zip(range(n), itertools.cycle(range(7))):
        yield [
            ("POST", f"/v2/outboxinvoice/{i}/pdf/true", {}),
            ("GET", f"/v2/outboxinvoice/{i}/pdf/false", {}),
            ("POST", f"/v2/inboxinvoice/{i}/pdf/true", {}),
            ("GET", f"/v2/inboxinvoice/{i}/pdf", {}),
            ("GET", f"/v2/inboxinvoice/{i}/pdf/true", {}),
            ("GET", f"/v2/earchive/{i}/pdf/true", {}),
            ("GET", f"/v2/outboxinvoice/{i}/pdf", {}),
        ][kind]


def ubl_calls(n):
    for i in range(n):
        yield ("GET", f"/v2/inboxinvoice/{i}/ubl", {}) if i % 2 else ("GET", f"/v2/earchive/{i}/ubl", {})


def list_calls(n):
    for _ in range(n):
        yield ("GET", "/v1/inboxinvoice/list", {"params": {"pageIndex": 1, "pageSize": 10}})


def pool_calls(n):
    for _ in range(n):
        yield ("GET", "/v1/sharedpoolusage/report", {})


# (service, calls, credits, allowed): two tiers per rule, each tier's own number from the table.
CASES = {
    "status-T1": ("invoice", status_calls, 1_000, 100),
    "status-T3": ("invoice", status_calls, 75_000, 300),
    "list-T1": ("invoice", list_calls, 5_000, 6),
    "list-T9": ("invoice", list_calls, 60_000_000, 6),
    "pdf-T1": ("invoice", pdf_calls, 1_000, 15),
    "pdf-T7": ("invoice", pdf_calls, 20_000_000, 30),
    "ubl-T2": ("invoice", ubl_calls, 10_000, 30),
    "ubl-T4": ("invoice", ubl_calls, 500_000, 45),
    "pool-T1": ("crm", pool_calls, 1_000, 1),
    "pool-T9": ("crm", pool_calls, 50_000_001, 1),
}


@pytest.mark.parametrize("case", CASES)
def test_rule_refuses_the_request_after_n(sandbox, customer_api, case):
    service, calls, credits, allowed = CASES[case]
    sandbox.configure(rate_limit_scale=0.1)  # windows of 1080 s, 90 s and 6 s: all calls fit in one
    api, _ = customer_api(credits=credits)
    statuses = [api.request(method, service, path, **kwargs).status_code
                for method, path, kwargs in calls(allowed + 1)]
    assert statuses[:allowed] == [200] * allowed
    assert statuses[allowed] == 429


def test_429_carries_retry_after_and_the_window_slides(sandbox, customer_api):
    sandbox.configure(rate_limit_scale=0.02)  # PDF window: 1.2 s
    api, _ = customer_api()
    started = time.monotonic()
    for i in range(15):
        assert api.get("invoice", f"/v2/outboxinvoice/{i}/pdf").status_code == 200
    refused = api.get("invoice", "/v2/outboxinvoice/x/pdf")
    assert refused.status_code == 429
    assert refused.json()["title"] == "Too Many Requests"
    wait = int(refused.headers["Retry-After"])
    assert 1 <= wait <= 2
    time.sleep(max(0, started + 1.25 - time.monotonic()))
    assert api.get("invoice", "/v2/outboxinvoice/x/pdf").status_code == 200


def test_windows_are_per_customer_and_rule(sandbox, customer_api):
    api, _ = customer_api()
    other, _ = customer_api()
    assert api.get("crm", "/v1/sharedpoolusage/report").status_code == 200
    assert api.get("crm", "/v1/sharedpoolusage/report").status_code == 429
    assert other.get("crm", "/v1/sharedpoolusage/report").status_code == 200
    assert api.get("invoice", "/v2/outboxinvoice/1/status").status_code == 200
    # Paths outside the table have no limit.
    for _ in range(3):
        assert api.get("ledger", "/v1/period/getperiodlist", params={"pageIndex": 1, "pageSize": 5}).ok


def test_reset_clears_the_windows(sandbox, customer_api):
    api, _ = customer_api()
    assert api.get("crm", "/v1/sharedpoolusage/report").status_code == 200
    assert api.get("crm", "/v1/sharedpoolusage/report").status_code == 429
    sandbox.reset()
    assert api.get("crm", "/v1/sharedpoolusage/report").status_code == 200


@pytest.mark.parametrize("credits,tier", [
    (0, 1), (999, 1), (1_000, 1), (5_000, 1), (9_999, 1), (10_000, 2), (74_999, 2), (75_000, 3),
    (500_000, 4), (2_000_000, 5), (10_000_000, 6), (20_000_000, 7), (40_000_000, 8), (50_000_000, 8),
    (50_000_001, 9),
])
def test_tier_by_credits(credits, tier):
    assert tier_for_credits(credits) == tier


def test_rule_matching_uses_whole_segments():
    assert rule_for("invoice", "GET", "/v2/outboxinvoice/abc/status").name == "status_query"
    assert rule_for("invoice", "GET", "/v2/outboxinvoice/a/b/status") is None
    assert rule_for("invoice", "POST", "/v2/inboxinvoice/abc/pdf") is None  # only GET on that path
    assert rule_for("crm", "GET", "/v2/outboxinvoice/abc/status") is None  # another service


class FakeClock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def test_sliding_window_log_counts_only_allowed_requests():
    clock = FakeClock()
    window = SlidingWindowLog(clock)
    assert [window.hit("k", 3, 10) for _ in range(3)] == [0, 0, 0]
    clock.now += 4
    assert window.hit("k", 3, 10) == 6  # the first leaves (t - 10, t] at 1010
    clock.now += 5.5
    assert window.hit("k", 3, 10) == 1  # 0.5 s left, rounded up
    clock.now += 0.5
    assert window.hit("k", 3, 10) == 0  # refusals did not count, so the slot is free exactly now
    assert window.hit("other", 3, 10) == 0


def test_requests_count_at_their_arrival_even_when_checked_out_of_order():
    clock = FakeClock()
    window = SlidingWindowLog(clock)
    assert window.hit("k", 2, 10, at=1001.0) == 0
    assert window.hit("k", 2, 10, at=1000.0) == 0  # arrived first, checked second
    clock.now = 1010.5
    assert window.hit("k", 2, 10) == 0  # the one that arrived at 1000 has left the window
    assert window.hit("k", 2, 10) == 1
