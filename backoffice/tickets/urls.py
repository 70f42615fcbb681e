from django.urls import path

from backoffice.core.generic import get_model_urls

from . import views
from .models import EventTicket, PassengerTicket

app_name = "tickets"

urlpatterns = [
    path("", views.ticket_home, name="ticket_list"),
    *get_model_urls("tickets", "eventticket"),
    path("event/<id:pk>/html/", views.TicketHtmlView.as_view(model=EventTicket), name="eventticket_html"),
    *get_model_urls("tickets", "passengerticket"),
    path("passenger/<id:pk>/html/", views.TicketHtmlView.as_view(model=PassengerTicket),
         name="passengerticket_html"),
    *get_model_urls("tickets", "ticketexport"),
    path("exports/new/<slug:kind>/", views.TicketExportStartView.as_view(), name="ticketexport_start"),
    path("exports/history/", views.TicketExportHistoryView.as_view(), name="ticketexport_history"),
    path("exports/<id:pk>/download/", views.TicketExportDownloadView.as_view(), name="ticketexport_download"),
    path("exports/<id:pk>/fetch/", views.TicketExportFetchView.as_view(), name="ticketexport_fetch"),
    *get_model_urls("tickets", "eventticketreportitem"),
    *get_model_urls("tickets", "passengerticketreportitem"),
    path("reports/<slug:kind>/fetch/", views.ReportFetchView.as_view(), name="report_fetch"),
]
