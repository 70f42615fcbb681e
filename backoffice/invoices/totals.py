"""An invoice's totals as the platform computes them: each line's figures rounded to the cent, the document's
the sums of the rounded line figures (facts file, "Invoice totals as integrators compute them").

Line: gross = quantity x unit price; the discount rate, then the discount amount on what is left; net = gross -
discounts; VAT = net x VAT rate; withholding = VAT x the withholding code's rate; each other tax = net x its
rate, added to the invoice, or deducted from what the buyer pays when it is stopaj (codes.DEDUCTED_TAX_CODES).
Document: tax-inclusive = net + VAT + added taxes; payable = tax-inclusive - withholding - deducted taxes.
Every figure is rounded half up to 2 decimals. They are computed once, when the invoice is saved (apply_totals),
and kept on the invoice and its lines: pages and the push read what was kept. static/js/invoice-totals.js shows the
same figures while the form is typed, digit for digit (change both together), from the same rule table (rules()).
"""

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from functools import cache
from typing import NamedTuple

from django.utils.translation import gettext_lazy as _

from backoffice.core import codes

CENT = Decimal("0.01")
ZERO = Decimal("0.00")

DISCOUNT_TOO_LARGE = _("The discount is larger than the line's amount (quantity × unit price).")
UNKNOWN_WITHHOLDING = _("Choose a withholding (tevkifat) code from the list.")


class TotalsError(ValueError):
    """A line whose figures cannot be computed: its message is for the field it names."""

    def __init__(self, message, field: str):
        super().__init__(message)
        self.field = field


@cache
def rules() -> dict:
    """The rule table the figures follow: the share of the VAT each withholding code withholds, and the other taxes
    deducted from what the buyer pays. The form renders this same table for the browser (json_script id
    invoice-totals-rules), so both compute from one source."""
    return {"withholdingRates": codes.withholding_rates(), "deductedTaxCodes": list(codes.DEDUCTED_TAX_CODES)}


def money(value) -> Decimal:
    """Rounded half up to the cent, as the platform rounds (1.005 -> 1.01, -1.005 -> -1.01)."""
    return Decimal(value).quantize(CENT, rounding=ROUND_HALF_UP)


@dataclass(frozen=True)
class Tax:
    """A tax of a line besides VAT and withholding (ÖTV 0071, stopaj 0003 ...)."""

    code: str
    rate: Decimal  # percent of the line's net amount


@dataclass(frozen=True)
class Line:
    quantity: Decimal
    unit_price: Decimal
    vat_rate: Decimal  # percent
    discount_rate: Decimal = Decimal(0)  # percent, applied first
    discount_amount: Decimal = Decimal(0)  # applied after the rate, on what is left
    withholding_code: str = ""  # 601..; its rate from rules()
    taxes: tuple[Tax, ...] = ()


class TaxAmount(NamedTuple):
    code: str
    rate: Decimal
    amount: Decimal
    deducted: bool


@dataclass(frozen=True)
class LineTotals:
    gross: Decimal
    discount: Decimal
    net: Decimal
    vat: Decimal
    withholding: Decimal
    taxes: tuple[TaxAmount, ...]
    added: Decimal
    deducted: Decimal


@dataclass(frozen=True)
class Totals:
    line_extension: Decimal
    allowance_total: Decimal
    tax_exclusive: Decimal
    vat_total: Decimal
    vat_breakdown: dict[Decimal, tuple[Decimal, Decimal]]  # VAT rate -> (base, VAT), highest rate first
    withholding_total: Decimal
    added_taxes_total: Decimal
    deducted_taxes_total: Decimal
    tax_inclusive: Decimal
    payable: Decimal
    lines: tuple[LineTotals, ...]


