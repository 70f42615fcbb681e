import pytest
from django.core.exceptions import ValidationError
from django.utils import translation

from backoffice.core import validators as v


@pytest.fixture(autouse=True)
def english():
    # The messages are checked in the source language; the Turkish catalogue has its own test.
    with translation.override("en"):
        yield


def error_of(func, value):
    with pytest.raises(ValidationError) as info:
        func(value)
    return info.value


@pytest.mark.parametrize("value", ["1234567890", "9876543217", "0010000009"])
def test_vkn_valid(value):
    v.validate_vkn(value)


@pytest.mark.parametrize(
    "value,code",
    [("1234567891", "vkn_checksum"), ("123456789", "vkn_length"), ("123456789012", "vkn_length"),
     ("12345abc90", "vkn_length"), ("", "vkn_length")],
)
def test_vkn_invalid(value, code):
    assert error_of(v.validate_vkn, value).code == code


def test_tckn_valid_and_invalid():
    v.validate_tckn("10000000146")
    assert error_of(v.validate_tckn, "10000000147").code == "tckn_checksum"
    assert error_of(v.validate_tckn, "1000000014").code == "tckn_length"
    assert "11 digits" in error_of(v.validate_tckn, "1000000014").messages[0]


def test_unknown_driver_tckn_passes_only_for_drivers():
    v.validate_driver_tckn("11111111111")
    assert error_of(v.validate_tckn, "11111111111").code == "tckn_checksum"


@pytest.mark.parametrize("value,code", [("123456789", "vkn_tckn_length"), ("123456789012", "vkn_tckn_length"),
                                        ("1234567891", "vkn_checksum"), ("10000000147", "tckn_checksum")])
def test_vkn_or_tckn(value, code):
    v.validate_vkn_or_tckn("1234567890")
    v.validate_vkn_or_tckn("10000000146")
    assert error_of(v.validate_vkn_or_tckn, value).code == code


@pytest.mark.parametrize("value", ["4321234567", "04321234567", "532123456", "+9053212345678", "+49 532 123 45 67"])
def test_phone_invalid(value):
    assert "starting with 5" in error_of(v.validate_phone, value).messages[0]


def test_phone_with_letters():
    assert error_of(v.validate_phone, "53212345ab").code == "phone_characters"


@pytest.mark.parametrize("value", ["5321234567", "05321234567", "+905321234567", "0532 123 45 67"])
def test_phone_valid(value):
    v.validate_phone(value)


@pytest.mark.parametrize(
    "value,code",
    [("ETK202600000001", "document_number_length"), ("ETK20260000000012", "document_number_length"),
     ("etk2026000000001", "document_number_format"), ("ETK1926000000001", "document_number_format"),
     ("ET-2026000000001", "document_number_format")],
)
def test_document_number_invalid(value, code):
    assert error_of(v.validate_document_number, value).code == code


def test_document_number_valid():
    v.validate_document_number("ETK2026000000001")


def test_iban():
    v.validate_tr_iban("TR33 0006 1005 1978 6457 8413 26")
    assert error_of(v.validate_tr_iban, "TR330006100519786457841327").code == "iban_checksum"
    assert error_of(v.validate_tr_iban, "DE89370400440532013000").code == "iban_length"


def test_messages_are_turkish_by_default():
    with translation.override("tr"):
        message = error_of(v.validate_phone, "4321234567").messages[0]
    assert "5" in message and "starting with" not in message
