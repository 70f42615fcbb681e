"""Superuser-only pages: the Django admin and the RQ dashboard.

Both see every company at once (the admin's querysets, the RQ queues), so they are for the operators who
run the installation, never for a company's administrators: those work in the product's own pages
(companies, members, credentials), which scope everything to their companies.
"""

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.urls import URLPattern, URLResolver, include


def is_operator(user) -> bool:
    return bool(user.is_active and user.is_authenticated and user.is_superuser)


def _require_operator(view):
    def wrapped(request, *args, **kwargs):
        if not is_operator(request.user):
            raise PermissionDenied
        return view(request, *args, **kwargs)

    return wrapped


def _wrap(patterns):
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            _wrap(pattern.url_patterns)
        elif isinstance(pattern, URLPattern):
            pattern.callback = _require_operator(pattern.callback)
    return patterns


def operators_only(module):
    """include() whose every view refuses (403) anyone but a superuser.

    `module` is a dotted path or a (patterns, app_name, namespace) triple such as admin.site.urls. The
    wrapped views lose the admin's login_not_required mark, so an anonymous visitor is sent to our
    sign-in page and a signed-in non-superuser gets 403 instead of the admin's own login form."""
    if isinstance(module, tuple):
        patterns, app_name, namespace = module
        return include((_wrap(patterns), app_name), namespace=namespace)
    urlconf, app_name, namespace = include(module)
    _wrap(urlconf.url_patterns if hasattr(urlconf, "url_patterns") else urlconf.urlpatterns)
    return include((urlconf.urlpatterns, app_name), namespace=namespace)


# The Django admin admits superusers only (not merely is_staff, nor the administrator role).
admin.site.has_permission = lambda request: is_operator(request.user)
admin.site.site_header = "E-belge back-office"
