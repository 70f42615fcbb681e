"""Refresh backoffice/core/data/codelists.json, the tax authority's UBL-TR code lists the invoice form offers.

    pip download efatura-kontrol==0.1.0 --no-deps -d /tmp/ek
    .venv/bin/python scripts/refresh_codelists.py /tmp/ek/efatura_kontrol-0.1.0-py3-none-any.whl
    # or the package make installs for the tests (requirements-oracle.txt):
    .venv/bin/python scripts/refresh_codelists.py .venv/lib/python3.*/site-packages/efatura_kontrol

Where each part comes from:
- the codes: efatura-kontrol's `ekler/kodlar.json` (MIT), which its author took from the tax authority's
  UBL-TR_Codelist.xml (the lists its schematron checks). It is read from the wheel (or from a kodlar.json or a
  folder holding one); the package is not a dependency (it pulls saxonche and mcp).
- withholding (tevkifat) rates: the same file's WithholdingTaxTypeWithPercent, code and percent side by side
  (60290 = code 602 at 90%).
- names of countries and currencies: Debian's iso-codes package (ISO 3166-1 and 4217 with their Turkish
  translations; `apt-get install iso-codes`).
- every other name: kodlar.json has codes only, so the names below are this project's, written from the
  tax authority's published code-list guide. A code of the list with no name here is still offered,
  labelled with its code: add its name here and run the script again.
"""

import argparse
import datetime
import gettext
import json
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "backoffice" / "core" / "data" / "codelists.json"
SOURCE = "efatura-kontrol 0.1.0 ekler/kodlar.json (GİB UBL-TR_Codelist.xml)"
ISO_CODES = Path("/usr/share/iso-codes/json")
LOCALE_DIR = Path("/usr/share/locale")

# The units people pick most, in this order, then the other named ones; the rest of the list follows.
UNITS = {
    "C62": "Adet", "KGM": "Kilogram", "LTR": "Litre", "MTR": "Metre", "MTK": "Metrekare", "MTQ": "Metreküp",
    "KWH": "Kilovatsaat", "DAY": "Gün", "HUR": "Saat", "MON": "Ay", "ANN": "Yıl", "PA": "Paket", "BX": "Kutu",
    "SET": "Takım", "KT": "Kit",
    "GRM": "Gram", "MGM": "Miligram", "TNE": "Ton", "PR": "Çift", "H87": "Parça", "DZN": "Düzine",
    "MLT": "Mililitre", "CLT": "Santilitre", "GLL": "Galon", "MMT": "Milimetre", "CMT": "Santimetre",
    "DMT": "Desimetre", "KTM": "Kilometre", "CMK": "Santimetrekare", "CMQ": "Santimetreküp", "HAR": "Hektar",
    "DAA": "Dekar", "SEC": "Saniye", "MIN": "Dakika", "WEE": "Hafta", "KWT": "Kilovat", "MAW": "Megavat",
    "MWH": "Megavatsaat", "CT": "Karton", "BO": "Şişe", "SA": "Çuval", "PK": "Koli", "BG": "Torba",
    "CR": "Sandık", "T3": "Bin adet", "D40": "Bin litre", "R9": "Bin metreküp", "NCR": "Karat",
    "LPA": "Saf alkol litresi", "GT": "Gros ton",
}

