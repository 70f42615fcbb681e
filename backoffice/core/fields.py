"""Form fields for numbers and phone numbers as people in Turkey type them.

Turkish writes 1.250,75 (dots between thousands, a comma before the decimals); browsers' number inputs
and Python's Decimal expect 1250.75. parse_decimal reads both, and refuses what could mean two different
numbers. static/js/numbers.js (window.TrNumber) is the browser's copy for the live totals of every form: both
are run over the same table, tests/data/number_inputs.json, so change them together.

"5.000" in an amount, a quantity or a price is five thousand, as Turkish writes it; only a rate (an exchange rate,
a percentage) asks what was meant, because there the English habit 32.125 = 32,125 is as likely.
"""

import re
from decimal import Decimal, InvalidOperation

from django import forms
from django.core.exceptions import ValidationError
from django.db import models
from django.utils.translation import gettext_lazy as _

from .validators import (normalize_line_number, normalize_phone, validate_iban, validate_line_number,
                         validate_phone, validate_vkn_or_tckn)

# Spaces people (or a copy from a spreadsheet) put between thousands: normal, no-break, narrow no-break, thin...
# Spelled out rather than \s, whose set differs between Python and JavaScript (numbers.js uses this very set).
_SPACES = re.compile("[ \t\n\r\f\v\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+")
# A currency or percent sign typed with the number: "₺1.250,75", "1.250,75 TL", "%18", "18 %".
_AFFIXES = re.compile(r"^(?:₺|TL|TRY|%)|(?:₺|TL|TRY|%)$", re.IGNORECASE)
_BODY = re.compile(r"^[0-9., ]+$")

INVALID_NUMBER = _("Enter a number such as 1.250,75 (a comma before the decimals, dots between thousands, "
                   "or no separator: 1250,75).")


AMBIGUOUS_RATE = _("Write the decimals after a comma, e.g. 32,125: with a dot, 32.125 reads as thirty-two "
                   "thousand one hundred twenty-five.")


class NumberFormatError(ValueError):
    pass


def _grouped(integer: str, separator: str) -> str:
    """The digits of an integer part written with `separator` between thousands: 1.250.000 -> 1250000."""
    groups = integer.split(separator)
    if not (1 <= len(groups[0]) <= 3) or any(len(group) != 3 for group in groups[1:]):
        raise NumberFormatError(integer)
    return "".join(groups)


def parse_decimal(text) -> Decimal:
    """A number as typed in Turkish (or unambiguous English) notation, as a Decimal.

    1.250,75 / 1250,75 / 1250.75 / 1.250 (thousands: 1250) / 1 250,75 / 1,250.75 / -3,5 / ₺1.250,75 / %18.
    A separator that appears twice separates thousands; one of each: the last one is the decimal separator;
    a single dot followed by exactly three digits (and one to three before it, not starting with 0) separates
    thousands, as in Turkish (so 1.250 is 1250 and 1.25 or 0.250 is a decimal). Anything else raises
    NumberFormatError: letters, 1,2,3, 12.50,75, 1e5, a separator at the end.
    """
    return _read(text)[0]


def is_ambiguous_rate(text) -> bool:
    """Whether a rate typed as `text` is asked rather than read: parse_decimal reads its one dot before three
    digits as thousands (32.125 = 32125), where an English habit means decimals. False for what it refuses."""
    try:
        return _read(text)[1]
    except NumberFormatError:
        return False


