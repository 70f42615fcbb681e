"""The project's URLs, the benchmark's baseline page and the test app's Memo pages. tests/benchmarks/test_forms.py and
the tests of core's declarations (tests/core/test_line_edit_view.py, test_kept_documents.py) use it as their
ROOT_URLCONF: the project's own urls.py has no hook for test pages."""

from django.urls import include, path

from backoffice.core.generic.registry import get_model_urls
from backoffice.urls import handler403, handler404, handler500, urlpatterns as project_urlpatterns

from .views import EmptyFormView

urlpatterns = [path("bench/empty-form/<int:pk>/", EmptyFormView.as_view(), name="bench_empty_form"),
               path("", include((get_model_urls("testapp", "memo"), "testapp"))),
               *project_urlpatterns]

__all__ = ["handler403", "handler404", "handler500", "urlpatterns"]
