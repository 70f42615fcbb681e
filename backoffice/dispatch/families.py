"""Excel exports of outgoing dispatch notes (document 3, 4.5), declared for core.families: its services, jobs,
cron entries and pages come from this declaration."""

from django.utils.translation import gettext_lazy as _

from backoffice.core.families import ExportFamily

from . import inbox, services
from .forms import DispatchExportForm
from .inbox_forms import IncomingExportForm
from .models import DispatchExport, IncomingExport

DISPATCH_EXPORTS = ExportFamily(
    name="dispatch_export", model=DispatchExport, client=services.export_client, form=DispatchExportForm,
    label=_("Dispatch note Excel export"), poll_every=lambda: services.setting("DISPATCH_EXPORT_POLL_SECONDS"))

INCOMING_EXPORTS = ExportFamily(
    name="dispatch_incoming_export", model=IncomingExport, client=inbox.inbox_export_client, form=IncomingExportForm,
    label=_("Incoming dispatch note Excel export"), poll_every=lambda: services.setting("DISPATCH_EXPORT_POLL_SECONDS"))
