import os
import uuid

import pytest
import redis

from backoffice.remote import transport


@pytest.fixture
def redis_connection():
    connection = redis.Redis.from_url(os.environ["REDIS_URL"])
    yield connection
    connection.close()


@pytest.fixture(autouse=True)
def isolated_limits_and_tokens(settings):
    """Company pks repeat across tests (and xdist workers) while Redis and the token cache persist:
    give each test its own rate-limit key space and an empty token cache."""
    settings.RATE_LIMIT_KEY_PREFIX = f"test-ratelimit:{uuid.uuid4().hex}"
    transport.forget_tokens()
    yield
    transport.forget_tokens()
