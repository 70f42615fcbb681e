"""The invoice form's live totals (static/js/invoice-totals.js) in a real browser: the same figures as
backoffice/invoices/totals.py on every hand-computed example and on 300 random lines, numbers read as
parse_decimal reads them, and the form binding on a small static form (typing, a wrong field, a deleted line,
a foreign currency, an added line). No server: the script runs in a blank page."""

import json
import os
import random
import re
from decimal import Decimal

import pytest
from playwright.sync_api import expect

from backoffice.core import codes
from backoffice.core.fields import NumberFormatError, parse_decimal
from backoffice.invoices.totals import Line, Tax, TotalsError, converted, document_totals, line_totals, rules
from tests.browser.conftest import CHROMIUM, ROOT
from tests.core import test_localized_input as typing_cases
from tests.core.test_fields_table import ROWS as NUMBER_ROWS
from tests.invoices.test_totals import EXAMPLES

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's Chromium at /usr/bin/chromium"),
]

SCRIPT = ROOT / "static" / "js" / "invoice-totals.js"
NUMBERS = ROOT / "static" / "js" / "numbers.js"  # loaded before it by templates/base.html
INVALID = re.compile(r"\bis-invalid\b")
CODES = rules()  # the one rule table, as the form renders it for the script


def _cases(test):
    return next(mark.args[1] for mark in test.pytestmark if mark.name == "parametrize")


@pytest.fixture
def page(browser_page):
    browser_page.set_content("<!doctype html><html lang='tr'><body></body></html>")
    browser_page.add_script_tag(path=str(NUMBERS))
    browser_page.add_script_tag(path=str(SCRIPT))
    return browser_page


def as_js(line: Line) -> dict:
    return {"quantity": str(line.quantity), "unit_price": str(line.unit_price), "vat_rate": str(line.vat_rate),
            "discount_rate": str(line.discount_rate), "discount_amount": str(line.discount_amount),
            "withholding_code": line.withholding_code,
            "taxes": [{"code": tax.code, "rate": str(tax.rate)} for tax in line.taxes]}


def python_line(figures) -> dict:
    return {"gross": str(figures.gross), "discount": str(figures.discount), "net": str(figures.net),
            "vat": str(figures.vat), "withholding": str(figures.withholding), "added": str(figures.added),
            "deducted": str(figures.deducted),
            "taxes": [{"code": tax.code, "rate": str(tax.rate), "amount": str(tax.amount), "deducted": tax.deducted}
                      for tax in figures.taxes]}


def python_document(lines) -> dict:
    totals = document_totals(lines)
    figures = {name: str(getattr(totals, name)) for name in (
        "line_extension", "allowance_total", "tax_exclusive", "vat_total", "withholding_total", "added_taxes_total",
        "deducted_taxes_total", "tax_inclusive", "payable")}
    figures["vat_breakdown"] = [[f"{rate.normalize():f}", str(base), str(vat)]
                                for rate, (base, vat) in totals.vat_breakdown.items()]
    figures["lines"] = [python_line(line) for line in totals.lines]
    return figures


def browser_document(page, lines):
    return page.evaluate("([lines, codes]) => InvoiceTotals.documentTotals(lines, codes)",
                         [[as_js(line) for line in lines], CODES])


@pytest.mark.parametrize("name,lines,expected", EXAMPLES, ids=[example[0] for example in EXAMPLES])
def test_hand_computed_examples_as_python(page, name, lines, expected):
    assert browser_document(page, lines) == python_document(lines)


def random_lines(count, seed=13):
    """Lines as a form could hold them: quantities with up to 3 decimals, prices with up to 4, rates from the
    code lists; a discount that would exceed the gross is dropped (both sides refuse it, tested below)."""
    rng = random.Random(seed)
    withholding = [code for code, _label in codes.choices(codes.WITHHOLDING)]
    other_taxes = [code for code, _label in codes.choices(codes.OTHER_TAX_TYPES)]
    lines = []
    for _ in range(count):
        quantity = Decimal(rng.randint(1, 5_000_000)) / 1000
        unit_price = Decimal(rng.randint(0, 200_000_000)) / 10_000
        taxes = ()
        if rng.random() < 0.3:
            taxes = (Tax(rng.choice(other_taxes), rng.choice([Decimal("0.5"), Decimal(1), Decimal("2.5"), Decimal(15),
                                                              Decimal(20), Decimal("25.5")])),)
        line = Line(quantity, unit_price, rng.choice([Decimal(0), Decimal(1), Decimal(10), Decimal(20)]),
                    discount_rate=rng.choice([Decimal(0), Decimal(0), Decimal("2.5"), Decimal(10), Decimal("33.33")]),
                    discount_amount=rng.choice([Decimal(0), Decimal(0), Decimal("0.005"), Decimal("12.345"),
                                                Decimal(rng.randint(0, 100_000)) / 100]),
                    withholding_code=rng.choice(["", "", "", *withholding]), taxes=taxes)
        try:
            line_totals(line)
        except TotalsError:
            line = Line(line.quantity, line.unit_price, line.vat_rate, withholding_code=line.withholding_code,
                        taxes=line.taxes)
        lines.append(line)
    return lines


