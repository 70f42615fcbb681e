"""Excel exports of outgoing dispatch notes (document 3, 4.5), declared for core.families: its services, jobs,
cron entries and pages come from this declaration."""

from django.utils.translation import gettext_lazy as _

from backoffice.core import families
from backoffice.core.families import ExportFamily

from . import services
from .forms import DispatchExportForm
from .models import DispatchExport

DISPATCH_EXPORTS = ExportFamily(
    name="dispatch_export", model=DispatchExport, client=services.export_client, form=DispatchExportForm,
    label=_("Dispatch note Excel export"), poll_every=lambda: services.setting("DISPATCH_EXPORT_POLL_SECONDS"))


families.register_family(DISPATCH_EXPORTS)
