from django import forms
from django.contrib.auth import get_user_model
from django.db import models
from django.utils.translation import gettext_lazy as _

from .choices import AuthMethod
from .models import Company, Membership

SECRET_FIELDS = ("api_key", "service_password")
BASE_URL_FIELDS = ("auth_url", "ticket_base_url", "invoice_base_url", "accounting_base_url", "ledger_base_url",
                   "dispatch_base_url", "crm_base_url")


def _formfield(model_field, **kwargs):
    # A URL typed without a scheme is https (Django 6's default; says so explicitly now).
    if isinstance(model_field, models.URLField):
        kwargs["assume_scheme"] = "https"
    return model_field.formfield(**kwargs)


class SecretField(forms.CharField):
    """Write-only: never rendered back; an empty value keeps what is stored."""

    def __init__(self, **kwargs):
        kwargs.setdefault("required", False)
        kwargs.setdefault("strip", True)
        kwargs.setdefault("widget", forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}))
        super().__init__(**kwargs)


class CompanyForm(forms.ModelForm):
    api_key = SecretField(label=_("API key"))
    service_password = SecretField(label=_("Service user password"))

    # (title, fields, collapsed): the edit template draws one card per fieldset.
    fieldsets = (
        (_("Company"), ("name", "customer_unique_id", "environment", "credit_quantity", "is_active"), False),
        (_("Credentials"), ("auth_method", "api_key", "service_username", "service_password"), False),
        (_("Advanced: service URLs"), BASE_URL_FIELDS, True),
    )

    class Meta:
        model = Company
        fields = ("name", "customer_unique_id", "environment", "credit_quantity", "is_active", "auth_method",
                  "api_key", "service_username", "service_password", *BASE_URL_FIELDS)
        help_texts = {name: _("Leave empty to use the environment's default.") for name in BASE_URL_FIELDS}
        formfield_callback = _formfield

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name in SECRET_FIELDS:
            stored = bool(getattr(self.instance, name))
            self.fields[name].help_text = (
                _("Set. Leave empty to keep the stored value; type a new one to replace it.") if stored
                else _("Not set.")
            )
            self.fields[name].widget.attrs["data-secret-state"] = "set" if stored else "unset"

    def _clean_secret(self, name):
        return self.cleaned_data.get(name) or getattr(self.instance, name) or ""

    def clean_api_key(self):
        return self._clean_secret("api_key")

    def clean_service_password(self):
        return self._clean_secret("service_password")

    def clean(self):
        cleaned = super().clean()
        # The secret of the other method is not needed any more: do not keep it.
        if cleaned.get("auth_method") == AuthMethod.API_KEY:
            cleaned["service_password"] = ""
        elif cleaned.get("auth_method") == AuthMethod.SERVICE_USER:
            cleaned["api_key"] = ""
        return cleaned


class MembershipForm(forms.ModelForm):
    """Adds a user to the active company (set by the view)."""

    class Meta:
        model = Membership
        fields = ("user",)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        members = Membership.objects.filter(company_id=self.instance.company_id).values("user_id")
        self.fields["user"].queryset = get_user_model().objects.filter(is_active=True).exclude(
            pk__in=members).order_by("username")
        self.fields["user"].label_from_instance = lambda u: f"{u.get_full_name()} ({u.username})" if u.get_full_name() \
            else u.username
        self.fields["user"].help_text = _("New users are created in the Django admin, where roles are given too.")