def test_300_random_lines_as_python(page):
    lines = random_lines(300)
    assert browser_document(page, lines) == python_document(lines)
    # Every line on its own too.
    got = page.evaluate("([lines, codes]) => lines.map((line) => InvoiceTotals.lineTotals(line, codes))",
                        [[as_js(line) for line in lines], CODES])
    assert got == [python_line(line_totals(line)) for line in lines]


def test_refusals_name_the_field(page):
    def field_of(line):
        return page.evaluate("""([line, codes]) => {
            try { InvoiceTotals.lineTotals(line, codes); return null; } catch (error) { return error.field; }
        }""", [as_js(line), CODES])

    too_much = Line(Decimal(2), Decimal(10), Decimal(20), discount_rate=Decimal(15), discount_amount=Decimal("17.01"))
    over_100 = Line(Decimal(1), Decimal(10), Decimal(20), discount_rate=Decimal(101))
    unknown = Line(Decimal(1), Decimal(10), Decimal(20), withholding_code="699")
    for line in (too_much, over_100, unknown):
        with pytest.raises(TotalsError) as refused:
            line_totals(line)
        assert field_of(line) == refused.value.field


def test_numbers_read_as_the_server_reads_them(page):
    # The shared table (tests/data/number_inputs.json) and the older cases of tests/core/test_localized_input.py.
    cases = [(row["typed"], row["number"]) for row in NUMBER_ROWS]
    cases += [(typed, number) for typed, number in _cases(typing_cases.test_parse)]
    cases += [(typed, None) for typed in _cases(typing_cases.test_refused)]
    got = page.evaluate("([texts]) => texts.map((text) => InvoiceTotals.parse(text))", [[typed for typed, _n in cases]])
    for (typed, number), parsed in zip(cases, got, strict=True):
        if number is None:
            with pytest.raises(NumberFormatError):
                parse_decimal(typed)
            assert parsed is None, typed
        else:
            assert parsed is not None and Decimal(parsed) == parse_decimal(typed) == Decimal(number), (typed, parsed)
    for value, shown in [("1234.56", "1.234,56"), ("0.5", "0,50"), ("-1250.5", "-1.250,50"), ("0", "0,00"),
                         ("1234567.891", "1.234.567,89"), ("999.995", "1.000,00")]:
        assert page.evaluate("([value]) => InvoiceTotals.format(value)", [value]) == shown


def form_html() -> str:
    """Two line rows, the document figures, and what the owner's template provides around them."""
    def row(index):
        return f"""
        <tr data-line>
          <td><input name="lines-{index}-quantity"><input name="lines-{index}-unit_price"></td>
          <td><input name="lines-{index}-discount_rate" data-number="rate">
              <input name="lines-{index}-discount_amount" data-number=""></td>
          <td><select name="lines-{index}-vat_rate"><option>20</option><option>10</option><option>1</option>
              <option>0</option></select></td>
          <td><select name="lines-{index}-withholding_code"><option value=""></option><option>602</option>
              <option>603</option></select></td>
          <td><select name="lines-{index}-other_tax_code"><option value=""></option><option>0003</option>
              <option>0071</option></select><input name="lines-{index}-other_tax_rate" data-number="rate"></td>
          <td><input type="checkbox" name="lines-{index}-DELETE"></td>
          <td data-line-total></td><td data-line-vat></td>
        </tr>"""

    figures = "".join(f'<dd data-total="{name}"></dd>' for name in (
        "line_extension", "allowance_total", "vat_total", "withholding_total", "added_taxes_total",
        "deducted_taxes_total", "tax_inclusive", "payable", "payable_try"))
    return f"""<!doctype html><html lang="tr"><body>
      <script type="application/json" id="invoice-totals-rules">{json.dumps(rules())}</script>
      <form data-invoice-totals>
        <select name="currency_code"><option>TRY</option><option>USD</option></select>
        <input name="exchange_rate">
        <input type="hidden" name="lines-TOTAL_FORMS" value="2">
        <input type="hidden" name="lines-INITIAL_FORMS" value="0">
        <input type="hidden" name="lines-MAX_NUM_FORMS" value="1000">
        <table><tbody data-lines>{row(0)}{row(1)}</tbody></table>
        <template data-line-template>{row("__prefix__")}</template>
        <button type="button" data-add-line>Satır ekle</button>
        <dl>{figures}</dl>
      </form></body></html>"""


