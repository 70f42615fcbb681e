"""Choices of the e-ledger (document 3, 2.8 and 3.2).

Document 3 shows only that a period's Status is an integer, that a task waits with status 1 and converts
text to XML at progress 20, and that a book entry is created with status 10. The other codes are ours (the
sandbox's, ops/ledger.py); which of them mean "being worked on", "approved" and "submission failed" are
settings (LEDGER_*_STATUSES), to be confirmed with the provider. An unknown code shows as its number.
"""

from django.db import models
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from backoffice.core.choices import ColoredChoices, ColoredIntegerChoices, paint


class PeriodStatus(ColoredIntegerChoices):
    UPLOADED = 0, pgettext_lazy("ledger period", "Uploaded")
    CONVERTING = 20, _("Converting and checking")
    READY = 30, _("Ready for the certificates")
    ERROR = 40, _("Refused by the checks")
    SENT = 50, _("Certificates sent to the tax authority")
    APPROVED = 60, _("Approved by the tax authority")
    SUBMISSION_FAILED = 80, _("Certificate submission failed")


paint(PeriodStatus, success=[PeriodStatus.APPROVED], primary=[PeriodStatus.READY],
      danger=[PeriodStatus.ERROR, PeriodStatus.SUBMISSION_FAILED], info=[PeriodStatus.SENT, PeriodStatus.CONVERTING])


class TaskStatus(models.IntegerChoices):
    WAITING = 1, _("Waiting")
    RUNNING = 2, _("Running")
    COMPLETED = 3, _("Completed")
    FAILED = 4, pgettext_lazy("ledger task", "Failed")


class GeneralBookType(models.IntegerChoices):
    JOURNAL = 1, _("Journal")
    LEDGER = 2, _("General ledger")


class PreviewType(models.IntegerChoices):
    """previewType of the preview operation (document 3, 4.4)."""

    JOURNAL = 1, _("Journal")
    LEDGER = 2, _("General ledger")
    CERTIFICATE = 3, _("Journal and ledger certificate")
    APPROVED_CERTIFICATE = 4, _("Certificate approved by the tax authority")


class CheckState(ColoredChoices):
    """Where our own check of an uploaded journal stands (before anything goes to the platform)."""

    WAITING = "waiting", _("Waiting to be checked")
    CHECKING = "checking", _("Being checked")
    ERRORS = "errors", _("Has errors")
    PASSED = "passed", _("No errors")
    UNREADABLE = "unreadable", _("Could not be read")


paint(CheckState, success=[CheckState.PASSED], danger=[CheckState.ERRORS, CheckState.UNREADABLE],
      info=[CheckState.CHECKING])


class SourceKind(models.TextChoices):
    TEXT = "txt", _("Journal text (tab-separated)")
    XLSX = "xlsx", _("Excel journal (template)")
