"""Choices of invoices (document 3, 2.6; the codes of the provider's client in the facts file)."""

from django.db import models
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from backoffice.core.choices import ColoredChoices, ColoredIntegerChoices, paint


class InvoiceStatus(ColoredIntegerChoices):
    """The platform's status of an invoice (facts file: the provider's client; 61 to 92 as dispatch notes)."""

    DRAFT = 0, _("Draft")
    TEST = 5, pgettext_lazy("invoice status", "Test")
    CANCELLED = 10, _("Cancelled")
    QUEUED = 20, pgettext_lazy("platform status", "Queued")
    RUNNING = 30, _("Being processed")
    ERROR = 40, _("Error")
    SENT = 50, _("Sent to the tax authority")
    APPROVED = 60, _("Approved")
    APPROVING = 61, _("Being approved")
    APPROVAL_ERROR = 62, _("Approval error")
    AUTO_APPROVED = 65, _("Approved automatically")
    AWAITING_APPROVAL = 70, _("Awaiting approval")
    DECLINED = 80, _("Declined")
    DECLINING = 81, _("Being declined")
    DECLINE_ERROR = 82, _("Decline error")
    RETURNED = 90, _("Returned")
    RETURNING = 91, _("Being returned")
    RETURN_ERROR = 92, _("Return error")
    EARCHIVE_CANCELLED = 100, _("e-Archive cancelled")


# The platform still works on these: polled until they settle (70: the receiver has not answered yet).
WORKING_STATUSES = (InvoiceStatus.QUEUED, InvoiceStatus.RUNNING, InvoiceStatus.SENT, InvoiceStatus.APPROVING,
                    InvoiceStatus.AWAITING_APPROVAL, InvoiceStatus.DECLINING, InvoiceStatus.RETURNING)
# Posting needs an invoice that is not cancelled (document 3, 3.1).
CANCELLED_STATUSES = (InvoiceStatus.CANCELLED, InvoiceStatus.EARCHIVE_CANCELLED)
# An issued invoice is legally binding: we offer to change one only before it went out, or when it failed.
EDITABLE_STATUSES = (InvoiceStatus.DRAFT, InvoiceStatus.ERROR)
APPROVED_STATUSES = (InvoiceStatus.APPROVED, InvoiceStatus.AUTO_APPROVED)  # what a return invoice may refer to
# What someone has to look at: the platform or the receiver refused it, or it failed.
ATTENTION_STATUSES = (InvoiceStatus.ERROR, InvoiceStatus.APPROVAL_ERROR, InvoiceStatus.DECLINE_ERROR,
                      InvoiceStatus.RETURN_ERROR, InvoiceStatus.DECLINED)
paint(InvoiceStatus, success=APPROVED_STATUSES, danger=ATTENTION_STATUSES, info=WORKING_STATUSES,
      warning=(InvoiceStatus.CANCELLED, InvoiceStatus.EARCHIVE_CANCELLED, InvoiceStatus.RETURNED))


# An incoming commercial invoice (TICARIFATURA) is answered within 8 days of its arrival (answers.py); the platform
# accepts one left unanswered itself (65).
ANSWER_DAYS = 8
ANSWERABLE_STATUS = InvoiceStatus.AWAITING_APPROVAL


class ResponseStatus(ColoredIntegerChoices):
    """The life of our answer to an incoming commercial invoice on the platform (responseStatus)."""

    QUEUED = 20, pgettext_lazy("platform status", "Queued")
    ERROR = 40, _("Error")
    SENT = 50, _("Sent to the tax authority")
    DELIVERED = 60, pgettext_lazy("reply status", "Delivered")


paint(ResponseStatus, success=[ResponseStatus.DELIVERED], danger=[ResponseStatus.ERROR],
      info=[ResponseStatus.QUEUED, ResponseStatus.SENT])
RESPONSE_WORKING = (ResponseStatus.QUEUED, ResponseStatus.SENT)


