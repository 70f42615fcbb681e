"""Forms with the rules of document 1, sections 2.2 to 2.4."""

from django import forms
from django.utils.translation import gettext_lazy as _

from backoffice.core.fields import LocalizedIntegerField, PhoneField
from backoffice.core.validators import validate_platform_email, validate_vkn_or_tckn

from .choices import ProductType
from .models import SubCompany

SHOW_OVER_USAGE_HELP = _(
    "Tick to deduct the over-usage the company has already run up (credit used beyond its earlier offers) from "
    "this new offer: the offer then starts net of that debt. Leave unticked to add the full quantity.")


class PlatformEmailField(forms.EmailField):
    """An e-mail address as the platform checks it (core.validators.validate_platform_email), in place of
    Django's check: one message, not two, for an address both refuse."""

    default_validators = [validate_platform_email]


def quantity_field(**kwargs):
    return LocalizedIntegerField(
        label=_("Credit quantity"), min_value=1, max_value=2_000_000_000,
        error_messages={"min_value": _("The quantity must be a positive number (at least 1).")},
        help_text=_("Credits (document units) drawn from the shared pool."), **kwargs)


class SubCompanyForm(forms.ModelForm):
    """Document 1, 2.2: every field is required."""

    identifier = forms.CharField(
        label=_("Tax number / national id"), validators=[validate_vkn_or_tckn],
        help_text=_("VKN (10 digits) or TCKN (11 digits), with its check digits."))
    quantity = quantity_field()
    contact_email = PlatformEmailField(label=_("Contact e-mail"))
    contact_phone = PhoneField(
        label=_("Contact phone"),
        help_text=_("Mobile number, e.g. 0532 123 45 67; kept as the platform wants it (5321234567)."))

    fieldsets = (
        (_("Company"), ("identifier", "name", "quantity"), False),
        (_("Contact person"), ("contact_full_name", "contact_email", "contact_phone"), False),
    )

    class Meta:
        model = SubCompany
        fields = ("identifier", "name", "quantity", "contact_full_name", "contact_email", "contact_phone")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name in ("name", "contact_full_name"):
            self.fields[name].required = True


class CreditForm(forms.Form):
    """Document 1, 2.3 (one company or a batch)."""

    quantity = quantity_field()
    show_over_usage = forms.BooleanField(label=_("Deduct the company's over-usage from this offer (showOverUsage)"),
                                         required=False, help_text=SHOW_OVER_USAGE_HELP)


class ProductsForm(forms.Form):
    """Document 1, 2.4: one or more of the ten ProductType values."""

    product_types = forms.TypedMultipleChoiceField(
        label=_("Products"), choices=ProductType.choices, coerce=int, widget=forms.CheckboxSelectMultiple,
        error_messages={"required": _("Choose at least one product."),
                        "invalid_choice": _("%(value)s is not one of the platform's product types.")},
        help_text=_("The company must already have the shared pool product and a credit offer."))
