"""The outgoing dispatch note form with its lines and drivers, the UBL upload form and the export form: every
rule of document 3 (2.9, 3.3) and of the facts file on the field it concerns. Rules of state (editable, busy)
and of the database (unique number, ERP reference) are the services' too, under a lock.
"""

import re
from decimal import Decimal

from django import forms
from django.core.exceptions import ValidationError
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from backoffice.core import codes, domains
from backoffice.core.fields import LocalizedDecimalField, SizedFileField, TaxIdField, localized_formfield
from backoffice.core.generic.forms import PlatformExportForm
from backoffice.core.validators import validate_document_number, validate_driver_tckn
from backoffice.core.generic.lines import LineFormSetBase, line_formset, unit_choices

from . import services, taxpayers
from .choices import FORM_PROFILES, DispatchStatus, Numbering
from .models import DispatchDriver, DispatchLine, DispatchNote

accounts_api = domains.api("current_accounts")

PREFIX = re.compile(r"^[A-Z0-9]{3}\Z")
# The tax authority's rule: a Turkish postal code is 5 digits starting with the province's code.
POSTAL_CODE = re.compile(r"^(0[1-9]|[1-7][0-9]|8[01])[0-9]{3}\Z")
# A Turkish plate: the province's code (01 to 81), one to three letters, two to five digits, written without spaces
# as the tax authority's rules want it (34ABC123).
PLATE = re.compile(r"^(0[1-9]|[1-7][0-9]|8[01])[A-Z]{1,3}[0-9]{2,5}\Z")
CARRIER_COMPANY, CARRIER_DRIVERS = "company", "drivers"
LINE_LIMIT = Decimal(10) ** 14
TOTAL_LIMIT = Decimal(10) ** 16


def clean_prefix(value) -> str:
    prefix = (value or "").strip().upper()
    if not PREFIX.match(prefix):
        raise ValidationError(_("The prefix is three capital letters (A to Z) or digits, e.g. IRS."))
    return prefix


class NumberingFields(forms.Form):
    """How the note is numbered (document 3, 2.9: useManualDespatchAdviceId and prefix)."""

    numbering = forms.ChoiceField(label=_("Numbering"), choices=Numbering.choices, initial=Numbering.SERIES,
                                  widget=forms.RadioSelect)
    prefix = forms.CharField(label=_("Prefix"), max_length=3, required=False,
                             help_text=_("Three capital letters or digits; the next number of this prefix is used."))
    despatch_number = forms.CharField(label=_("Dispatch note number"), max_length=16, required=False,
                                      help_text=_("16 characters: prefix, year and a 9-digit counter, e.g. "
                                                  "IRS2026000000001."))

    def clean_numbering_fields(self, cleaned, issue_date=None):
        numbering = cleaned.get("numbering")
        # the platform's series takes a prefix of ours only when one is given
        if numbering == Numbering.SERIES or (numbering == Numbering.PLATFORM and (cleaned.get("prefix") or "").strip()):
            try:
                cleaned["prefix"] = clean_prefix(cleaned.get("prefix"))
            except ValidationError as exc:
                self.add_error("prefix", exc)
        elif numbering == Numbering.MANUAL and "despatch_number" in self.fields:
            number = (cleaned.get("despatch_number") or "").strip().upper()
            if not number:
                self.add_error("despatch_number", _("Type the dispatch note's 16-character number."))
                return
            try:
                validate_document_number(number)
            except ValidationError as exc:
                self.add_error("despatch_number", exc)
                return
            if issue_date and number[3:7] != str(issue_date.year):
                self.add_error("despatch_number", _("The number's year (%(year)s) is not the issue date's "
                                                    "(%(issued)s).") % {"year": number[3:7], "issued": issue_date.year})
                return
            if DispatchNote.objects.filter(company=self.company, despatch_number=number).exclude(
                    pk=getattr(self.instance, "pk", None)).exists():
                self.add_error("despatch_number", _("Another dispatch note already has this number."))
                return
            cleaned["despatch_number"], cleaned["prefix"] = number, number[:3]
        elif numbering == Numbering.PLATFORM:
            cleaned["prefix"] = ""


