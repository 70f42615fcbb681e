from tests.dispatch.conftest import media_in_tmp  # noqa: F401 (uploads and documents in the test's own folder)
