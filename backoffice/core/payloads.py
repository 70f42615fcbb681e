"""Model values in the forms the platform's JSON bodies take."""

import re
from decimal import ROUND_HALF_UP, Decimal

from django.utils import timezone

CENT = Decimal("0.01")


def money(value) -> Decimal:
    """An amount to the cent, rounded half up (an empty one is 0.00)."""
    return Decimal(value or 0).quantize(CENT, rounding=ROUND_HALF_UP)


def camel_names(*names) -> dict:
    """{platform name: model field} of fields whose platform name is the field's in camel case
    (customer_tax_center is customerTaxCenter)."""
    return {re.sub(r"_([a-z])", lambda match: match.group(1).upper(), name): name for name in names}


def when(value):
    """An aware datetime as ISO 8601 in local time (Europe/Istanbul), or None."""
    return None if value is None else timezone.localtime(value).isoformat()


def num(value):
    """A Decimal as a JSON number, or None."""
    return None if value is None else float(value)
