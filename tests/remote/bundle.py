"""Every service's client over a company's one transport, for tests that call several services in a row
(the product asks core.platform.client_for(company, ServiceClient) for the one client it needs)."""

from backoffice.core.platform import transport_for
from backoffice.remote.companies import CompaniesClient
from backoffice.remote.invoices import InvoicesClient
from backoffice.remote.passenger_lists import PassengerListClient
from backoffice.remote.tickets import CitiesClient, EventTicketClient, PassengerTicketClient


class Bundle:
    def __init__(self, company, *, interactive=False):
        self.transport = transport_for(company, interactive=interactive)
        self.companies = CompaniesClient(self.transport)
        self.invoices = InvoicesClient(self.transport)
        self.event_tickets = EventTicketClient(self.transport)
        self.passenger_tickets = PassengerTicketClient(self.transport)
        self.cities = CitiesClient(self.transport)
        self.passenger_lists = PassengerListClient(self.transport)


def services_for(company, *, interactive=False) -> Bundle:
    return Bundle(company, interactive=interactive)