def test_form_binding(browser_page):
    page = browser_page
    page.set_content(form_html())
    page.add_script_tag(path=str(NUMBERS))
    page.add_script_tag(path=str(SCRIPT))

    def total(name):
        return page.locator(f'[data-total="{name}"]')

    expect(total("payable")).to_have_text("0,00")  # computed once at load

    # Line 1: 2 x 1.250,75 = 2501.50; 10 % off = 250.15; net 2251.35; VAT 20 % = 450.27.
    page.locator("[name=lines-0-quantity]").press_sequentially("2")
    page.locator("[name=lines-0-unit_price]").press_sequentially("1.250,75")
    page.locator("[name=lines-0-discount_rate]").press_sequentially("%10")
    row = page.locator("[data-line]").nth(0)
    expect(row.locator("[data-line-total]")).to_have_text("2.251,35")
    expect(row.locator("[data-line-vat]")).to_have_text("450,27")
    # Line 2: 1000 at 20 % = VAT 200.00, 602 withholds 180.00; stopaj 0003 20 % = 200.00 off what is paid.
    page.fill("[name=lines-1-quantity]", "1")
    page.fill("[name=lines-1-unit_price]", "1000")
    page.select_option("[name=lines-1-withholding_code]", "602")
    page.select_option("[name=lines-1-other_tax_code]", "0003")
    page.fill("[name=lines-1-other_tax_rate]", "20")
    # 3251.35 net, 250.15 off, VAT 650.27, 3901.62 with VAT; 3901.62 - 180 - 200 = 3521.62 to pay.
    shown = {"line_extension": "3.251,35", "allowance_total": "250,15", "vat_total": "650,27",
             "withholding_total": "180,00", "added_taxes_total": "0,00", "deducted_taxes_total": "200,00",
             "tax_inclusive": "3.901,62", "payable": "3.521,62", "payable_try": ""}
    for name, value in shown.items():
        expect(total(name)).to_have_text(value)
    python = document_totals([
        Line(Decimal(2), Decimal("1250.75"), Decimal(20), discount_rate=Decimal(10)),
        Line(Decimal(1), Decimal(1000), Decimal(20), withholding_code="602", taxes=(Tax("0003", Decimal(20)),))])
    assert python.payable == Decimal("3521.62") and python.tax_inclusive == Decimal("3901.62")

    # An unreadable price counts as empty, and looks wrong only while it is unreadable.
    price = page.locator("[name=lines-1-unit_price]")
    price.fill("12,50,75")
    expect(price).to_have_class(INVALID)
    expect(total("line_extension")).to_have_text("2.251,35")
    price.fill("1.000")  # Turkish thousands
    expect(price).not_to_have_class(INVALID)
    expect(total("payable")).to_have_text("3.521,62")

    # A percentage of a dot and three digits is asked, as the server asks (data-number="rate"); an amount is not.
    other_rate = page.locator("[name=lines-1-other_tax_rate]")
    other_rate.fill("20.000")
    expect(other_rate).to_have_class(INVALID)
    expect(total("deducted_taxes_total")).to_have_text("0,00")
    other_rate.fill("20")
    expect(other_rate).not_to_have_class(INVALID)
    expect(total("payable")).to_have_text("3.521,62")

    # A discount larger than the line: marked on its field, the line left out.
    discount = page.locator("[name=lines-0-discount_amount]")
    discount.fill("2.500")
    expect(discount).to_have_class(INVALID)
    expect(row.locator("[data-line-total]")).to_have_text("")
    expect(total("line_extension")).to_have_text("1.000,00")
    discount.fill("")
    expect(discount).not_to_have_class(INVALID)

    # A deleted line is left out: line 1 alone, 2251.35 + 450.27 = 2701.62.
    page.check("[name=lines-1-DELETE]")
    expect(total("payable")).to_have_text("2.701,62")
    page.uncheck("[name=lines-1-DELETE]")
    expect(total("payable")).to_have_text("3.521,62")

    # In dollars at 34,5678: 3521.62 x 34.5678 = 121734.655836 -> 121.734,66 TRY; an ambiguous rate shows none.
    page.select_option("[name=currency_code]", "USD")
    page.fill("[name=exchange_rate]", "34,5678")
    assert converted(Decimal("3521.62"), Decimal("34.5678")) == Decimal("121734.66")
    expect(total("payable_try")).to_have_text("121.734,66")
    page.fill("[name=exchange_rate]", "34.567")
    expect(page.locator("[name=exchange_rate]")).to_have_class(INVALID)
    expect(total("payable_try")).to_have_text("")
    page.select_option("[name=currency_code]", "TRY")
    page.fill("[name=exchange_rate]", "34,5678")
    expect(total("payable_try")).to_have_text("")

    # A new line from the template: the formset counts it, and its figures join the totals (+ 3 x 10 at 10 %).
    page.click("[data-add-line]")
    expect(page.locator("[data-line]")).to_have_count(3)
    assert page.locator("[name=lines-TOTAL_FORMS]").input_value() == "3"
    page.fill("[name=lines-2-quantity]", "3")
    page.fill("[name=lines-2-unit_price]", "10")
    page.select_option("[name=lines-2-vat_rate]", "10")
    expect(total("line_extension")).to_have_text("3.281,35")
    expect(total("payable")).to_have_text("3.554,62")
