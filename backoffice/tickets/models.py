"""Event and passenger tickets as the platform knows them (document 2, sections 2.1 to 2.4), their
lines, taxes and notes, the Excel exports kept for the user and the by-date reports.

Field names are the platform's, in snake case (ticketNumber -> ticket_number). Totals of a ticket are
stored for the list pages and written in one place only: services._store_children (via totals()).
"""

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from backoffice.core.exports import PlatformExport, export_rules
from backoffice.core.fields import MONEY
from backoffice.core.models import RemoteRecord, made_by
from backoffice.core.reports import ReportItemBase, ReportRunBase, run_link
from backoffice.core.search import FoldedSearchField
from backoffice.core.validators import validate_document_number

from .choices import EDITABLE_STATUSES, DocumentType, PaymentType, TicketKind, TicketStatus

RATE = {"max_digits": 7, "decimal_places": 2,
        "validators": [MinValueValidator(0), MaxValueValidator(100)]}
# What a list's search looks in, folded the Turkish way (core.search): these and the kind's own fields.
SEARCHED = ("ticket_number", "identifier", "customer_first_name", "customer_last_name")


class Ticket(RemoteRecord):
    """The fields common to event and passenger tickets (document 2, section 2.1).

    remote_id is the ettn; remote_status the platform's status (0, 20, 40, 60, 100).
    """

    remote_id = models.CharField(_("ETTN"), max_length=64, blank=True, db_index=True)
    remote_status = models.IntegerField(_("platform status"), choices=TicketStatus.choices, null=True, blank=True)
    # What the user asked the create or update body to say: 0 draft, 20 queued (send).
    requested_status = models.IntegerField(_("requested status"), choices=TicketStatus.choices,
                                           default=TicketStatus.DRAFT)
    status_message = models.TextField(_("platform message"), blank=True)

    document_type = models.PositiveSmallIntegerField(_("document type"), choices=DocumentType.choices,
                                                     default=DocumentType.SATIS)
    ticket_date = models.DateTimeField(_("ticket date"), null=True, blank=True)
    ticket_number = models.CharField(_("ticket number"), max_length=16, validators=[validate_document_number])
    prefix = models.CharField(_("prefix"), max_length=3)
    currency_code = models.CharField(_("currency"), max_length=3, default="TRY")
    exchange_rate = models.DecimalField(_("exchange rate"), max_digits=18, decimal_places=6, null=True, blank=True)
    reference_number = models.CharField(_("reference number"), max_length=100, blank=True)
    identifier = models.CharField(_("customer identifier"), max_length=20, blank=True)
    customer_first_name = models.CharField(_("customer first name"), max_length=100, blank=True)
    customer_last_name = models.CharField(_("customer last name"), max_length=100, blank=True)
    customer_street = models.CharField(_("street"), max_length=200, blank=True)
    customer_building_name = models.CharField(_("building name"), max_length=100, blank=True)
    customer_building_no = models.CharField(_("building no."), max_length=20, blank=True)
    customer_door_no = models.CharField(_("door no."), max_length=20, blank=True)
    customer_town = models.CharField(_("town"), max_length=100, blank=True)
    customer_district = models.CharField(_("district"), max_length=100, blank=True)
    customer_city = models.CharField(_("city"), max_length=100, blank=True)
    customer_post_code = models.CharField(_("post code"), max_length=10, blank=True)
    customer_country = models.CharField(_("country code"), max_length=2, blank=True)
    customer_telephone = models.CharField(_("telephone"), max_length=30, blank=True)
    customer_email = models.EmailField(_("customer e-mail"), blank=True)
    is_email_send = models.BooleanField(_("send by e-mail"), default=False)
    customer_tax_center = models.CharField(_("tax office"), max_length=100, blank=True)
    payment_type = models.CharField(_("payment type"), max_length=20, choices=PaymentType.choices)
    payment_description = models.CharField(_("payment description"), max_length=200, blank=True)
    record_expenses_vkn_tckn = models.CharField(_("expense record VKN/TCKN"), max_length=11, blank=True)
    record_expenses_title = models.CharField(_("expense record title"), max_length=200, blank=True)
    xslt_code = models.CharField(_("layout code"), max_length=100, blank=True)

    # Stored for the list pages; written only by services._store_children.
    total_amount = models.DecimalField(_("amount"), default=0, **MONEY)
    total_discount = models.DecimalField(_("discount"), default=0, **MONEY)
    total_vat = models.DecimalField(_("VAT"), default=0, **MONEY)
    total_taxes = models.DecimalField(_("other taxes"), default=0, **MONEY)
    payable_amount = models.DecimalField(_("payable"), default=0, **MONEY)

    created_by = made_by()

    ticket_type: str = ""  # YOLCU / ETKINLIK, set by each kind
    kind: str = ""  # TicketKind

    class Meta(RemoteRecord.Meta):
        abstract = True
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return self.ticket_number or str(_("new ticket"))

    @property
    def status_color(self):
        return TicketStatus.color(self.remote_status)

    @property
    def is_editable(self) -> bool:
        """Document 2, section 3: update only in status 0 or 40 (or while the platform has nothing)."""
        return not self.is_busy and (not self.remote_id or self.remote_status in EDITABLE_STATUSES)

    def clean(self):
        super().clean()
        # Document 2, section 2.1: prefix equals the first three characters of ticketNumber.
        if self.ticket_number and self.prefix and self.ticket_number[:3] != self.prefix:
            raise ValidationError({"prefix": _("The prefix must equal the first three characters of the ticket "
                                               "number (%(start)s).") % {"start": self.ticket_number[:3]}})


