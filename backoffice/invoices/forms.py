"""The outgoing invoice form (e-invoice and e-archive) with its lines: every rule of document 3 (2.6, 4.2 save
and update, 3.1) on the field it concerns. Rules of state (posted, issued, busy) are the services'.

Which kind an invoice is follows the customer (4.2 save rule 2): a registered e-invoice user (the tax
authority's taxpayer list, kept locally) gets an e-invoice at one of its mailboxes, anyone else an e-archive.
"""

import re
from datetime import date
from decimal import Decimal
from functools import cache

from django import forms
from django.core.exceptions import ValidationError
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from backoffice.core.fields import IbanField, LocalizedDecimalField, localized_formfield
from backoffice.core.validators import validate_vkn_or_tckn
from backoffice.core.generic.lines import LineFormSetBase, line_formset, unit_choices, units_shown
from backoffice.core.widgets import FixedChoices

from backoffice.core import codes, domains
from . import taxpayers, totals
from .choices import InvoiceType, Profile, RecordType
from .models import Invoice, InvoiceLine

accounts_api = domains.api("current_accounts")

PREFIX = re.compile(r"^[A-Z0-9]{3}\Z")
NUMBER = re.compile(r"^[A-Z0-9]{3}20[0-9]{2}[0-9]{9}\Z")  # facts file: 16 characters
AUTOMATIC = ""
KIND_CHOICES = [(AUTOMATIC, _("By the customer (taxpayer list)")), (str(RecordType.EINVOICE), RecordType.EINVOICE.label),
                (str(RecordType.EARCHIVE), RecordType.EARCHIVE.label)]
SHIPMENT_SEND_TYPES = [("", "---------"), ("ELEKTRONIK", _("Electronic")), ("KAGIT", _("On paper"))]
# Amounts are kept with 16 digits before the decimals (MONEY): a line and a document stay well inside.
LINE_LIMIT = Decimal(10) ** 14
# What the form issues. Export (IHRACAT) and tax-free passenger (YOLCUBERABERFATURA) invoices need what document
# 3's JSON model does not carry (the buyer abroad, the passport, the intermediary) and line delivery details the form
# does not ask (delivery terms, customs codes: invoiceLineDeliveryInfoModel); ARACTESCIL is not
# an invoice type of the tax authority's list (its schematron, InvoiceTypeCodeCheck-1). README-invoices.md.
OFFERED_PROFILES = (Profile.TEMELFATURA, Profile.TICARIFATURA)
OFFERED_TYPES = tuple(kind for kind in InvoiceType if kind != InvoiceType.ARACTESCIL)
RETURN_PROFILES = (Profile.TEMELFATURA, Profile.EARSIVFATURA)  # InvoiceTypeCodeCheck-2
EARLIEST_DATE = date(2005, 1, 1)  # the schematron's TimeCheck-2, on every IssueDate
PROFILE_REFUSED = _("Choose basic or commercial: export and passenger (tax-free) invoices need details this form "
                    "does not carry (the buyer abroad, delivery terms, customs codes, passport).")


def type_allowed(profile, invoice_type) -> bool:
    """Whether the tax authority takes this type under this profile (a return only as basic or e-archive)."""
    return invoice_type != InvoiceType.IADE or profile in RETURN_PROFILES


def _blank(label):
    return [("", label)]


@cache
def _code_choices(name, blank=None) -> FixedChoices:
    """A code list as choices, built once (the same for every form, company and language: Turkish names)."""
    return FixedChoices((_blank(blank) if blank is not None else []) + codes.choices(name))


def _invoice_day(day, future_message):
    """A date the tax authority takes: not in the future (future_message), not before 1 January 2005."""
    if day and day > timezone.localdate():
        raise ValidationError(future_message)
    if day and day < EARLIEST_DATE:
        raise ValidationError(_("The tax authority takes no date before 1 January 2005."))
    return day


