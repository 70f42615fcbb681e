from django.apps import AppConfig


class TestappConfig(AppConfig):
    """Test-only app (installed by BACKOFFICE_EXTRA_APPS=tests.testapp): a RemoteRecord to push."""

    name = "tests.testapp"
    label = "testapp"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from backoffice.core.sync import register_pushable

        from .models import Probe

        register_pushable(Probe, "tests.testapp.jobs.probe_push")
