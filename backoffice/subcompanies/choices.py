"""Choices of the company-management domain (document 1, sections 2 and 3)."""

from django.db import models
from django.utils.translation import gettext_lazy as _

from backoffice.core.choices import ColoredChoices, paint


class ProductType(models.IntegerChoices):
    """Document 1, section 2.4: the ten ProductType values."""

    ACCOUNTING = 1, _("Accounting")
    E_INVOICE = 2, _("E-invoice")
    E_ARCHIVE_INVOICE = 3, _("E-archive invoice")
    E_LEDGER = 4, _("E-ledger")
    E_TICKET = 5, _("E-ticket")
    E_DISPATCH_NOTE = 7, _("E-dispatch note")
    E_STORAGE = 8, _("E-storage")
    E_FREELANCER_RECEIPT = 11, _("E-freelancer receipt")
    E_MERCHANT_RECEIPT = 12, _("E-merchant receipt")
    E_ADISYON = 13, _("E-adisyon (restaurant bill)")


class SubCompanyState(ColoredChoices):
    """Where a sub-company stands, as the user sees it (computed from sync state and the report)."""

    SENDING = "sending", _("Being sent")
    WAITING = "waiting", _("Waiting for the platform")
    ACTIVE = "active", _("On the platform")
    REFUSED = "refused", _("Refused by the platform")


paint(SubCompanyState, info=[SubCompanyState.SENDING], warning=[SubCompanyState.WAITING],
      success=[SubCompanyState.ACTIVE], danger=[SubCompanyState.REFUSED])


class Origin(models.TextChoices):
    CREATED = "created", _("Created here")
    REPORT = "report", _("Found in the usage report")


class OperationKind(models.TextChoices):
    """The company-management operations of document 1, section 4.2, other than creation and the report."""

    ADD_CREDIT = "add_credit", _("Add a credit offer")
    ADD_CREDIT_BATCH = "add_credit_batch", _("Add a credit offer to several companies")
    CANCEL_CREDIT = "cancel_credit", _("Cancel a credit offer")
    ADD_PRODUCTS = "add_products", _("Add products")
    ADD_PRODUCTS_BATCH = "add_products_batch", _("Add products to several companies")
