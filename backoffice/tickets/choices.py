"""Choices of the ticket service (document 2) with labels and badge colours."""

from django.db import models
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from backoffice.core.choices import ColoredIntegerChoices, paint


class TicketStatus(ColoredIntegerChoices):
    """Platform status of a ticket (document 2, section 3; 10 from the public clients)."""

    DRAFT = 0, _("Draft")
    DELETED = 10, _("Deleted")
    QUEUED = 20, pgettext_lazy("platform status", "Queued")
    ERROR = 40, _("Error")
    APPROVED = 60, _("Approved")
    CANCELLED = 100, _("Cancelled")


paint(TicketStatus, dark=[TicketStatus.DELETED], info=[TicketStatus.QUEUED], danger=[TicketStatus.ERROR],
      success=[TicketStatus.APPROVED], warning=[TicketStatus.CANCELLED])
# Create and update bodies accept only these (document 2, section 3).
SENDABLE_STATUSES = (TicketStatus.DRAFT, TicketStatus.QUEUED)
# Update is allowed only in these (document 2, section 3).
EDITABLE_STATUSES = (TicketStatus.DRAFT, TicketStatus.ERROR)
# The platform still works on these: polled until they settle.
WORKING_STATUSES = (TicketStatus.QUEUED,)


class DocumentType(models.IntegerChoices):
    SATIS = 0, _("Sale")
    IADE = 1, _("Refund")


class PaymentType(models.TextChoices):
    """The paymentType codes of document 2, 2.1 (labels in the "payment type" context: short words such as
    "Points" or "Other" read differently elsewhere)."""

    BANKAKARTI = "BANKAKARTI", pgettext_lazy("payment type", "Bank card")
    KREDIKARTI = "KREDIKARTI", pgettext_lazy("payment type", "Credit card")
    BEDELSIZ = "BEDELSIZ", pgettext_lazy("payment type", "Free of charge")
    COKLU = "COKLU", pgettext_lazy("payment type", "Multiple")
    PUAN = "PUAN", pgettext_lazy("payment type", "Points")
    NAKIT = "NAKIT", pgettext_lazy("payment type", "Cash")
    PROMOSYON = "PROMOSYON", pgettext_lazy("payment type", "Promotion")
    ULASIMKARTI = "ULASIMKARTI", pgettext_lazy("payment type", "Transport card")
    DIGER = "DIGER", pgettext_lazy("payment type", "Other")


class TicketKind(models.TextChoices):
    """Our name of the two kinds, used by exports and reports."""

    EVENT = "event", _("Event tickets")
    PASSENGER = "passenger", _("Passenger tickets")