def clean_reference(form, value) -> str:
    """The ERP's id: one note per id (the duplicate check; the database keeps it too)."""
    reference = (value or "").strip()
    if reference and DispatchNote.objects.filter(company=form.company, local_reference_id=reference).exclude(
            pk=getattr(form.instance, "pk", None)).exists():
        raise ValidationError(_("Another dispatch note already has this ERP reference."))
    return reference


class DispatchNoteForm(NumberingFields, forms.ModelForm):
    account = forms.CharField(
        label=_("Receiver (current account)"), max_length=80,
        help_text=_("Tax or national id, with the account code after a dot when several accounts share it."),
        widget=forms.TextInput(attrs={"autocomplete": "off", "list": "account-options", "inputmode": "search"}))
    target_alias = forms.CharField(
        label=_("Mailbox (alias)"), max_length=250, required=False,
        widget=forms.TextInput(attrs={"list": "alias-options", "autocomplete": "off"}),
        help_text=_("The receiver's dispatch mailbox: filled in when it has only one; a receiver that is not a "
                    "dispatch-note user gets the generic mailbox."))
    carrier = forms.ChoiceField(label=_("Who carries the goods"), widget=forms.RadioSelect, initial=CARRIER_DRIVERS,
                                choices=[(CARRIER_DRIVERS, _("Our driver(s)")),
                                         (CARRIER_COMPANY, _("A carrier company"))])

    class Meta:
        model = DispatchNote
        fields = ("account", "target_alias", "profile", "numbering", "prefix", "despatch_number", "issue_date",
                  "issue_time", "shipment_date", "local_reference_id", "xslt_code",
                  "delivery_city", "delivery_district", "delivery_zip_code", "delivery_country",
                  "carrier", "carrier_title", "carrier_vkn_tckn", "plate_number",
                  "buyer_identifier", "buyer_name", "buyer_surname", "buyer_city", "buyer_district", "buyer_country",
                  "seller_identifier", "seller_name", "seller_surname", "seller_city", "seller_district",
                  "seller_country", "notes")
        formfield_callback = localized_formfield
        field_classes = dict.fromkeys(("carrier_vkn_tckn", "buyer_identifier", "seller_identifier"), TaxIdField)
        widgets = {"notes": forms.Textarea(attrs={"rows": 2}),
                   "issue_date": forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d"),
                   "issue_time": forms.TimeInput(attrs={"type": "time"}, format="%H:%M"),
                   "shipment_date": forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M")}

    def __init__(self, *args, company, **kwargs):
        super().__init__(*args, **kwargs)
        self.company = company
        self.fields["profile"].choices = [(profile.value, profile.label) for profile in FORM_PROFILES]
        self.fields["shipment_date"].input_formats = ["%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M", "%Y-%m-%d %H:%M:%S"]
        for name in ("issue_date", "shipment_date", "delivery_country"):
            self.fields[name].required = True
        self.fields["delivery_city"].help_text = _("Empty: the receiver's default address is used.")
        self.fields["local_reference_id"].help_text = _("Your ERP's id of this shipment, to match it later; each "
                                                        "is used once. Empty: one is given here.")
        if self.instance.pk:  # the number and how it was given never change once the note is saved
            for name in ("numbering", "prefix", "despatch_number"):
                self.fields[name].disabled = True
        if not self.is_bound:
            now = timezone.localtime().replace(second=0, microsecond=0)
            # A new note's empty instance gives None: today, now (a date input takes only yyyy-mm-dd).
            self.initial["issue_date"] = self.initial.get("issue_date") or now.date()
            self.initial["issue_time"] = self.initial.get("issue_time") or now.time()
            shipped = self.initial.get("shipment_date")
            self.initial["shipment_date"] = timezone.localtime(shipped) if shipped else now
            if not self.instance.pk:  # the prefix the company used last
                self.initial.setdefault("prefix", DispatchNote.objects.filter(company=company).exclude(prefix="")
                                        .order_by("-pk").values_list("prefix", flat=True).first() or "")
            else:
                self.initial["account"] = self.instance.receiver_identifier
                self.initial["carrier"] = CARRIER_COMPANY if self.instance.has_carrier else CARRIER_DRIVERS

    def clean_account(self):
        return accounts_api.resolve_account(self.company, self.cleaned_data.get("account"))

    def clean_local_reference_id(self):
        return clean_reference(self, self.cleaned_data.get("local_reference_id"))

    def clean_issue_date(self):
        issued = self.cleaned_data.get("issue_date")
        if issued and issued > timezone.localdate():
            raise ValidationError(_("A dispatch note cannot be dated in the future."))
        if issued and not 2000 <= issued.year <= 2099:  # the number carries the year as 20xx
            raise ValidationError(_("A dispatch note is dated in the years 2000 to 2099."))
        return issued

    def clean_plate_number(self):
        plate = re.sub(r"[\s-]+", "", self.cleaned_data.get("plate_number") or "").upper()
        if plate and not PLATE.match(plate):
            raise ValidationError(_("A plate is the province code, one to three letters and two to five digits, "
                                    "e.g. 34 ABC 123."))
        return plate

    def clean(self):
        cleaned = super().clean()
        if not self.instance.pk:
            self.clean_numbering_fields(cleaned, cleaned.get("issue_date"))
            if cleaned.get("numbering") == Numbering.PLATFORM:  # the JSON model carries no prefix
                cleaned["prefix"] = ""
        issued, shipped = cleaned.get("issue_date"), cleaned.get("shipment_date")
        if issued and shipped and timezone.localtime(shipped).date() < issued:
            self.add_error("shipment_date", _("The goods cannot leave before the note's issue date."))
        if cleaned.get("carrier") == CARRIER_COMPANY:  # document 3, 2.9: the carrier rule
            if not (cleaned.get("carrier_title") or "").strip():
                self.add_error("carrier_title", _("A carrier company is named by its title."))
            if not cleaned.get("carrier_vkn_tckn") and "carrier_vkn_tckn" not in self.errors:
                self.add_error("carrier_vkn_tckn", _("Give the carrier company's tax or national id."))
        else:
            cleaned["carrier_title"] = cleaned["carrier_vkn_tckn"] = ""
            for name in ("carrier_title", "carrier_vkn_tckn"):  # hidden with drivers: not to block the form
                self._errors.pop(name, None)
            if not cleaned.get("plate_number") and "plate_number" not in self.errors:
                self.add_error("plate_number", _("Our own vehicle is named by its plate."))
        for party in ("buyer", "seller"):
            if cleaned.get(f"{party}_identifier") and not (cleaned.get(f"{party}_name") or "").strip():
                self.add_error(f"{party}_name", _("Give the name or title that goes with this id."))
        self._receiver(cleaned)
        return cleaned

    def _receiver(self, cleaned):
        """The mailbox (document 3, 2.9 targetAlias) and the addresses the receiver's account gives."""
        account = cleaned.get("account")
        if account is None:
            return
        boxes = taxpayers.mailboxes(account.identifier)
        alias = (cleaned.get("target_alias") or "").strip()
        generic = taxpayers.generic_alias()
        if not boxes and not taxpayers.directory_loaded() and not alias:
            self.add_error("target_alias", _("The dispatch-note users' list is not loaded yet: type the mailbox, or "
                                             "load the list under Dispatch-note users."))
        elif boxes and not alias and len(boxes) > 1:
            self.add_error("target_alias", _("The receiver has several dispatch mailboxes: choose one (%(boxes)s).")
                           % {"boxes": ", ".join(boxes)})
        elif boxes and alias and alias not in boxes:
            self.add_error("target_alias", _("This is not one of the receiver's dispatch mailboxes: %(boxes)s.")
                           % {"boxes": ", ".join(boxes)})
        elif not boxes and taxpayers.directory_loaded() and alias and alias != generic:
            self.add_error("target_alias", _("The receiver is not a dispatch-note user: its note goes to the generic "
                                             "mailbox %(alias)s.") % {"alias": generic})
        cleaned["target_alias"] = alias or (boxes[0] if len(boxes) == 1 else generic if not boxes else "")
        address = account.address_set.filter(is_default=True).first() or account.address_set.first() \
            if hasattr(account, "address_set") else None
        cleaned["_address"] = address
        for name, source in (("delivery_city", "city"), ("delivery_district", "sub_division_name"),
                             ("delivery_zip_code", "postal_zone")):
            if not (cleaned.get(name) or "").strip():
                if address is not None and getattr(address, source):
                    cleaned[name] = getattr(address, source)
                else:
                    self.add_error(name, _("The delivery address needs its district, city and postal code (the tax "
                                           "authority's rule); the receiver's address does not give it."))
        code = (cleaned.get("delivery_zip_code") or "").strip()
        if code and not POSTAL_CODE.match(code) and "delivery_zip_code" not in self.errors:
            self.add_error("delivery_zip_code", _("A postal code is 5 digits starting with the province's code, e.g. "
                                                  "34710."))

    def save(self, commit=True):
        note = super().save(commit=False)
        cleaned = self.cleaned_data
        account = cleaned["account"]
        note.company = self.company
        note.current_account = account
        note.receiver_identifier = account.identifier
        # The legal title only: the account's code tells accounts apart here and is kept beside it (issue 28).
        note.receiver_name = f"{account.name} {account.surname or ''}".strip()[:500]
        note.receiver_code = account.code or ""
        # the mailbox and the delivery address clean() completed are the model form's own fields: set already
        address = cleaned.get("_address")
        if address is not None:
            note.receiver_city, note.receiver_district = address.city, address.sub_division_name
            note.receiver_country = address.country or "Türkiye"
        else:
            note.receiver_city, note.receiver_district = note.delivery_city, note.delivery_district
            note.receiver_country = note.delivery_country
        if not note.pk:
            note.numbering = cleaned["numbering"]
            note.prefix = cleaned.get("prefix") or ""
            note.despatch_number = cleaned.get("despatch_number") or "" if note.numbering == Numbering.MANUAL else ""
        # Saved as a draft, always (issue 29): sending is its own step, the status change after a confirmation.
        note.requested_status = DispatchStatus.DRAFT
        if commit:
            note.save()
        return note

    @property
    def carrier_is_company(self) -> bool:
        return (self.cleaned_data if hasattr(self, "cleaned_data") else {}).get("carrier") == CARRIER_COMPANY


class LineForm(forms.ModelForm):
    quantity = LocalizedDecimalField(label=_("Quantity"), max_digits=18, decimal_places=6,
                                     min_value=Decimal("0.000001"))
    unit_price = LocalizedDecimalField(label=_("Unit price"), max_digits=18, decimal_places=6, min_value=Decimal(0),
                                       required=False)
    vat_rate = LocalizedDecimalField(label=_("VAT %"), rate=True, max_digits=5, decimal_places=2, min_value=Decimal(0),
                                     max_value=Decimal(100), initial=Decimal(20), required=False)
    unit_code = forms.ChoiceField(label=_("Unit"), initial="C62")

    class Meta:
        model = DispatchLine
        fields = ("product_name", "product_code", "quantity", "unit_code", "unit_price", "vat_rate")
        formfield_callback = localized_formfield
        widgets = {"product_name": forms.TextInput(attrs={"list": "product-options", "autocomplete": "off"})}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["unit_code"].choices = unit_choices(self)

    def clean_product_name(self):
        name = (self.cleaned_data.get("product_name") or "").strip()
        if not name:
            raise ValidationError(_("Name the product."))
        return name

    def clean_unit_code(self):
        return codes.unit_code(self.cleaned_data.get("unit_code"))

    def clean(self):
        cleaned = super().clean()
        cleaned["unit_price"] = cleaned.get("unit_price") or Decimal(0)
        cleaned["vat_rate"] = cleaned.get("vat_rate") or Decimal(0)
        quantity = cleaned.get("quantity")
        if quantity is not None and quantity * cleaned["unit_price"] >= LINE_LIMIT:
            self.add_error("unit_price", _("The line's amount (quantity × unit price) is too large; check the "
                                           "quantity and the unit price."))
        return cleaned


class BaseLineFormSet(LineFormSetBase):
    default_error_messages = {**LineFormSetBase.default_error_messages,
                              "too_many_forms": _("A dispatch note has at most 500 lines here; split it.")}

    def clean(self):
        super().clean()
        # The note's total with VAT is kept to the cent in 18 digits (core.fields.MONEY): 16 before the comma.
        total = sum(sum(services.line_figures(line.quantity, line.unit_price, line.vat_rate)) for line in self.kept())
        if total >= TOTAL_LIMIT:
            raise ValidationError(_("The note's total is too large; check the quantities and the unit prices."))


class DriverForm(forms.ModelForm):
    class Meta:
        model = DispatchDriver
        fields = ("name", "surname", "tckn")
        widgets = {"name": forms.TextInput(attrs={"list": "driver-options", "autocomplete": "off"})}
        help_texts = {"tckn": _("11 digits; 11111111111 when it is not known.")}

    def clean_tckn(self):
        value = (self.cleaned_data.get("tckn") or "").strip()
        validate_driver_tckn(value)
        return value


class BaseDriverFormSet(LineFormSetBase):
    """The drivers: required when no carrier company carries (document 3, 2.9), ignored when one does."""

    empty_message = _("Without a carrier company, give at least one driver: name, surname and national id "
                      "(11111111111 when it is not known).")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.carrier_is_company = self.is_bound and self.data.get("carrier") == CARRIER_COMPANY

    def full_clean(self):
        if self.carrier_is_company:  # a carrier company's note has no drivers: their fields are not checked
            self._errors, self._non_form_errors = [], self.error_class()
            for form in self.forms:
                form.cleaned_data = {}
            return
        super().full_clean()

    def is_valid(self):
        return True if self.carrier_is_company else super().is_valid()

    def kept(self) -> list:
        return [] if self.carrier_is_company else super().kept()


LineFormSet = line_formset(DispatchNote, DispatchLine, LineForm, BaseLineFormSet)
DriverFormSet = line_formset(DispatchNote, DispatchDriver, DriverForm, BaseDriverFormSet, max_num=5, validate_min=False)


class UblUploadForm(NumberingFields):
    """A DespatchAdvice UBL-TR XML, or a ZIP of several (document 3, 2.9, UBL request)."""

    file = SizedFileField(label=_("UBL file (XML or ZIP)"),
                          help_text=_("A DespatchAdvice in UBL-TR 1.2.1, or a ZIP of several. Each is checked "
                                      "against the schema before anything is sent."))
    numbering = forms.ChoiceField(label=_("Numbering"), widget=forms.RadioSelect, initial=Numbering.MANUAL,
                                  choices=[(Numbering.MANUAL, _("The number inside the file")),
                                           (Numbering.PLATFORM, _("The platform gives the next number of a "
                                                                  "prefix"))])
    target_alias = forms.CharField(label=_("Mailbox (alias)"), max_length=250, required=False,
                                   help_text=_("Only when the receiver has several dispatch mailboxes."))
    local_reference_id = forms.CharField(label=_("ERP reference"), max_length=100, required=False,
                                         help_text=_("For one note only; empty: one is given here."))
    xslt_code = forms.CharField(label=_("Layout code"), max_length=100, required=False)

    def __init__(self, *args, company, instance=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.company, self.instance = company, instance  # the new note, not saved yet: no pk
        del self.fields["despatch_number"]
        self.fields["prefix"].help_text = _("When the platform numbers the note: the prefix whose counter "
                                            "continues (empty: its default).")

    def clean_local_reference_id(self):
        return clean_reference(self, self.cleaned_data.get("local_reference_id"))

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("numbering") == Numbering.PLATFORM:
            self.clean_numbering_fields(cleaned)
        return cleaned


class DispatchExportForm(PlatformExportForm):
    """The export body of document 3, 2.9 (outgoing notes)."""

    status = forms.TypedChoiceField(label=_("Status"), coerce=int, required=False, empty_value=None,
                                    choices=[("", _("All")), *DispatchStatus.choices])
    isArchived = forms.BooleanField(label=_("Archived notes"), required=False)
    startDate = forms.DateTimeField(label=_("Sent from"), required=False)
    endDate = forms.DateTimeField(label=_("Sent until"), required=False)
    issueStartDate = forms.DateTimeField(label=_("Note date from"), required=False)
    issueEndDate = forms.DateTimeField(label=_("Note date until"), required=False)
    targetVknTckn = TaxIdField(label=_("Receiver's tax or national id"), required=False)
    date_ranges = (("startDate", "endDate"), ("issueStartDate", "issueEndDate"))

    def __init__(self, *args, kind=None, **kwargs):
        super().__init__(*args, **kwargs)


class UblReplaceForm(forms.Form):
    """The corrected UBL file of one note."""

    file = SizedFileField(label=_("Corrected UBL file (XML)"),
                          help_text=_("It keeps the note's cbc:UUID and, when the number is in the file, its number."))
