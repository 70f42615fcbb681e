import pytest
from django.utils import translation


@pytest.fixture(autouse=True)
def ledger_media(settings, tmp_path):
    """Journals, their texts and ZIPs are written under a directory of the test's own."""
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def english():
    with translation.override("en"):
        yield