def ticket_rules(unique_name, status_index_name, *indexes):
    """A kind's Meta (constraints, indexes): one ticket per number and company; the company's list by status,
    newest first, and the kind's own indexes."""
    return ([models.UniqueConstraint(fields=["company", "ticket_number"], name=unique_name)],
            [*Ticket.Meta.indexes, models.Index(fields=["company", "remote_status", "-created_at"],
                                                name=status_index_name), *indexes])


class EventTicket(Ticket):
    """Document 2, section 2.2."""

    seat_number = models.CharField(_("seat"), max_length=50, blank=True)
    event_time = models.DateTimeField(_("event time"), null=True, blank=True)
    event_name = models.CharField(_("event name"), max_length=200)
    event_location = models.CharField(_("event place"), max_length=200)
    event_city = models.CharField(_("event city"), max_length=100, blank=True)
    event_city_id = models.PositiveSmallIntegerField(
        _("province"), validators=[MinValueValidator(1), MaxValueValidator(81)])
    event_municipality = models.CharField(_("municipality"), max_length=100)
    event_description = models.CharField(_("event description"), max_length=500, blank=True)
    event_organizer_vkn_tckn = models.CharField(_("organizer VKN/TCKN"), max_length=11)
    search_text = FoldedSearchField(sources=(*SEARCHED, "event_name", "seat_number"))

    ticket_type = "ETKINLIK"
    kind = TicketKind.EVENT

    class Meta(Ticket.Meta):
        verbose_name = _("event ticket")
        verbose_name_plural = _("event tickets")
        # The duplicate-seat check of the ticket form (same event, same seat) has its index.
        constraints, indexes = ticket_rules("tickets_event_number_unique", "tickets_event_co_status", models.Index(
            fields=["company", "event_name", "seat_number"], name="tickets_event_seat"))


class VehicleOperator(models.Model):
    """The vehicle operator of a passenger ticket (document 2, 2.3), also a passenger list's (4.3: "of 2.3")."""

    vehicle_operating_vkn_tckn = models.CharField(_("operator VKN/TCKN"), max_length=11, blank=True)
    vehicle_operating_title = models.CharField(_("operator title"), max_length=200, blank=True)
    vehicle_operating_tax_center = models.CharField(_("operator tax office"), max_length=100, blank=True)
    commission_amount = models.DecimalField(_("commission"), null=True, blank=True, **MONEY)
    commission_tax_amount = models.DecimalField(_("commission VAT"), null=True, blank=True, **MONEY)
    vehicle_operating_country = models.CharField(_("operator country"), max_length=50, blank=True)
    vehicle_operating_city = models.CharField(_("operator city"), max_length=100, blank=True)
    vehicle_operating_district = models.CharField(_("operator district"), max_length=100, blank=True)
    vehicle_operating_town = models.CharField(_("operator town"), max_length=100, blank=True)
    vehicle_operating_street = models.CharField(_("operator street"), max_length=200, blank=True)
    vehicle_operating_building_name = models.CharField(_("operator building name"), max_length=100, blank=True)
    vehicle_operating_building_no = models.CharField(_("operator building no."), max_length=20, blank=True)
    vehicle_operating_door_no = models.CharField(_("operator door no."), max_length=20, blank=True)
    vehicle_operating_post_code = models.CharField(_("operator post code"), max_length=10, blank=True)
    vehicle_operating_mersis_no = models.CharField(_("operator MERSIS no."), max_length=20, blank=True)
    vehicle_operating_register_no = models.CharField(_("operator trade register no."), max_length=30, blank=True)
    vehicle_operating_telephone = models.CharField(_("operator telephone"), max_length=30, blank=True)
    vehicle_operating_email = models.EmailField(_("operator e-mail"), blank=True)

    class Meta:
        abstract = True


