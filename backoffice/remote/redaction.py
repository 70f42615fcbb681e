"""Keep secrets out of logs and of the remote-call audit.

Plain Python so that remote/ can use it; backoffice.core.redaction re-exports these names.
"""

import logging
import re

# Field names whose values are secrets wherever they appear (JSON, form bodies, headers, query).
SECRET_NAMES = ("password", "api_key", "apikey", "x-api-key", "access_token", "refresh_token", "token",
                "authorization", "client_secret", "secret")
_NAMES = "|".join(re.escape(name) for name in SECRET_NAMES)
MASK = "***"
EXCERPT_LIMIT = 2000

# (pattern, replacement, words one of which a text must hold for the pattern to match): a text without any of
# them (most bodies: a ticket's is read in a tenth of the time) is not scanned by the pattern at all.
_PATTERNS = [
    # "password": "x"  /  'token': 'x'
    (re.compile(rf'(["\']?(?:{_NAMES})["\']?\s*[:=]\s*)(["\'])(.*?)(?<!\\)\2', re.IGNORECASE), rf"\1\2{MASK}\2",
     SECRET_NAMES),
    # password=x&...  (form bodies, query strings)
    (re.compile(rf"((?:^|[?&\s])(?:{_NAMES})=)([^&\s]+)", re.IGNORECASE), rf"\1{MASK}", SECRET_NAMES),
    # Authorization: Bearer x
    (re.compile(r"(Bearer\s+)[A-Za-z0-9\-._~+/=]+", re.IGNORECASE), rf"\1{MASK}", ("bearer",)),
]


def _folded(text: str) -> str:
    """text in lower case, with every letter outside ASCII that re.IGNORECASE takes for an ASCII one turned into it
    ("Authorızation" is matched): "ı" and "ſ"; lower() already turns the Kelvin sign into "k" and "İ" into "i" and a
    combining dot, dropped here. Replacements, not str.translate, which takes 70 µs for a ticket's body."""
    folded = text.lower()
    if not folded.isascii():
        folded = folded.replace("\u0307", "").replace("ı", "i").replace("ſ", "s")
    return folded


def redact(text, secrets=()):
    """Mask known secret fields, bearer tokens and any literal secret value given."""
    if not text:
        return text
    text = str(text)
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, MASK)
    folded = _folded(text)
    for pattern, replacement, words in _PATTERNS:
        if any(word in folded for word in words):
            text = pattern.sub(replacement, text)
    return text


def excerpt(text, secrets=(), limit=EXCERPT_LIMIT):
    """A redacted excerpt for the audit: redact first, then cut, so a cut never leaves half a secret."""
    if text is None:
        return ""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    text = redact(str(text), secrets)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text


def redact_headers(headers):
    return {k: (MASK if k.lower() in SECRET_NAMES else v) for k, v in (headers or {}).items()}


class RedactingFilter(logging.Filter):
    def filter(self, record):
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 (a broken format string is the logger's problem, not ours)
            return True
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True
