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


def _turkish_capfirst_everywhere():
    """Labels of form fields and table columns come from lowercase verbose names through Django's and
    django-tables2's capfirst(), which capitalises with the English rule ("ilçe" -> "Ilçe"). They import it
    by name, so the Turkish-aware one replaces it in those modules; it is lazy, so the language is the
    request's. Done when this module is imported (the registry's first phase), before any app's ready()
    imports a form (the admin's autodiscovery does)."""
    import django.db.models.fields as model_fields
    import django.forms.models as model_forms
    import django_tables2.columns.base as table_columns

    from .text import capfirst

    for module in (model_fields, model_forms, table_columns):
        module.capfirst = capfirst


_turkish_capfirst_everywhere()
