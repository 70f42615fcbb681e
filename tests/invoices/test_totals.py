"""Invoice totals against examples computed by hand (issue 13: "totals tested against hand-computed examples with
discount, several VAT rates, withholding and a foreign currency"). Each line figure is rounded half up to the
cent first; the document's figures are sums of the rounded line figures.

EXAMPLES also feed tests/browser/test_invoice_totals_js.py: the browser must compute the same, digit for digit.
"""

from decimal import Decimal as D

import pytest

from backoffice.invoices.totals import Line, Tax, TotalsError, converted, document_totals, line_totals

# (name, lines, the document's figures computed by hand)
EXAMPLES = [
    # 3 x 12.50 = 37.50; VAT 20 % = 7.50; 37.50 + 7.50 = 45.00.
    ("one line", [Line(D("3"), D("12.50"), D("20"))],
     {"line_extension": "37.50", "allowance_total": "0.00", "vat_total": "7.50", "tax_inclusive": "45.00",
      "payable": "45.00"}),
    # 4 x 249.90 = 999.60; 10 % of it = 99.96; 50.00 more off what is left (899.64): discount 149.96, net 849.64;
    # VAT 20 % = 169.928 -> 169.93; 849.64 + 169.93 = 1019.57.
    ("discount rate then amount", [Line(D("4"), D("249.90"), D("20"), discount_rate=D("10"), discount_amount=D("50"))],
     {"line_extension": "849.64", "allowance_total": "149.96", "vat_total": "169.93", "tax_inclusive": "1019.57",
      "payable": "1019.57"}),
    # 2 x 100 at 1 %: 2.00; 333.33 at 10 %: 33.333 -> 33.33; 5 x 19.99 = 99.95 at 20 %: 19.99; 500 at 0 % (exempt,
    # reason 351): 0.00; 0.05 at 20 %: 0.01. Net 1133.33, VAT 55.33, 1188.66 in all.
    ("several VAT rates", [Line(D("2"), D("100"), D("1")), Line(D("1"), D("333.33"), D("10")),
                           Line(D("5"), D("19.99"), D("20")), Line(D("1"), D("500"), D("0")),
                           Line(D("1"), D("0.05"), D("20"))],
     {"line_extension": "1133.33", "vat_total": "55.33", "tax_inclusive": "1188.66", "payable": "1188.66",
      "vat_breakdown": {"20": ("100.00", "20.00"), "10": ("333.33", "33.33"), "1": ("200.00", "2.00"),
                        "0": ("500.00", "0.00")}}),
    # 2000 at 20 %: VAT 400.00; 602 withholds 9/10 of it: 360.00; 2400.00 with VAT, 2040.00 to pay.
    ("withholding 602", [Line(D("1"), D("2000"), D("20"), withholding_code="602")],
     {"line_extension": "2000.00", "vat_total": "400.00", "withholding_total": "360.00", "tax_inclusive": "2400.00",
      "payable": "2040.00"}),
    # 3 x 1234.57 = 3703.71; VAT 20 % = 740.742 -> 740.74; 603 withholds 7/10: 518.518 -> 518.52;
    # 3703.71 + 740.74 = 4444.45; payable 4444.45 - 518.52 = 3925.93.
    ("withholding 603", [Line(D("3"), D("1234.57"), D("20"), withholding_code="603")],
     {"line_extension": "3703.71", "vat_total": "740.74", "withholding_total": "518.52", "tax_inclusive": "4444.45",
      "payable": "3925.93"}),
    # 10000 at VAT 20 % = 2000.00 and ÖTV (0074) 25 % = 2500.00, added: 14500.00 with taxes and to pay.
    ("ÖTV added", [Line(D("1"), D("10000"), D("20"), taxes=(Tax("0074", D("25")),))],
     {"line_extension": "10000.00", "vat_total": "2000.00", "added_taxes_total": "2500.00",
      "deducted_taxes_total": "0.00", "tax_inclusive": "14500.00", "payable": "14500.00"}),
    # 4250 at VAT 20 % = 850.00; income-tax stopaj (0003) 15 % = 637.50, deducted from what the buyer pays:
    # 5100.00 with VAT, 4462.50 to pay.
    ("stopaj deducted", [Line(D("1"), D("4250"), D("20"), taxes=(Tax("0003", D("15")),))],
     {"line_extension": "4250.00", "vat_total": "850.00", "added_taxes_total": "0.00",
      "deducted_taxes_total": "637.50", "tax_inclusive": "5100.00", "payable": "4462.50"}),
    # USD: 2 x 1499.99 = 2999.98; VAT 20 % = 599.996 -> 600.00; 3599.98 (converted below).
    ("USD invoice", [Line(D("2"), D("1499.99"), D("20"))],
     {"line_extension": "2999.98", "vat_total": "600.00", "tax_inclusive": "3599.98", "payable": "3599.98"}),
    # At the half, up: 3 x 0.335 = 1.005 -> 1.01 (a float would give 1.00); 0.25 at 18 % = 0.045 -> 0.05.
    # Below it, down: 0.25 at 1 % = 0.0025 -> 0.00; 10.02 at 20 % = 2.004 -> 2.00. Withholding at the half:
    # 0.25 at 20 % = 0.05, 602: 0.045 -> 0.05; 0.75 at 20 % = 0.15, 603: 0.105 -> 0.11.
    ("rounding at the half", [Line(D("3"), D("0.335"), D("0")), Line(D("1"), D("0.25"), D("18")),
                              Line(D("1"), D("0.25"), D("1")), Line(D("1"), D("10.02"), D("20")),
                              Line(D("1"), D("0.25"), D("20"), withholding_code="602"),
                              Line(D("1"), D("0.75"), D("20"), withholding_code="603")],
     {"line_extension": "12.53", "vat_total": "2.25", "withholding_total": "0.16", "tax_inclusive": "14.78",
      "payable": "14.62"}),
    # A discount at the half: 2.5 % of 100.20 = 2.505 -> 2.51 off; 97.69 net; VAT 10 % = 9.769 -> 9.77; 107.46.
    ("discount at the half", [Line(D("1"), D("100.20"), D("10"), discount_rate=D("2.5"))],
     {"line_extension": "97.69", "allowance_total": "2.51", "vat_total": "9.77", "tax_inclusive": "107.46"}),
    # 100 lines of 0.125 at 20 %: each 0.13 net (0.125 -> 0.13) and 0.03 VAT (0.026 -> 0.03), so 13.00 and 3.00:
    # line then document. Rounding the document's sum instead would give 12.50 + 2.50 = 15.00.
    ("100 lines", [Line(D("1"), D("0.125"), D("20"))] * 100,
     {"line_extension": "13.00", "vat_total": "3.00", "tax_inclusive": "16.00", "payable": "16.00"}),
]


