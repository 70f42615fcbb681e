"""The journal checker's diagnosis of single values (document 3, 2.8): a date, an amount, a counter, a required
field, and the field groups that need nothing of the lines around them (the Y line, the documents of an entry
line, the optional currency and measure groups). Each check appends its finding to `out`, with a hint of what
was meant when it is clear (1.250,50 is 1250.50, 31.01.2025 is 2025-01-31).
"""

import re
from datetime import date

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from stdnum.tr import tckimlik, vkn

from .journal_rules import COLUMN, DOCUMENT_TYPES, FOUND_CHARS, TURKISH_DOCUMENT_TYPES, Finding, Options, Summary

DATE_CACHE = 100_000  # distinct dates remembered; a file of random dates cannot grow it further

_COUNTER_TEXT = re.compile(r"[1-9][0-9]{0,17}")
_AMOUNT_TEXT = re.compile(r"(-?)([0-9]+)(?:\.([0-9]+))?")
_NUMBER_TEXT = re.compile(r"-?[0-9]{1,18}(?:\.[0-9]{1,18})?")
_DATE_TEXT = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_CURRENCY_CODE = re.compile(r"[A-Z]{3}")
_TR_AMOUNT = re.compile(r"[0-9]{1,3}(?:[. ][0-9]{3})*(?:,[0-9]+)?|[0-9]+,[0-9]+")
_EN_AMOUNT = re.compile(r"[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?")
_DMY = re.compile(r"([0-9]{1,2})[./-]([0-9]{1,2})[./-]([0-9]{4})")
_YMD = re.compile(r"([0-9]{4})[./-]([0-9]{1,2})[./-]([0-9]{1,2})")
# What an empty required field should hold (translated only when a finding says it).
A_DATE = gettext_lazy("a date (yyyy-mm-dd)")
AN_AMOUNT = gettext_lazy("an amount, e.g. 1250.50")
A_COUNTER = gettext_lazy("a whole number above 0")


def shown(value) -> str:
    """A value as a finding shows it: control characters escaped, cut to FOUND_CHARS."""
    if isinstance(value, (bytes, bytearray)):
        value = bytes(value[:FOUND_CHARS * 4]).decode("utf-8", "backslashreplace")
    value = str(value)[:FOUND_CHARS]
    if not value.isprintable():
        value = "".join(c if c.isprintable() else ("\\t" if c == "\t" else f"\\x{ord(c):02x}" if ord(c) < 256
                                                   else f"\\u{ord(c):04x}") for c in value)
    return value[:FOUND_CHARS]


def _amount_hint(text: str) -> str:
    """What a wrongly written amount should look like, when the intent is clear (1.250,50 is 1250.50)."""
    guess = None
    if _TR_AMOUNT.fullmatch(text):
        guess = text.replace(".", "").replace(" ", "").replace(",", ".")
    elif _EN_AMOUNT.fullmatch(text):
        guess = text.replace(",", "")
    if guess and _AMOUNT_TEXT.fullmatch(guess) and len(guess.partition(".")[2]) <= 2:
        return guess
    return _("digits with a dot before the decimals, e.g. 1250.50")


def _date_hint(text: str) -> str:
    """The yyyy-mm-dd form of a date written another way (31.01.2025), when it is a real date."""
    for pattern, order in ((_DMY, (3, 2, 1)), (_YMD, (1, 2, 3))):
        match = pattern.fullmatch(text)
        if match:
            try:
                return date(*(int(match.group(i)) for i in order)).isoformat()
            except ValueError:
                break
    return _("yyyy-mm-dd")


