"""Kept for its import path (settings.LOGGING names RedactingFilter here).

The code lives in backoffice.remote.redaction because remote/ imports nothing from the apps.
"""

from backoffice.remote.redaction import (  # noqa: F401
    MASK,
    SECRET_NAMES,
    RedactingFilter,
    excerpt,
    redact,
    redact_headers,
)
