"""The tax authority's UBL-TR code lists the invoice form offers, as (code, label) choices with Turkish labels.

They are read once from data/codelists.json, which scripts/refresh_codelists.py writes from efatura-kontrol's
copy of UBL-TR_Codelist.xml (its docstring says where each name comes from and how to refresh the file).
"""

import json
from decimal import Decimal
from functools import cache
from pathlib import Path

from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

DATA = Path(__file__).resolve().parent / "data" / "codelists.json"

UNIT_CODES = "units"
TAX_TYPES = "tax_types"
WITHHOLDING = "withholding"
VAT_EXEMPTION_REASONS = "vat_exemption_reasons"
PAYMENT_MEANS = "payment_means"
CURRENCIES = "currencies"
COUNTRIES = "countries"

# Taxes a line may add besides VAT (0015) and VAT withholding (9015): ÖTV, stopaj, stamp duty ...
OTHER_TAX_TYPES = "other_tax_types"

VAT = "0015"
VAT_WITHHOLDING = "9015"
# Stopaj (income and corporate tax withheld by the buyer): deducted from what the buyer pays (facts file).
DEDUCTED_TAX_CODES = ("0003", "0011")


@cache
def _lists() -> dict:
    return json.loads(DATA.read_text(encoding="utf-8"))


@cache
def _rows(name: str) -> tuple[tuple[str, str], ...]:
    if name == OTHER_TAX_TYPES:
        return tuple(row for row in _rows(TAX_TYPES) if row[0] not in (VAT, VAT_WITHHOLDING))
    return tuple((row[0], row[1]) for row in _lists()[name])


@cache
def _labels(name: str) -> dict[str, str]:
    return dict(_rows(name))


@cache
def _withholding_rates() -> dict[str, Decimal]:
    return {code: Decimal(percent) / 100 for code, _label, percent in _lists()[WITHHOLDING]}


def choices(name: str) -> list[tuple[str, str]]:
    """(code, label) of a list in the order the form offers them (the most used first)."""
    return list(_rows(name))


def label(name: str, code: str) -> str:
    """The Turkish label of a code (the code itself when the list has no name for it, or does not hold it)."""
    return _labels(name).get(code, code)


def is_code(name: str, code: str) -> bool:
    return code in _labels(name)


def unit_code(code: str) -> str:
    """A line's unit (an invoice's, a dispatch note's): one of the tax authority's list, else a ValidationError."""
    if not is_code(UNIT_CODES, code):
        raise ValidationError(_("Choose a unit of the tax authority's list."))
    return code


def withholding_rate(code: str) -> Decimal | None:
    """The share of the VAT a withholding (tevkifat) code withholds, as a fraction (602 -> 0.9); None if unknown."""
    return _withholding_rates().get(code)


def withholding_rates() -> dict[str, str]:
    """{code: fraction as text}, for the browser's totals (static/js/invoice-totals.js, id withholding-rates)."""
    return {code: str(rate) for code, rate in _withholding_rates().items()}


# --- what the tax authority's schematron ties to the invoice type ------------------------------------------------
# efatura-kontrol's copy of the schematron (ekler/sematron/efatura.sch): TaxExemptionReasonCodeCheck-3 to -6,
# DemirbasKDVTaxExemptionCheck-1 and -2, GeneralWithholdingTaxTotalCheck-1 and -2. Types are InvoiceType names.
EXPORT_REGISTERED_REASONS = ("701", "702", "703", "704")  # IHRACKAYITLI: VAT shown, not collected
SPECIAL_BASE_REASONS = tuple(str(code) for code in range(801, 813))  # OZELMATRAH
FIXED_ASSET_REASON = "555"  # demirbaş: on a line with VAT
NOT_EXEMPT_REASON = "351"  # "İstisna olmayan diğer": any type
# Reasons a line with VAT (above 0 %) may carry; the others are exemptions from VAT, on a line at 0 %.
REASONS_WITH_VAT = EXPORT_REGISTERED_REASONS + SPECIAL_BASE_REASONS + (FIXED_ASSET_REASON,)
# 702 needs the customs tariff code (GTİP) and the buyer's line code of each line, which the form does not carry.
REASONS_NOT_OFFERED = ("702",)
WITHHOLDING_TYPES = ("TEVKIFAT", "IADE", "SGK")  # a WithholdingTaxTotal (and tax 4171) only on these
WITHHOLDING_ONLY_TAXES = ("4171",)
# Types whose VAT of 0.00 at a rate needs no exemption reason (TaxExemptionReasonCheck-1 leaves them out).
VAT_UNCOLLECTED_TYPES = ("IADE", "IHRACKAYITLI", "OZELMATRAH", "SGK")


def exemption_types(code: str) -> tuple[str, ...] | None:
    """The invoice types an exemption reason may appear on; None: any type (but 555: not ISTISNA, IHRACKAYITLI)."""
    if code in EXPORT_REGISTERED_REASONS:
        return ("IHRACKAYITLI", "IADE", "SGK")
    if code in SPECIAL_BASE_REASONS:
        return ("OZELMATRAH", "IADE", "SGK")
    if code in (NOT_EXEMPT_REASON, FIXED_ASSET_REASON):
        return None
    return ("ISTISNA", "IADE", "IHRACKAYITLI", "SGK")  # the full exemptions (2xx, 3xx, 501)


def exemption_allowed(code: str, invoice_type: str) -> bool:
    if code == FIXED_ASSET_REASON:
        return invoice_type not in ("ISTISNA", "IHRACKAYITLI")
    types = exemption_types(code)
    return types is None or invoice_type in types
