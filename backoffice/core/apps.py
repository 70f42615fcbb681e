from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class CoreConfig(AppConfig):
    name = "backoffice.core"
    verbose_name = _("Core")

    def ready(self):
        from django.urls import register_converter

        from .security import IdConverter

        # <id:pk>: ids of at most 18 digits, so an overlong or non-ASCII id is a 404, never a 500.
        register_converter(IdConverter, "id")
