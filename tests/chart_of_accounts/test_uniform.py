"""The uniform chart of accounts shipped as reference data: its shape, a spot check of names accountants
know by heart, and the Turkish spelling that a careless capitalisation gets wrong."""

import re

import pytest

from backoffice.chart_of_accounts import uniform
from backoffice.chart_of_accounts.uniform import CLASS, COMMON, GROUP, MAIN, UNIFORM_CHART

CODES = [code for code, _name in UNIFORM_CHART]
NAMES = [name for _code, name in UNIFORM_CHART]


def test_codes_are_digits_unique_and_in_order():
    assert all(re.fullmatch(r"\d{1,3}", code) for code in CODES)
    assert len(CODES) == len(set(CODES))
    # Code order is the tree's depth-first order: a parent just before its children.
    assert CODES == sorted(CODES)


def test_every_class_from_one_to_seven_and_nine_but_not_eight():
    classes = [code for code in CODES if len(code) == 1]
    assert classes == ["1", "2", "3", "4", "5", "6", "7", "9"]


def test_every_group_and_main_account_has_its_parent():
    codes = set(CODES)
    for code in CODES:
        if len(code) > 1:
            assert code[:-1] in codes, code


def test_every_group_has_main_accounts_and_every_class_but_nine_has_groups():
    for code in CODES:
        if len(code) == 2:
            assert uniform.children(code), code
        elif code != "9" and len(code) == 1:
            assert uniform.children(code), code


def test_size_is_that_of_the_plan():
    assert len([c for c in CODES if len(c) == 2]) == 58
    by_class = {}
    for code, _name in uniform.main_accounts():
        by_class[code[0]] = by_class.get(code[0], 0) + 1
    assert by_class == {"1": 54, "2": 56, "3": 47, "4": 27, "5": 19, "6": 42, "7": 40}


def test_names_are_clean():
    for code, name in UNIFORM_CHART:
        assert name and name == name.strip(), code
        assert "  " not in name, code
        # A lowercased "İ" leaves a combining dot behind.
        assert "\u0307" not in name, code


@pytest.mark.parametrize(("code", "name"), [
    ("1", "Dönen Varlıklar"),
    ("3", "Kısa Vadeli Yabancı Kaynaklar"),
    ("5", "Özkaynaklar"),
    ("7", "Maliyet Hesapları"),
    ("9", "Nazım Hesaplar"),
    ("10", "Hazır Değerler"),
    ("12", "Ticari Alacaklar"),
    ("15", "Stoklar"),
    ("25", "Maddi Duran Varlıklar"),
    ("32", "Ticari Borçlar"),
    ("36", "Ödenecek Vergi ve Diğer Yükümlülükler"),
    ("100", "Kasa"),
    ("101", "Alınan Çekler"),
    ("102", "Bankalar"),
    ("103", "Verilen Çekler ve Ödeme Emirleri (-)"),
    ("108", "Diğer Hazır Değerler"),
    ("120", "Alıcılar"),
    ("121", "Alacak Senetleri"),
    ("126", "Verilen Depozito ve Teminatlar"),
    ("132", "İştiraklerden Alacaklar"),
    ("150", "İlk Madde ve Malzeme"),
    ("153", "Ticari Mallar"),
    ("191", "İndirilecek KDV"),
    ("242", "İştirakler"),
    ("255", "Demirbaşlar"),
    ("257", "Birikmiş Amortismanlar (-)"),
    ("300", "Banka Kredileri"),
    ("320", "Satıcılar"),
    ("335", "Personele Borçlar"),
    ("360", "Ödenecek Vergi ve Fonlar"),
    ("361", "Ödenecek Sosyal Güvenlik Kesintileri"),
    ("391", "Hesaplanan KDV"),
    ("500", "Sermaye"),
    ("590", "Dönem Net Kârı"),
    ("600", "Yurtiçi Satışlar"),
    ("601", "Yurtdışı Satışlar"),
    ("610", "Satıştan İadeler (-)"),
    ("621", "Satılan Ticari Mallar Maliyeti (-)"),
    ("632", "Genel Yönetim Giderleri (-)"),
    ("642", "Faiz Gelirleri"),
    ("646", "Kambiyo Kârları"),
    ("689", "Diğer Olağandışı Gider ve Zararlar (-)"),
    ("710", "Direkt İlk Madde ve Malzeme Giderleri"),
    ("760", "Pazarlama, Satış ve Dağıtım Giderleri"),
    ("770", "Genel Yönetim Giderleri"),
    ("780", "Finansman Giderleri"),
    ("790", "İlk Madde ve Malzeme Giderleri"),
])
def test_well_known_names(code, name):
    assert uniform.name_of(code) == name


