from django.urls import path

from backoffice.core.generic import get_model_urls

from . import views  # noqa: F401 (registers the views)
from .models import EventTicket, PassengerTicket, PassengerTicketReportItem, EventTicketReportItem, TicketExport

app_name = "tickets"

urlpatterns = [
    path("", views.ticket_home, name="ticket_list"),
    *[pattern for model in (EventTicket, PassengerTicket, TicketExport, EventTicketReportItem,
                            PassengerTicketReportItem)
      for pattern in get_model_urls("tickets", model._meta.model_name)],
]
