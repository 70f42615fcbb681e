from django.contrib import admin
from django.contrib.auth.decorators import login_not_required
from django.urls import include, path
from django.views.i18n import set_language

from backoffice.core import views as core_views
from backoffice.core.admin_site import operators_only

urlpatterns = [
    path("login/", core_views.sign_in, name="login"),
    path("logout/", core_views.sign_out, name="logout"),
    path("password/", core_views.own_password, name="password_change"),
    path("health/", core_views.health, name="health"),
    # The language switch works on the login page too.
    path("i18n/setlang/", login_not_required(set_language), name="set_language"),
    # Superusers (operators) only: the Django admin and the RQ dashboard see every company.
    path("admin/rq/", operators_only("django_rq.urls")),
    path("admin/", operators_only(admin.site.urls)),
    path("tickets/", include("backoffice.tickets.urls")),
    path("passenger-lists/", include("backoffice.passenger_lists.urls")),
    path("current-accounts/", include("backoffice.current_accounts.urls")),
    path("invoices/", include("backoffice.invoices.urls")),
    path("ledger/", include("backoffice.ledger.urls")),
    path("dispatch/", include("backoffice.dispatch.urls")),
    path("dispatch/", include("backoffice.dispatch_inbox.urls")),
    path("chart-of-accounts/", include("backoffice.chart_of_accounts.urls")),
    path("", include("backoffice.subcompanies.urls")),
    path("", include("backoffice.core.urls")),
]

handler403 = "backoffice.core.views.permission_denied"
handler404 = "backoffice.core.views.page_not_found"
handler500 = "backoffice.core.views.server_error"
