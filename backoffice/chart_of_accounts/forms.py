"""The chart-of-accounts form: every rule of document 3, 2.7 and 4.3 on the field it concerns (the ones
that need the database are services.check_account's)."""

import re

from django import forms
from django.utils.translation import gettext_lazy as _

from backoffice.core.fields import localized_formfield

from .choices import AccountType, currency_choices, currency_ids
from .models import Account

CODE_RE = re.compile(r"^[0-9A-Za-z]+$")
MAIN_CODE_RE = re.compile(r"^[0-9]{3,4}$")


def default_currency_id():
    """The currencyCodeId of TRY, a sub-account's currency unless another is chosen (issue 29)."""
    return currency_ids().get("TRY")


class AccountForm(forms.ModelForm):
    currency_code_id = forms.TypedChoiceField(label=_("Currency"), coerce=int, required=False, empty_value=None,
                                              help_text=_("Required for sub-accounts."))

    class Meta:
        model = Account
        fields = ("type", "parent", "base_code", "unit_code", "name", "currency_code_id", "is_bundle_account")
        formfield_callback = localized_formfield
        help_texts = {"parent": _("Required for group and sub-accounts: its code is sent as the account's code.")}

    def __init__(self, *args, company=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["currency_code_id"].choices = [("", "—"), *currency_choices()]
        if self.instance.pk is None and self.initial.get("currency_code_id") is None:
            # A new sub-account is kept in liras unless another currency is chosen (issue 29).
            self.initial["currency_code_id"] = default_currency_id()
        self.fields["parent"].queryset = Account.objects.filter(
            company=company, type__in=[AccountType.MAIN, AccountType.GROUP]).order_by("full_code")
        self.fields["base_code"].required = False
        self.fields["base_code"].widget.attrs.update({"list": "uniform-main-accounts", "inputmode": "numeric"})

    def clean(self):
        cleaned = super().clean()
        type_, parent = cleaned.get("type"), cleaned.get("parent")
        if type_ is None:
            return cleaned
        if type_ == AccountType.MAIN:
            base = (cleaned.get("base_code") or "").strip()
            if not base:
                self.add_error("base_code", _("A main account needs its code, e.g. 120."))
            elif not MAIN_CODE_RE.match(base):
                self.add_error("base_code", _("A main account code has 3 or 4 digits, e.g. 120."))
        else:
            if parent is None:
                self.add_error("parent", _("Group and sub-accounts need the parent account (its code is required)."))
            elif parent.type >= type_:
                self.add_error("parent", _("A group account sits under a main account, a sub-account under a main or "
                                           "group account."))
            unit = (cleaned.get("unit_code") or "").strip()
            if not unit:
                self.add_error("unit_code", _("Give the unit code that tells this account from its parent, e.g. 001."))
            elif not CODE_RE.match(unit):
                self.add_error("unit_code", _("A unit code has letters and digits only, e.g. 001."))
        if type_ == AccountType.SUB:
            if cleaned.get("currency_code_id") is None:
                self.add_error("currency_code_id", _("A sub-account needs its currency."))
        elif cleaned.get("is_bundle_account"):
            self.add_error("is_bundle_account", _("Only a sub-account can be a pool account."))
        return cleaned