@pytest.mark.parametrize("name,lines,expected", EXAMPLES, ids=[example[0] for example in EXAMPLES])
def test_hand_computed(name, lines, expected):
    totals = document_totals(lines)
    for figure, value in expected.items():
        if figure == "vat_breakdown":
            assert {f"{rate.normalize():f}": (str(base), str(vat)) for rate, (base, vat) in
                    totals.vat_breakdown.items()} == value
        else:
            assert str(getattr(totals, figure)) == value, figure
    assert totals.tax_exclusive == totals.line_extension
    assert len(totals.lines) == len(lines)


def test_line_figures():
    # 4 x 249.90 = 999.60 gross; 99.96 + 50.00 off; 849.64 net; VAT 169.93.
    figures = line_totals(Line(D("4"), D("249.90"), D("20"), discount_rate=D("10"), discount_amount=D("50")))
    assert (figures.gross, figures.discount, figures.net, figures.vat) == (
        D("999.60"), D("149.96"), D("849.64"), D("169.93"))
    # 1000 at 20 %: VAT 200.00; 602 takes 180.00; ÖTV 0071 10 % = 100.00 added; stopaj 0011 20 % = 200.00 deducted.
    figures = line_totals(Line(D("1"), D("1000"), D("20"), withholding_code="602",
                               taxes=(Tax("0071", D("10")), Tax("0011", D("20")))))
    assert figures.withholding == D("180.00")
    assert [(tax.code, tax.amount, tax.deducted) for tax in figures.taxes] == [
        ("0071", D("100.00"), False), ("0011", D("200.00"), True)]
    assert (figures.added, figures.deducted) == (D("100.00"), D("200.00"))


def test_withholding_and_taxes_together():
    # 1000 at 20 % with 602 (180.00 withheld), ÖTV 0071 10 % (100.00 added) and stopaj 0011 20 % (200.00 deducted):
    # 1000 + 200 + 100 = 1300.00 with taxes; 1300 - 180 - 200 = 920.00 to pay.
    totals = document_totals([Line(D("1"), D("1000"), D("20"), withholding_code="602",
                                   taxes=(Tax("0071", D("10")), Tax("0011", D("20"))))])
    assert (totals.tax_inclusive, totals.withholding_total, totals.deducted_taxes_total, totals.payable) == (
        D("1300.00"), D("180.00"), D("200.00"), D("920.00"))


def test_converted_to_try():
    # 3599.98 USD at 34.5678 = 124443.388644 -> 124443.39 TRY; at the half: 0.01 x 0.5 = 0.005 -> 0.01.
    usd_lines = next(lines for name, lines, _expected in EXAMPLES if name == "USD invoice")
    assert converted(document_totals(usd_lines).payable, D("34.5678")) == D("124443.39")
    assert converted(D("0.01"), D("0.5")) == D("0.01")
    assert converted(D("100.00"), D("1")) == D("100.00")


def test_discount_larger_than_the_gross_is_refused_on_its_field():
    # 2 x 10 = 20.00; 15 % = 3.00 off, 17.01 more is 20.01 > 20.00.
    with pytest.raises(TotalsError) as refused:
        line_totals(Line(D("2"), D("10"), D("20"), discount_rate=D("15"), discount_amount=D("17.01")))
    assert refused.value.field == "discount_amount" and isinstance(refused.value, ValueError)
    with pytest.raises(TotalsError) as refused:
        document_totals([Line(D("1"), D("5"), D("20")), Line(D("1"), D("10"), D("20"), discount_rate=D("101"))])
    assert refused.value.field == "discount_rate"
    # The whole line off is allowed: 20.00 net 0.
    assert line_totals(Line(D("2"), D("10"), D("20"), discount_amount=D("20"))).net == D("0.00")


def test_unknown_withholding_code_is_refused():
    with pytest.raises(TotalsError) as refused:
        line_totals(Line(D("1"), D("10"), D("20"), withholding_code="699"))
    assert refused.value.field == "withholding_code"


def test_no_lines():
    totals = document_totals([])
    assert (totals.line_extension, totals.payable, totals.vat_breakdown, totals.lines) == (D("0.00"), D("0.00"), {}, ())