def _read(text) -> tuple[Decimal, bool]:
    """parse_decimal's number, and whether it read a single dot before three digits as thousands (1.250)."""
    text = _SPACES.sub(" ", str(text)).strip(" ").replace("\u2212", "-")
    text = _AFFIXES.sub("", text).strip(" ")
    sign = ""
    if text and text[0] in "+-":
        sign, text = ("-" if text[0] == "-" else ""), text[1:].strip(" ")
    text = _AFFIXES.sub("", text).strip(" ")
    if not text or not _BODY.match(text) or not any(c.isdigit() for c in text):
        raise NumberFormatError(text)
    dots, commas = text.count("."), text.count(",")
    decimal_sep, thousands_sep, dot_thousands = None, None, False
    if dots and commas:
        decimal_sep = "," if text.rfind(",") > text.rfind(".") else "."
        thousands_sep = "." if decimal_sep == "," else ","
        if text.count(decimal_sep) != 1:
            raise NumberFormatError(text)
    elif commas:
        decimal_sep, thousands_sep = (",", None) if commas == 1 else (None, ",")
    elif dots > 1:
        thousands_sep = "."
    elif dots == 1:
        before, after = text.split(".")
        if len(after) == 3 and 1 <= len(before) <= 3 and before.isdigit() and before[0] != "0":
            thousands_sep, dot_thousands = ".", True
        else:
            decimal_sep = "."
    if " " in text:
        if thousands_sep is not None:
            raise NumberFormatError(text)  # spaces and dots (or commas) both between thousands
        if decimal_sep == "." and len(text.rpartition(".")[2]) == 3:
            raise NumberFormatError(text)  # 1 250.000: thousands or decimals?
        thousands_sep = " "
    integer, _sep, fraction = text.partition(decimal_sep) if decimal_sep else (text, "", "")
    if decimal_sep and not fraction:
        raise NumberFormatError(text)  # "5," or "5.": a typo, not a number
    if fraction and not fraction.isdigit():
        raise NumberFormatError(text)
    if integer:
        integer = _grouped(integer, thousands_sep) if thousands_sep else integer
        if not integer.isdigit():
            raise NumberFormatError(text)
    elif not fraction:
        raise NumberFormatError(text)
    try:
        return Decimal(f"{sign}{integer or '0'}{'.' + fraction if fraction else ''}"), dot_thousands
    except InvalidOperation:
        raise NumberFormatError(text) from None


def format_decimal(value, places=None, *, grouping=True) -> str:
    """A number in Turkish notation (1.250,75), which parse_decimal reads back as the same number.

    places=None writes the digits the number needs (18, 12,5, 32,1234); otherwise exactly `places`."""
    value = Decimal(value)
    if places is None:
        text = f"{value.normalize():f}"
    else:
        text = f"{value:.{places}f}"
    sign = "-" if text.startswith("-") else ""
    integer, _sep, fraction = text.lstrip("-").partition(".")
    if grouping:
        integer = f"{int(integer):,}".replace(",", ".")
    return f"{sign}{integer}{',' + fraction if fraction else ''}"


def _number_widget(**attrs):
    # type=text: a type=number input parses by the browser's locale and drops what it cannot read.
    return forms.TextInput(attrs={"inputmode": "decimal", "autocomplete": "off", "spellcheck": "false",
                                  "class": "text-end", "data-number": "", **attrs})


class LocalizedDecimalField(forms.DecimalField):
    """A DecimalField that reads 1.250,75, 1250,75 and 1250.75 (parse_decimal) and shows 1.250,75 back.

    display_places: decimals shown for a stored value (2 for money); None shows what the value needs (rates).
    rate: a rate (an exchange rate, a percentage) asks what "32.125" means instead of reading 32125; an amount, a
    quantity or a price reads "5.000" as five thousand. Left None, a field bounded by 100 (a percentage) is a rate.
    The widget says so (data-number="rate"), so that static/js/numbers.js asks the same in the browser."""

    default_error_messages = {"invalid": INVALID_NUMBER, "ambiguous": AMBIGUOUS_RATE}  # noqa: RUF012 (Django's own)

    def __init__(self, *, display_places=None, rate=None, **kwargs):
        self.display_places = display_places
        self.rate = kwargs.get("max_value") == 100 if rate is None else rate  # before widget_attrs() runs
        kwargs.setdefault("widget", _number_widget())
        super().__init__(**kwargs)

    def widget_attrs(self, widget):
        # Not DecimalField's: its "step" is for type=number only.
        attrs = forms.Field.widget_attrs(self, widget)
        if self.rate:
            attrs["data-number"] = "rate"
        return attrs

    def to_python(self, value):
        if value in self.empty_values or (isinstance(value, str) and not _SPACES.sub("", value)):
            return None  # only spaces: empty, as the browser's live totals take it
        if isinstance(value, (Decimal, int)) and not isinstance(value, bool):
            return Decimal(value)
        if isinstance(value, float):
            return Decimal(str(value))
        try:
            number, dot_thousands = _read(value)
        except NumberFormatError:
            raise ValidationError(self.error_messages["invalid"], code="invalid") from None
        if dot_thousands and self.rate:
            raise ValidationError(self.error_messages["ambiguous"], code="ambiguous")
        return number

    def prepare_value(self, value):
        if isinstance(value, (Decimal, int, float)) and not isinstance(value, bool):
            try:
                # A rate of 1250 is shown as 1250, not 1.250, which it would ask about when sent back.
                return format_decimal(value, self.display_places, grouping=not self.rate)
            except (InvalidOperation, ValueError):
                return value
        return value  # typed text sent back with an error: shown as typed


