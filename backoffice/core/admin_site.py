"""Administrator-only pages: the Django admin and the RQ dashboard."""

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.urls import URLPattern, URLResolver, include

from .choices import Role
from .roles import has_role


def is_administrator(user) -> bool:
    return user.is_active and user.is_authenticated and has_role(user, Role.ADMINISTRATOR)


def _require_admin(view):
    def wrapped(request, *args, **kwargs):
        if not is_administrator(request.user):
            raise PermissionDenied
        return view(request, *args, **kwargs)

    return wrapped


def _wrap(patterns):
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            _wrap(pattern.url_patterns)
        elif isinstance(pattern, URLPattern):
            pattern.callback = _require_admin(pattern.callback)
    return patterns


def admin_only(module):
    """include() whose every view refuses (403) anyone but an administrator.

    `module` is a dotted path or a (patterns, app_name, namespace) triple such as admin.site.urls. The
    wrapped views lose the admin's login_not_required mark, so an anonymous visitor is sent to our
    sign-in page and a signed-in non-administrator gets 403 instead of the admin's own login form."""
    if isinstance(module, tuple):
        patterns, app_name, namespace = module
        return include((_wrap(patterns), app_name), namespace=namespace)
    urlconf, app_name, namespace = include(module)
    _wrap(urlconf.url_patterns if hasattr(urlconf, "url_patterns") else urlconf.urlpatterns)
    return include((urlconf.urlpatterns, app_name), namespace=namespace)


# The Django admin admits administrators only (not merely is_staff).
admin.site.has_permission = lambda request: is_administrator(request.user)
admin.site.site_header = "E-belge back-office"
