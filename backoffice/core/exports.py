"""Excel exports the platform prepares in the background and keeps for 24 hours (document 1, section 8),
shared by every document family that has them (tickets, passenger lists, ...).

A family's export model subclasses PlatformExport; its services call export_run() with the family's
client (anything with export(filters) -> exportId, export_history() and export_download(exportId), e.g.
remote.exports.ExportsAndReports). The job starts the export once, watches the export history until the
file shows, and downloads the ZIP while its window is open; not ready yet, it runs again shortly
(sync.fetch_ready -> jobs.TryLater); past 24 hours the export is shown as expired.
"""

import io
import secrets
import zipfile
from datetime import timedelta

from django.conf import settings
from django.core.files.base import ContentFile
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.text import get_valid_filename
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from backoffice.remote.errors import RemoteError

from . import jobs, sync
from .choices import ColoredChoices
from .models import RequestedWork, detail_url

EXPORT_WINDOW = timedelta(hours=24)  # document 1, section 8: exported ZIP files can be downloaded for 24 hours
EXPIRED_MESSAGE = gettext_lazy("The platform keeps an export for 24 hours; this one was not downloaded in time.")


class ExportState(ColoredChoices):
    REQUESTED = "requested", gettext_lazy("Requested")
    PREPARING = "preparing", gettext_lazy("Being prepared")
    AVAILABLE = "available", gettext_lazy("On the platform")
    DOWNLOADING = "downloading", gettext_lazy("Downloading")
    READY = "ready", gettext_lazy("Ready")
    EXPIRED = "expired", gettext_lazy("Expired")
    FAILED = "failed", gettext_lazy("Failed")


ExportState.COLORS = {
    ExportState.REQUESTED: "info", ExportState.PREPARING: "info", ExportState.AVAILABLE: "primary",
    ExportState.DOWNLOADING: "primary", ExportState.READY: "success", ExportState.FAILED: "danger",
}


# A job still works on these.
EXPORT_PENDING = (ExportState.REQUESTED, ExportState.PREPARING, ExportState.DOWNLOADING)


class ExportError(Exception):
    """An export action its state does not allow; the message is for the user."""


class PlatformExport(RequestedWork):
    """An Excel export started on the platform, and the ZIP kept here once fetched. Subclasses add what
    tells their exports apart (a kind) and their own `file` upload folder."""

    state = models.CharField(gettext_lazy("state"), max_length=20, choices=ExportState.choices,
                             default=ExportState.REQUESTED)
    filters = models.JSONField(gettext_lazy("filters"), default=dict, blank=True)
    export_id = models.CharField(gettext_lazy("export id"), max_length=100, blank=True)
    file_name = models.CharField(gettext_lazy("file name"), max_length=255, blank=True)
    platform_created = models.DateTimeField(gettext_lazy("prepared on the platform"), null=True, blank=True)
    file = models.FileField(gettext_lazy("file"), upload_to="exports/%Y/%m/", blank=True)
    size = models.PositiveBigIntegerField(gettext_lazy("size (bytes)"), null=True, blank=True)
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                     related_name="+", verbose_name=gettext_lazy("requested by"))
    fetched_at = models.DateTimeField(gettext_lazy("downloaded"), null=True, blank=True)

    class Meta(RequestedWork.Meta):
        abstract = True

    def __str__(self):
        return self.file_name or self.export_id or str(_("export %(pk)s") % {"pk": self.pk})

    @property
    def state_color(self):
        return ExportState.color(self.state)

    def download_name(self) -> str:
        """The name the user's browser saves the ZIP under."""
        name = get_valid_filename(self.file_name or self.default_file_name())
        return name if name.lower().endswith(".zip") else name + ".zip"

    file_prefix = "export"

    def default_file_name(self) -> str:
        """The kept file's name when the platform gave none: <kind or family>-export-<id>.zip."""
        return f"{getattr(self, 'kind', '') or self.file_prefix}-export-{self.export_id}.zip"

    def get_absolute_url(self):
        return detail_url(self)


