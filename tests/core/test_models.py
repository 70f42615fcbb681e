import pytest
from django.db import connection

from backoffice.core.models import Company, DocumentSeries
from backoffice.core.tiers import tier_for_credits

# The database engine matters here (constraints the database enforces): CI's SQLite pass runs these too.
pytestmark = pytest.mark.database


@pytest.mark.parametrize(
    "credits,tier",
    [(0, 1), (1_000, 1), (5_000, 1), (9_999, 1), (10_000, 2), (50_000, 2), (75_000, 3), (250_000, 3),
     (500_000, 4), (1_000_000, 4), (2_000_000, 5), (10_000_000, 6), (20_000_000, 7), (40_000_000, 8),
     (50_000_000, 8), (50_000_001, 9), (10**12, 9)],
)
def test_tier_for_credits(credits, tier):
    assert tier_for_credits(credits) == tier


def test_secrets_are_encrypted_at_rest(company):
    company.service_password = "s3cret-password"
    company.save()
    with connection.cursor() as cursor:
        cursor.execute("SELECT api_key, service_password FROM core_company WHERE id = %s", [company.pk])
        api_key, password = cursor.fetchone()
    assert "key-acme-0001" not in api_key and "s3cret-password" not in password
    fresh = Company.objects.get(pk=company.pk)
    assert (fresh.api_key, fresh.service_password) == ("key-acme-0001", "s3cret-password")


def test_base_urls_default_per_environment_and_override(company, settings):
    assert company.base_url("ticket") == settings.PLATFORM_ENVIRONMENTS["sandbox"]["ticket"]
    company.ticket_base_url = "http://127.0.0.1:9999/tickets/"
    assert company.base_url("ticket") == "http://127.0.0.1:9999/tickets"
    company.environment = "test"
    assert company.base_url("auth") == settings.PLATFORM_ENVIRONMENTS["test"]["auth"]


def test_series_allocates_consecutive_numbers(company):
    numbers = [DocumentSeries.allocate(company=company, kind="event_ticket", prefix="etk", year=2026) for _ in range(3)]
    assert numbers == ["ETK2026000000001", "ETK2026000000002", "ETK2026000000003"]
    other = DocumentSeries.allocate(company=company, kind="event_ticket", prefix="ETK", year=2027)
    assert other == "ETK2027000000001"


def test_a_contract_tier_overrides_the_tier_of_the_credits(db, settings):
    """Document 1, section 8: limits depend on the credits bought and the contract."""
    from backoffice.core.platform import transport_config
    from backoffice.remote.ratelimit import RULES_BY_NAME

    company = Company.objects.create(name="Sözleşmeli A.Ş.", api_key="k-1", credit_quantity=1000)
    assert company.tier == 1 and transport_config(company).tier == 1
    company.contract_tier = 5
    company.save()
    assert company.tier == 5 and transport_config(company).tier == 5  # what the limiter is given
    rule = next(iter(RULES_BY_NAME.values()))
    assert rule.limit(company.tier) == rule.limit(5)
