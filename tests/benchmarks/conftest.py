import pytest
from django.db import connection


@pytest.fixture
def postgres_only():
    """The million-row benchmarks measure PostgreSQL, the production database."""
    if connection.vendor != "postgresql":
        pytest.skip("the million-row list needs PostgreSQL (DATABASE_URL=postgres://...); SQLite is not the target")
