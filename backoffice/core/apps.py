import django.db.models.fields as model_fields
import django.forms.models as model_forms
import django_tables2.columns.base as table_columns
from django.apps import AppConfig
from django.urls import register_converter
from django.utils.translation import gettext_lazy as _

from .text import capfirst


class CoreConfig(AppConfig):
    name = "backoffice.core"
    verbose_name = _("Core")

    def ready(self):
        # Imported when the models are loaded (Django's ready()), as each app imports its modules that hold jobs.
        from . import refresh, schedule, sync
        from .security import IdConverter

        # <id:pk>: ids of at most 18 digits, so an overlong or non-ASCII id is a 404, never a 500.
        register_converter(IdConverter, "id")
        # Lost jobs (a dead worker or work-horse, a Redis restart) are found from RQ's registries and the jobs'
        # heartbeats and enqueued again; records left QUEUED or SENDING without a live job too (core.sync).
        schedule.register(func=sync.sweep_stuck, interval=15, name="sweep_stuck", job_timeout=300)
        # The mirror is re-read: recent records' statuses, each company at its own offset (core.refresh).
        schedule.register(func=refresh.refresh_all, interval=refresh.REFRESH_CHECK_EVERY, name="status_refresh",
                          job_timeout=300)


def _turkish_capfirst_everywhere():
    """Labels of form fields and table columns come from lowercase verbose names through Django's and
    django-tables2's capfirst(), which capitalises with the English rule ("ilçe" -> "Ilçe"). They import it
    by name, so the Turkish-aware one replaces it in those modules; it is lazy, so the language is the
    request's. Done when this module is imported (the registry's first phase), before any app's ready()
    imports a form (the admin's autodiscovery does)."""
    for module in (model_fields, model_forms, table_columns):
        module.capfirst = capfirst


_turkish_capfirst_everywhere()
