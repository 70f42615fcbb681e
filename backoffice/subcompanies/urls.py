from django.urls import path

from backoffice.core.generic import get_model_urls

from . import views
from .models import SubCompany, SubCompanyOperation

app_name = "subcompanies"

urlpatterns = [
    path("sub-companies/usage/", views.UsageDashboardView.as_view(), name="usage_dashboard"),
    path("sub-companies/usage/refresh/", views.UsageRefreshView.as_view(), name="usage_refresh"),
    path("sub-companies/usage/refresh/status/", views.UsageRefreshStatusView.as_view(), name="usage_refresh_status"),
    path("sub-companies/<id:pk>/credit/", views.CreditAddView.as_view(), name="credit_add"),
    path("sub-companies/<id:pk>/credits/<id:credit_id>/cancel/", views.CreditCancelView.as_view(),
         name="credit_cancel"),
    path("sub-companies/<id:pk>/products/", views.ProductsAddView.as_view(), name="products_add"),
    path("sub-companies/<id:pk>/resend/", views.ResendView.as_view(model=SubCompany), name="subcompany_resend"),
    path("sub-companies/requests/<id:pk>/resend/", views.ResendView.as_view(model=SubCompanyOperation),
         name="subcompanyoperation_resend"),
    *get_model_urls("subcompanies", "usagesnapshot"),
    *get_model_urls("subcompanies", "subcompanyoperation"),
    *get_model_urls("subcompanies", "subcompany"),
]