# 0015 (VAT) and the stopaj codes first: what an invoice line carries most.
TAX_TYPES = {
    "0015": "Gerçek usulde katma değer vergisi (KDV)", "0003": "Gelir vergisi stopajı",
    "0011": "Kurumlar vergisi stopajı", "0071": "ÖTV 1. liste (petrol ve doğal gaz ürünleri)",
    "0021": "Banka muameleleri vergisi", "0022": "Sigorta muameleleri vergisi", "0059": "Konaklama vergisi",
    "0061": "Kaynak kullanımı destekleme fonu kesintisi (KKDF)", "0073": "ÖTV 3. liste",
    "0074": "ÖTV 4. liste (dayanıklı tüketim ve diğer mallar)", "0075": "ÖTV 3A liste (alkollü içkiler)",
    "0076": "ÖTV 3B liste (tütün mamulleri)", "0077": "ÖTV 3C liste (kolalı gazozlar)", "1047": "Damga vergisi",
    "1048": "5035 sayılı Kanuna göre damga vergisi", "4071": "Elektrik ve havagazı tüketim vergisi",
    "4080": "Özel iletişim vergisi", "4081": "5035 sayılı Kanuna göre özel iletişim vergisi",
    "4171": "Petrol ve doğal gaz ürünlerine ilişkin ÖTV tevkifatı", "8001": "Borsa tescil ücreti",
    "8002": "Enerji fonu", "8004": "TRT payı", "8005": "Elektrik tüketim vergisi", "8006": "Telsiz kullanım ücreti",
    "8007": "Telsiz ruhsat ücreti", "8008": "Çevre temizlik vergisi", "9015": "KDV tevkifatı",
    "9021": "4961 banka sigorta muameleleri vergisi", "9040": "Mera fonu",
    "9077": "ÖTV 2. liste (tescile tabi motorlu taşıtlar)", "9944": "Belediyelere ödenen hal rüsumu",
}

_PARTIAL = {
    "601": "Yapım işleri ile bu işlerle birlikte ifa edilen mühendislik-mimarlık ve etüt-proje hizmetleri",
    "602": "Etüt, plan-proje, danışmanlık, denetim ve benzeri hizmetler",
    "603": "Makine, teçhizat, demirbaş ve taşıtlara ait tadil, bakım ve onarım hizmetleri",
    "604": "Yemek servis hizmeti", "605": "Organizasyon hizmeti", "606": "İşgücü temin hizmetleri",
    "607": "Özel güvenlik hizmeti", "608": "Yapı denetim hizmetleri",
    "609": "Fason olarak yaptırılan tekstil ve konfeksiyon işleri, çanta ve ayakkabı dikim işleri ve bu işlere "
           "aracılık hizmetleri",
    "610": "Turistik mağazalara verilen müşteri bulma / götürme hizmetleri",
    "611": "Spor kulüplerinin yayın, reklam ve isim hakkı gelirlerine konu işlemleri", "612": "Temizlik hizmeti",
    "613": "Çevre ve bahçe bakım hizmetleri", "614": "Servis taşımacılığı hizmeti",
    "615": "Her türlü baskı ve basım hizmetleri",
    "616": "5018 sayılı Kanuna ekli cetvellerdeki idare, kurum ve kuruluşlara yapılan diğer hizmetler",
    "617": "Hurda metalden elde edilen külçe teslimleri",
    "618": "Hurda metalden elde edilenler dışındaki bakır, çinko, alüminyum ve kurşun külçe teslimleri",
    "619": "Bakır, çinko, alüminyum ve kurşun ürünlerinin teslimi",
    "620": "İstisnadan vazgeçenlerin hurda ve atık teslimi",
    "621": "Metal, plastik, lastik, kauçuk, kâğıt ve cam hurda ve atıklardan elde edilen hammadde teslimi",
    "622": "Pamuk, tiftik, yün ve yapağı ile ham post ve deri teslimleri", "623": "Ağaç ve orman ürünleri teslimi",
    "624": "Yük taşımacılığı hizmeti", "625": "Ticari reklam hizmetleri", "626": "Diğer teslimler",
    "627": "Demir-çelik ürünlerinin teslimi",
}
# 801 to 824: the same services and deliveries withheld in full (tam tevkifat).
_FULL = dict(zip(
    [str(code) for code in range(801, 825)],
    [_PARTIAL[str(code)] for code in range(601, 616)] + [_PARTIAL[str(code)] for code in range(617, 623)]
    + [_PARTIAL["623"], _PARTIAL["624"], _PARTIAL["625"]], strict=True))
_FULL["817"] = "Hurda metalden elde edilenler dışındaki bakır, çinko, demir-çelik, alüminyum ve kurşun külçe teslimi"
WITHHOLDING = {**_PARTIAL, **{code: f"{name} (tam tevkifat)" for code, name in _FULL.items()}}

