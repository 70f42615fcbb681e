"""The ticket service's Excel exports and by-date reports (document 2, sections 4.1 and 4.2), declared for
core.families: its services, jobs, cron entries and pages come from these two declarations."""

from django import forms
from django.utils.translation import gettext_lazy as _

from backoffice.core import families
from backoffice.core.families import ExportFamily, ReportFamily
from backoffice.core.generic.forms import PlatformExportForm
from backoffice.core.reports import fields_spec

from . import conf
from .choices import TicketKind, TicketStatus
from .models import REPORT_ITEM_MODELS, ReportRun, TicketExport
from .services import ticket_client

class TicketExportForm(PlatformExportForm):
    """The export body of document 2, 4.1 (event) and 4.2 (passenger)."""

    status = forms.TypedChoiceField(label=_("Status"), coerce=int, required=False, empty_value=None,
                                    choices=[("", _("All")), *[(s.value, s.label) for s in TicketStatus
                                                               if s != TicketStatus.DELETED]])
    startDate = forms.DateTimeField(label=_("Created from"), required=False)
    endDate = forms.DateTimeField(label=_("Created until"), required=False)
    executionStartDate = forms.DateTimeField(label=_("Processed from"), required=False)
    executionEndDate = forms.DateTimeField(label=_("Processed until"), required=False)
    date_ranges = (("startDate", "endDate"), ("executionStartDate", "executionEndDate"),
                   ("eventStartDate", "eventEndDate"), ("departureStartDate", "departureEndDate"))

    def __init__(self, *args, kind=TicketKind.EVENT, **kwargs):
        self.kind = kind
        if kind == TicketKind.EVENT:
            extra = {"eventStartDate": forms.DateTimeField(label=_("Event from"), required=False),
                     "eventEndDate": forms.DateTimeField(label=_("Event until"), required=False),
                     "generateSummaryReport": forms.BooleanField(label=_("Add a summary report to the ZIP"),
                                                                 required=False)}
        else:
            extra = {"departureStartDate": forms.DateTimeField(label=_("Departure from"), required=False),
                     "departureEndDate": forms.DateTimeField(label=_("Departure until"), required=False),
                     "isArchived": forms.BooleanField(label=_("Archived tickets"), required=False)}
        self.base_fields = {**self.base_fields, **extra}
        super().__init__(*args, **kwargs)


TICKET_EXPORTS = ExportFamily(
    name="ticket_export", model=TicketExport, client=ticket_client, form=TicketExportForm, kinds=TicketKind,
    kind_label=_("Tickets"),
    label=_("Ticket Excel export"), poll_every=lambda: conf.get("TICKET_EXPORT_POLL_SECONDS"))

COMMON_REPORT_FIELDS = fields_spec(
    text=("ticket_number", "payment_type"), moments=("execution_date", "canceled_date", "create_date"),
    amounts=("total_amount", "total_vat"), numbers=("part_index",), flags=("canceled",))
KIND_REPORT_FIELDS = {
    TicketKind.EVENT: fields_spec(text=("location_city_code", "location_municipality", "location_description"),
                                  moments=("event_date",)),
    TicketKind.PASSENGER: fields_spec(
        text=("departure_location", "destination", "expedition_number", "vehicle_plate"),
        moments=("departure_date", "expedition_time"), amounts=("payable_amount",)),
}
TEXT_LIMITS = {"ticket_number": 20, "payment_type": 20, "location_city_code": 10, "location_municipality": 100,
               "location_description": 300, "departure_location": 200, "destination": 200,
               "expedition_number": 50, "vehicle_plate": 20}

TICKET_REPORTS = ReportFamily(
    name="ticket_report_sync", run_model=ReportRun, item_models=REPORT_ITEM_MODELS, client=ticket_client,
    fields=lambda kind: (*COMMON_REPORT_FIELDS, *KIND_REPORT_FIELDS[kind]), text_limits=TEXT_LIMITS,
    kinds=TicketKind, label=_("Fetch the by-date ticket report"), daily=True)


families.register_family(TICKET_EXPORTS)
families.register_family(TICKET_REPORTS)
