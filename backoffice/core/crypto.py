"""Credentials at rest: Fernet encryption with keys from the environment.

FIELD_ENCRYPTION_KEYS holds one or more Fernet keys, newest first; MultiFernet decrypts with any of
them and encrypts with the first, so keys can be rotated: put the new key first, run `manage.py rotate_secrets`
(every stored secret re-encrypted with it), then drop the old keys.
Development derives a key from SECRET_KEY so that a fresh clone runs without setup.
"""

import base64
import hashlib
from functools import lru_cache

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import models


@lru_cache(maxsize=4)
def _fernet(keys: tuple[str, ...], secret_key: str, development: bool) -> MultiFernet:
    if not keys:
        if not development:  # settings refuse this start already; never derive a key outside development
            raise ImproperlyConfigured("FIELD_ENCRYPTION_KEYS must be set outside development")
        derived = base64.urlsafe_b64encode(hashlib.sha256(("field-encryption:" + secret_key).encode()).digest())
        keys = (derived.decode(),)
    return MultiFernet([Fernet(key.encode() if isinstance(key, str) else key) for key in keys])


def fernet() -> MultiFernet:
    return _fernet(tuple(settings.FIELD_ENCRYPTION_KEYS), settings.SECRET_KEY, getattr(settings, "DEVELOPMENT", False))


def encrypt(value: str) -> str:
    if not value:
        return ""
    return fernet().encrypt(value.encode()).decode()


def decrypt(token: str) -> str:
    if not token:
        return ""
    try:
        return fernet().decrypt(token.encode()).decode()
    except InvalidToken as exc:  # a wrong or missing key must fail loudly, never return ciphertext
        raise ValueError("cannot decrypt a stored secret: check FIELD_ENCRYPTION_KEYS") from exc


class EncryptedTextField(models.TextField):
    """Stores Fernet ciphertext; Python code sees the plain value."""

    def from_db_value(self, value, expression, connection):
        return decrypt(value) if value else value

    def get_prep_value(self, value):
        value = super().get_prep_value(value)
        return encrypt(value) if value else value
