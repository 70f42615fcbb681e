"""Passenger-list forms: every rule of document 2, section 4.3 (and the list rules of section 3) on the
field it concerns.

Create and update differ as the platform does: an update (isNewList false) finds the list by its
expedition number and date (and plate, unless given by hand), so those do not change on update.
"""

from django import forms
from django.core.exceptions import ValidationError
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from backoffice.core import domains
from backoffice.core.fields import as_datetime_input, localized_formfield
from backoffice.core.generic.forms import PlatformExportForm

from . import services
from .choices import ListState
from .models import PassengerList

tickets_api = domains.api("tickets")


class PassengerListForm(tickets_api.VehicleChecks, forms.ModelForm):
    """Document 2, section 4.3: expedition number, date and plate required; isManualPlate; the vehicle
    operator's five fields all or none (section 2.3), its VKN/TCKN with check digits."""

    class Meta:
        model = PassengerList
        formfield_callback = localized_formfield
        fields = ("expedition_number", "expedition_time", "vehicle_plate", "is_manual_plate",
                  *tickets_api.OPERATOR_RULE_FIELDS, *tickets_api.OPERATOR_DETAIL_FIELDS)

    def __init__(self, *args, company=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.company = company or getattr(self.instance, "company", None)
        self.is_update = self.instance.pk is not None
        as_datetime_input(self.fields["expedition_time"])
        self.fields["vehicle_plate"].widget.attrs.update({"class": "text-uppercase"})
        self.fields["vehicle_plate"].help_text = _("Without the plate given by hand, only the tickets of this plate "
                                                   "are in the list.")
        if self.is_update:
            # The platform finds the list to update by these (document 2, 4.3): they stay as they are.
            locked = ["expedition_number", "expedition_time", "is_manual_plate"]
            if not self.instance.is_manual_plate:
                locked.append("vehicle_plate")
            for name in locked:
                self.fields[name].disabled = True
                self.fields[name].help_text = _("The platform finds the list to update by this; build the list "
                                                "again to change it.")

    def clean_expedition_number(self):
        value = (self.cleaned_data.get("expedition_number") or "").strip()
        if not value:
            raise ValidationError(_("Enter the expedition number."), code="required")
        return value

    def clean(self):
        data = super().clean()  # VehicleChecks: the plate and the operator's fields
        if self.is_update and self.instance.state != ListState.SAVED:
            raise ValidationError(_("A list reported to the tax authority, or replaced, cannot be updated; build it "
                                    "again to replace it."), code="reported")
        if not any(name in self.errors for name in ("expedition_number", "expedition_time", "vehicle_plate")):
            self._check_tickets(data)
        return data

    def _check_tickets(self, data):
        """Document 2, 4.3: grouped by plate (no plate given by hand), the list cannot be built when no ticket
        matches the expedition number, date and plate. Checked here before anything is sent."""
        if self.company is None or data.get("is_manual_plate"):
            return
        number, moment, plate = data["expedition_number"], data["expedition_time"], data["vehicle_plate"]
        of_expedition = services.expedition_tickets(company=self.company, expedition_number=number,
                                                    expedition_time=moment)
        if not of_expedition.exists():
            self.add_error("expedition_number", ValidationError(
                _("No issued passenger ticket has expedition number %(number)s at %(time)s.")
                % {"number": number, "time": timezone.localtime(moment).strftime("%d.%m.%Y %H:%M")},
                code="no_tickets"))
        elif not services.expedition_tickets(company=self.company, expedition_number=number, expedition_time=moment,
                                             vehicle_plate=plate).exists():
            plates = sorted({p for p in of_expedition.values_list("vehicle_plate", flat=True)})
            self.add_error("vehicle_plate", ValidationError(
                _("No ticket of this expedition has plate %(plate)s (its tickets have %(plates)s). Choose one of "
                  "those, or give the plate by hand to list the tickets whatever their plate.")
                % {"plate": plate, "plates": ", ".join(plates)}, code="no_tickets"))

    def fieldsets(self):
        return [
            (_("Expedition"), ["expedition_number", "expedition_time", "vehicle_plate", "is_manual_plate"], False),
            (_("Vehicle operator"), list(tickets_api.OPERATOR_RULE_FIELDS), False),
            (_("Vehicle operator details"), list(tickets_api.OPERATOR_DETAIL_FIELDS), True),
        ]


class PassengerListExportForm(PlatformExportForm):
    """The export body of document 2, 4.3: a range on the expedition time."""

    startDate = forms.DateTimeField(label=_("Expedition from"), required=False)
    endDate = forms.DateTimeField(label=_("Expedition until"), required=False)
    date_ranges = (("startDate", "endDate"),)
