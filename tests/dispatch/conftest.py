import pytest


@pytest.fixture(autouse=True)
def media_in_tmp(settings, tmp_path):
    """Uploaded UBL files and fetched documents go to this test's own folder, never the project's media."""
    settings.MEDIA_ROOT = str(tmp_path / "media")
