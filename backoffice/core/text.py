"""Turkish-aware text helpers.

Django's capfirst() uses str.upper(), which turns Turkish "i" into "I" (it must be "İ"): "iş" would
become "Iş". Verbose names are lowercase by convention, so every heading built from one goes through
capfirst() below instead.
"""

import unicodedata

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


# --- folding for search ------------------------------------------------------------------------------------
_TURKIC_LOWER = str.maketrans({"İ": "i", "I": "ı"})


def fold(text) -> str:
    """Turkish lower case: "İ" -> "i", "I" -> "ı", then lower(). str.lower() alone turns "İ" into "i" plus a
    combining dot and "I" into "i", so "İZMİR" and "IŞIK" would not meet "izmir" and "ışık"."""
    lowered = unicodedata.normalize("NFC", str(text or "")).translate(_TURKIC_LOWER).lower()
    return lowered.replace("i\u0307", "i")


def _search_table() -> dict:
    """Every character the search changes, with what it becomes (one character, or none: dropped).

    The search is case- and accent-blind the Turkish way: capitals, dotted and dotless i and the marks of
    ç ğ ö ş ü â î û fold to the plain ASCII letter, so "IŞIK", "ışık" and "isik" are one word, as people type it
    on a phone or a keyboard without Turkish letters. The price: words told apart only by a mark ("sık", "şık")
    meet; a search lists both. One fixed table and no str.lower(), so that the database (core.search.SearchFold:
    translate() on PostgreSQL, replace() and lower() on SQLite) folds exactly as Python does, whatever the
    collation. It stays small: SQLite's parser takes about 26 nested replace() calls, no more."""
    table = {chr(code): chr(code + 32) for code in range(ord("A"), ord("Z") + 1)}
    for capital, small, plain in zip("ÇĞİÖŞÜÂÎÛÉ", "çğıöşüâîûé", "cgiosuaiue"):
        table[capital] = table[small] = plain
    table["\u0307"] = ""  # the combining dot above of a decomposed "İ" ("i̇", as str.lower() makes it)
    return table


SEARCH_FOLD = _search_table()
_SEARCH_TRANSLATION = str.maketrans(SEARCH_FOLD)


def search_fold(text) -> str:
    """What a search compares: the text with SEARCH_FOLD applied ("İZMİR" -> "izmir", "IŞIK" -> "isik",
    "Çınar" -> "cinar"); the stored search columns hold the same of their fields."""
    return str(text or "").translate(_SEARCH_TRANSLATION)
