"""Passenger lists as the platform knows them (document 2, section 4.3): the collective document of one
expedition, linked to the passenger tickets it covers; their Excel exports and the by-date report.

Field names are the platform's, in snake case. Totals are written in one place only:
services.list_totals (through services._store_tickets).
"""

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from backoffice.core import domains
from backoffice.core.exports import PlatformExport, export_rules
from backoffice.core.fields import MONEY
from backoffice.core.models import RemoteRecord, made_by
from backoffice.core.reports import ReportItemBase, ReportRunBase, run_link
from backoffice.core.search import FoldedSearchField

from .choices import CURRENT_STATES, ListState

tickets_api = domains.api("tickets")


class PassengerList(tickets_api.VehicleOperator, RemoteRecord):
    """One expedition's list. remote_id is its ettn; the platform gives its passengerListNumber.

    is_new_list is what the next push asks (document 2, 4.3): True creates (isNewList true; a list of the
    same information is replaced), False updates the list of the expedition.
    """

    remote_id = models.CharField(_("ETTN"), max_length=64, blank=True, db_index=True)
    passenger_list_number = models.CharField(_("passenger list number"), max_length=40, blank=True)
    state = models.CharField(_("tax authority"), max_length=10, choices=ListState.choices, default=ListState.SAVED)
    is_new_list = models.BooleanField(_("new list"), default=True)

    expedition_number = models.CharField(_("expedition number"), max_length=50)
    expedition_time = models.DateTimeField(_("expedition date"))
    vehicle_plate = models.CharField(_("vehicle plate"), max_length=20)
    is_manual_plate = models.BooleanField(
        _("plate given by hand"), default=False,
        help_text=_("On: the tickets are grouped by expedition number and date, and this plate is stored on the "
                    "list. Off: only the tickets of this plate are grouped."))

    tickets = models.ManyToManyField(tickets_api.PassengerTicket, related_name="passenger_lists", blank=True,
                                     verbose_name=_("tickets"))
    # Stored for the list pages; written only by services._store_tickets.
    ticket_count = models.PositiveIntegerField(_("tickets"), default=0)
    total_payable_amount = models.DecimalField(_("total payable"), default=0, **MONEY)
    total_commission_amount = models.DecimalField(_("commission"), default=0, **MONEY)
    total_commission_tax_amount = models.DecimalField(_("commission VAT"), default=0, **MONEY)

    replaced_by = models.ForeignKey("self", on_delete=models.SET_NULL, null=True, blank=True, related_name="replaces",
                                    verbose_name=_("replaced by"))
    reported_at = models.DateTimeField(_("reported on"), null=True, blank=True)
    platform_created = models.DateTimeField(_("created on the platform"), null=True, blank=True)
    created_by = made_by()
    # What the list's search looks in, folded the Turkish way (core.search).
    search_text = FoldedSearchField(sources=("passenger_list_number", "expedition_number", "vehicle_plate",
                                             "remote_id", "vehicle_operating_title"))

    class Meta(RemoteRecord.Meta):
        ordering = ["-created_at", "-id"]
        verbose_name = _("passenger list")
        verbose_name_plural = _("passenger lists")
        constraints = [
            models.UniqueConstraint(fields=["company", "remote_id"], condition=~Q(remote_id=""),
                                    name="passenger_lists_unique_ettn"),
        ]
        indexes = [
            # RemoteRecord's two, named within the 30-character limit.
            models.Index(fields=["company", "-created_at"], name="passenger_lists_co_new"),
            models.Index(fields=["sync_state", "updated_at"], name="passenger_lists_sync"),
            models.Index(fields=["company", "expedition_number", "expedition_time"], name="passenger_lists_exped"),
            models.Index(fields=["company", "passenger_list_number"], name="passenger_lists_number"),
        ]

    def __str__(self):
        return self.passenger_list_number or str(_("list of expedition %(number)s") % {
            "number": self.expedition_number})

    @property
    def state_color(self):
        return ListState.color(self.state)

    @property
    def is_current(self) -> bool:
        return self.state in CURRENT_STATES

    @property
    def is_editable(self) -> bool:
        """Document 2, section 3: a list reported to the tax authority cannot be updated (nor a replaced one)."""
        return self.state == ListState.SAVED and not self.is_busy

    @property
    def has_operator(self) -> bool:
        return bool(self.vehicle_operating_vkn_tckn)


class PassengerListExport(PlatformExport):
    """An Excel export of lists started on the platform (document 2, 4.3: ids and an expedition-time
    range); the ZIP is fetched while its 24-hour window is open and kept here."""

    file = models.FileField(_("file"), upload_to="passenger-list-exports/%Y/%m/", blank=True)

    class Meta(PlatformExport.Meta):
        constraints, indexes = export_rules("passenger_lists_export_unique_id", "passenger_lists_export_new")
        verbose_name = _("passenger list export")
        verbose_name_plural = _("passenger list exports")

    file_prefix = "passenger-lists"


class PassengerListReportRun(ReportRunBase):
    """One walk through the pages of the by-date report of lists (document 2, 4.3)."""

    class Meta(ReportRunBase.Meta):
        indexes = [models.Index(fields=["company", "report_date"], name="passenger_lists_run_lookup")]
        verbose_name = _("passenger list report fetch")
        verbose_name_plural = _("passenger list report fetches")


class PassengerListReportItem(ReportItemBase):
    """Document 2, section 2.5: the report item of one expedition's list."""

    run = run_link(PassengerListReportRun)
    passenger_list_number = models.CharField(_("passenger list number"), max_length=40)
    expedition_number = models.CharField(_("expedition number"), max_length=50, blank=True)
    vehicle_plate = models.CharField(_("vehicle plate"), max_length=20, blank=True)
    expedition_time = models.DateTimeField(_("expedition date"), null=True, blank=True)
    total_payable_amount = models.DecimalField(_("total payable"), null=True, blank=True, **MONEY)
    total_commission_amount = models.DecimalField(_("commission"), null=True, blank=True, **MONEY)
    total_commission_tax_amount = models.DecimalField(_("commission VAT"), null=True, blank=True, **MONEY)
    part_index = models.IntegerField(_("part"), null=True, blank=True)
    created_date = models.DateTimeField(_("created on the platform"), null=True, blank=True)

    class Meta(ReportItemBase.Meta):
        indexes = [models.Index(fields=["run", "id"], name="passenger_lists_report_run")]
        verbose_name = _("passenger list report item")
        verbose_name_plural = _("passenger list report")

    def __str__(self):
        return self.passenger_list_number
