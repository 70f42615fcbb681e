"""Choices of the ticket service (document 2) with labels and badge colours, and the 81 provinces."""

from django.db import models
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

# Shared with every family that has exports and by-date reports.
from backoffice.core.exports import EXPORT_PENDING, ExportState  # noqa: F401
from backoffice.core.reports import ReportState  # noqa: F401


class TicketStatus(models.IntegerChoices):
    """Platform status of a ticket (document 2, section 3; 10 from the public clients)."""

    DRAFT = 0, _("Draft")
    DELETED = 10, _("Deleted")
    QUEUED = 20, pgettext_lazy("platform status", "Queued")
    ERROR = 40, _("Error")
    APPROVED = 60, _("Approved")
    CANCELLED = 100, _("Cancelled")

    @classmethod
    def color(cls, value):
        return STATUS_COLORS.get(value, "secondary")


STATUS_COLORS = {
    TicketStatus.DRAFT: "secondary",
    TicketStatus.DELETED: "dark",
    TicketStatus.QUEUED: "info",
    TicketStatus.ERROR: "danger",
    TicketStatus.APPROVED: "success",
    TicketStatus.CANCELLED: "warning",
}
# Create and update bodies accept only these (document 2, section 3).
SENDABLE_STATUSES = (TicketStatus.DRAFT, TicketStatus.QUEUED)
# Update is allowed only in these (document 2, section 3).
EDITABLE_STATUSES = (TicketStatus.DRAFT, TicketStatus.ERROR)
# The platform still works on these: polled until they settle.
WORKING_STATUSES = (TicketStatus.QUEUED,)
# The status-change operation: from -> to (document 2, section 3).
STATUS_CHANGES = {TicketStatus.ERROR: TicketStatus.DRAFT, TicketStatus.DRAFT: TicketStatus.QUEUED}


class DocumentType(models.IntegerChoices):
    SATIS = 0, _("Sale")
    IADE = 1, _("Refund")


class TicketType(models.TextChoices):
    YOLCU = "YOLCU", _("Passenger ticket")
    ETKINLIK = "ETKINLIK", _("Event ticket")


class PaymentType(models.TextChoices):
    """The paymentType codes of document 2, 2.1 (labels in the "payment type" context: short words such as
    "Points" or "Other" read differently elsewhere)."""

    BANKAKARTI = "BANKAKARTI", pgettext_lazy("payment type", "Bank card")
    KREDIKARTI = "KREDIKARTI", pgettext_lazy("payment type", "Credit card")
    BEDELSIZ = "BEDELSIZ", pgettext_lazy("payment type", "Free of charge")
    COKLU = "COKLU", pgettext_lazy("payment type", "Multiple")
    PUAN = "PUAN", pgettext_lazy("payment type", "Points")
    NAKIT = "NAKIT", pgettext_lazy("payment type", "Cash")
    PROMOSYON = "PROMOSYON", pgettext_lazy("payment type", "Promotion")
    ULASIMKARTI = "ULASIMKARTI", pgettext_lazy("payment type", "Transport card")
    DIGER = "DIGER", pgettext_lazy("payment type", "Other")


class TicketKind(models.TextChoices):
    """Our name of the two kinds, used by exports and reports."""

    EVENT = "event", _("Event tickets")
    PASSENGER = "passenger", _("Passenger tickets")


# Provinces of Türkiye by plate code (eventCityId is the plate code, 1 to 81). Proper names: not translated.
PROVINCES = {
    1: "Adana", 2: "Adıyaman", 3: "Afyonkarahisar", 4: "Ağrı", 5: "Amasya", 6: "Ankara", 7: "Antalya",
    8: "Artvin", 9: "Aydın", 10: "Balıkesir", 11: "Bilecik", 12: "Bingöl", 13: "Bitlis", 14: "Bolu",
    15: "Burdur", 16: "Bursa", 17: "Çanakkale", 18: "Çankırı", 19: "Çorum", 20: "Denizli", 21: "Diyarbakır",
    22: "Edirne", 23: "Elazığ", 24: "Erzincan", 25: "Erzurum", 26: "Eskişehir", 27: "Gaziantep", 28: "Giresun",
    29: "Gümüşhane", 30: "Hakkâri", 31: "Hatay", 32: "Isparta", 33: "Mersin", 34: "İstanbul", 35: "İzmir",
    36: "Kars", 37: "Kastamonu", 38: "Kayseri", 39: "Kırklareli", 40: "Kırşehir", 41: "Kocaeli", 42: "Konya",
    43: "Kütahya", 44: "Malatya", 45: "Manisa", 46: "Kahramanmaraş", 47: "Mardin", 48: "Muğla", 49: "Muş",
    50: "Nevşehir", 51: "Niğde", 52: "Ordu", 53: "Rize", 54: "Sakarya", 55: "Samsun", 56: "Siirt", 57: "Sinop",
    58: "Sivas", 59: "Tekirdağ", 60: "Tokat", 61: "Trabzon", 62: "Tunceli", 63: "Şanlıurfa", 64: "Uşak",
    65: "Van", 66: "Yozgat", 67: "Zonguldak", 68: "Aksaray", 69: "Bayburt", 70: "Karaman", 71: "Kırıkkale",
    72: "Batman", 73: "Şırnak", 74: "Bartın", 75: "Ardahan", 76: "Iğdır", 77: "Yalova", 78: "Karabük",
    79: "Kilis", 80: "Osmaniye", 81: "Düzce",
}

_TR_ALPHABET = "abcçdefgğhıijklmnoöprsştuüvyz"


def _turkish_key(name: str):
    lowered = name.replace("I", "ı").replace("İ", "i").lower()
    return [_TR_ALPHABET.index(c) if c in _TR_ALPHABET else 100 + ord(c) for c in lowered]


def province_choices():
    """(plate code, "Name (code)") sorted by name in Turkish alphabetical order: the user picks by name."""
    return [(code, f"{name} ({code:02d})") for code, name in sorted(PROVINCES.items(),
                                                                     key=lambda item: _turkish_key(item[1]))]
