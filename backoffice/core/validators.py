"""Shared field validators for the platform's identifiers (documents 1 to 3 and the public facts).

Check digits come from python-stdnum (stdnum.tr.vkn, stdnum.tr.tckimlik, stdnum.iban); the messages
say what is wrong in the user's words.
"""

import re

from django.core.exceptions import ValidationError
from django.core.validators import EmailValidator
from django.utils.translation import gettext_lazy as _
from stdnum import iban as stdnum_iban
from stdnum.tr import tckimlik, vkn

PHONE_RE = re.compile(r"^5[0-9]{9}$")
DOCUMENT_NUMBER_RE = re.compile(r"^[A-Z0-9]{3}20[0-9]{2}[0-9]{9}$")
# Document 3 allows this TCKN for a driver whose real id is unknown.
UNKNOWN_DRIVER_TCKN = "11111111111"


def _digits(value) -> str:
    return str(value or "").strip()


def validate_vkn(value):
    """Tax number (VKN): 10 digits with a check digit."""
    value = _digits(value)
    if not value.isdigit() or len(value) != 10:
        raise ValidationError(_("A tax number (VKN) has exactly 10 digits."), code="vkn_length")
    if not vkn.is_valid(value):
        raise ValidationError(_("This tax number (VKN) is not valid: its check digit does not match."),
                              code="vkn_checksum")


def validate_tckn(value, *, allow_unknown_driver=False):
    """National id (TCKN): 11 digits, not starting with 0, with two check digits."""
    value = _digits(value)
    if allow_unknown_driver and value == UNKNOWN_DRIVER_TCKN:
        return
    if not value.isdigit() or len(value) != 11:
        raise ValidationError(_("A national id (TCKN) has exactly 11 digits."), code="tckn_length")
    if not tckimlik.is_valid(value):
        raise ValidationError(_("This national id (TCKN) is not valid: its check digits do not match."),
                              code="tckn_checksum")


def validate_vkn_or_tckn(value):
    """A tax number (10 digits) or a national id (11 digits), each with its check digits."""
    value = _digits(value)
    if not value.isdigit() or len(value) not in (10, 11):
        raise ValidationError(_("Enter a tax number (VKN, 10 digits) or a national id (TCKN, 11 digits)."),
                              code="vkn_tckn_length")
    (validate_vkn if len(value) == 10 else validate_tckn)(value)


def validate_driver_tckn(value):
    validate_tckn(value, allow_unknown_driver=True)


# What people type around a number: spaces, dashes, dots, slashes and parentheses ("0 (532) 123-45-67").
PHONE_SEPARATORS_RE = re.compile(r"[\s\u00a0\-./()]+")


def normalize_phone(value) -> str:
    """A phone number as typed (0532 123 45 67, +90 532 123 4567, 0090 532..., (0532) 123-45-67) in the
    spec's form: the national digits without separators, trunk 0 or country code 90."""
    value = PHONE_SEPARATORS_RE.sub("", str(value or "").strip())
    if value.startswith("+90"):
        value = value[3:]
    elif value.startswith("0090"):
        value = value[4:]
    elif value.startswith("90") and len(value) == 12:
        value = value[2:]
    if value.startswith("0") and len(value) == 11:
        value = value[1:]
    return value


def validate_phone(value):
    """Document 1, section 2.2: ^5[0-9]{9}$ (ten digits starting with 5), checked on the number as typed
    once spaces, dashes, parentheses and a leading 0, +90 or 0090 are taken off (normalize_phone)."""
    number = normalize_phone(value)
    if not number.lstrip("+").isdigit():
        raise ValidationError(
            _("A phone number has digits only (spaces, dashes, parentheses and a leading +90 are fine), "
              "e.g. 0532 123 45 67."), code="phone_characters")
    if not PHONE_RE.match(number):
        raise ValidationError(
            _("Enter a mobile number: ten digits starting with 5 after the 0 or +90, e.g. 0532 123 45 67."),
            code="phone",
        )


def validate_document_number(value):
    """16 characters: 3-character prefix, 4-digit year (20xx), 9-digit counter."""
    value = str(value or "")
    if len(value) != 16:
        raise ValidationError(_("A document number has exactly 16 characters (prefix, year, 9-digit counter)."),
                              code="document_number_length")
    if not DOCUMENT_NUMBER_RE.match(value):
        raise ValidationError(
            _("A document number is a 3-character prefix (capital letters or digits), a year such as 2026 "
              "and a 9-digit counter, e.g. ABC2026000000001."),
            code="document_number_format",
        )


def validate_tr_iban(value):
    value = re.sub(r"\s+", "", str(value or "")).upper()
    if not value.startswith("TR") or len(value) != 26:
        raise ValidationError(_("A Turkish IBAN starts with TR and has 26 characters."), code="iban_length")
    if not stdnum_iban.is_valid(value):
        raise ValidationError(_("This IBAN is not valid: its check digits do not match."), code="iban_checksum")


def validate_iban(value):
    """An IBAN of any country with its check digits (python-stdnum), at most 26 characters (document 3, 2.3);
    a Turkish one has exactly 26."""
    value = re.sub(r"\s+", "", str(value or "")).upper()
    if value.startswith("TR"):
        validate_tr_iban(value)
        return
    if len(value) > 26:
        raise ValidationError(_("An IBAN has at most 26 characters here."), code="iban_length")
    if not stdnum_iban.is_valid(value):
        raise ValidationError(_("This IBAN is not valid: check its country code, length and check digits."),
                              code="iban_checksum")


def normalize_line_number(value) -> str:
    """A phone or fax number as typed, its digits only: 0212 123 45 67, +90 212 123 45 67, (212) 1234567."""
    value = PHONE_SEPARATORS_RE.sub("", str(value or "").strip())
    if value.startswith("+90"):
        value = "0" + value[3:]
    elif value.startswith("0090"):
        value = "0" + value[4:]
    return value


def validate_line_number(value):
    """Document 3, 2.2 and 2.4: a phone or fax number of 10 to 11 digits (landlines too)."""
    number = normalize_line_number(value)
    if not number.isdigit():
        raise ValidationError(_("A phone or fax number has digits only (spaces, dashes and parentheses are fine), "
                                "e.g. 0212 123 45 67."), code="line_characters")
    if not 10 <= len(number) <= 11:
        raise ValidationError(_("A phone or fax number has 10 or 11 digits, e.g. 0212 123 45 67."),
                              code="line_length")


# Django's own check without its exception for "localhost" (the platform knows no local domain).
_email_format = EmailValidator(allowlist=[])


def validate_platform_email(value):
    """An e-mail address the platform takes (document 1, 2.2 "email format"): its domain has a dot. The platform
    refuses a@b and a@localhost (a 422 on contactPersonEmailName), which Django's EmailValidator lets through for
    localhost and for an IP literal such as a@[IPv6:::1]; the rest is Django's check."""
    value = str(value or "").strip()
    local, at, domain = value.rpartition("@")
    if at and local and domain and "." not in domain:
        raise ValidationError(_("The domain of an e-mail address has a dot, e.g. ad@firma.com.tr: the platform "
                                "refuses one without."), code="email_domain")
    _email_format(value)