class InvoiceForm(forms.ModelForm):
    account = forms.CharField(
        label=_("Customer (current account)"), max_length=80,
        help_text=_("Tax or national id, with the account code after a dot when several accounts share it."),
        widget=forms.TextInput(attrs={"autocomplete": "off", "list": "account-options", "inputmode": "search"}))
    kind = forms.ChoiceField(label=_("Invoice kind"), choices=KIND_CHOICES, required=False)
    profile = forms.ChoiceField(label=_("Profile"), required=False, error_messages={"invalid_choice": PROFILE_REFUSED},
                                choices=_blank(_("— e-invoice only —")) + [(p.value, p.label) for p in OFFERED_PROFILES])
    target_alias = forms.CharField(label=_("Mailbox (alias)"), max_length=250, required=False,
                                   widget=forms.TextInput(attrs={"list": "alias-options", "autocomplete": "off"}),
                                   help_text=_("The customer's e-invoice mailbox; filled in when it has only one."))
    prefix = forms.CharField(label=_("Number prefix"), max_length=3,
                             help_text=_("Three capital letters or digits; the platform gives the number."))
    currency_code = forms.ChoiceField(label=_("Currency"), initial="TRY")
    payment_means_code = forms.ChoiceField(label=_("Payment means"), required=False)
    payee_financial_account_id = IbanField(label=_("Payee IBAN"), required=False)
    shipment_send_type = forms.ChoiceField(label=_("Delivery"), choices=SHIPMENT_SEND_TYPES, required=False)
    website_url = forms.URLField(label=_("Website"), max_length=250, required=False, assume_scheme="https")

    class Meta:
        model = Invoice
        fields = ("account", "kind", "profile", "target_alias", "invoice_type", "prefix", "issue_date",
                  "description", "currency_code", "exchange_rate", "exchange_rate_source", "exchange_rate_comment",
                  "return_invoice_number", "return_invoice_date", "notes",
                  "payment_means_code", "payment_due_date", "payment_channel_code", "instruction_note",
                  "payee_financial_account_id",
                  "is_internet_sale", "website_url", "shipment_send_type", "shipment_date", "shipment_sender_tckn_vkn",
                  "shipment_sender_name", "shipment_sender_surname", "hide_despatch_message", "subscription_type",
                  "subscription_type_number")
        formfield_callback = localized_formfield
        widgets = {"notes": forms.Textarea(attrs={"rows": 2}), **{
            name: forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d")  # what a date input takes
            for name in ("issue_date", "return_invoice_date", "payment_due_date", "shipment_date")}}

    def __init__(self, *args, company, **kwargs):
        super().__init__(*args, **kwargs)
        self.company = company
        self.fields["currency_code"].choices = _code_choices(codes.CURRENCIES)
        self.fields["payment_means_code"].choices = _code_choices(codes.PAYMENT_MEANS, "---------")
        self.fields["invoice_type"].choices = [(kind.value, kind.label) for kind in OFFERED_TYPES]
        self.fields["issue_date"].required = True
        self.fields["description"].required = True
        self.fields["exchange_rate"].help_text = _("Required when the currency is not TRY: 1 unit in TRY.")
        if not self.is_bound:
            if not self.initial.get("issue_date"):  # a new invoice's empty instance gives None
                self.initial["issue_date"] = timezone.localdate()
            if self.instance.pk:
                invoice = self.instance
                coded = invoice.current_account_code and invoice.current_account is not None
                self.initial["account"] = (f"{invoice.target_vkn_tckn} · {invoice.current_account_code}" if coded
                                           else invoice.target_vkn_tckn)
                self.initial["kind"] = str(invoice.record_type)

    def clean_account(self):
        return accounts_api.resolve_account(self.company, self.cleaned_data.get("account"))

    def clean_prefix(self):
        prefix = (self.cleaned_data.get("prefix") or "").strip().upper()
        if not PREFIX.match(prefix):
            raise ValidationError(_("The prefix is three capital letters (A to Z) or digits, e.g. ABC."))
        return prefix

    def clean_issue_date(self):
        return _invoice_day(self.cleaned_data.get("issue_date"), _("An invoice cannot be dated in the future."))

    def clean_return_invoice_date(self):
        return _invoice_day(self.cleaned_data.get("return_invoice_date"),
                            _("The returned invoice cannot be dated in the future."))

    def clean_return_invoice_number(self):
        number = (self.cleaned_data.get("return_invoice_number") or "").strip().upper()
        if number and not NUMBER.match(number):
            raise ValidationError(_("An invoice number has 16 characters: a 3-character prefix, the year and 9 digits "
                                    "(ABC2026000000001)."))
        return number

    def clean_shipment_sender_tckn_vkn(self):
        value = (self.cleaned_data.get("shipment_sender_tckn_vkn") or "").strip()
        if value:
            validate_vkn_or_tckn(value)
        return value

    def clean(self):
        cleaned = super().clean()
        account = cleaned.get("account")
        self._kind(cleaned, account)
        currency = cleaned.get("currency_code") or "TRY"
        if currency != "TRY":  # 4.2 save rule 3 and update rule 3
            if cleaned.get("exchange_rate") is None:
                if "exchange_rate" not in self.errors:
                    self.add_error("exchange_rate", _("Give the exchange rate: the currency is not TRY."))
            elif cleaned["exchange_rate"] <= 0:
                self.add_error("exchange_rate", _("The exchange rate is more than 0."))
            for name, message in (("exchange_rate_source", _("Say where the exchange rate comes from (e.g. TCMB).")),
                                  ("exchange_rate_comment", _("Add a comment on the exchange rate (e.g. the date of "
                                                              "the rate)."))):
                if not (cleaned.get(name) or "").strip():
                    self.add_error(name, message)
        if cleaned.get("invoice_type") == InvoiceType.IADE:
            if not cleaned.get("return_invoice_number") and "return_invoice_number" not in self.errors:
                self.add_error("return_invoice_number", _("A return invoice names the invoice it returns."))
            if not cleaned.get("return_invoice_date"):
                self.add_error("return_invoice_date", _("Give the date of the returned invoice."))
        kind, profile = cleaned.get("invoice_type"), cleaned.get("profile")
        if kind and profile and not type_allowed(profile, kind) and "invoice_type" not in self.errors:
            self.add_error("invoice_type", _("A return invoice is a basic (or e-archive) invoice: choose the basic "
                                             "profile for it."))
        if cleaned.get("record_type") == RecordType.EARCHIVE and cleaned.get("is_internet_sale"):
            if not cleaned.get("website_url"):
                self.add_error("website_url", _("An internet sale names the website it was made on."))
            if not cleaned.get("shipment_date"):
                self.add_error("shipment_date", _("An internet sale gives the shipment date."))
        return cleaned

    def _kind(self, cleaned, account):
        """e-invoice or e-archive, mailbox and profile (4.2 save rule 2, update rule 2; 2.6: the mailbox is
        required for an e-invoice)."""
        if account is None:
            return
        boxes = [box.alias for box in taxpayers.mailboxes(account.identifier)]
        chosen = cleaned.get("kind")
        if chosen is None:  # not one of the choices: that error is on the field already
            return
        if chosen == AUTOMATIC:
            if not boxes and not taxpayers.directory_loaded():
                self.add_error("kind", _("The list of registered e-invoice users is not loaded yet: choose the kind "
                                         "yourself, or load the list under Registered users."))
                return
            record_type = RecordType.EINVOICE if boxes else RecordType.EARCHIVE
        else:
            record_type = RecordType(int(chosen))
            if taxpayers.directory_loaded() and record_type == RecordType.EARCHIVE and boxes:
                self.add_error("kind", _("This customer is a registered e-invoice user: its invoice is an e-invoice."))
                return
            if taxpayers.directory_loaded() and record_type == RecordType.EINVOICE and not boxes:
                self.add_error("kind", _("This customer is not a registered e-invoice user: its invoice is an "
                                         "e-archive invoice."))
                return
        cleaned["record_type"] = record_type
        if record_type == RecordType.EARCHIVE:
            cleaned["target_alias"], cleaned["profile"] = "", Profile.EARSIVFATURA
            return
        alias = (cleaned.get("target_alias") or "").strip()
        if not alias and len(boxes) == 1:
            alias = boxes[0]
        if not alias:
            self.add_error("target_alias", _("An e-invoice goes to a mailbox: choose one of the customer's "
                                             "(%(boxes)s).") % {"boxes": ", ".join(boxes) or "—"})
        elif boxes and alias not in boxes:
            self.add_error("target_alias", _("This is not one of the customer's mailboxes: %(boxes)s.")
                           % {"boxes": ", ".join(boxes)})
        cleaned["target_alias"] = alias
        if not cleaned.get("profile") and "profile" not in self.errors:
            self.add_error("profile", _("An e-invoice needs a profile (basic, commercial, ...)."))

    def save(self, commit=True):
        invoice = super().save(commit=False)
        cleaned = self.cleaned_data
        account = cleaned["account"]
        invoice.company = self.company
        invoice.current_account = account
        invoice.target_vkn_tckn = account.identifier
        invoice.current_account_code = account.code
        invoice.target_title = str(account)[:500]
        invoice.record_type = cleaned["record_type"]
        invoice.target_alias = cleaned["target_alias"]
        invoice.profile = cleaned["profile"]
        if invoice.currency_code == "TRY":
            invoice.exchange_rate, invoice.exchange_rate_source, invoice.exchange_rate_comment = None, "", ""
        if invoice.record_type == RecordType.EINVOICE:  # archive info is the e-archive's only
            invoice.is_internet_sale = invoice.hide_despatch_message = False
            invoice.website_url = invoice.shipment_send_type = invoice.shipment_sender_tckn_vkn = ""
            invoice.shipment_sender_name = invoice.shipment_sender_surname = ""
            invoice.subscription_type = invoice.subscription_type_number = ""
            invoice.shipment_date = None
        if commit:
            invoice.save()
        return invoice


