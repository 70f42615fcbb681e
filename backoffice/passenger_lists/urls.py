from django.urls import path

from backoffice.core.generic import get_model_urls

from . import views

app_name = "passenger_lists"

urlpatterns = [
    *get_model_urls("passenger_lists", "passengerlist"),
    path("lists/<id:pk>/rebuild/", views.PassengerListRebuildView.as_view(), name="passengerlist_rebuild"),
    path("lists/<id:pk>/export/", views.PassengerListExportOneView.as_view(), name="passengerlist_export"),
    path("lists/query/", views.PassengerListQueryView.as_view(), name="passengerlist_query"),
    *get_model_urls("passenger_lists", "passengerlistexport"),
    path("exports/new/", views.PassengerListExportStartView.as_view(), name="passengerlistexport_start"),
    path("exports/history/", views.PassengerListExportHistoryView.as_view(), name="passengerlistexport_history"),
    path("exports/<id:pk>/download/", views.PassengerListExportDownloadView.as_view(),
         name="passengerlistexport_download"),
    path("exports/<id:pk>/fetch/", views.PassengerListExportFetchView.as_view(), name="passengerlistexport_fetch"),
    *get_model_urls("passenger_lists", "passengerlistreportitem"),
    path("report/fetch/", views.ReportFetchView.as_view(), name="report_fetch"),
]