class Answer(ColoredChoices):
    ACCEPT = "accept", pgettext_lazy("answer", "Accepted")
    REJECT = "reject", pgettext_lazy("answer", "Rejected")


paint(Answer, success=[Answer.ACCEPT], danger=[Answer.REJECT])


class MatchState(ColoredChoices):
    """An incoming invoice held against the dispatch notes it bills and our answers to them (matching.py)."""

    MATCHED = "matched", _("Matches the goods accepted")
    MISMATCH = "mismatch", _("Differs from the goods accepted")
    NO_NOTES = "no_notes", _("No dispatch note found")
    UNREADABLE = "unreadable", _("UBL not readable")


paint(MatchState, success=[MatchState.MATCHED], danger=[MatchState.MISMATCH, MatchState.UNREADABLE],
      secondary=[MatchState.NO_NOTES])


def status_label(code) -> str:
    """An invoice status as people read it; a code we do not know shows as it is."""
    try:
        return str(InvoiceStatus(code).label)
    except ValueError:
        return str(code)


class RecordType(ColoredIntegerChoices):
    EARCHIVE = 0, _("e-Archive invoice")
    EINVOICE = 1, _("e-Invoice")


paint(RecordType, primary=[RecordType.EINVOICE], info=[RecordType.EARCHIVE])


class PostingStatus(ColoredIntegerChoices):
    """recordStatus: whether the invoice is posted to accounting (0 in document 3; 1 our reading)."""

    NOT_POSTED = 0, _("Not posted")
    POSTED = 1, _("Posted to accounting")


paint(PostingStatus, success=[PostingStatus.POSTED])


class Profile(models.TextChoices):
    """invoiceProfileType (an integer in bodies, the name in lists)."""

    TEMELFATURA = "TEMELFATURA", _("Basic invoice")
    TICARIFATURA = "TICARIFATURA", _("Commercial invoice")
    IHRACAT = "IHRACAT", _("Export")
    YOLCUBERABERFATURA = "YOLCUBERABERFATURA", _("Passenger (tax-free) invoice")
    EARSIVFATURA = "EARSIVFATURA", _("e-Archive invoice")
    KAGIT = "KAGIT", _("Paper invoice")


PROFILE_NUMBERS = {Profile.TEMELFATURA: 0, Profile.TICARIFATURA: 1, Profile.IHRACAT: 2,
                   Profile.YOLCUBERABERFATURA: 3, Profile.EARSIVFATURA: 4, Profile.KAGIT: 5}


class InvoiceType(models.TextChoices):
    SATIS = "SATIS", _("Sale")
    IADE = "IADE", _("Return")
    ISTISNA = "ISTISNA", _("Exemption")
    OZELMATRAH = "OZELMATRAH", _("Special base")
    TEVKIFAT = "TEVKIFAT", _("Withholding")
    ARACTESCIL = "ARACTESCIL", _("Vehicle registration")
    IHRACKAYITLI = "IHRACKAYITLI", _("Export-registered")
    SGK = "SGK", _("Social security (SGK)")
    KOMISYONCU = "KOMISYONCU", _("Commission agent")


TYPE_NUMBERS = {name: number for number, name in enumerate(InvoiceType.values, start=1)}


class DocumentKind(models.TextChoices):
    PDF = "pdf", "PDF"
    HTML = "html", "HTML"
    UBL = "ubl", "UBL"


def _name(value, numbers) -> str:
    """A name of these choices from the name or the integer the platform sends."""
    if value in (None, ""):
        return ""
    by_number = {number: name for name, number in numbers.items()}
    try:
        return str(by_number.get(int(value), ""))
    except (TypeError, ValueError):
        return str(value).upper()


def profile_name(value) -> str:
    return _name(value, PROFILE_NUMBERS)


def type_name(value) -> str:
    return _name(value, TYPE_NUMBERS)
