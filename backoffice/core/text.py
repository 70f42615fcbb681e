"""Turkish-aware text helpers.

Django's capfirst() uses str.upper(), which turns Turkish "i" into "I" (it must be "İ"): "iş" would
become "Iş". Verbose names are lowercase by convention, so every heading built from one goes through
capfirst() below instead.
"""

from django.utils.functional import keep_lazy_text
from django.utils.translation import get_language

_TURKIC_UPPER = {"i": "İ", "ı": "I"}


@keep_lazy_text
def capfirst(value):
    value = str(value)
    if not value:
        return value
    first = value[0]
    if (get_language() or "").split("-")[0] in ("tr", "az"):
        first = _TURKIC_UPPER.get(first, first.upper())
    else:
        first = first.upper()
    return first + value[1:]