class LocalizedIntegerField(forms.IntegerField):
    """An IntegerField that reads 1.250 and 1250 as 1250 (Django's would read "1.000" as 1) and shows 1.250.
    Its message stays Django's "Enter a whole number." """

    def __init__(self, **kwargs):
        kwargs.setdefault("widget", _number_widget(inputmode="numeric"))
        super().__init__(**kwargs)

    def widget_attrs(self, widget):
        return forms.Field.widget_attrs(self, widget)

    def to_python(self, value):
        if value in self.empty_values or (isinstance(value, str) and not _SPACES.sub("", value)):
            return None
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        try:
            number = value if isinstance(value, Decimal) else parse_decimal(value)
        except NumberFormatError:
            raise ValidationError(self.error_messages["invalid"], code="invalid") from None
        if number != number.to_integral_value():
            raise ValidationError(self.error_messages["invalid"], code="invalid")
        return int(number)

    def prepare_value(self, value):
        if isinstance(value, int) and not isinstance(value, bool):
            return format_decimal(value, 0)
        return value


def localized_formfield(model_field, **kwargs):
    """A ModelForm's formfield_callback: decimal and integer model fields get the localized fields."""
    if isinstance(model_field, models.DecimalField) and not model_field.choices:
        kwargs.setdefault("form_class", LocalizedDecimalField)
        if issubclass(kwargs["form_class"], LocalizedDecimalField):
            # exchange_rate, vat_rate, discount_rate, taxt_rate...: the model's name says it is a rate.
            kwargs.setdefault("rate", model_field.name.endswith("rate"))
    elif (isinstance(model_field, models.IntegerField) and not model_field.choices
          and not isinstance(model_field, (models.AutoField, models.BigAutoField, models.SmallAutoField))):
        kwargs.setdefault("form_class", LocalizedIntegerField)
    return model_field.formfield(**kwargs)


class TypedNumberField(forms.CharField):
    """A number people type with separators (a phone, an IBAN), stored as `normalize` gives it and checked by
    `validator`. The browser's maxlength is left off: the typed form may be longer than the stored one."""

    validator = None

    def __init__(self, **kwargs):
        kwargs.setdefault("max_length", 40)
        super().__init__(**kwargs)
        self.validators.append(self.validator)

    @staticmethod
    def normalize(value: str) -> str:
        return value

    def widget_attrs(self, widget):
        attrs = super().widget_attrs(widget)
        attrs.pop("maxlength", None)
        return attrs

    def to_python(self, value):
        value = super().to_python(value)
        return self.normalize(value) if value else value


