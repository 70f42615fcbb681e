"""RateLimiter.wait_time: the refresh button asks the shared limiter when the report's window opens,
without taking a slot (remote/ratelimit.py)."""

import os
import uuid

import pytest
import redis

from backoffice.remote.ratelimit import RULES_BY_NAME, RateLimiter

# The database engine matters here (the report window read from stored snapshots): CI's SQLite pass runs these too.
pytestmark = pytest.mark.database

REPORT = ("GET", "/v1/sharedpoolusage/report")
PDF = ("GET", "/v2/outboxinvoice/abc/pdf")


@pytest.fixture
def limiter():
    connection = redis.Redis.from_url(os.environ["REDIS_URL"])
    yield RateLimiter(connection, prefix=f"test-ratelimit:{uuid.uuid4().hex}")
    connection.close()


def test_wait_time_answers_what_acquire_would_without_taking_a_slot(limiter):
    for _ in range(5):
        assert limiter.wait_time("c1", 1, *REPORT) == 0.0  # asking repeatedly records nothing
    assert limiter.acquire("c1", 1, *REPORT) == 0.0
    wait = limiter.wait_time("c1", 1, *REPORT)
    assert 900 < wait <= limiter.window(RULES_BY_NAME["shared_pool_usage"], 1)
    assert abs(limiter.acquire("c1", 1, *REPORT) - wait) < 1  # refused, as wait_time said
    assert limiter.wait_time("c2", 1, *REPORT) == 0.0  # per company


def test_wait_time_counts_the_slots_of_a_rule(limiter):
    for _ in range(14):
        assert limiter.acquire("c1", 1, *PDF) == 0.0
    assert limiter.wait_time("c1", 1, *PDF) == 0.0  # one of 15 left
    assert limiter.acquire("c1", 1, *PDF) == 0.0
    assert limiter.wait_time("c1", 1, *PDF) > 0
    assert limiter.wait_time("c1", 1, "GET", "/v1/not/limited") == 0.0
