from datetime import timezone as dt_timezone

from django import template
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.formats import date_format
from django.utils.translation import gettext as _g
from django.utils.translation import gettext_lazy as _

from ..report import flatten

register = template.Library()


@register.filter
def key_values(value):
    """JSON of unknown shape as (key, value) pairs: element fields document 1 does not show."""
    return flatten(value) if value not in (None, "") else []


# Labels for the element fields the usage report is known to carry (document 1 does not name them; the
# platform's own names are kept, in a tooltip, for anything else and for support).
FIELD_LABELS = {
    "quantity": _("quantity"),
    "isActive": _("active"),
    "showOverUsage": _("over-usage deducted"),
    "requestedQuantity": _("quantity requested"),
    "overUsageDeducted": _("over-usage deducted from it"),
    "createDate": _("created"),
    "cancelDate": _("cancelled on"),
    "customerUniqueId": _("company id on the platform"),
    "name": _("name"),
    "identifier": _("tax number / national id"),
    "id": _("number"),
}


def _display(key, value):
    if isinstance(value, bool):
        return _g("yes") if value else _g("no")
    if isinstance(value, str) and len(value) >= 16 and value[4:5] == "-" and "T" in value:
        try:
            parsed = parse_datetime(value)
        except ValueError:
            parsed = None
        if parsed is not None:
            if parsed.tzinfo is None:
                parsed = timezone.make_aware(parsed, dt_timezone.utc)
            return date_format(timezone.localtime(parsed), "d.m.Y H:i")
    if isinstance(value, int) and (key == "id" or key.endswith("Id")):
        return str(value)  # an id: no thousands separator
    return value


@register.filter
def friendly_pairs(pairs):
    """(key, value) pairs as (label, value, raw key): known fields get a label, dates Istanbul time, booleans
    yes / no, ids no thousands separator; unknown keys stay as the platform sent them."""
    result = []
    for key, value in pairs or ():
        last = str(key).rsplit(".", 1)[-1]
        label = FIELD_LABELS.get(last)
        result.append((str(label) if label else key, _display(last, value), key if label else ""))
    return result
