"""The tax authority's list of dispatch-note users and their mailboxes, as the sandbox keeps it (document 3, 2.9),
with the taxpayer-list operation of the dispatch service.

Choices where the documents say "not shown": VKN 1234567890 with two mailboxes, TCKN 10000000146 and VKN 4840000006
with one each, and 50 others (every tenth a person with a TCKN), the same for every customer; AppType 3 (an
e-dispatch mailbox, as the invoice service's list has it). The ZIP holds one file, users.json: a UTF-8 byte-order
mark, then the JSON array. The sandbox's customers themselves are not on the list: a note to one of them is sent
to the generic recipient alias.
"""

import codecs
import hashlib
import json

from django.http import HttpResponse
from stdnum.tr import tckimlik, vkn

from ..api import Call, operation
from . import exports

GENERIC_ALIAS = "urn:mail:irsaliyepk@gib.gov.tr"  # the generic recipient alias for receivers that are no users

DISPATCH_APP = 3
TITLE_WORDS = ("Anadolu", "Marmara", "Ege", "Toros", "Karadeniz", "Yıldız", "Çınar", "Güneş", "Doğu", "Kuzey")
TITLE_TRADES = ("Lojistik", "Gıda", "Tekstil", "İnşaat", "Makine", "Kimya", "Tarım")
PERSON_NAMES = (("Ayşe", "Yılmaz"), ("Mehmet", "Kaya"), ("Zeynep", "Demir"), ("Ali", "Şahin"), ("Elif", "Çelik"))


def _generated(kind: str, index: int) -> str:
    """A valid VKN or TCKN (check digits included) decided by the index."""
    digest = int.from_bytes(hashlib.sha256(f"dispatch-user:{kind}:{index}".encode()).digest()[:8], "big")
    base = str(digest % 900_000_000 + 100_000_000)
    return base + (vkn.calc_check_digit(base) if kind == "VKN" else tckimlik.calc_check_digits(base))


def _directory() -> tuple[dict, ...]:
    def user(identifier, title, alias):
        return {"Identifier": identifier, "Title": title, "Alias": alias, "AppType": DISPATCH_APP}

    items = [user("1234567890", "Örnek Ticaret A.Ş.", alias) for alias in (
        "urn:mail:irsaliyepk@ornek.com.tr", "urn:mail:irsaliye2pk@ornek.com.tr")]
    items.append(user("10000000146", "Ahmet Yılmaz", "urn:mail:irsaliyepk@ahmetyilmaz.com.tr"))
    # The examples' e-archive customer (document 4) as a user with one mailbox, for the back office's tests.
    items.append(user("4840000006", "Tek Kutu Lojistik A.Ş.", "urn:mail:irsaliyepk@tekkutu.com.tr"))
    for index in range(1, 51):
        if index % 10 == 0:
            first, last = PERSON_NAMES[index // 10 - 1]
            identifier, title = _generated("TCKN", index), f"{first} {last}"
        else:
            identifier = _generated("VKN", index)
            title = f"{TITLE_WORDS[index % 10]} {TITLE_TRADES[index % 7]} {index:02d} A.Ş."
        items.append(user(identifier, title, f"urn:mail:irsaliyepk@kullanici{index:02d}.com.tr"))
    return tuple(items)


DIRECTORY = _directory()
ALIASES: dict[str, list[str]] = {}
for _item in DIRECTORY:
    ALIASES.setdefault(_item["Identifier"], []).append(_item["Alias"])
TITLES = {item["Identifier"]: item["Title"] for item in DIRECTORY}


def alias_problem(identifier: str, alias: str) -> str | None:
    """Why a mailbox cannot receive the note: one listed for a user, the generic recipient alias for others."""
    listed = ALIASES.get(identifier)
    if listed and alias not in listed:
        return (f"'{alias}' is not a dispatch mailbox of {identifier} (its mailboxes: {', '.join(listed)}).")
    if not listed and alias != GENERIC_ALIAS:
        return (f"{identifier} is not a dispatch-note user (not in the taxpayer list): send the generic recipient "
                f"alias {GENERIC_ALIAS} (got '{alias}').")
    return None


def taxpayer_zip() -> bytes:
    return exports.archive({"users.json": codecs.BOM_UTF8 + json.dumps(list(DIRECTORY), ensure_ascii=False)
                            .encode("utf-8")})


@operation("dispatch", "GET", "/v1/gibuser/recipient/zip")
def taxpayer_list(call: Call):
    """The ZIP itself (not wrapped), as the invoice service's taxpayer list is answered."""
    response = HttpResponse(taxpayer_zip(), content_type="application/zip")
    response["Content-Disposition"] = 'attachment; filename="users.zip"'
    return response