class PhoneField(TypedNumberField):
    """A mobile number of document 1, section 2.2, as typed: 0532 123 45 67, +90 (532) 123-45-67, 5321234567.

    Stored as the spec's ten digits (5321234567)."""

    validator = staticmethod(validate_phone)
    normalize = staticmethod(normalize_phone)

    def __init__(self, **kwargs):
        kwargs.setdefault("max_length", 30)
        kwargs.setdefault("widget", forms.TextInput(attrs={"type": "tel", "inputmode": "tel", "autocomplete": "tel"}))
        super().__init__(**kwargs)


# --- what every domain's forms share -----------------------------------------------------------------------

MONEY = {"max_digits": 18, "decimal_places": 2}  # model amounts: the platform's decimals, to the cent
DATETIME_FORMAT = "%Y-%m-%dT%H:%M"  # what <input type="datetime-local"> sends
DATETIME_INPUT_FORMATS = [DATETIME_FORMAT, "%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S"]


class SizedFileField(forms.FileField):
    """An uploaded file of at most max_bytes."""

    def __init__(self, *args, max_bytes=20 * 1024 * 1024, **kwargs):
        super().__init__(*args, **kwargs)
        self.max_bytes = max_bytes

    def clean(self, data, initial=None):
        upload = super().clean(data, initial)
        if upload is not None and upload.size > self.max_bytes:
            raise ValidationError(_("The file is larger than %(megabytes)s MB.") % {
                "megabytes": self.max_bytes // (1024 * 1024)})
        return upload


def datetime_widget():
    return forms.DateTimeInput(attrs={"type": "datetime-local"}, format=DATETIME_FORMAT)


def as_datetime_input(field, *, dates_too=False):
    """A date-time form field as the browser's picker sends it, in the years 2000 to 2099."""
    field.widget = datetime_widget()
    field.input_formats = [*DATETIME_INPUT_FORMATS, *(["%Y-%m-%d"] if dates_too else [])]
    field.validators.append(validate_year_range)
    return field


def validate_year_range(value):
    """Dates of the 2000s only: document numbers carry a year 20xx, and it keeps typos such as 0202 out."""
    if value is not None and not (2000 <= value.year <= 2099):
        raise ValidationError(_("Enter a date between the years 2000 and 2099."), code="year_range")


def money_field(label, *, required=True, **kwargs):
    # Typed as 1.250,75, 1250,75 or 1250.75 (parse_decimal), shown back as 1.250,75; 5.000 is five thousand.
    return LocalizedDecimalField(label=label, required=required, max_digits=12, decimal_places=2,
                                 min_value=Decimal(0), display_places=2, **kwargs)


def rate_field(label, *, required=False):
    # A percentage: "18.500" is asked (18,5 or eighteen thousand five hundred?), never guessed.
    return LocalizedDecimalField(label=label, required=required, max_digits=5, decimal_places=2, min_value=Decimal(0),
                                 max_value=Decimal(100), rate=True)


def clean_vkn_or_tckn(value) -> str:
    """An optional VKN (10 digits) or TCKN (11 digits), checked with its check digits when given."""
    value = (value or "").strip()
    if value:
        validate_vkn_or_tckn(value)
    return value


class TaxIdField(forms.CharField):
    """An optional VKN (10 digits) or TCKN (11 digits), checked with its check digits when given."""

    default_validators = [validate_vkn_or_tckn]

    def __init__(self, **kwargs):
        kwargs.setdefault("max_length", 11)
        super().__init__(**kwargs)


class LineNumberField(TypedNumberField):
    """A phone or fax number of document 3 (10 to 11 digits, landlines too), stored as its digits."""

    validator = staticmethod(validate_line_number)
    normalize = staticmethod(normalize_line_number)

    def __init__(self, **kwargs):
        kwargs.setdefault("max_length", 30)
        kwargs.setdefault("widget", forms.TextInput(attrs={"type": "tel", "inputmode": "tel"}))
        super().__init__(**kwargs)


class IbanField(TypedNumberField):
    """An IBAN as typed (spaces allowed), stored compact and in capitals, checked with its check digits."""

    validator = staticmethod(validate_iban)

    @staticmethod
    def normalize(value: str) -> str:
        return "".join(value.split()).upper()
