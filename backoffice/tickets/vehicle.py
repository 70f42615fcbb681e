"""The vehicle of a passenger ticket and its operator (document 2, section 2.3), also a passenger list's (4.3:
"of 2.3"): the operator's fields as the form groups them and the payload names them, and the rules of the plate
and of the operator's fields."""

import re

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from backoffice.core.fields import clean_vkn_or_tckn, money_field
from backoffice.core.payloads import camel_names, num

from .models import OPERATOR_FIELDS

# Document 2, 2.3: these five are given together or not at all; the address fields are optional.
OPERATOR_RULE_FIELDS, OPERATOR_DETAIL_FIELDS = OPERATOR_FIELDS[:5], OPERATOR_FIELDS[5:]
# {platform name: model field} of the operator's text fields (the commissions are numbers, written apart).
OPERATOR_PAYLOAD = camel_names(*[name for name in OPERATOR_FIELDS if name.startswith("vehicle_operating_")])


def operator_body(record, *, empty="") -> dict:
    """The vehicle operator's part of a save body (a passenger ticket's, document 2, 2.3; a passenger list's, 4.3):
    its text fields (an empty one as `empty`) and the commissions, as numbers."""
    return {**{key: getattr(record, name) or empty for key, name in OPERATOR_PAYLOAD.items()},
            "commissionAmount": num(record.commission_amount), "commissionTaxAmount": num(record.commission_tax_amount)}


def clean_plate(value) -> str:
    """A vehicle plate stored without spaces or dashes, in capitals: passenger lists group tickets by plate."""
    value = re.sub(r"[\s-]+", "", value or "").upper()
    if not value:
        raise ValidationError(_("Enter the vehicle plate."), code="required")
    if not re.match(r"^[A-Z0-9]{2,15}$", value):
        raise ValidationError(_("A plate has letters and digits only, e.g. 34 ABC 123."), code="plate")
    return value


def check_operator_fields(form, data):
    """Document 2, section 2.3 (and 4.3 for passenger lists): when any of the five is filled, all five are
    required; the message goes on each missing one."""
    def filled(name):
        value = data.get(name)
        return value not in (None, "") and not (isinstance(value, str) and not value.strip())

    given = [name for name in OPERATOR_RULE_FIELDS if filled(name) or name in form.errors]
    if given:
        for name in OPERATOR_RULE_FIELDS:
            if not filled(name) and name not in form.errors:
                form.add_error(name, ValidationError(
                    _("Required: the vehicle operator's VKN/TCKN, title, tax office, commission and commission "
                      "VAT are given together."), code="operator_fields"))


class VehicleChecks(forms.Form):
    """The plate and the vehicle operator's fields (document 2, 2.3) of passenger tickets and lists: a plate
    without spaces, the operator's VKN/TCKN with check digits, its five rule fields all or none, the commissions
    typed as money."""

    commission_amount = money_field(_("Commission"), required=False)
    commission_tax_amount = money_field(_("Commission VAT"), required=False)

    def clean_vehicle_plate(self):
        return clean_plate(self.cleaned_data.get("vehicle_plate"))

    def clean_vehicle_operating_vkn_tckn(self):
        return clean_vkn_or_tckn(self.cleaned_data.get("vehicle_operating_vkn_tckn"))

    def clean(self):
        data = super().clean()
        check_operator_fields(self, data)
        return data
