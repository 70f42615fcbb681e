from django.contrib import admin
from django.urls import path, re_path

from . import ops  # noqa: F401  (registers the operations)
from .api import SERVICES, not_found, service_view
from .control import control_view

admin.site.site_header = "Platform sandbox"
admin.site.site_title = "Platform sandbox"

urlpatterns = [
    path("admin/", admin.site.urls),
    path("_control/<path:action>", control_view),
    re_path(rf"^(?P<service>{'|'.join(SERVICES)})(?:/(?P<rest>.*))?$", service_view),
    re_path(r"^(?!admin)", not_found),
]

handler404 = "backoffice.sandbox.api.not_found"
handler500 = "backoffice.sandbox.api.server_error"