class ValueCheck:
    """The checks of values; start and end are the uploaded range as ISO text (compared with the file's own)."""

    def __init__(self, options: Options, summary: Summary):
        self.options, self.summary = options, summary
        self.start, self.end = options.start.isoformat(), options.end.isoformat()
        self._dates = {}  # text -> a real date?

    def is_date(self, text: str) -> bool:
        known = self._dates.get(text)
        if known is None:
            known = False
            if _DATE_TEXT.fullmatch(text):
                try:
                    date.fromisoformat(text)
                    known = True
                except ValueError:
                    pass
            if len(self._dates) >= DATE_CACHE:
                self._dates.clear()
            self._dates[text] = known
        return known

    def required(self, text, n, name, column, out, expected=None) -> bool:
        """Whether a required field is filled (its finding when not, with `expected` or "a value")."""
        if text:
            return True
        out.append(Finding(n, name, "required", "", str(expected) if expected is not None else _("a value"), column))
        return False

    def date_field(self, text, n, name, column, out) -> bool:
        """A date field: required, yyyy-mm-dd and real."""
        if not self.required(text, n, name, column, out, A_DATE):
            return False
        if not self.is_date(text):
            out.append(Finding(n, name, "date_format", shown(text), _date_hint(text), column))
            return False
        return True

    def amount_field(self, text, n, name, column, out):
        """An amount field: its cents, or None with the finding."""
        if not self.required(text, n, name, column, out, AN_AMOUNT):
            return None
        match = _AMOUNT_TEXT.fullmatch(text)
        if match is None or len(match.group(2)) > 18:
            out.append(Finding(n, name, "amount_format", shown(text), _amount_hint(text), column))
            return None
        sign, whole, decimals = match.groups()
        if decimals and len(decimals) > 2:
            out.append(Finding(n, name, "amount_decimals", shown(text), _("at most 2 decimals"), column))
            return None
        cents = int(whole) * 100 + int((decimals or "").ljust(2, "0"))
        if sign or not cents:
            out.append(Finding(n, name, "amount_positive", shown(text), _("above 0"), column))
            return None
        return cents

    def counter_field(self, text, n, name, column, out):
        """A counter field: its value, or None with the finding."""
        if not self.required(text, n, name, column, out, A_COUNTER):
            return None
        if not _COUNTER_TEXT.fullmatch(text):
            hint = text.lstrip("0") if text.isdigit() and text.strip("0") and len(text) < 40 else None
            out.append(Finding(n, name, "counter_format", shown(text), hint or str(A_COUNTER), column))
            return None
        return int(text)

    # --- the Y line --------------------------------------------------------------------------------------------
    def y_line(self, text, n, out):
        fields = text.split("\t")
        if len(fields) == 6 and fields[-1] == "":
            fields.pop()
        if len(fields) != 5:
            out.append(Finding(n, "line", "y_line", _("fields: %(count)s") % {"count": len(fields)},
                               _("5 fields: Y, fiscal year start, fiscal year end, branch number, tax or national id")))
            return
        _y, start, end, batch, identifier = fields
        self._fiscal_year(start, end, n, out)
        summary = self.summary
        if self.required(batch, n, "batchID", 4, out):
            summary.batch_id = batch[:FOUND_CHARS]
            if not (batch.isascii() and batch.isdigit()):
                out.append(Finding(n, "batchID", "batch_id", shown(batch), _("digits"), 4))
        if self.required(identifier, n, "entityIdentifier", 5, out):
            summary.entity_identifier = identifier[:FOUND_CHARS]
            valid = (len(identifier) == 10 and vkn.is_valid(identifier)) or (
                len(identifier) == 11 and tckimlik.is_valid(identifier))
            if not valid:
                out.append(Finding(n, "entityIdentifier", "entity_identifier", shown(identifier),
                                   _("a valid tax number (10 digits) or national id (11 digits)"), 5))

    def _fiscal_year(self, start, end, n, out):
        good_start = self.date_field(start, n, "fiscalYearStart", 2, out)
        good_end = self.date_field(end, n, "fiscalYearEnd", 3, out)
        if good_start:
            self.summary.fiscal_year_start = date.fromisoformat(start)
        if good_end:
            self.summary.fiscal_year_end = date.fromisoformat(end)
        if good_start and good_end and start >= end:
            out.append(Finding(n, "fiscalYearEnd", "fiscal_year", end, _("after %(date)s") % {"date": start}, 3))
        elif good_start and good_end:
            if start > self.start:
                out.append(Finding(n, "fiscalYearStart", "fiscal_year", start,
                                   _("on or before %(date)s") % {"date": self.start}, 2))
            if end < self.end:
                out.append(Finding(n, "fiscalYearEnd", "fiscal_year", end,
                                   _("on or after %(date)s") % {"date": self.end}, 3))

    # --- field groups of an entry line -------------------------------------------------------------------------
    def documents(self, fields, n, out):
        kind, description, number, when = fields[9], fields[10], fields[11], fields[13]
        if not kind:  # the tax authority's schema wants a document type on every line
            out.append(Finding(n, "documentType", "required", "", _("invoice, check, voucher or other"), 10))
        elif kind not in DOCUMENT_TYPES:
            known = TURKISH_DOCUMENT_TYPES.get(kind.strip().lower().replace("I", "ı"), kind.strip().lower())
            out.append(Finding(n, "documentType", "document_type", shown(kind),
                               known if known in DOCUMENT_TYPES else _("invoice, check, voucher or other"), 10))
            kind = known
        if kind in ("invoice", "check"):
            if not number:
                out.append(Finding(n, "documentNumber", "document_number", "",
                                   _("required for %(type)s") % {"type": kind}, 12))
            if not when:
                out.append(Finding(n, "documentDate", "document_date", "",
                                   _("required for %(type)s") % {"type": kind}, 14))
        elif kind == "other" and not description:
            out.append(Finding(n, "documentTypeDescription", "document_description", "",
                               _("required for %(type)s") % {"type": kind}, 11))
        if when:
            self.date_field(when, n, "documentDate", 14, out)

    def optional(self, extra, n, out):
        currency = extra[:7]
        if any(currency):
            code, rate_date, original, original_code, rate = currency[:5]
            for name, value in (("amountCurrency", code), ("amountOriginalCurrency", original_code)):
                if value and not _CURRENCY_CODE.fullmatch(value):
                    out.append(Finding(n, name, "currency", shown(value),
                                       _("3 capital letters (ISO 4217), e.g. USD"), COLUMN[name]))
            for name, value in (("amountOriginalAmount", original), ("amountOriginalCurrency", original_code)):
                if not value:
                    out.append(Finding(n, name, "currency", "",
                                       _("required when foreign-currency fields are filled"), COLUMN[name]))
            for name, value in (("amountOriginalAmount", original), ("amountOriginalExchangeRate", rate)):
                if value and not (_NUMBER_TEXT.fullmatch(value) and not value.startswith("-")
                                  and value.strip("0.")):
                    out.append(Finding(n, name, "currency", shown(value), _("a number above 0"), COLUMN[name]))
            if rate_date:
                self.date_field(rate_date, n, "amountOriginalExchangeRateDate", 18, out)
        measure = extra[7:]
        if any(measure):
            for name, value in (("measurableQuantity", measure[2]), ("measurableCostPerUnit", measure[5])):
                if value and not _NUMBER_TEXT.fullmatch(value):
                    out.append(Finding(n, name, "measure", shown(value), _("a number, e.g. 12.5"), COLUMN[name]))