def export_rules(unique_name, index_name, *identity):
    """A family's Meta (constraints, indexes): one row per export id the platform gave, per company (and
    identity fields); the company's exports newest first."""
    return ([models.UniqueConstraint(fields=["company", *identity, "export_id"], condition=~Q(export_id=""),
                                     name=unique_name)],
            [models.Index(fields=["company", "-created_at"], name=index_name)])


def parse_when(value):
    """An aware datetime from the platform's ISO text (naive ones in our time zone); None if empty or bad."""
    if not value:
        return None
    try:
        parsed = parse_datetime(str(value))
    except ValueError:
        return None
    if parsed is not None and timezone.is_naive(parsed):
        parsed = timezone.make_aware(parsed)
    return parsed


def export_started(export):
    return export.platform_created or export.created_at


def export_expires_at(export):
    return export_started(export) + EXPORT_WINDOW


def export_expired(export, now=None) -> bool:
    return (now or timezone.now()) >= export_expires_at(export)


def _history_item(client, export_id):
    for item in client.export_history() or []:
        if str(item.get("exportId")) == str(export_id):
            return item
    return None


def export_run(*, export, client, poll_every: float) -> str:
    """Start the export on the platform (once), wait until it shows in the export history, then download
    the ZIP while its 24-hour window is open and keep it. Not ready yet: the job runs again in poll_every s."""
    if not export.export_id:
        export_id = client.export(export.filters)
        export.export_id = str(export_id)
        export.state = ExportState.PREPARING
        export.save(update_fields=["export_id", "state"])
        jobs.set_progress(20, _("Started on the platform."))
    if export_expired(export):
        return export_expire(export)

    item = sync.fetch_ready(fetch=lambda: _history_item(client, export.export_id),
                            deadline=export_expires_at(export), every=poll_every)
    export.file_name = item.get("fileName") or export.file_name
    export.platform_created = parse_when(item.get("createdDate")) or export.platform_created
    export.state = ExportState.DOWNLOADING
    export.save(update_fields=["file_name", "platform_created", "state"])
    jobs.set_progress(60, _("Prepared on the platform; downloading."))
    if export_expired(export):
        return export_expire(export)
    try:
        content = client.export_download(export.export_id)
    except RemoteError as exc:
        if exc.status in (404, 410):
            return export_expire(export)
        raise
    return export_keep(export=export, content=content)


def export_keep(*, export, content: bytes) -> str:
    if not zipfile.is_zipfile(io.BytesIO(content)):
        raise RemoteError(_("The platform sent a file that is not a ZIP archive."), permanent=True)
    # A random name on disk: nothing to guess, and the files are only ever sent by their download view
    # (company and role checked), under export.download_name().
    export.file.save(f"{secrets.token_hex(16)}.zip", ContentFile(content), save=False)
    export.size = len(content)
    export.state = ExportState.READY
    export.fetched_at = timezone.now()
    export.message = ""
    export.save(update_fields=["file", "size", "state", "fetched_at", "message"])
    return _("Export downloaded (%(size)s bytes).") % {"size": len(content)}


def export_expire(export) -> str:
    export.state = ExportState.EXPIRED
    export.message = str(EXPIRED_MESSAGE)
    export.save(update_fields=["state", "message"])
    return export.message


def exports_expire(queryset) -> int:
    """Exports not downloaded within their 24 hours are shown as expired (no platform call)."""
    cutoff = timezone.now() - EXPORT_WINDOW
    pending = queryset.filter(state__in=[ExportState.AVAILABLE, ExportState.REQUESTED, ExportState.PREPARING])
    expired = pending.filter(Q(platform_created__lt=cutoff) | Q(platform_created__isnull=True, created_at__lt=cutoff))
    return expired.update(state=ExportState.EXPIRED, message=str(EXPIRED_MESSAGE))
