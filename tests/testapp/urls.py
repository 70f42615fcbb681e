"""The project's URLs and the benchmark's baseline page. Only tests/benchmarks/test_forms.py uses it, as its
ROOT_URLCONF: the project's own urls.py has no hook for test pages."""

from django.urls import path

from backoffice.urls import handler403, handler404, handler500, urlpatterns as project_urlpatterns

from .views import EmptyFormView

urlpatterns = [path("bench/empty-form/<int:pk>/", EmptyFormView.as_view(), name="bench_empty_form"),
               *project_urlpatterns]

__all__ = ["handler403", "handler404", "handler500", "urlpatterns"]
