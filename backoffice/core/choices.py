"""Choices as classes with labels and a badge colour, used wherever a state is shown."""

from django.db import models
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy


class Colored:
    """Members that carry a Bootstrap badge colour in COLORS (member -> colour; any other is "secondary")."""

    @classmethod
    def color(cls, value):
        return getattr(cls, "COLORS", {}).get(value, "secondary")


class ColoredChoices(Colored, models.TextChoices):
    pass


class ColoredIntegerChoices(Colored, models.IntegerChoices):
    pass


def paint(choices, **members):
    """Give `choices` its COLORS by colour: paint(Status, success=[Status.APPROVED], danger=[Status.ERROR])."""
    choices.COLORS = {member: color for color, group in members.items() for member in group}


class Environment(models.TextChoices):
    SANDBOX = "sandbox", _("Sandbox (simulator)")
    TEST = "test", _("Test")
    PRODUCTION = "production", _("Production")


class AuthMethod(models.TextChoices):
    API_KEY = "api_key", _("API key")
    SERVICE_USER = "service_user", _("Service user (bearer token)")


class SyncState(ColoredChoices):
    LOCAL = "local", _("Saved locally")
    # Three "queued" meet on one page (ours, the job's, the platform's): each says whose it is.
    QUEUED = "queued", _("Waiting to be sent")
    SENDING = "sending", _("Sending")
    SYNCED = "synced", _("Synced")
    FAILED = "failed", _("Failed")


SyncState.COLORS = {SyncState.LOCAL: "secondary", SyncState.QUEUED: "info", SyncState.SENDING: "primary",
                    SyncState.SYNCED: "success", SyncState.FAILED: "danger"}


class JobStatus(ColoredChoices):
    QUEUED = "queued", pgettext_lazy("background job", "Queued")
    RUNNING = "running", _("Running")
    SUCCEEDED = "succeeded", _("Succeeded")
    RETRYING = "retrying", _("Will retry")
    DEFERRED = "deferred", _("Waiting for rate limit")
    FAILED = "failed", _("Failed")


JobStatus.COLORS = {JobStatus.QUEUED: "info", JobStatus.RUNNING: "primary", JobStatus.SUCCEEDED: "success",
                    JobStatus.RETRYING: "warning", JobStatus.DEFERRED: "warning", JobStatus.FAILED: "danger"}


class Role(models.TextChoices):
    """The three roles; each is a Django group created by a migration (core 0002)."""

    ACCOUNTING = "accounting", _("Accounting staff")
    MANAGER = "manager", _("Manager")
    ADMINISTRATOR = "administrator", _("Administrator")


# The platform's services (settings.PLATFORM_SERVICES) as people read them.
SERVICE_LABELS = {
    "auth": _("Token issuer"),
    "ticket": _("Ticket service"),
    "invoice": _("Invoice service"),
    "accounting": _("Accounting service"),
    "ledger": _("E-ledger service"),
    "dispatch": _("Dispatch-note service"),
    "crm": _("Company-management service"),
}


def service_label(service: str) -> str:
    return SERVICE_LABELS.get(service, service)
