"""Forms of current accounts: every format rule of document 3, 2.1 to 2.5 on the field it concerns. The
Excel import checks its rows with these same forms (imports.py); rules that need the database are the
services' (services.check_identifier, the default and mapping rules)."""

import re

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from backoffice.core import domains
from backoffice.core.fields import IbanField, LineNumberField, localized_formfield
from backoffice.core.validators import validate_vkn_or_tckn

from .models import Address, Bank, Contact, CurrentAccount, Mapping

chart_api = domains.api("chart_of_accounts")

ACCOUNT_FIELDS = ("name", "surname", "identifier", "code", "tax_office", "maturity", "mersis_number",
                  "registration_number", "professional_chamber", "chamber_registration_number", "branch_id")
ADDRESS_FIELDS = ("address_name", "country", "city", "sub_division_name", "region", "street_name", "building_name",
                  "building_number", "door_number", "postal_zone", "phone_number", "fax_number", "email_address",
                  "web_site", "branch_id", "is_default")
BANK_FIELDS = ("name", "bank_name", "bank_branch_name", "iban_number", "bank_account_number", "receiver_name", "type",
               "branch_id", "is_default")
CONTACT_FIELDS = ("full_name", "phone_number", "email_address", "branch_id")


def branch_problem(branch_id, account_branch_id):
    """Why a child's branch id cannot be used (2.2 to 2.5: "the account must belong to that branch"), or "":
    a branch id given (0 is none, a long's default) must be the account's own."""
    if not branch_id or branch_id == account_branch_id:
        return ""
    if not account_branch_id:
        return _("This current account belongs to no branch: leave the branch id empty.")
    return _("The current account belongs to branch %(branch)s: give that branch id or leave it empty.") % {
        "branch": account_branch_id}


class AccountBranchMixin:
    """The branch id of an address, bank record, contact or mapping checked against its account's, on the field."""

    def clean_branch_id(self):
        branch_id = self.cleaned_data.get("branch_id")
        account = self.instance.current_account if self.instance.current_account_id else None
        problem = branch_problem(branch_id, account.branch_id) if account is not None else ""
        if problem:
            raise ValidationError(problem, code="branch")
        return branch_id


class CurrentAccountForm(forms.ModelForm):
    identifier = forms.CharField(label=_("Tax or national id"), max_length=11, validators=[validate_vkn_or_tckn],
                                 help_text=_("VKN (10 digits) or TCKN (11 digits)."),
                                 widget=forms.TextInput(attrs={"inputmode": "numeric", "autocomplete": "off"}))

    class Meta:
        model = CurrentAccount
        fields = ACCOUNT_FIELDS
        formfield_callback = localized_formfield

    def clean_identifier(self):
        return (self.cleaned_data.get("identifier") or "").strip()

    def clean(self):
        cleaned = super().clean()
        identifier = cleaned.get("identifier") or ""
        if len(identifier) == 11 and not (cleaned.get("surname") or "").strip():
            self.add_error("surname", _("A person (an 11-digit national id) needs a surname."))
        return cleaned


class AddressForm(AccountBranchMixin, forms.ModelForm):
    country = forms.CharField(label=_("Country"), max_length=100, required=False,
                              help_text=_("Türkiye when left empty."))
    email_address = forms.EmailField(label=_("E-mail address"), max_length=250, required=False)
    web_site = forms.URLField(label=_("Web site"), max_length=250, required=False, assume_scheme="https")
    phone_number = LineNumberField(label=_("Phone number"), required=False)
    fax_number = LineNumberField(label=_("Fax number"), required=False)

    class Meta:
        model = Address
        fields = ADDRESS_FIELDS
        formfield_callback = localized_formfield

    def clean_country(self):
        # Required by the platform (2.2); nearly every address is in Türkiye, so an empty one is (the import too).
        return (self.cleaned_data.get("country") or "").strip() or "Türkiye"


class FirstAddressForm(AddressForm):
    """The first address given with a new account (sent inside its create, 2.1): always the default."""

    class Meta(AddressForm.Meta):
        fields = tuple(name for name in ADDRESS_FIELDS if name not in ("is_default", "branch_id"))

    def has_any(self) -> bool:
        """Whether anything of the address was typed (the address is optional)."""
        return any((self.data.get(self.add_prefix(name)) or "").strip() for name in self.fields
                   if name != "country")


class BankForm(AccountBranchMixin, forms.ModelForm):
    iban_number = IbanField(label=_("IBAN"), required=False, help_text=_("A Turkish IBAN has 26 characters."))

    class Meta:
        model = Bank
        fields = BANK_FIELDS
        formfield_callback = localized_formfield


class ContactForm(AccountBranchMixin, forms.ModelForm):
    email_address = forms.EmailField(label=_("E-mail address"), max_length=250, required=False)
    phone_number = LineNumberField(label=_("Phone number"), required=False)

    class Meta:
        model = Contact
        fields = CONTACT_FIELDS
        formfield_callback = localized_formfield


class MappingForm(AccountBranchMixin, forms.ModelForm):
    class Meta:
        model = Mapping
        fields = ("account", "name", "branch_id")
        formfield_callback = localized_formfield
        help_texts = {"name": _("Optional, but it makes the mapping easy to recognise.")}

    def __init__(self, *args, company=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["account"].queryset = chart_api.sub_accounts(company)
        self.fields["account"].label = _("Sub-account")
        self.fields["account"].help_text = _("A pool account can be mapped to several current accounts; any other "
                                             "to one only.")


CHILD_FORMS = {Address: AddressForm, Bank: BankForm, Contact: ContactForm, Mapping: MappingForm}


def resolve_account(company, text):
    """The current account a typed "VKN" or "VKN · code" names, or a ValidationError saying what to type."""
    text = (text or "").strip()
    parts = re.split(r"\s*[·/|]\s*", text, maxsplit=1)
    identifier = parts[0].split()[0] if parts[0].split() else ""
    code = parts[1].strip() if len(parts) > 1 else ""
    try:
        validate_vkn_or_tckn(identifier)
    except ValidationError:
        raise ValidationError(_("Type the customer's tax or national id (10 or 11 digits) and pick it from the "
                                "list.")) from None
    accounts = CurrentAccount.objects.filter(company=company, identifier=identifier)
    if code:
        accounts = accounts.filter(code=code)
    found = list(accounts.order_by("code", "pk")[:10])
    if not found:
        raise ValidationError(_("No current account with this id%(code)s: add it under Current accounts first.")
                              % {"code": f" · {code}" if code else ""})
    if len(found) > 1:
        raise ValidationError(_("Several current accounts have this id; add its code after a dot: %(options)s")
                              % {"options": ", ".join(f"{a.identifier} · {a.code or '—'}" for a in found)})
    return found[0]