# Their names in the documents' order: VKN/TCKN, title, tax office, the commissions, then the address.
OPERATOR_FIELDS = tuple(field.name for field in VehicleOperator._meta.fields)


class PassengerTicket(VehicleOperator, Ticket):
    """Document 2, section 2.3. Passenger lists (issue 5) group these by expedition number, expedition
    time and plate: the index below serves that grouping."""

    vehicle_plate = models.CharField(_("vehicle plate"), max_length=20)
    expedition_time = models.DateTimeField(_("expedition date"))
    expedition_number = models.CharField(_("expedition number"), max_length=50)
    departure_date = models.DateTimeField(_("departure time"))
    departure_location = models.CharField(_("departure place"), max_length=200)
    destination = models.CharField(_("destination"), max_length=200, blank=True)
    seat_number = models.CharField(_("seat"), max_length=50)
    search_text = FoldedSearchField(sources=(*SEARCHED, "expedition_number", "vehicle_plate"))

    ticket_type = "YOLCU"
    kind = TicketKind.PASSENGER

    class Meta(Ticket.Meta):
        verbose_name = _("passenger ticket")
        verbose_name_plural = _("passenger tickets")
        constraints, indexes = ticket_rules("tickets_passenger_number_unique", "tickets_pass_co_status", models.Index(
            fields=["company", "expedition_number", "expedition_time", "vehicle_plate"],
            name="tickets_pass_expedition"))


def _one_ticket():
    return (Q(event_ticket__isnull=False, passenger_ticket__isnull=True)
            | Q(event_ticket__isnull=True, passenger_ticket__isnull=False))


class TicketLine(models.Model):
    """One item of a ticket (document 2, section 2.4), of either kind."""

    event_ticket = models.ForeignKey(EventTicket, on_delete=models.CASCADE, null=True, blank=True,
                                     related_name="lines")
    passenger_ticket = models.ForeignKey(PassengerTicket, on_delete=models.CASCADE, null=True, blank=True,
                                         related_name="lines")
    position = models.PositiveSmallIntegerField(_("line"), default=1)
    service_type = models.CharField(_("service type"), max_length=50, blank=True)
    service_description = models.CharField(_("description"), max_length=200, blank=True)
    amount = models.DecimalField(_("amount"), **MONEY)
    discount_rate = models.DecimalField(_("discount (%)"), default=0, **RATE)
    discount_amount = models.DecimalField(_("discount"), default=0, **MONEY)
    vat_rate = models.DecimalField(_("VAT (%)"), default=0, **RATE)
    vat_amount = models.DecimalField(_("VAT"), default=0, **MONEY)

    class Meta:
        ordering = ["position", "id"]
        constraints = [models.CheckConstraint(condition=_one_ticket(), name="tickets_line_one_ticket")]
        verbose_name = _("ticket line")
        verbose_name_plural = _("ticket lines")

    def __str__(self):
        return self.service_description or f"#{self.position}"


class TicketLineTax(models.Model):
    """A tax of a line other than VAT; the payload spells its fields taxtRate and taxtAmount."""

    line = models.ForeignKey(TicketLine, on_delete=models.CASCADE, related_name="taxes")
    tax_code = models.CharField(_("tax code"), max_length=10)
    tax_name = models.CharField(_("tax name"), max_length=100, blank=True)
    taxt_rate = models.DecimalField(_("tax rate (%)"), **RATE)
    taxt_amount = models.DecimalField(_("tax amount"), **MONEY)

    class Meta:
        verbose_name = _("line tax")
        verbose_name_plural = _("line taxes")

    def __str__(self):
        return f"{self.tax_code} {self.taxt_rate}%"


