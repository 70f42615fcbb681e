"""Passenger-list exports and the by-date report of lists (document 2, 4.3), declared for core.families."""

from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from backoffice.core import families
from backoffice.core.conf import tunable
from backoffice.core.families import ExportFamily, ReportFamily
from backoffice.core.reports import fields_spec

from .choices import ListState
from .forms import PassengerListExportForm
from .models import PassengerList, PassengerListExport, PassengerListReportItem, PassengerListReportRun
from .services import list_client

LIST_EXPORTS = ExportFamily(
    name="passenger_list_export", model=PassengerListExport, client=lambda company, kind: list_client(company),
    form=PassengerListExportForm, label=_("Passenger list Excel export"),
    poll_every=lambda: tunable("PASSENGER_LIST_EXPORT_POLL_SECONDS", 30.0))

REPORT_FIELDS = fields_spec(
    text=("passenger_list_number", "expedition_number", "vehicle_plate"), moments=("expedition_time", "created_date"),
    amounts=("total_payable_amount", "total_commission_amount", "total_commission_tax_amount"), numbers=("part_index",))


def lists_reported(run, items) -> int:
    """The lists named in report items were reported to the tax authority: keep when, and refuse updates."""
    moments = {item.passenger_list_number: item.created_date for item in items if item.passenger_list_number}
    if not moments:
        return 0
    changed = 0
    for plist in PassengerList.objects.filter(company_id=run.company_id, passenger_list_number__in=list(moments),
                                              reported_at__isnull=True).only("pk", "state", "passenger_list_number"):
        fields = {"reported_at": moments[plist.passenger_list_number] or timezone.now(), "updated_at": timezone.now()}
        if plist.state == ListState.SAVED:
            fields["state"] = ListState.REPORTED
        changed += PassengerList.objects.filter(pk=plist.pk).update(**fields)
    return changed


LIST_REPORTS = ReportFamily(
    name="passenger_list_report_sync", run_model=PassengerListReportRun, item_models={None: PassengerListReportItem},
    client=lambda company, kind: list_client(company), fields=lambda kind: REPORT_FIELDS,
    text_limits={"passenger_list_number": 40, "expedition_number": 50, "vehicle_plate": 20},
    label=_("Fetch the by-date passenger list report"), daily=True, after_store=lists_reported,
    # Today's too, every 15 minutes, for companies with lists not known as reported: a list reported meanwhile is
    # refused an update here rather than by the platform.
    today_every=900, today_companies=lambda: PassengerList.objects.filter(state=ListState.SAVED).exclude(
        remote_id="").values("company_id"))


families.register_family(LIST_EXPORTS)
families.register_family(LIST_REPORTS)