@cache
def _line_choices() -> dict:
    """The code lists every line offers, built once: the same for every line, company and language (the codes'
    names are Turkish; "none" stays a lazy translation, written in the page's language)."""
    return {"unit_code": units_shown(), **{name: FixedChoices(choices) for name, choices in {
        "vat_exemption_reason_code": _blank("---------") + [
            (code, f"{code} · {label}") for code, label in codes.choices(codes.VAT_EXEMPTION_REASONS)
            if code not in codes.REASONS_NOT_OFFERED],
        "withholding_code": _blank(_("none")) + [
            (code, f"{code} · {label}") for code, label in codes.choices(codes.WITHHOLDING)],
        "other_tax_code": _blank(_("none")) + [
            (code, f"{code} · {label}") for code, label in codes.choices(codes.OTHER_TAX_TYPES)],
    }.items()}}


class LineForm(forms.ModelForm):
    quantity = LocalizedDecimalField(label=_("Quantity"), max_digits=18, decimal_places=6, min_value=Decimal("0.000001"))
    unit_price = LocalizedDecimalField(label=_("Unit price"), max_digits=18, decimal_places=6, min_value=Decimal(0))
    discount_rate = LocalizedDecimalField(label=_("Discount %"), rate=True, max_digits=5, decimal_places=2,
                                          required=False, min_value=Decimal(0), max_value=Decimal(100))
    discount_amount = LocalizedDecimalField(label=_("Discount"), max_digits=18, decimal_places=2, required=False,
                                            min_value=Decimal(0))
    vat_rate = LocalizedDecimalField(label=_("VAT %"), rate=True, max_digits=5, decimal_places=2, min_value=Decimal(0),
                                     max_value=Decimal(100), initial=Decimal(20))
    other_tax_rate = LocalizedDecimalField(label=_("Other tax %"), rate=True, max_digits=5, decimal_places=2,
                                           required=False, min_value=Decimal(0), max_value=Decimal(100))
    unit_code = forms.ChoiceField(label=_("Unit"), initial="C62")
    vat_exemption_reason_code = forms.ChoiceField(label=_("VAT exemption reason"), required=False)
    withholding_code = forms.ChoiceField(label=_("VAT withholding"), required=False)
    other_tax_code = forms.ChoiceField(label=_("Other tax"), required=False)

    class Meta:
        model = InvoiceLine
        fields = ("inventory_service_code", "quantity", "unit_code", "unit_price", "discount_rate", "discount_amount",
                  "vat_rate", "vat_exemption_reason_code", "withholding_code", "other_tax_code", "other_tax_rate",
                  "warehouse_code")
        formfield_callback = localized_formfield

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        choices = _line_choices()
        self.fields["unit_code"].choices = unit_choices(self)
        for name in ("vat_exemption_reason_code", "withholding_code", "other_tax_code"):
            self.fields[name].choices = choices[name]

    DETAILS = ("discount_rate", "discount_amount", "vat_exemption_reason_code", "withholding_code", "other_tax_code",
               "warehouse_code")

    def details_open(self) -> bool:
        """Whether the line's second row (discount, exemption, withholding, other taxes) is shown open: it holds a
        value or the line has an error."""
        return bool(self.errors) or any(self[name].value() for name in self.DETAILS)

    def clean_unit_code(self):
        return codes.unit_code(self.cleaned_data.get("unit_code"))

    def clean(self):
        cleaned = super().clean()
        vat_rate = cleaned.get("vat_rate")
        if vat_rate is not None and vat_rate == 0 and not cleaned.get("vat_exemption_reason_code"):
            self.add_error("vat_exemption_reason_code", _("A line without VAT (0 %) gives its exemption reason."))
        reason = cleaned.get("vat_exemption_reason_code")
        if vat_rate and reason and reason not in codes.REASONS_WITH_VAT:
            self.add_error("vat_exemption_reason_code", _(
                "This exemption is only for a line without VAT (0 %); a line with VAT takes only 701–704 "
                "(export-registered), 801–812 (special base) or 555 (fixed assets)."))
        if vat_rate is not None and vat_rate == 0 and reason == codes.FIXED_ASSET_REASON:
            self.add_error("vat_exemption_reason_code", _("555 (fixed assets) is for a line with VAT: give its VAT "
                                                          "rate."))
        if cleaned.get("withholding_code") and vat_rate is not None and vat_rate == 0:
            self.add_error("withholding_code", _("Withholding is a share of the VAT: a line without VAT has none."))
        if cleaned.get("other_tax_code") and not cleaned.get("other_tax_rate"):
            self.add_error("other_tax_rate", _("Give the rate of the other tax."))
        if cleaned.get("other_tax_rate") and not cleaned.get("other_tax_code"):
            self.add_error("other_tax_code", _("Choose which tax this rate is for."))
        if not self.errors:
            try:
                figures = totals.line_totals(totals.line_input(InvoiceLine(**{name: cleaned.get(name) for name in (
                    "quantity", "unit_price", "discount_rate", "discount_amount", "vat_rate", "withholding_code",
                    "other_tax_code", "other_tax_rate")})))
            except totals.TotalsError as exc:
                self.add_error(exc.field, str(exc))
            else:
                if figures.gross >= LINE_LIMIT:
                    self.add_error("quantity", _("The line's amount (quantity × unit price) is too large for an "
                                                 "invoice; check the quantity and the unit price."))
        return cleaned


