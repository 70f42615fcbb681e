from django import template

from ..report import flatten

register = template.Library()


@register.filter
def key_values(value):
    """JSON of unknown shape as (key, value) pairs: element fields document 1 does not show."""
    return flatten(value) if value not in (None, "") else []


@register.filter
def get_item(mapping, key):
    return mapping.get(key) if isinstance(mapping, dict) else None