VAT_EXEMPTION_REASONS = {
    # Partial exemptions (kısmi istisna), VAT law article 17 and others.
    "201": "17/1 Kültür ve eğitim amacı taşıyan işlemler",
    "202": "17/2-a Sağlık, çevre ve sosyal yardım amaçlı işlemler",
    "204": "17/2-c Yabancı diplomatik organ ve hayır kurumlarının bağışlarıyla ilgili mal ve hizmet alışları",
    "205": "17/2-d Taşınmaz kültür varlıklarına ilişkin teslimler ve mimarlık hizmetleri",
    "206": "17/2-e Mesleki kuruluşların işlemleri", "207": "17/3 Askeri fabrika, tersane ve atölyelerin işlemleri",
    "208": "17/4-c Birleşme, devir, dönüşüm ve bölünme işlemleri",
    "209": "17/4-e Banka ve sigorta muameleleri vergisi kapsamına giren işlemler",
    "211": "17/4-h Zirai amaçlı su teslimleri ile köy tüzel kişiliklerince yapılan içme suyu teslimleri",
    "212": "17/4-ı Serbest bölgelerde verilen hizmetler",
    "213": "17/4-j Boru hattı ile yapılan petrol ve gaz taşımacılığı",
    "214": "17/4-k Sanayi bölgelerindeki arsa ve işyeri teslimleri ile konut yapı kooperatiflerinin üyelerine konut "
           "teslimleri",
    "215": "17/4-l Varlık yönetim şirketlerinin işlemleri", "216": "17/4-m Tasarruf mevduatı sigorta fonunun işlemleri",
    "217": "17/4-n Basın-Yayın ve Enformasyon Genel Müdürlüğüne verilen haber hizmetleri",
    "218": "17/4-o Gümrük antrepoları, geçici depolama yerleri, gümrüklü sahalar ve vergisiz satış yapılan "
           "mağazalarla ilgili hizmetler",
    "219": "17/4-p Hazine ve Arsa Ofisi Genel Müdürlüğünün işlemleri",
    "220": "17/4-r İki tam yıl süreyle sahip olunan taşınmaz ve iştirak hisseleri satışları",
    "221": "Geçici 15 Konut yapı kooperatifleri, belediyeler ve sosyal güvenlik kuruluşlarına verilen inşaat taahhüt "
           "hizmeti",
    "223": "Geçici 20/1 Teknoloji geliştirme bölgelerinde yapılan işlemler",
    "225": "Geçici 23 Milli Eğitim Bakanlığına yapılan bilgisayar bağışları ile ilgili teslimler",
    "226": "17/2-b Özel okullar, üniversite ve yüksekokullar tarafından verilen bedelsiz eğitim ve öğretim hizmetleri",
    "227": "17/2-b Kanunların gösterdiği gerek üzerine bedelsiz olarak yapılan teslim ve hizmetler",
    "228": "17/2-b Kanunun 17/1 maddesinde sayılan kurum ve kuruluşlara bedelsiz olarak yapılan teslimler",
    "229": "17/2-b Gıda bankacılığı faaliyetinde bulunan dernek ve vakıflara bağışlanan gıda, temizlik, giyecek ve "
           "yakacak maddeleri",
    "230": "17/4-g Külçe altın, külçe gümüş ve kıymetli taşların teslimi",
    "231": "17/4-g Metal, plastik, lastik, kauçuk, kâğıt, cam hurda ve atıkların teslimi",
    "232": "17/4-g Döviz, para, damga pulu, değerli kâğıtlar, hisse senedi ve tahvil teslimleri",
    "234": "17/4-ş Konut finansmanı amacıyla teminat gösterilen ve ipotek konulan konutların teslimi",
    "235": "16/1-c Transit ve gümrük antrepo rejimleri ile geçici depolama ve serbest bölge hükümlerinin uygulandığı "
           "malların teslimi",
    "236": "19/2 Usulüne göre yürürlüğe girmiş uluslararası anlaşmalar kapsamındaki istisnalar (iade hakkı tanınmayan)",
    "237": "17/4-t Ürün senetlerinin ihtisas / ticaret borsaları aracılığıyla ilk teslimlerinden sonraki teslimler",
    "238": "17/4-u Varlıkların varlık kiralama şirketlerine devri, kiralanması ve devralınan kuruma devri",
    "239": "17/4-y Taşınmazların finansal kiralama şirketlerine devri, kiralanması ve devri",
    "240": "17/4-z Patentli veya faydalı model belgeli buluşa ilişkin gayri maddi hakların kiralanması, devri ve "
           "satışı",
    "241": "TürkAkım gaz boru hattı projesine ilişkin anlaşmanın 9/b maddesinde yer alan hizmetler",
    "242": "17/4-ö Gümrüklü sahalarda ithalat, ihracat ve transit rejim kapsamındaki mallar için verilen ardiye, "
           "depolama ve terminal hizmetleri",
    "250": "Diğerleri (kısmi istisna)",
    # Full exemptions (tam istisna).
    "301": "11/1-a Mal ihracatı", "302": "11/1-a Hizmet ihracatı", "303": "11/1-a Roaming hizmetleri",
    "304": "13/a Deniz, hava ve demiryolu taşıma araçlarının teslimi ile inşa, tadil, bakım ve onarımları",
    "305": "13/b Deniz ve hava taşıma araçları için liman ve hava meydanlarında yapılan hizmetler",
    "306": "13/c Petrol aramaları", "307": "13/c Kıymetli madenlerin arama, zenginleştirme ve rafinaj faaliyetleri",
    "308": "13/d Teşvikli yatırım mallarının teslimi",
    "309": "13/e Liman ve hava meydanlarının inşası, yenilenmesi ve genişletilmesi",
    "310": "13/f Ulusal güvenlik amaçlı teslim ve hizmetler", "311": "14/1 Uluslararası taşımacılık",
    "312": "15/a Diplomatik organ ve misyonlara yapılan teslim ve hizmetler",
    "313": "15/b Uluslararası kuruluşlara yapılan teslim ve hizmetler",
    "314": "19/2 Usulüne göre yürürlüğe girmiş uluslararası anlaşmalar kapsamındaki istisnalar",
    "315": "14/3 İhraç konusu eşyayı taşıyan kamyon, çekici ve yarı römorklara yapılan motorin teslimleri",
    "316": "11/1-a Serbest bölgelerdeki müşteriler için yapılan fason hizmetler",
    "317": "17/4-s Engellilerin eğitimleri, meslekleri ve günlük yaşamlarına ilişkin araç-gereç ve bilgisayar "
           "programları",
    "318": "Geçici 29 Yap-işlet-devret modeli ile kiralama karşılığı yaptırılan sağlık ve eğitim tesislerine ilişkin "
           "teslim ve hizmetler",
    "319": "13/g Başbakanlık merkez teşkilatına yapılan araç teslimleri",
    "320": "Geçici 16 İSMEP kapsamında İstanbul Proje Koordinasyon Birimine yapılan teslim ve hizmetler",
    "321": "Geçici 26 BM ve NATO temsilcilikleri ile OECD'nin resmi kullanımı için yapılan teslim ve hizmetler",
    "322": "11/1-a Türkiye'de ikamet etmeyenlere özel fatura ile yapılan teslimler (bavul ticareti)",
    "323": "13/ğ Ürün senetlerinin ihtisas / ticaret borsaları aracılığıyla ilk teslimi",
    "324": "13/h Türkiye Kızılay Derneğine yapılan ve Derneğin yaptığı teslim ve hizmetler",
    "325": "13/ı Yem teslimleri", "326": "13/ı Tescil edilmiş gübrelerin teslimi",
    "327": "13/ı Tescil edilmiş gübrelerin içeriğindeki hammaddelerin gübre üreticilerine teslimi",
    "328": "13/i Konut veya işyeri teslimleri",
    "330": "13/j Organize sanayi bölgeleri ile küçük sanayi sitelerinin inşasına ilişkin teslim ve hizmetler",
    "331": "13/m Ar-Ge, yenilik ve tasarım faaliyetlerinde kullanılacak yeni makine ve teçhizat teslimleri",
    "332": "Geçici 39 İmalat sanayiinde kullanılacak yeni makine ve teçhizat teslimleri",
    "333": "13/k Kamu idarelerine, belediyelere ve köylere bağışlanan tesislerin inşasına ilişkin teslim ve "
           "hizmetler",
    "334": "13/l Yabancılara verilen sağlık hizmetleri", "335": "13/n Basılı kitap ve süreli yayınların teslimleri",
    "336": "Geçici 40 UEFA müsabakaları kapsamında yapılan teslim ve hizmetler",
    "337": "TürkAkım gaz boru hattı projesi kapsamındaki gaz taşıma hizmetleri",
    "338": "İmalatçıların mal ihracatları",
    "339": "İmalat sanayii ile turizme yönelik yatırım teşvik belgesi kapsamındaki inşaat işleri",
    "340": "Elektrikli motorlu taşıt araçlarının geliştirilmesine yönelik mühendislik hizmetleri",
    "350": "Diğerleri (tam istisna)", "351": "İstisna olmayan diğer",
    # Export-registered sales (ihraç kayıtlı).
    "701": "3065 sayılı KDV Kanununun 11/1-c maddesi kapsamındaki ihraç kayıtlı satış",
    "702": "DİİB ve geçici kabul rejimi kapsamındaki satışlar",
    "703": "4760 sayılı ÖTV Kanununun 8/2 maddesi kapsamındaki ihraç kayıtlı satış",
    # Special tax base (özel matrah).
    "801": "Milli piyango, spor-toto ve benzeri Devletçe organize edilen organizasyonlar",
    "802": "At yarışları ve diğer müşterek bahis ve talih oyunları",
    "803": "Profesyonel sanatçıların yer aldığı gösteriler, konserler ve profesyonel sporcuların katıldığı sportif "
           "faaliyetler",
    "804": "Gümrük depolarında ve müzayede mahallerinde yapılan satışlar",
    "805": "Altından mamul veya altın ihtiva eden ziynet eşyaları ile sikke altınların teslimi",
    "806": "Tütün mamulleri ve bazı alkollü içkiler", "807": "Gazete, dergi ve benzeri periyodik yayınlar",
    "808": "Gümüşten mamul veya gümüş ihtiva eden ziynet eşyaları ile sikke gümüşlerin teslimi",
    "809": "Belediyelerin şehir içi yolcu taşımacılığında kullanılan biletlerin ve kartların bayiler tarafından "
           "satışı",
    "810": "Ön ödemeli elektronik haberleşme hizmetleri",
    "811": "TŞOF tarafından araç plakaları ile sürücü kurslarında kullanılan evrakın basımı",
    "812": "KDV mükellefi olmayanlardan alınan ikinci el motorlu kara taşıtı veya taşınmazın teslimi",
}
# The first digit of a reason code is its kind; 1xx are ÖTV's (not VAT's) and 0xx no VAT reason.
VAT_REASON_KINDS = ("2", "3", "5", "7", "8")

