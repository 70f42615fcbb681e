"""Choices of passenger lists (document 2, sections 3 and 4.3) with labels and badge colours."""

from django.utils.translation import gettext_lazy as _

from backoffice.core import domains
from backoffice.core.choices import ColoredChoices, paint

tickets_api = domains.api("tickets")


class ListState(ColoredChoices):
    """Where a list stands with the tax authority (the sync state says where it stands with the platform)."""

    SAVED = "saved", _("Not reported yet")
    REPORTED = "reported", _("Reported to the tax authority")
    REPLACED = "replaced", _("Replaced")


paint(ListState, info=[ListState.SAVED], success=[ListState.REPORTED])


# A list is valid while it is not replaced (document 2, section 3: the new one is the valid one).
CURRENT_STATES = (ListState.SAVED, ListState.REPORTED)
# The tickets a list covers: issued ones, queued (20) or approved (60), as the platform counts them.
ISSUED_STATUSES = (tickets_api.TicketStatus.QUEUED, tickets_api.TicketStatus.APPROVED)
