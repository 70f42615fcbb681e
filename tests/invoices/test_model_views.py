"""The invoice pages, checked as every model's are (tests/viewcases.py)."""

from backoffice.core.roles import EDITORS, EVERYONE
from backoffice.invoices.models import Invoice
from tests.viewcases import ModelViewCase


class TestInvoiceViews(ModelViewCase):
    model = Invoice
    rights = {"list": EVERYONE, "detail": EVERYONE, "add": EDITORS, "edit": EDITORS, "delete": EDITORS}

    @staticmethod
    def make(company):
        return Invoice.objects.create(company=company, is_send=True, target_title=f"Müşteri {company.pk}")