def line_totals(line: Line) -> LineTotals:
    """A line's figures, each rounded to the cent. TotalsError (a ValueError) names the field at fault: a discount
    larger than the gross, or a withholding code that is not in the list."""
    gross = money(Decimal(line.quantity) * Decimal(line.unit_price))
    by_rate = money(gross * Decimal(line.discount_rate) / 100)
    discount = by_rate + money(line.discount_amount)
    if discount > gross:
        raise TotalsError(DISCOUNT_TOO_LARGE, "discount_rate" if by_rate > gross else "discount_amount")
    net = gross - discount
    vat = money(net * Decimal(line.vat_rate) / 100)
    withholding = ZERO
    if line.withholding_code:
        rate = rules()["withholdingRates"].get(line.withholding_code)
        if rate is None:
            raise TotalsError(UNKNOWN_WITHHOLDING, "withholding_code")
        withholding = money(vat * Decimal(rate))
    taxes = tuple(TaxAmount(tax.code, Decimal(tax.rate), money(net * Decimal(tax.rate) / 100),
                            tax.code in rules()["deductedTaxCodes"]) for tax in line.taxes)
    added = sum((tax.amount for tax in taxes if not tax.deducted), ZERO)
    deducted = sum((tax.amount for tax in taxes if tax.deducted), ZERO)
    return LineTotals(gross, discount, net, vat, withholding, taxes, added, deducted)


def document_totals(lines) -> Totals:
    """The invoice's totals: sums of the rounded line figures (a line's own TotalsError goes up unchanged)."""
    lines = tuple(lines)
    computed = tuple(line_totals(line) for line in lines)
    breakdown: dict[Decimal, tuple[Decimal, Decimal]] = {}
    for line, figures in zip(lines, computed, strict=True):
        rate = Decimal(line.vat_rate)
        base, vat = breakdown.get(rate, (ZERO, ZERO))
        breakdown[rate] = (base + figures.net, vat + figures.vat)

    def total(attribute):
        return sum((getattr(figures, attribute) for figures in computed), ZERO)

    line_extension, vat_total, added = total("net"), total("vat"), total("added")
    withholding, deducted = total("withholding"), total("deducted")
    tax_inclusive = line_extension + vat_total + added
    return Totals(
        line_extension=line_extension, allowance_total=total("discount"), tax_exclusive=line_extension,
        vat_total=vat_total, vat_breakdown=dict(sorted(breakdown.items(), reverse=True)),
        withholding_total=withholding, added_taxes_total=added, deducted_taxes_total=deducted,
        tax_inclusive=tax_inclusive, payable=tax_inclusive - withholding - deducted, lines=computed)


def line_input(line) -> Line:
    """The figures' input from an invoice line (models.InvoiceLine, saved or not)."""
    taxes = ()
    if line.other_tax_code and line.other_tax_rate:
        taxes = (Tax(line.other_tax_code, Decimal(line.other_tax_rate)),)
    return Line(quantity=Decimal(line.quantity), unit_price=Decimal(line.unit_price), vat_rate=Decimal(line.vat_rate),
                discount_rate=Decimal(line.discount_rate or 0), discount_amount=Decimal(line.discount_amount or 0),
                withholding_code=line.withholding_code, taxes=taxes)


def invoice_totals(lines) -> Totals:
    return document_totals([line_input(line) for line in lines])


def apply_totals(invoice, lines) -> Totals:
    """The figures, computed once as the invoice is saved, kept on the invoice and its lines."""
    result = invoice_totals(lines)
    for line, figures in zip(lines, result.lines):
        line.line_extension_amount, line.vat_amount = figures.net, figures.vat
        line.withholding_amount = figures.withholding
        line.other_tax_amount = sum((tax.amount for tax in figures.taxes), ZERO)
    invoice.line_count = len(lines)
    invoice.tax_exclusive_amount = result.tax_exclusive
    invoice.vat_total, invoice.added_taxes_total = result.vat_total, result.added_taxes_total
    invoice.tax_total = result.vat_total + result.added_taxes_total
    invoice.total_amount = result.tax_inclusive
    invoice.withholding_total, invoice.deducted_taxes_total = result.withholding_total, result.deducted_taxes_total
    invoice.payable_amount = result.payable
    invoice.allowance_total = result.allowance_total
    return result


def converted(amount, exchange_rate) -> Decimal:
    """The TRY value of an amount in the invoice's currency, rounded to the cent."""
    return money(Decimal(amount) * Decimal(exchange_rate))