class BaseLineFormSet(LineFormSetBase):
    default_error_messages = {**LineFormSetBase.default_error_messages,
                              "too_many_forms": _("An invoice has at most 500 lines here; split it.")}

    def clean(self):
        super().clean()
        kept = [form for form in self.forms if form.cleaned_data and not form.cleaned_data.get("DELETE")]
        invoice_type = self.data.get("invoice_type") if self.is_bound else None
        if invoice_type not in OFFERED_TYPES:  # the invoice's own field says what is wrong
            invoice_type = None
        if invoice_type:
            for form in kept:
                _type_rules(form, invoice_type)
        if kept and not any(form.errors for form in self.forms):
            figures = totals.invoice_totals([form.save(commit=False) for form in kept])
            if figures.tax_inclusive >= LINE_LIMIT * 10:
                raise ValidationError(_("The invoice's total is too large; split it into several invoices."))
            if invoice_type and invoice_type not in codes.VAT_UNCOLLECTED_TYPES:
                _vat_that_comes_to_nothing(kept, figures)
            _fixed_assets_beside_no_vat(kept, figures)


def _type_rules(form, invoice_type: str) -> None:
    """What the tax authority ties to the invoice type (codes.exemption_allowed, codes.WITHHOLDING_TYPES), on the
    line's field: the user changes the line or the invoice type."""
    cleaned = form.cleaned_data
    reason = cleaned.get("vat_exemption_reason_code")
    if reason and "vat_exemption_reason_code" not in form.errors and not codes.exemption_allowed(reason, invoice_type):
        if reason in codes.EXPORT_REGISTERED_REASONS:
            message = _("An export-registered reason (701–704) goes on an export-registered (IHRACKAYITLI) invoice "
                        "(or a return or SGK invoice): change the invoice type or the reason.")
        elif reason in codes.SPECIAL_BASE_REASONS:
            message = _("A special-base reason (801–812) goes on a special-base (OZELMATRAH) invoice (or a return "
                        "or SGK invoice): change the invoice type or the reason.")
        elif reason == codes.FIXED_ASSET_REASON:
            message = _("555 (fixed assets) does not go on an exemption or export-registered invoice.")
        else:
            message = _("A full exemption goes on an exemption (ISTISNA) invoice (or an export-registered, return "
                        "or SGK invoice): change the invoice type, or choose 351 for a sale that is not exempt.")
        form.add_error("vat_exemption_reason_code", message)
    if invoice_type not in codes.WITHHOLDING_TYPES:
        for name in ("withholding_code", "other_tax_code"):
            code = cleaned.get(name)
            if code and name not in form.errors and (name == "withholding_code"
                                                     or code in codes.WITHHOLDING_ONLY_TAXES):
                form.add_error(name, _("Withholding goes on a withholding (TEVKIFAT) invoice (or a return or SGK "
                                       "invoice): change the invoice type, or take the withholding off."))


