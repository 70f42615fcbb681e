"""Ticket forms: every rule of document 2, sections 2.1 to 2.4 and 3, on the field it concerns.

Create and update differ as the spec says: the ticketNumber is allocated (the user chooses its
prefix) and eventCityId is given at create only; seatNumber of an event ticket is required at create
only. Lines are a formset; their discount, VAT and tax amounts are computed (services.line_amounts),
never typed.
"""

import re
from decimal import Decimal

from django import forms
from django.core.exceptions import ValidationError
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from backoffice.core.fields import as_datetime_input, clean_vkn_or_tckn, localized_formfield
from backoffice.core.fields import money_field, rate_field
from backoffice.core.models import DocumentSeries
from backoffice.core.provinces import PROVINCES, province_choices
from backoffice.core.validators import validate_tckn, validate_vkn

from .choices import PaymentType, TicketKind, TicketStatus
from .models import OPERATOR_FIELDS, EventTicket, PassengerTicket
from .services import SERIES_KIND
from .vehicle import OPERATOR_DETAIL_FIELDS, OPERATOR_RULE_FIELDS, VehicleChecks

PREFIX_RE = re.compile(r"^[A-Z0-9]{3}$")
CURRENCY_RE = re.compile(r"^[A-Z]{3}$")
COUNTRY_RE = re.compile(r"^[A-Z]{2}$")
PASSPORT_RE = re.compile(r"^[A-Z0-9]{5,20}$")
MAX_LINES = 100
MAX_TAXES = 10  # other taxes of one line
CURRENCY_REQUIRED = _("The currency is never empty: use TRY when no other currency applies.")
# The form's cards (title, fields, collapsed): the ticket's, the kind's own (document 2, 2.2 and 2.3; the ticket's
# page lists them in this order too), then the customer's. A card shows its fields in the form's order.
TICKET_FIELDSET = (_("Ticket"), ("prefix", "document_type", "ticket_date", "currency_code", "exchange_rate",
                                 "reference_number", "payment_type", "payment_description"), False)
KIND_FIELDSETS = {
    TicketKind.EVENT: [(_("Event"), ("event_name", "event_time", "seat_number", "event_location", "event_city_id",
                                     "event_city", "event_municipality", "event_organizer_vkn_tckn",
                                     "event_description"), False)],
    TicketKind.PASSENGER: [
        (_("Expedition"), ("expedition_number", "expedition_time", "departure_date", "departure_location",
                           "destination", "vehicle_plate", "seat_number"), False),
        (_("Vehicle operator"), OPERATOR_RULE_FIELDS, False),
        (_("Vehicle operator details"), OPERATOR_DETAIL_FIELDS, True)],
}
CUSTOMER_FIELDSETS = (
    (_("Customer"), ("identifier", "customer_first_name", "customer_last_name", "customer_email", "is_email_send",
                     "customer_telephone", "customer_tax_center"), False),
    (_("Customer address"), ("customer_street", "customer_building_name", "customer_building_no", "customer_door_no",
                             "customer_district", "customer_town", "customer_city", "customer_post_code",
                             "customer_country"), True),
    (_("Expense record and layout"), ("record_expenses_vkn_tckn", "record_expenses_title", "xslt_code"), True),
)


