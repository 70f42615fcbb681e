"""One object per company giving every remote service's client over one transport."""

from .companies import CompaniesClient
from .invoices import InvoicesClient


class PlatformClient:
    def __init__(self, transport):
        self.transport = transport
        self.companies = CompaniesClient(transport)
        self.invoices = InvoicesClient(transport)
