"""One object per company giving every remote service's client over one transport."""

from .companies import CompaniesClient
from .invoices import InvoicesClient
from .passenger_lists import PassengerListClient
from .tickets import CitiesClient, TicketClient


class PlatformClient:
    def __init__(self, transport):
        self.transport = transport
        self.companies = CompaniesClient(transport)
        self.invoices = InvoicesClient(transport)
        self.event_tickets = TicketClient(transport, "event_ticket")
        self.passenger_tickets = TicketClient(transport, "passenger_ticket")
        self.cities = CitiesClient(transport)
        self.passenger_lists = PassengerListClient(transport)
