"""Model values in the forms the platform's JSON bodies take, and the platform's answers read back as typed values."""

import re
from datetime import date, datetime, time
from datetime import timezone as dt_timezone
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime, parse_time

from backoffice.remote.common import field

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


# --- the platform's answers read back: every domain's *_fields(item) reads values through these, so that no
# domain parses the raw JSON itself. Each gives None (False for flag) where the value is missing or unreadable;
# an unreadable value is never an error, since the platform's lists carry what its other clients wrote.


def integer(value):
    """An int from a whole number (1 or 1.0) or a numeric string; None for booleans, fractions and anything else."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else None
    try:
        return int(str(value).strip())
    except ValueError:
        return None


def count(value):
    """A count: an integer of 0 or more, else None."""
    value = integer(value)
    return value if value is not None and value >= 0 else None


def decimal(value, places: int | None = None):
    """A Decimal from a number or a numeric string (rounded half up to `places` decimals when given), else None."""
    if value in (None, "") or isinstance(value, bool):
        return None
    try:
        number = Decimal(str(value).strip())
    except InvalidOperation:
        return None
    if not number.is_finite():
        return None
    return number if places is None else number.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)


def amount(value):
    """An amount to the cent (money() of an answer): None when missing or unreadable."""
    return decimal(value, 2)


def day(value):
    """A date from a date, an ISO date or the date part of an ISO moment, else None."""
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if not value:
        return None
    try:
        return parse_date(str(value).strip()[:10])
    except ValueError:
        return None


def moment(value, *, naive_utc: bool = False):
    """An aware datetime from ISO 8601 or "yyyy-MM-dd HH:mm:ss" (a bare date is its midnight). A naive one is
    Turkish time, or UTC with naive_utc (the lists' *Utc fields)."""
    if isinstance(value, datetime):
        moment_ = value
    else:
        if not value:
            return None
        text = str(value).strip().replace(" ", "T", 1)
        try:
            moment_ = parse_datetime(text)
            if moment_ is None:
                bare = parse_date(text[:10])
                moment_ = datetime.combine(bare, time.min) if bare else None
        except ValueError:
            return None
        if moment_ is None:
            return None
    if timezone.is_aware(moment_):
        return moment_
    return moment_.replace(tzinfo=dt_timezone.utc) if naive_utc else timezone.make_aware(moment_)


def clock(value):
    """A time of day from "HH:mm[:ss]" (anything after the seconds ignored), else None."""
    if not value:
        return None
    try:
        return parse_time(str(value).strip()[:8])
    except ValueError:
        return None


def flag(value) -> bool:
    """A yes/no the platform writes as true, "true" or 1."""
    return value is True or str(value).strip().lower() in ("true", "1")


def text(value) -> str:
    """A string, stripped; "" for None."""
    return "" if value is None else str(value).strip()


def pushed(answer, **flags) -> dict:
    """A push's answer read back: the platform's id as remote_id, and each flag it carries ({model field: its name
    in the answer}); a flag the answer leaves out is not changed."""
    fields = {"remote_id": text(field(answer, "id"))}
    fields.update({name: flag(field(answer, key)) for name, key in flags.items() if field(answer, key) is not None})
    return fields