def test_contra_accounts_keep_their_mark():
    for code in ["103", "119", "122", "129", "158", "199", "257", "268", "302", "322", "501", "580", "591",
                 "610", "611", "620", "630", "654", "656", "660", "680", "691"]:
        assert uniform.name_of(code).endswith(" (-)"), code
    for code in ["100", "120", "320", "600", "642", "770"]:
        assert "(-)" not in uniform.name_of(code), code


def test_codes_the_plan_leaves_empty_are_absent():
    for code in ["8", "14", "16", "20", "21", "31", "41", "45", "46", "51", "53", "55", "56",
                 "104", "109", "123", "125", "130", "134", "154", "194", "200", "310", "362", "390",
                 "510", "603", "650", "651", "652", "670", "693", "702", "900"]:
        assert code not in uniform._NAMES, code
        with pytest.raises(KeyError):
            uniform.name_of(code)


def test_ranges_of_long_term_construction_are_listed_code_by_code():
    for code in range(170, 178):
        assert uniform.name_of(str(code)) == "Yıllara Yaygın İnşaat ve Onarım Maliyetleri"
    for code in range(350, 358):
        assert uniform.name_of(str(code)) == "Yıllara Yaygın İnşaat ve Onarım Hakediş Bedelleri"
    assert uniform.name_of("178") == uniform.name_of("358") == "Yıllara Yaygın İnşaat Enflasyon Düzeltme Hesabı"


def test_turkish_capitalisation():
    lowercase = "a-zçğıöşü"
    for code, name in UNIFORM_CHART:
        # A capital dotless I before lowercase letters is almost always an "İ" gone wrong.
        assert not re.search(rf"\bI[{lowercase}]", name), (code, name)
        # Title case as accountants write it: every word capitalised except the conjunctions.
        for word in re.findall(r"[\wÇĞİÖŞÜçğıöşü.]+", name):
            if word not in {"ve", "veya"}:
                assert word[0].isupper(), (code, name, word)
    joined = "\n".join(NAMES)
    for word in ["İndirilecek", "İlk Madde", "İştirakler", "İştiraklerden", "İştiraklere", "İş Avansları",
                 "İadeler", "İskontoları", "İhraç", "İşçilik", "Kâr"]:
        assert word in joined, word
    # Turkish letters were not flattened to ASCII.
    for ascii_spelling in ["Alicilar", "Saticilar", "Diger", "Ilk Madde", "Istirak", "Ozkaynak", "Odenecek",
                           "Cekler", "Karsilig", "Gelistirme"]:
        assert ascii_spelling not in joined, ascii_spelling


def test_level():
    assert (uniform.level("1"), uniform.level("12"), uniform.level("120")) == (CLASS, GROUP, MAIN)
    assert (CLASS, GROUP, MAIN) == (0, 1, 2)
    for bad in ["", "1200", None]:
        with pytest.raises(ValueError):
            uniform.level(bad)


def test_parent_code():
    assert uniform.parent_code("120") == "12"
    assert uniform.parent_code("12") == "1"
    assert uniform.parent_code("1") is None
    for code in CODES:
        parent = uniform.parent_code(code)
        assert parent is None or (code, uniform.name_of(code)) in uniform.children(parent)


def test_children():
    assert uniform.children("10") == [
        ("100", "Kasa"), ("101", "Alınan Çekler"), ("102", "Bankalar"),
        ("103", "Verilen Çekler ve Ödeme Emirleri (-)"), ("108", "Diğer Hazır Değerler"),
    ]
    assert [code for code, _name in uniform.children("1")] == ["10", "11", "12", "13", "15", "17", "18", "19"]
    assert uniform.children("100") == []
    assert uniform.children("9") == []
    with pytest.raises(KeyError):
        uniform.children("8")
    # A copy: callers cannot change the reference data.
    uniform.children("10").clear()
    assert len(uniform.children("10")) == 5


def test_main_accounts():
    mains = uniform.main_accounts()
    assert all(len(code) == 3 for code, _name in mains)
    assert [code for code, _name in mains] == [code for code in CODES if len(code) == 3]
    assert ("120", "Alıcılar") in mains


def test_common_accounts_are_main_accounts():
    mains = {code for code, _name in uniform.main_accounts()}
    assert len(COMMON) == len(set(COMMON))
    assert 20 <= len(COMMON) <= 30
    assert set(COMMON) <= mains
    assert {"100", "102", "120", "153", "191", "320", "391", "600", "770"} <= set(COMMON)
    assert list(COMMON) == sorted(COMMON)
