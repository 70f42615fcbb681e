from django.urls import path

from . import views
from .generic import get_model_urls

app_name = "core"

urlpatterns = [
    path("", views.DashboardView.as_view(), name="dashboard"),
    path("company/switch/", views.switch_company, name="switch_company"),
    path("companies/<id:pk>/test-connection/", views.CompanyConnectionTestView.as_view(),
         name="company_connection_test"),
    *get_model_urls("core", "company"),
    path("members/new-user/", views.MemberCreateView.as_view(), name="member_create"),
    path("members/<id:pk>/password/", views.MembershipPasswordView.as_view(), name="membership_password"),
    path("members/<id:pk>/unlock/", views.MembershipUnlockView.as_view(), name="membership_unlock"),
    *get_model_urls("core", "membership"),
    path("series/", views.SeriesView.as_view(), name="series"),
    *get_model_urls("core", "remotecall"),
    *get_model_urls("core", "jobrun"),
]
