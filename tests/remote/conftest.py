import os

import pytest
import redis


@pytest.fixture
def redis_connection():
    connection = redis.Redis.from_url(os.environ["REDIS_URL"])
    yield connection
    connection.close()
