"""The tax authority's code lists of the invoice form (backoffice/core/codes.py, data/codelists.json)."""

import importlib.util
import json
from decimal import Decimal
from pathlib import Path

import pytest

from backoffice.core import codes

ROOT = Path(__file__).resolve().parents[2]
# efatura-kontrol as make installs it (requirements-oracle.txt): the folder holding its ekler/kodlar.json, which
# the script reads as it reads the wheel.
KODLAR = Path(importlib.util.find_spec("efatura_kontrol").origin).parent


def test_the_file_loads_with_its_source():
    data = json.loads(codes.DATA.read_text(encoding="utf-8"))
    assert data["source"].startswith("efatura-kontrol 0.1.0 ekler/kodlar.json")
    assert data["refreshed"]
    for name in (codes.UNIT_CODES, codes.TAX_TYPES, codes.WITHHOLDING, codes.VAT_EXEMPTION_REASONS,
                 codes.PAYMENT_MEANS, codes.CURRENCIES, codes.COUNTRIES):
        listed = [code for code, _label in codes.choices(name)]
        assert listed and len(listed) == len(set(listed)), name


def test_units_most_used_first():
    units = codes.choices(codes.UNIT_CODES)
    assert [code for code, _label in units[:15]] == ["C62", "KGM", "LTR", "MTR", "MTK", "MTQ", "KWH", "DAY", "HUR",
                                                     "MON", "ANN", "PA", "BX", "SET", "KT"]
    assert units[0] == ("C62", "Adet") and codes.label(codes.UNIT_CODES, "KGM") == "Kilogram"
    assert codes.is_code(codes.UNIT_CODES, "C62") and not codes.is_code(codes.UNIT_CODES, "ADET")
    assert len(units) > 2000  # the whole UN/ECE list stays valid


def test_withholding_rates():
    assert codes.withholding_rate("602") == Decimal("0.9")
    assert codes.withholding_rate("603") == Decimal("0.7")  # raised from 5/10: the list keeps both
    assert codes.withholding_rate("601") == Decimal("0.4")
    assert codes.withholding_rate("801") == Decimal(1)  # full withholding
    assert codes.withholding_rate("699") is None and codes.withholding_rate("") is None
    listed = [code for code, _label in codes.choices(codes.WITHHOLDING)]
    assert listed[:3] == ["601", "602", "603"] and "627" in listed
    for code in listed:
        assert Decimal(0) < codes.withholding_rate(code) <= Decimal(1), code
    assert codes.withholding_rates()["602"] == "0.9"


def test_tax_types():
    assert codes.choices(codes.TAX_TYPES)[0][0] == "0015"
    assert "KDV" in codes.label(codes.TAX_TYPES, "0015")
    assert set(codes.DEDUCTED_TAX_CODES) == {"0003", "0011"}
    assert all(codes.is_code(codes.TAX_TYPES, code) for code in codes.DEDUCTED_TAX_CODES)
    others = [code for code, _label in codes.choices(codes.OTHER_TAX_TYPES)]
    assert "0015" not in others and "9015" not in others
    assert {"0003", "0011", "0071", "1047"} <= set(others)
    assert codes.label(codes.OTHER_TAX_TYPES, "0071").startswith("ÖTV")


def test_exemption_reasons_payment_means_currencies_countries():
    reasons = [code for code, _label in codes.choices(codes.VAT_EXEMPTION_REASONS)]
    assert {"301", "351", "701", "703", "801", "812"} <= set(reasons)
    assert not any(code.startswith("1") for code in reasons)  # ÖTV's reasons are not VAT's
    assert codes.label(codes.VAT_EXEMPTION_REASONS, "301") == "11/1-a Mal ihracatı"
    means = [code for code, _label in codes.choices(codes.PAYMENT_MEANS)]
    assert means[:4] == ["1", "10", "42", "48"] and {"30", "97", "ZZZ"} <= set(means)
    assert codes.label(codes.PAYMENT_MEANS, "10") == "Nakit"
    currencies = [code for code, _label in codes.choices(codes.CURRENCIES)]
    assert currencies[:4] == ["TRY", "USD", "EUR", "GBP"]
    assert codes.label(codes.CURRENCIES, "TRY") == "Türk Lirası"
    assert codes.choices(codes.COUNTRIES)[0] == ("TR", "Türkiye")
    assert codes.label(codes.COUNTRIES, "DE") == "Almanya"
    assert codes.label(codes.COUNTRIES, "QQ") == "QQ"  # not in the list: shown as it is


@pytest.mark.skipif(not Path("/usr/share/iso-codes/json").exists(),
                    reason="needs Debian's iso-codes (make test-tools installs it as root)")
def test_refresh_reproduces_the_committed_file(tmp_path):
    spec = importlib.util.spec_from_file_location("refresh_codelists", ROOT / "scripts" / "refresh_codelists.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    committed = codes.DATA.read_text(encoding="utf-8")
    output = tmp_path / "codelists.json"
    script.main([str(KODLAR), "--output", str(output), "--date", json.loads(committed)["refreshed"]])
    assert output.read_text(encoding="utf-8") == committed