PAYMENT_MEANS = {
    "1": "Ödeme tipi muhtelif", "10": "Nakit", "42": "Banka hesabına ödeme (havale / EFT)",
    "48": "Kredi kartı / banka kartı", "20": "Çek", "23": "Banka çeki", "30": "Kredi transferi",
    "31": "Borç transferi", "49": "Otomatik ödeme (doğrudan borçlandırma)", "60": "Senet",
    "97": "Taraflar arasında mahsup", "ZZZ": "Diğer (taraflarca belirlenen)",
}
FIRST_CURRENCIES = ("TRY", "USD", "EUR", "GBP")
FIRST_COUNTRIES = ("TR",)
_TURKISH_ORDER = {letter: index for index, letter in enumerate("abcçdefgğhıijklmnoöprsştuüvwxyz")}


def read_kodlar(source) -> dict:
    """kodlar.json's lists from the efatura-kontrol wheel, from a kodlar.json, or from a folder that holds one."""
    source = Path(source)
    if source.suffix == ".whl":
        with zipfile.ZipFile(source) as wheel:
            name = next(name for name in wheel.namelist() if name.endswith("ekler/kodlar.json"))
            return json.loads(wheel.read(name).decode("utf-8"))["listeler"]
    if source.is_dir():
        source = next(source.rglob("kodlar.json"))
    return json.loads(source.read_text(encoding="utf-8"))["listeler"]