def _vat_that_comes_to_nothing(kept, figures) -> None:
    """Lines with a VAT rate whose VAT, summed per rate as the invoice shows it, is 0.00 (a price of 0): the tax
    authority then wants an exemption reason for that 0 (its TaxExemptionReasonCheck-1)."""
    by_rate = {}
    for form, line_figures in zip(kept, figures.lines, strict=True):
        rate = form.cleaned_data.get("vat_rate")
        if rate and not form.cleaned_data.get("vat_exemption_reason_code"):
            by_rate.setdefault(rate, []).append((form, line_figures.vat))
    for lines in by_rate.values():
        if not any(vat for _form, vat in lines):
            for form, _vat in lines:
                form.add_error("vat_rate", _("The VAT of the lines at this rate comes to 0.00: the tax authority then "
                                             "asks for an exemption reason. Give the price, or VAT 0 % with its "
                                             "reason."))


def _fixed_assets_beside_no_vat(kept, figures) -> None:
    """A 555 (fixed assets) line anywhere: no line of the invoice may have VAT 0 % or VAT that comes to 0.00 (the
    tax authority's DemirbasKDVTaxExemptionCheck-2 reads the whole invoice, not the 555 line alone)."""
    if not any(form.cleaned_data.get("vat_exemption_reason_code") == codes.FIXED_ASSET_REASON for form in kept):
        return
    for form, line_figures in zip(kept, figures.lines, strict=True):
        if not form.cleaned_data.get("vat_rate") or not line_figures.vat:
            form.add_error("vat_rate", _("This invoice has a 555 (fixed assets) line, so no line may be without VAT "
                                         "(0 % or VAT that comes to 0.00): give this line its VAT, or issue it on "
                                         "another invoice."))


LineFormSet = line_formset(Invoice, InvoiceLine, LineForm, BaseLineFormSet)
