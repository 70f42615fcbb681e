from urllib.parse import urlsplit

from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import AuthenticationForm, UserCreationForm
from django.contrib.auth.models import Group
from django.db import models
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from backoffice.remote.netguard import UnsafeURL, check_url
from backoffice.remote.transport import printable_ascii

from .choices import AuthMethod, Environment, Role
from .fields import LocalizedIntegerField, localized_formfield
from .models import BASE_URL_FIELDS, SERIES_KINDS, Company, DocumentSeries, Membership
from .roles import user_roles

SECRET_FIELDS = ("api_key", "service_password")


def _formfield(model_field, **kwargs):
    # A URL typed without a scheme is https (Django 6's default; says so explicitly now).
    if isinstance(model_field, models.URLField):
        kwargs["assume_scheme"] = "https"
    # Numbers (the credit quantity) typed the Turkish way, 1.000.000 (core.fields).
    return localized_formfield(model_field, **kwargs)


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
        (_("Company"), ("name", "customer_unique_id", "environment", "credit_quantity", "contract_tier", "is_active"),
         False),
        (_("Credentials"), ("auth_method", "api_key", "service_username", "service_password"), False),
        (_("Advanced: service URLs"), BASE_URL_FIELDS, True),
    )

    class Meta:
        model = Company
        fields = ("name", "customer_unique_id", "environment", "credit_quantity", "contract_tier", "is_active",
                  "auth_method",
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
        self.fields["api_key"].help_text = format_lazy(
            "{} {}", self.fields["api_key"].help_text,
            _("Company management (sub-companies, credit offers, products, the usage report) takes only an API key, "
              "also when the documents are sent with a service user."))
        for name in BASE_URL_FIELDS:
            self.fields[name].validators.append(self.validate_typed_url)
        if not settings.SANDBOX_ENABLED and not (self.instance.pk and self.instance.environment == Environment.SANDBOX):
            self.fields["environment"].choices = [
                choice for choice in self.fields["environment"].choices if choice[0] != Environment.SANDBOX]
            if self.instance.pk is None:
                self.initial["environment"] = Environment.TEST

    @classmethod
    def validate_typed_url(cls, url):
        """The rules of a service URL typed here (backoffice.remote.netguard), each with its own message."""
        try:
            check_url(url, settings.PLATFORM_ALLOWED_HOSTS)
        except UnsafeURL as exc:
            raise forms.ValidationError(cls._url_message(exc, url), code=exc.code) from None

    @staticmethod
    def _url_message(exc, url):
        host = urlsplit(url).hostname or url
        messages = {
            "scheme": _("Only https addresses are allowed."),
            "userinfo": _("An address may not contain a user name or password."),
            "suffix": _("Remove the part from ? or #: a service address ends with its path."),
            "host": _("%(host)s is not one of the platform's hosts. The allowed hosts are set by the operator "
                      "(PLATFORM_ALLOWED_HOSTS).") % {"host": host},
            "unresolvable": _("%(host)s cannot be found (DNS). Check the spelling.") % {"host": host},
            "private": _("%(host)s points into a private or local network; only public addresses of the platform "
                         "are allowed.") % {"host": host},
        }
        return messages.get(exc.code, _("Enter a valid https address."))

    def _clean_secret(self, name):
        typed = self.cleaned_data.get(name)
        if typed:
            self._check_sendable(typed)
            return typed
        stored = getattr(self.instance, name) or ""
        if not printable_ascii(stored) and self._uses(name):
            raise forms.ValidationError(_("The stored value contains characters that cannot be sent to the platform "
                                          "(only printable ASCII can be). Type it again."), code="not_ascii")
        return stored

    def _uses(self, name):
        """Whether this secret is sent: the API key always (company management takes only an API key, also
        when the documents go with a service user), the service user's password with that method."""
        method = self.data.get(self.add_prefix("auth_method")) or self.instance.auth_method
        return name == "api_key" or method == AuthMethod.SERVICE_USER

    @staticmethod
    def _check_sendable(value):
        """Credentials travel in HTTP headers and forms: printable ASCII only, as the platform's portal issues
        them. A letter such as ş or ı (a key typed by hand, or pasted with a smart quote) could never be sent."""
        if not printable_ascii(value):
            wrong = "".join(dict.fromkeys(ch for ch in value if not " " <= ch <= "~"))
            shown = "".join(ch if ch.isprintable() else "�" for ch in wrong)
            raise forms.ValidationError(
                _("Only printable ASCII characters (English letters, digits and signs such as - _ . ~) can be used; "
                  "not %(characters)s. Copy the value again from the platform's portal."),
                code="not_ascii", params={"characters": " ".join(shown)})

    def clean_api_key(self):
        return self._clean_secret("api_key")

    def clean_service_password(self):
        return self._clean_secret("service_password")

    def clean_service_username(self):
        username = self.cleaned_data.get("service_username") or ""
        if username:
            self._check_sendable(username)
        return username

    def clean(self):
        cleaned = super().clean()
        self._require_secret_when_moved(cleaned)
        # Both may be kept: the documents go with the chosen method, company management always with the API
        # key (document 1, section 5, rule 2). Choosing the service user never wipes a stored API key.
        return cleaned

    def _require_secret_when_moved(self, cleaned):
        """A stored secret never follows a changed environment or service URL by itself: whoever points the
        company elsewhere types the secret again, so that a stolen session cannot redirect it."""
        if self.instance.pk is None:
            return
        moved = [name for name in ("environment", *BASE_URL_FIELDS) if name in self.changed_data]
        if not moved:
            return
        needed = ["service_password"] if cleaned.get("auth_method") == AuthMethod.SERVICE_USER else []
        if cleaned.get("auth_method") != AuthMethod.SERVICE_USER or self.instance.api_key:
            needed.append("api_key")  # a stored API key goes to company management at the new address too
        for name in needed:
            if not (self.data.get(self.add_prefix(name)) or "").strip():
                self.add_error(name, _("You changed where the credentials are sent (%(fields)s): type “%(secret)s” "
                                       "again to confirm that it may go there.")
                               % {"fields": ", ".join(str(self.fields[field].label) for field in moved),
                                  "secret": self.fields[name].label})


class SignInForm(AuthenticationForm):
    shared_computer = forms.BooleanField(
        label=_("This is a shared computer"), required=False,
        help_text=_("Sign me out when the browser closes."),
    )


ROLE_HELP = _("Accounting staff enter and send documents; managers read everything, usage and exports; "
              "administrators also manage the company's connection and its members.")


class MembershipForm(forms.ModelForm):
    """Adds an existing user to the active company (set by the view) by their exact user name: the form
    never lists the users of other companies."""

    username = forms.CharField(
        label=_("User name"), max_length=150,
        help_text=_("The exact user name of someone who already has an account. For someone new, create a user."),
        widget=forms.TextInput(attrs={"autocomplete": "off", "autocapitalize": "none", "spellcheck": "false"}),
    )

    class Meta:
        model = Membership
        fields = ()

    def clean_username(self):
        username = self.cleaned_data["username"].strip()
        user = get_user_model().objects.filter(username=username, is_active=True).first()
        # One message for "no such user" and "inactive": nothing is told about accounts beyond that.
        if user is None:
            raise forms.ValidationError(_("No active user has this user name. Check the spelling (capitals count), "
                                          "or create the user."), code="unknown")
        if Membership.objects.filter(company_id=self.instance.company_id, user=user).exists():
            raise forms.ValidationError(_("%(username)s already works for this company.") % {"username": username},
                                        code="member")
        self.instance.user = user
        return username


class MemberRolesForm(forms.Form):
    roles = forms.MultipleChoiceField(label=_("Roles"), choices=Role.choices, required=False,
                                      widget=forms.CheckboxSelectMultiple, help_text=ROLE_HELP)

    def __init__(self, *args, user=None, **kwargs):
        self.user = user
        if user is not None:
            kwargs.setdefault("initial", {"roles": sorted(user_roles(user))})
        super().__init__(*args, **kwargs)

    def save(self):
        groups = Group.objects.filter(name__in=[str(r) for r in Role])
        self.user.groups.remove(*groups)
        self.user.groups.add(*groups.filter(name__in=self.cleaned_data["roles"]))
        return self.user


class MemberCreateForm(UserCreationForm):
    """A new user who works for the active company only, with their roles and a first password."""

    roles = MemberRolesForm.base_fields["roles"]

    class Meta(UserCreationForm.Meta):
        model = get_user_model()
        fields = ("username", "first_name", "last_name", "email")

    # The company the form was opened for: another tab may switch the active company before it is sent.
    opened_for = forms.IntegerField(widget=forms.HiddenInput, required=False)

    def __init__(self, *args, company=None, **kwargs):
        self.company = company
        super().__init__(*args, **kwargs)
        self.fields["email"].required = True
        self.fields["opened_for"].initial = company.pk if company else None

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("opened_for") != self.company.pk:  # said above the form: the field is hidden
            self.data = self.data.copy()
            self.data["opened_for"] = self.company.pk  # sent again, it is meant for the company shown now
            self.add_error(None, forms.ValidationError(
                _("You switched to %(company)s in another tab after opening this form; nothing was saved. Check "
                  "the company and send the form again.") % {"company": self.company.name}, code="company"))
        return cleaned

    def save(self, commit=True):
        user = super().save(commit=True)
        user.groups.add(*Group.objects.filter(name__in=self.cleaned_data["roles"]))
        Membership.objects.create(user=user, company=self.company)
        return user


class SeriesStartForm(forms.Form):
    """An administrator starts a document series above its next number (issue 28): a series started elsewhere,
    or a database restored from an older backup, whose numbers the platform holds already. Shown once more to be
    confirmed (`confirmed`) before anything changes."""

    kind = forms.ChoiceField(label=_("Documents"), choices=lambda: [(k, v) for k, v in SERIES_KINDS.items()])
    prefix = forms.RegexField(label=_("Prefix"), regex=r"^[A-Za-z0-9]{3}$", max_length=3,
                              error_messages={"invalid": _("Three capital letters or digits.")})
    year = forms.IntegerField(label=_("Year"), min_value=2000, max_value=2099)
    next_counter = LocalizedIntegerField(  # "5.000" is five thousand, as accountants type it
        label=_("Next number"), min_value=2, max_value=999_999_999,
        help_text=_("The counter the next document takes: one above the platform's last number of this series."))
    confirmed = forms.BooleanField(required=False, widget=forms.HiddenInput)

    def __init__(self, *args, company, **kwargs):
        self.company = company
        super().__init__(*args, **kwargs)

    def clean_prefix(self):
        return self.cleaned_data["prefix"].upper()

    def series(self):
        """The series as stored (unsaved and empty when new)."""
        data = self.cleaned_data
        return DocumentSeries.objects.filter(company=self.company, kind=data["kind"], prefix=data["prefix"],
                                             year=data["year"]).first() or DocumentSeries(
            company=self.company, kind=data["kind"], prefix=data["prefix"], year=data["year"])

    def clean(self):
        data = super().clean()
        refusal = "" if self.errors else self.series().start_refusal(data["next_counter"])
        if refusal:
            self.add_error("next_counter", refusal)
        return data

    def save(self):
        data = self.cleaned_data
        return DocumentSeries.start_at(company=self.company, kind=data["kind"], prefix=data["prefix"],
                                       year=data["year"], next_counter=data["next_counter"])