def _ordered(codes, names: dict, first=()) -> list[list[str]]:
    """[code, name] of every code of the list: `first`, then the named ones (in this file's order), then the rest
    in the list's order. A code with no name is labelled with itself."""
    listed = set(codes)
    head = list(dict.fromkeys(code for code in [*first, *names] if code in listed))
    rest = [code for code in codes if code not in set(head)]
    return [[code, names.get(code, code)] for code in head + rest]


def _iso_names(standard: str, key: str) -> dict:
    """Turkish names from Debian's iso-codes: {code: name}."""
    path = ISO_CODES / f"iso_{standard}.json"
    if not path.exists():
        sys.exit(f"{path} is missing: apt-get install iso-codes")
    translation = gettext.translation(f"iso_{standard}", str(LOCALE_DIR), ["tr"])
    entries = json.loads(path.read_text(encoding="utf-8"))[standard]
    return {entry[key]: translation.gettext(entry["name"]) for entry in entries}


def _turkish_key(label: str):
    text = label.replace("I", "ı").replace("İ", "i").lower()
    return [_TURKISH_ORDER.get(letter, 100 + ord(letter)) for letter in text]


def _withholding(kodlar: dict) -> list[list[str]]:
    """[code, name, percent] of each withholding code.

    A code listed with two percents is one whose rate was raised (601 3/10 -> 4/10, 603 5/10 -> 7/10, ...,
    627 4/10 -> 5/10); the list keeps the old one valid for earlier invoices, a new invoice takes the higher."""
    rows = []
    for code in kodlar["WithholdingTaxType"]:
        percents = [int(combined[len(code):]) for combined in kodlar["WithholdingTaxTypeWithPercent"]
                    if combined.startswith(code) and len(combined) > len(code)]
        if percents:
            rows.append([code, WITHHOLDING.get(code, code), str(max(percents))])
    return rows


