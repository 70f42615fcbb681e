from django.conf import settings
from django.conf.urls.static import static
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_not_required
from django.urls import include, path
from django.views.i18n import set_language

from backoffice.core import views as core_views
from backoffice.core.admin_site import admin_only

urlpatterns = [
    path("login/", login_not_required(auth_views.LoginView.as_view(redirect_authenticated_user=True)), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("health/", core_views.health, name="health"),
    # The language switch works on the login page too.
    path("i18n/setlang/", login_not_required(set_language), name="set_language"),
    # Administrators only: the Django admin and the RQ dashboard.
    path("admin/rq/", admin_only("django_rq.urls")),
    path("admin/", admin_only(admin.site.urls)),
    path("tickets/", include("backoffice.tickets.urls")),
    path("passenger-lists/", include("backoffice.passenger_lists.urls")),
    path("", include("backoffice.subcompanies.urls")),
    path("", include("backoffice.core.urls")),
]

handler403 = "backoffice.core.views.permission_denied"
handler404 = "backoffice.core.views.page_not_found"
handler500 = "backoffice.core.views.server_error"

if settings.DEBUG:
    urlpatterns += static(settings.MEDIA_URL, document_root=settings.MEDIA_ROOT)
