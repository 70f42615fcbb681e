"""Forms every family of platform documents shares: the export filter form and the report date picker."""

from django import forms
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from ..fields import as_datetime_input, validate_year_range


def date_order_check(form, start, end):
    data = form.cleaned_data
    if data.get(start) and data.get(end) and data[start] > data[end]:
        form.add_error(end, ValidationError(_("The end is before the start."), code="date_order"))


class PlatformExportForm(forms.Form):
    """A family's export filters: its fields carry the platform's names; export_filters() is the body.
    Date-times take the browser's picker; each (start, end) of date_ranges must be in order."""

    date_ranges: tuple = ()

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for field in self.fields.values():
            if isinstance(field, forms.DateTimeField):
                as_datetime_input(field, dates_too=True)

    def clean(self):
        data = super().clean()
        for start, end in self.date_ranges:
            if start in self.fields:
                date_order_check(self, start, end)
        return data

    def export_filters(self) -> dict:
        """The export body (empty values left out, dates in ISO form)."""
        body = {}
        for name, value in self.cleaned_data.items():
            if value is None or value == "" or name == "ids":
                continue
            body[name] = value.isoformat() if hasattr(value, "isoformat") else value
        if self.cleaned_data.get("ids"):
            body["ids"] = list(self.cleaned_data["ids"])
        return body


class ReportDateForm(forms.Form):
    date = forms.DateField(label=_("Report date"), widget=forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d"),
                           validators=[validate_year_range, MaxValueValidator(timezone.localdate),
                                       MinValueValidator(lambda: timezone.localdate().replace(year=2000, month=1,
                                                                                               day=1))])
