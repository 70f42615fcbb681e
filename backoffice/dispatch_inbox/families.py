"""Excel exports of incoming dispatch notes (document 3, 4.5), declared for core.families: its services, jobs,
cron entries and pages come from this declaration."""

from django.utils.translation import gettext_lazy as _

from backoffice.core import families
from backoffice.core.families import ExportFamily

from .conf import setting
from .forms import IncomingExportForm
from .mirror import inbox_export_client
from .models import IncomingExport

INCOMING_EXPORTS = ExportFamily(
    name="dispatch_incoming_export", model=IncomingExport, client=inbox_export_client, form=IncomingExportForm,
    label=_("Incoming dispatch note Excel export"), poll_every=lambda: setting("DISPATCH_EXPORT_POLL_SECONDS"))


families.register_family(INCOMING_EXPORTS)