def build(kodlar: dict, refreshed: str) -> dict:
    countries = _iso_names("3166-1", "alpha_2")
    currencies = _iso_names("4217", "alpha_3")
    country_rows = _ordered(kodlar["CountryCodeList"], {}, FIRST_COUNTRIES)
    country_rows = [[code, countries.get(code, code)] for code, _label in country_rows]
    country_rows = country_rows[:1] + sorted(country_rows[1:], key=lambda row: _turkish_key(row[1]))
    vat_reasons = [code for code in kodlar["TaxExemptionReasonCodeType"] if code[0] in VAT_REASON_KINDS]
    return {
        "source": SOURCE,
        "refreshed": refreshed,
        "units": _ordered(kodlar["UnitCodeList"], UNITS),
        "tax_types": _ordered(kodlar["TaxType"], TAX_TYPES),
        "withholding": _withholding(kodlar),
        "vat_exemption_reasons": sorted(_ordered(vat_reasons, VAT_EXEMPTION_REASONS), key=lambda row: row[0]),
        "payment_means": _ordered(kodlar["PaymentMeansCodeTypeList"], PAYMENT_MEANS),
        "currencies": [[code, currencies.get(code, code)]
                       for code, _label in _ordered(kodlar["CurrencyCodeList"], {}, FIRST_CURRENCIES)],
        "countries": country_rows,
    }


def dump(data: dict) -> str:
    """The file's text: one code a line, so that a refresh reads as a short diff."""
    lines = ["{"]
    items = list(data.items())
    for index, (key, value) in enumerate(items):
        comma = "," if index < len(items) - 1 else ""
        if isinstance(value, list):
            rows = ",\n".join(f"    {json.dumps(row, ensure_ascii=False)}" for row in value)
            lines.append(f"  {json.dumps(key)}: [\n{rows}\n  ]{comma}")
        else:
            lines.append(f"  {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", help="efatura_kontrol-0.1.0-py3-none-any.whl, its kodlar.json, or a folder")
    parser.add_argument("--output", default=str(OUTPUT))
    parser.add_argument("--date", default=datetime.date.today().isoformat(), help="the 'refreshed' date")
    args = parser.parse_args(argv)
    data = build(read_kodlar(args.source), args.date)
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(dump(data), encoding="utf-8")
    counts = [f"{len(value)} {key}" for key, value in data.items() if isinstance(value, list)]
    print(f"{args.output}: {', '.join(counts)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
