"""Choices of dispatch notes and replies (document 3, 2.9 and 3.3; the provider's client for the profile and type
codes)."""

from decimal import Decimal

from django.db import models
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from backoffice.core.choices import ColoredChoices, ColoredIntegerChoices, paint


class DispatchStatus(ColoredIntegerChoices):
    """The platform's status of a dispatch note (document 3, 2.9)."""

    DRAFT = 0, _("Draft")
    QUEUED = 20, pgettext_lazy("platform status", "Queued")
    ERROR = 40, _("Error")
    DELIVERED = 50, _("Delivered to the tax authority")
    APPROVED = 60, _("Approved")
    APPROVING = 61, _("Being approved")
    APPROVAL_ERROR = 62, _("Approval error")
    AUTO_APPROVED = 65, _("Approved automatically")
    AWAITING_APPROVAL = 70, _("Awaiting approval")
    REJECTED = 80, _("Rejected")
    REJECTING = 81, _("Being rejected")
    REJECTION_ERROR = 82, _("Rejection error")
    PARTIALLY_ACCEPTED = 90, _("Partially accepted")
    PARTIALLY_ACCEPTING = 91, _("Being partially accepted")
    PARTIAL_ACCEPTANCE_ERROR = 92, _("Partial-acceptance error")


# The platform still works on these: their status is polled until they settle. 70 waits for the receiver's
# answer (the next issue's replies); it is polled too, less often than the others (services.poll).
WORKING_STATUSES = (DispatchStatus.QUEUED, DispatchStatus.DELIVERED, DispatchStatus.APPROVING,
                    DispatchStatus.AWAITING_APPROVAL, DispatchStatus.REJECTING, DispatchStatus.PARTIALLY_ACCEPTING)
paint(DispatchStatus, success=[DispatchStatus.APPROVED, DispatchStatus.AUTO_APPROVED], info=WORKING_STATUSES,
      danger=[DispatchStatus.ERROR, DispatchStatus.APPROVAL_ERROR, DispatchStatus.REJECTION_ERROR,
              DispatchStatus.PARTIAL_ACCEPTANCE_ERROR, DispatchStatus.REJECTED],
      warning=[DispatchStatus.PARTIALLY_ACCEPTED])
# Delivered to the tax authority and not rejected by the receiver: goods that went and are to be invoiced within
# 7 days (the invoicing watch: dispatch.invoicing).
SENT_STATUSES = (DispatchStatus.DELIVERED, DispatchStatus.APPROVED, DispatchStatus.APPROVING,
                 DispatchStatus.APPROVAL_ERROR, DispatchStatus.AUTO_APPROVED, DispatchStatus.AWAITING_APPROVAL,
                 DispatchStatus.REJECTION_ERROR, DispatchStatus.PARTIALLY_ACCEPTED,
                 DispatchStatus.PARTIALLY_ACCEPTING, DispatchStatus.PARTIAL_ACCEPTANCE_ERROR)
# What "Faturalaştır" takes: the receiver's answer is in (approved, by itself after its 7 days, or in part), so the
# quantities to invoice are known.
INVOICEABLE_STATUSES = (DispatchStatus.APPROVED, DispatchStatus.AUTO_APPROVED, DispatchStatus.PARTIALLY_ACCEPTED)
# Document 3, 3.3 (and the issue): a note is changed only as a draft or after an error.
EDITABLE_STATUSES = (DispatchStatus.DRAFT, DispatchStatus.ERROR)
# What the create and update bodies may ask for: 0 saves a draft, 20 saves and sends at once.
SENDABLE_STATUSES = (DispatchStatus.DRAFT, DispatchStatus.QUEUED)


class Profile(models.TextChoices):
    """ProfileID of a note. The JSON model's despatchProfileType is an integer of the provider's client (0 basic,
    1 commercial); the tax authority's current rules allow the basic one and the two of regulated trades (HKS for
    fruit and vegetables, İDİS for steel) in UBL, and no longer the commercial one."""

    TEMELIRSALIYE = "TEMELIRSALIYE", _("Basic dispatch note")
    TICARIIRSALIYE = "TICARIIRSALIYE", _("Commercial dispatch note")
    HKSIRSALIYE = "HKSIRSALIYE", _("Fruit and vegetable (HKS) dispatch note")
    IDISIRSALIYE = "IDISIRSALIYE", _("Steel (İDİS) dispatch note")


PROFILE_NUMBERS = {Profile.TEMELIRSALIYE: 0, Profile.TICARIIRSALIYE: 1}
# What the form offers: the JSON model knows 0 and 1, and the tax authority refuses 1 (TICARIIRSALIYE).
FORM_PROFILES = (Profile.TEMELIRSALIYE,)
DESPATCH_TYPE_SEVK = 1  # despatchType: SEVK (shipment), the only type of the provider's client


class Source(models.TextChoices):
    FORM = "form", _("Form")
    UBL = "ubl", _("UBL file")
    PLATFORM = "platform", _("Read from the platform")


class Numbering(models.TextChoices):
    """How a note gets its 16-character number (document 3, 2.9: useManualDespatchAdviceId)."""

    SERIES = "series", _("Next number of a prefix (given here)")
    MANUAL = "manual", _("A number I type")
    PLATFORM = "platform", _("The platform's default series")


class DocumentKind(models.TextChoices):
    PDF = "pdf", "PDF"
    HTML = "html", "HTML"
    UBL = "ubl", "UBL"
    ZIP = "zip", "ZIP"


# --- replies (document 3, 2.9: their statuses are 0, 20, 40, 50, 60): ours to incoming notes, and the receivers'
# to our notes -----------------------------------------------------------------------------------------------------
class ReplyStatus(ColoredIntegerChoices):
    DRAFT = 0, _("Draft")
    QUEUED = 20, pgettext_lazy("platform status", "Queued")
    ERROR = 40, _("Error")
    DELIVERED = 50, _("Delivered to the tax authority")
    APPROVED = 60, pgettext_lazy("reply status", "Delivered")


paint(ReplyStatus, success=[ReplyStatus.APPROVED], danger=[ReplyStatus.ERROR],
      info=[ReplyStatus.QUEUED, ReplyStatus.DELIVERED])


class Answer(ColoredChoices):
    """What a reply says of the goods, decided by its lines."""

    ACCEPT = "accept", _("Accepted in full")
    REJECT = "reject", _("Rejected")
    PARTIAL = "partial", _("Partially accepted")

    @classmethod
    def of(cls, quantities) -> str:
        """Acceptance, rejection or partial acceptance, decided by the lines' (received, rejected) quantities."""
        quantities = [(Decimal(received or 0), Decimal(rejected or 0)) for received, rejected in quantities]
        if not any(rejected for _received, rejected in quantities):
            return cls.ACCEPT
        if not any(received for received, _rejected in quantities):
            return cls.REJECT
        return cls.PARTIAL


paint(Answer, success=[Answer.ACCEPT], danger=[Answer.REJECT], warning=[Answer.PARTIAL])