class TicketNote(models.Model):
    event_ticket = models.ForeignKey(EventTicket, on_delete=models.CASCADE, null=True, blank=True,
                                     related_name="notes")
    passenger_ticket = models.ForeignKey(PassengerTicket, on_delete=models.CASCADE, null=True, blank=True,
                                         related_name="notes")
    position = models.PositiveSmallIntegerField(default=1)
    note = models.CharField(_("note"), max_length=500)

    class Meta:
        ordering = ["position", "id"]
        constraints = [models.CheckConstraint(condition=_one_ticket(), name="tickets_note_one_ticket")]
        verbose_name = _("note")
        verbose_name_plural = _("notes")

    def __str__(self):
        return self.note


class TicketExport(PlatformExport):
    """An Excel export started on the platform; the ZIP is fetched while its 24-hour window is open and
    kept here for the user (document 2, sections 4.1 and 4.2; document 1, section 8)."""

    kind = models.CharField(_("tickets"), max_length=20, choices=TicketKind.choices)
    file = models.FileField(_("file"), upload_to="ticket-exports/%Y/%m/", blank=True)

    class Meta(PlatformExport.Meta):
        constraints, indexes = export_rules("tickets_export_unique_id", "tickets_export_co_new", "kind")
        verbose_name = _("ticket export")
        verbose_name_plural = _("ticket exports")


class ReportRun(ReportRunBase):
    """One walk through the pages of a by-date report (document 2, sections 4.1 and 4.2); see
    core.reports for how a walk resumes and replaces the previous one."""

    kind = models.CharField(_("report"), max_length=20, choices=TicketKind.choices)

    class Meta(ReportRunBase.Meta):
        indexes = [models.Index(fields=["company", "kind", "report_date"], name="tickets_reportrun_lookup")]
        verbose_name = _("report fetch")
        verbose_name_plural = _("report fetches")

    def report_key(self):
        return {**super().report_key(), "kind": self.kind}


class ReportItem(ReportItemBase):
    """Fields common to the event and passenger report items (document 2, section 2.5)."""

    run = run_link(ReportRun)
    ticket_number = models.CharField(_("ticket number"), max_length=20)
    execution_date = models.DateTimeField(_("execution date"), null=True, blank=True)
    payment_type = models.CharField(_("payment type"), max_length=20, blank=True)
    total_amount = models.DecimalField(_("amount"), null=True, blank=True, **MONEY)
    total_vat = models.DecimalField(_("VAT"), null=True, blank=True, **MONEY)
    canceled_date = models.DateTimeField(_("cancelled on"), null=True, blank=True)
    canceled = models.BooleanField(_("cancelled"), default=False)
    part_index = models.IntegerField(_("part"), null=True, blank=True)
    create_date = models.DateTimeField(_("created on the platform"), null=True, blank=True)

    class Meta(ReportItemBase.Meta):
        abstract = True

    def __str__(self):
        return self.ticket_number


class EventTicketReportItem(ReportItem):
    event_date = models.DateTimeField(_("event date"), null=True, blank=True)
    location_city_code = models.CharField(_("province"), max_length=10, blank=True)
    location_municipality = models.CharField(_("municipality"), max_length=100, blank=True)
    location_description = models.CharField(_("place"), max_length=300, blank=True)

    class Meta(ReportItem.Meta):
        indexes = [models.Index(fields=["run", "id"], name="tickets_eventreport_run")]
        verbose_name = _("event ticket report item")
        verbose_name_plural = _("event ticket report")


class PassengerTicketReportItem(ReportItem):
    departure_date = models.DateTimeField(_("departure time"), null=True, blank=True)
    departure_location = models.CharField(_("departure place"), max_length=200, blank=True)
    destination = models.CharField(_("destination"), max_length=200, blank=True)
    expedition_time = models.DateTimeField(_("expedition date"), null=True, blank=True)
    expedition_number = models.CharField(_("expedition number"), max_length=50, blank=True)
    vehicle_plate = models.CharField(_("vehicle plate"), max_length=20, blank=True)
    payable_amount = models.DecimalField(_("payable"), null=True, blank=True, **MONEY)

    class Meta(ReportItem.Meta):
        indexes = [models.Index(fields=["run", "id"], name="tickets_passreport_run")]
        verbose_name = _("passenger ticket report item")
        verbose_name_plural = _("passenger ticket report")


TICKET_MODELS = {TicketKind.EVENT: EventTicket, TicketKind.PASSENGER: PassengerTicket}
REPORT_ITEM_MODELS = {TicketKind.EVENT: EventTicketReportItem, TicketKind.PASSENGER: PassengerTicketReportItem}