class TicketForm(forms.ModelForm):
    """The fields of document 2, section 2.1; subclasses add 2.2 or 2.3."""

    requested_status = forms.TypedChoiceField(
        label=_("Status"), coerce=int, required=False, empty_value=TicketStatus.DRAFT,
        choices=[(TicketStatus.DRAFT, _("Save as draft")), (TicketStatus.QUEUED, _("Save and send"))],
        error_messages={"invalid_choice": _("A ticket is saved as a draft or sent to be queued, nothing else.")},
    )
    notes_text = forms.CharField(label=_("Notes"), required=False, widget=forms.Textarea(attrs={"rows": 2}),
                                 help_text=_("One note per line."))
    # Asked only when the seat already has a ticket (seat_duplicates); kept with the submission, not sent.
    duplicate_reason = forms.CharField(
        label=_("Reason for another ticket for this seat"), required=False, max_length=500,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text=_("The seat already has a ticket. Say why a second one is right (e.g. the first was given to "
                    "another passenger by mistake and will be cancelled); the reason is kept with the ticket."))
    # The fields that name one seat (of one event or expedition), in the order the message names them.
    seat_fields: tuple = ()

    # The model's fields of the ticket's and the customer's cards (the prefix is the form's own, at create only).
    common_fields = tuple(name for title, names, collapsed in (TICKET_FIELDSET, *CUSTOMER_FIELDSETS)
                          for name in names if name != "prefix")
    identifier_required = False

    def __init__(self, *args, company=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.company = company or getattr(self.instance, "company", None)
        self.is_update = self.instance.pk is not None
        for name in ("ticket_date", "event_time", "expedition_time", "departure_date"):
            if name in self.fields:
                as_datetime_input(self.fields[name])
        self.fields["currency_code"].required = True
        self.fields["currency_code"].error_messages["required"] = CURRENCY_REQUIRED
        self.fields["currency_code"].widget.attrs.update({"maxlength": 3, "class": "text-uppercase"})
        self.fields["currency_code"].help_text = _("Three-letter code; TRY when no other currency applies.")
        self.fields["customer_country"].widget.attrs.update({"maxlength": 2, "class": "text-uppercase"})
        self.fields["identifier"].required = self.identifier_required
        self.fields["payment_type"].choices = [("", _("Choose…")), *PaymentType.choices]
        if not self.is_update:
            self.fields["prefix"] = forms.CharField(
                label=_("Prefix"), max_length=3, min_length=3,
                help_text=_("Three capital letters or digits; the ticket number is this prefix, the year and a "
                            "9-digit counter."),
                widget=forms.TextInput(attrs={"class": "text-uppercase", "autocomplete": "off"}),
            )
            # self.initial (from the blank instance) wins over a field's initial: set them there.
            self.initial.setdefault("prefix", self._last_prefix())
            if not self.initial.get("ticket_date"):
                self.initial["ticket_date"] = timezone.localtime().replace(second=0, microsecond=0)
            self.initial["currency_code"] = self.initial.get("currency_code") or "TRY"
        else:
            self.initial["notes_text"] = "\n".join(self.instance.notes.values_list("note", flat=True))
            self.initial["requested_status"] = self.instance.requested_status

    def _last_prefix(self):
        if self.company is None:
            return ""
        series = (DocumentSeries.objects.filter(company=self.company, kind=SERIES_KIND[self._meta.model.kind])
                  .order_by("-year", "-last_counter").first())
        return series.prefix if series else ""

    # --- one field at a time ------------------------------------------------------------------------
    def _code(self, name, pattern, message, code):
        """A code typed in any case, kept in capitals; refused when it has another shape (an empty one is the
        field's to refuse: prefix and currency are required)."""
        value = (self.cleaned_data.get(name) or "").strip().upper()
        if value and not pattern.match(value):
            raise ValidationError(message, code=code)
        return value

    def clean_prefix(self):
        return self._code("prefix", PREFIX_RE, _("The prefix is three capital letters or digits, e.g. ETK."), "prefix")

    def clean_currency_code(self):
        return self._code("currency_code", CURRENCY_RE,
                          _("Enter a three-letter currency code such as TRY, EUR or USD."), "currency")

    def clean_exchange_rate(self):
        value = self.cleaned_data.get("exchange_rate")
        if value is not None and value <= 0:
            raise ValidationError(_("The exchange rate must be greater than zero."), code="exchange_rate")
        return value

    def clean_customer_country(self):
        return self._code("customer_country", COUNTRY_RE, _("Enter the two-letter country code, e.g. TR."), "country")

    def clean_record_expenses_vkn_tckn(self):
        return clean_vkn_or_tckn(self.cleaned_data.get("record_expenses_vkn_tckn"))

    def clean_identifier(self):
        value = re.sub(r"\s+", "", self.cleaned_data.get("identifier") or "").upper()
        if not value:
            return value
        self.validate_identifier(value)
        return value

    def validate_identifier(self, value):
        """Event ticket: tax number, national id or passport number."""
        if value.isdigit() and len(value) == 10:
            validate_vkn(value)
        elif value.isdigit() and len(value) == 11:
            validate_tckn(value)
        elif not PASSPORT_RE.match(value):
            raise ValidationError(_("Enter a tax number (10 digits), a national id (11 digits) or a passport "
                                    "number (5 to 20 letters or digits)."), code="identifier")

    def clean_notes_text(self):
        notes = [line.strip() for line in (self.cleaned_data.get("notes_text") or "").splitlines() if line.strip()]
        if any(len(note) > 500 for note in notes):
            raise ValidationError(_("A note has at most 500 characters."), code="note_length")
        if len(notes) > 50:
            raise ValidationError(_("At most 50 notes."), code="note_count")
        return notes

    # --- rules across fields (document 2, section 2.1) -----------------------------------------------
    def clean(self):
        data = super().clean()
        if data.get("is_email_send") and not data.get("customer_email") and "customer_email" not in self.errors:
            self.add_error("customer_email", ValidationError(
                _("An e-mail address is required when the ticket is sent by e-mail."), code="email_required"))
        if data.get("payment_type") == PaymentType.DIGER and not (data.get("payment_description") or "").strip():
            self.add_error("payment_description", ValidationError(
                _("Describe the payment when the payment type is “Other”."), code="payment_description_required"))
        vkn, title = data.get("record_expenses_vkn_tckn"), (data.get("record_expenses_title") or "").strip()
        if title and not vkn and "record_expenses_vkn_tckn" not in self.errors:
            self.add_error("record_expenses_vkn_tckn", ValidationError(
                _("Give the VKN/TCKN of the expense record together with its title."), code="record_expenses_pair"))
        if vkn and not title:
            self.add_error("record_expenses_title", ValidationError(
                _("Give the title of the expense record together with its VKN/TCKN."), code="record_expenses_pair"))
        self._check_seat(data)
        return data

    # --- a second ticket for the same seat (issue 9) -------------------------------------------------
    ask_duplicate_reason = False
    seat_taken_by: list = []

    def seat_duplicates(self, data):
        """Live tickets of this company for the seat `data` names (cancelled and deleted ones do not count);
        None when the seat is not named. Exact matches: they use the indexes at a million tickets."""
        if not self.seat_fields or self.company is None:
            return None
        lookup = {}
        for name in self.seat_fields:
            value = data.get(name)
            if isinstance(value, str):
                value = value.strip()
            if value in (None, ""):
                if name in ("seat_number", self.seat_fields[0]):
                    return None
                lookup[f"{name}__isnull"] = True  # an event without a time is one occasion
            else:
                lookup[name] = value
        return (self._meta.model.objects.filter(company=self.company, **lookup)
                .exclude(remote_status__in=[TicketStatus.CANCELLED, TicketStatus.DELETED])
                .exclude(pk=self.instance.pk).order_by("created_at"))

    def _check_seat(self, data):
        if self.is_update and not set(self.seat_fields) & set(self.changed_data):
            return  # the seat did not change: a reason given at creation is not asked for again
        if any(name in self.errors for name in self.seat_fields):
            return
        duplicates = self.seat_duplicates(data)
        taken = list(duplicates.values_list("ticket_number", flat=True)[:3]) if duplicates is not None else []
        self.seat_taken_by = taken
        if not taken:
            return
        self.ask_duplicate_reason = True
        if not (data.get("duplicate_reason") or "").strip():
            self.add_error("seat_number", ValidationError(
                _("Seat %(seat)s already has ticket %(tickets)s for this %(occasion)s. Check the seat, or give a "
                  "reason to issue another ticket for it.")
                % {"seat": data.get("seat_number"), "tickets": ", ".join(taken), "occasion": self.seat_occasion},
                code="seat_taken"))

    def recheck_seat(self) -> bool:
        """Inside the saving transaction, after the company's row is locked: the seat check again, so two
        tabs (two keys) saving the same seat at the same moment cannot both pass. False (with the error on
        the seat field) when another ticket took the seat since the form was checked."""
        if self.ask_duplicate_reason and (self.cleaned_data.get("duplicate_reason") or "").strip():
            return True  # a second ticket with a reason was asked for
        self._check_seat(self.cleaned_data)  # nothing to check again when an update left the seat as it was
        return "seat_number" not in self.errors

    def duplicate_note(self) -> str:
        """What the submission keeps when the user issued a second ticket for a seat."""
        reason = (self.cleaned_data.get("duplicate_reason") or "").strip()
        if not (self.seat_taken_by and reason):
            return ""
        return _("Another ticket for seat %(seat)s (already on %(tickets)s): %(reason)s") % {
            "seat": self.cleaned_data.get("seat_number"), "tickets": ", ".join(self.seat_taken_by), "reason": reason}

    def fieldsets(self):
        cards = (TICKET_FIELDSET, *KIND_FIELDSETS[self._meta.model.kind], *CUSTOMER_FIELDSETS)
        return self._with_duplicate_reason([(title, [n for n in names if n in self.fields], collapsed)
                                            for title, names, collapsed in cards])

    def _with_duplicate_reason(self, fieldsets):
        if not (self.ask_duplicate_reason or self.data.get(self.add_prefix("duplicate_reason"))):
            return fieldsets
        # Fields are drawn in the form's order: the reason goes right under the seat it is about.
        names = [n for n in self.fields if n != "duplicate_reason"]
        at = names.index("seat_number") + 1 if "seat_number" in names else len(names)
        self.order_fields([*names[:at], "duplicate_reason", *names[at:]])
        return [(title, [m for n in names for m in ((n, "duplicate_reason") if n == "seat_number" else (n,))],
                 collapsed) for title, names, collapsed in fieldsets]


class EventTicketForm(TicketForm):
    """Document 2, section 2.2."""

    event_city_id = forms.TypedChoiceField(
        label=_("Province"), coerce=int, choices=[("", _("Choose…")), *province_choices()],
        error_messages={"invalid_choice": _("Choose the province from the list (plate codes 1 to 81).")},
    )

    seat_fields = ("event_name", "event_time", "seat_number")
    seat_occasion = _("event")

    class Meta:
        model = EventTicket
        formfield_callback = localized_formfield  # the exchange rate typed as 32,5 or 1.250,75
        fields = (*TicketForm.common_fields, "seat_number", "event_time", "event_name", "event_location",
                  "event_city", "event_city_id", "event_municipality", "event_description",
                  "event_organizer_vkn_tckn")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.is_update:
            del self.fields["event_city_id"]  # not part of the update model
            self.fields["seat_number"].required = False
        else:
            self.fields["seat_number"].required = True
        self.fields["event_city"].help_text = _("Filled from the province when left empty.")

    def clean_event_organizer_vkn_tckn(self):
        value = (self.cleaned_data.get("event_organizer_vkn_tckn") or "").strip()
        if not value.isdigit() or len(value) not in (10, 11):
            raise ValidationError(_("The organizer's VKN/TCKN has 10 or 11 digits."), code="organizer_length")
        return clean_vkn_or_tckn(value)

    def clean(self):
        data = super().clean()
        city_id = data.get("event_city_id")
        if city_id and not (data.get("event_city") or "").strip():
            data["event_city"] = PROVINCES.get(city_id, "")
            self.instance.event_city = data["event_city"]
        return data


class PassengerTicketForm(VehicleChecks, TicketForm):
    """Document 2, section 2.3."""

    identifier_required = True

    seat_fields = ("expedition_number", "expedition_time", "seat_number")
    seat_occasion = _("expedition")

    class Meta:
        model = PassengerTicket
        formfield_callback = localized_formfield  # the exchange rate typed as 32,5 or 1.250,75
        fields = (*TicketForm.common_fields, "vehicle_plate", "expedition_number", "expedition_time",
                  "departure_date", "departure_location", "destination", "seat_number", *OPERATOR_FIELDS)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["identifier"].help_text = _("National id (TCKN, 11 digits) or passport number.")
        self.fields["vehicle_plate"].widget.attrs.update({"class": "text-uppercase"})

    def validate_identifier(self, value):
        """Passenger ticket: national id or passport number."""
        if value.isdigit() and len(value) == 11:
            validate_tckn(value)
        elif not PASSPORT_RE.match(value) or (value.isdigit() and len(value) == 10):
            raise ValidationError(_("Enter the passenger's national id (TCKN, 11 digits) or passport number "
                                    "(5 to 20 letters or digits)."), code="identifier")


class TicketLineTaxForm(forms.Form):
    """One tax of a line other than VAT (document 2, section 2.4: taxes is an array): code and rate given
    together, the name optional; the amount is computed from the rate."""

    tax_code = forms.CharField(label=_("Other tax code"), max_length=10, required=False,
                               widget=forms.TextInput(attrs={"placeholder": _("Code"), "autocomplete": "off"}))
    tax_name = forms.CharField(label=_("Other tax"), max_length=100, required=False,
                               widget=forms.TextInput(attrs={"placeholder": _("Tax name")}))
    taxt_rate = rate_field(_("Other tax (%)"))

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Table cells have no labels: the placeholder shows what to type, aria-label names the field.
        self.fields["taxt_rate"].widget.attrs["placeholder"] = _("Rate (%)")
        for field in self.fields.values():
            field.widget.attrs["aria-label"] = field.label

    def clean(self):
        data = super().clean()
        if self.errors:
            return data
        if any(data.get(name) not in (None, "") for name in ("tax_code", "tax_name", "taxt_rate")):
            if not (data.get("tax_code") or "").strip():
                self.add_error("tax_code", ValidationError(_("Give the tax code of the other tax."),
                                                           code="tax_code_required"))
            if data.get("taxt_rate") is None:
                self.add_error("taxt_rate", ValidationError(_("Give the rate of the other tax."),
                                                            code="tax_rate_required"))
        return data

    def tax(self) -> dict | None:
        """The tax as services keep it, or None for a row left empty."""
        data = self.cleaned_data
        code = (data.get("tax_code") or "").strip()
        if not code:
            return None
        return {"tax_code": code, "tax_name": (data.get("tax_name") or "").strip(), "taxt_rate": data["taxt_rate"]}


class BaseTicketLineTaxFormSet(forms.BaseFormSet):
    """The taxes of one line, prefixed with the line's prefix (lines-0-taxes-0-tax_code)."""

    default_error_messages = {"too_many_forms": _("A line has at most %(num)s other taxes.")}

    def __init__(self, data=None, *args, prefix=None, **kwargs):
        # A line posted without any of its tax fields (a client that knows no taxes) has none; a line with
        # tax fields but no count of them is refused as a tampered form.
        if data is not None and prefix and f"{prefix}-TOTAL_FORMS" not in data and \
                not any(str(key).startswith(f"{prefix}-") for key in data):
            data = data.copy()
            data[f"{prefix}-TOTAL_FORMS"] = data[f"{prefix}-INITIAL_FORMS"] = "0"
        super().__init__(data, *args, prefix=prefix, **kwargs)

    @property
    def empty_form(self):
        # Its own placeholder: the line's empty form already uses __prefix__ (lines-__prefix__-taxes-__tax__).
        form = super().empty_form
        form.prefix = self.add_prefix("__tax__")
        return form

    def taxes(self) -> list[dict]:
        """The taxes to keep (once valid): every row not removed and filled in, in the order shown."""
        return [tax for form in self.forms if not self._should_delete_form(form) and (tax := form.tax())]


TicketLineTaxFormSet = forms.formset_factory(TicketLineTaxForm, formset=BaseTicketLineTaxFormSet, extra=0,
                                             can_delete=True, max_num=MAX_TAXES, validate_max=True,
                                             absolute_max=MAX_TAXES)


class TicketLineForm(forms.Form):
    """One item (document 2, section 2.4) with its taxes other than VAT (a formset of its own). Discount, VAT
    and tax amounts are computed from the rates."""

    service_type = forms.CharField(label=_("Service type"), max_length=50, required=False)
    service_description = forms.CharField(label=_("Description"), max_length=200, required=False)
    amount = money_field(_("Amount"), required=False)
    discount_rate = rate_field(_("Discount (%)"))
    vat_rate = rate_field(_("VAT (%)"))

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Sent back, every tax typed counts as given (no initial to compare with): a row is kept for what it
        # holds, whatever the page said about which rows it had shown.
        self.taxes = TicketLineTaxFormSet(data=self.data if self.is_bound else None, prefix=self.add_prefix("taxes"),
                                          initial=None if self.is_bound else self.initial.get("taxes"))

    def has_changed(self):
        return super().has_changed() or self.taxes.has_changed()

    def is_valid(self):
        # A line is valid with its taxes only: the line formset then saves nothing while one tax is wrong.
        return super().is_valid() and self.taxes.is_valid()

    def clean(self):
        data = super().clean()
        if self.errors:
            return data
        if data.get("amount") is None:
            self.add_error("amount", ValidationError(_("Enter the line's amount."), code="required"))
        return data

    def line(self) -> dict:
        data = self.cleaned_data
        return {"service_type": data.get("service_type") or "",
                "service_description": data.get("service_description") or "",
                "amount": data["amount"], "discount_rate": data.get("discount_rate") or Decimal(0),
                "vat_rate": data.get("vat_rate") or Decimal(0), "taxes": self.taxes.taxes()}


class BaseTicketLineFormSet(forms.BaseFormSet):
    def __init__(self, data=None, *args, instance=None, **kwargs):
        # The lines of the ticket as they are (core's edit view hands its formsets the record): a plain formset
        # of dicts, each line with a formset of its taxes.
        if instance is not None and instance.pk and "initial" not in kwargs:
            kwargs["initial"] = line_initial(instance)
        super().__init__(data, *args, **kwargs)

    def lines(self) -> list[dict]:
        """The lines to keep: every initial line not deleted, and the new ones that were filled in."""
        return [form.line() for index, form in enumerate(self.forms) if not self._should_delete_form(form)
                and (index < self.initial_form_count() or form.has_changed())]

    kept = lines  # what core's edit view hands the save (ObjectEditView.save_form)

    def total_error_count(self):
        # The taxes' errors count too (the page's "correct the fields marked below").
        return super().total_error_count() + sum(
            form.taxes.total_error_count() for form in self.forms
            if form.is_bound and not self._should_delete_form(form) and form.has_changed())


TicketLineFormSet = forms.formset_factory(TicketLineForm, formset=BaseTicketLineFormSet, extra=1, can_delete=True,
                                          max_num=MAX_LINES, validate_max=True, absolute_max=MAX_LINES)


def line_initial(ticket) -> list[dict]:
    return [{"service_type": line.service_type, "service_description": line.service_description,
             "amount": line.amount, "discount_rate": line.discount_rate, "vat_rate": line.vat_rate,
             "taxes": [{"tax_code": tax.tax_code, "tax_name": tax.tax_name, "taxt_rate": tax.taxt_rate}
                       for tax in line.taxes.all()]}
            for line in ticket.lines.prefetch_related("taxes")]


FORMS = {TicketKind.EVENT: EventTicketForm, TicketKind.PASSENGER: PassengerTicketForm}
