from django.urls import path
from django.views.generic import RedirectView

from backoffice.core.generic import get_model_urls

from . import views  # noqa: F401 (registers the views)
from .models import EventTicket, EventTicketReportItem, PassengerTicket, PassengerTicketReportItem, TicketExport

app_name = "tickets"

urlpatterns = [
    # The menu's entry: the event tickets (the passenger tickets, exports and reports are tabs).
    path("", RedirectView.as_view(pattern_name="tickets:eventticket_list"), name="ticket_list"),
    *[pattern for model in (EventTicket, PassengerTicket, TicketExport, EventTicketReportItem,
                            PassengerTicketReportItem)
      for pattern in get_model_urls("tickets", model._meta.model_name)],
]
