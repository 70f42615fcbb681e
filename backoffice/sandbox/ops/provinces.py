"""The 81 provinces of Türkiye by plate code, and the ticket service's city list operation."""

from ..api import Call, operation

# Plate codes and Turkish names of the 81 provinces.
PROVINCES = (
    "Adana", "Adıyaman", "Afyonkarahisar", "Ağrı", "Amasya", "Ankara", "Antalya", "Artvin", "Aydın", "Balıkesir",
    "Bilecik", "Bingöl", "Bitlis", "Bolu", "Burdur", "Bursa", "Çanakkale", "Çankırı", "Çorum", "Denizli",
    "Diyarbakır", "Edirne", "Elazığ", "Erzincan", "Erzurum", "Eskişehir", "Gaziantep", "Giresun", "Gümüşhane",
    "Hakkâri", "Hatay", "Isparta", "Mersin", "İstanbul", "İzmir", "Kars", "Kastamonu", "Kayseri", "Kırklareli",
    "Kırşehir", "Kocaeli", "Konya", "Kütahya", "Malatya", "Manisa", "Kahramanmaraş", "Mardin", "Muğla", "Muş",
    "Nevşehir", "Niğde", "Ordu", "Rize", "Sakarya", "Samsun", "Siirt", "Sinop", "Sivas", "Tekirdağ", "Tokat",
    "Trabzon", "Tunceli", "Şanlıurfa", "Uşak", "Van", "Yozgat", "Zonguldak", "Aksaray", "Bayburt", "Karaman",
    "Kırıkkale", "Batman", "Şırnak", "Bartın", "Ardahan", "Iğdır", "Yalova", "Karabük", "Kilis", "Osmaniye",
    "Düzce",
)
assert len(PROVINCES) == 81


def name_of(code) -> str:
    """The province of a plate code (a number or a string of digits); "" for anything else."""
    return PROVINCES[int(code) - 1] if str(code).isdigit() and 1 <= int(code) <= 81 else ""


@operation("ticket", "GET", "/v1/city/list")
def city_list(call: Call):
    return [{"id": code, "name": name} for code, name in enumerate(PROVINCES, start=1)]
