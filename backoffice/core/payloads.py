"""Model values in the forms the platform's JSON bodies take."""

from django.utils import timezone


def when(value):
    """An aware datetime as ISO 8601 in local time (Europe/Istanbul), or None."""
    return None if value is None else timezone.localtime(value).isoformat()


def num(value):
    """A Decimal as a JSON number, or None."""
    return None if value is None else float(value)
