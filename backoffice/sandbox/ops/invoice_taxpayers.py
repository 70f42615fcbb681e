"""The tax authority's list of registered users (e-invoice and e-dispatch mailboxes) as the invoice service
answers it and the invoice rules read it: generated for every customer, plus the users the control action
POST /_control/invoices/taxpayers adds.

Document kind (customer-scoped):
  taxpayer          a user added by POST /_control/invoices/taxpayers: number the identifier, data its list item.
"""

import functools
import hashlib
from datetime import datetime, timedelta

from stdnum.tr import vkn

from ..models import Document

TAXPAYER = "taxpayer"
SANDBOX_USER = "1234567890"
SANDBOX_ALIASES = ("urn:mail:defaultpk@sandbox-musteri.com.tr", "urn:mail:fatura@sandbox-musteri.com.tr")
EINVOICE_APP, DISPATCH_APP = 1, 3  # AppType: e-invoice mailbox, e-dispatch mailbox
TITLE_WORDS = ("Anadolu", "Marmara", "Ege", "Toros", "Karadeniz", "Yıldız", "Çınar", "Güneş", "Doğu", "Kuzey")
TITLE_TRADES = ("Gıda", "Tekstil", "İnşaat", "Lojistik", "Yazılım", "Makine", "Kimya", "Enerji", "Tarım", "Turizm")


def generated_vkn(*parts) -> str:
    """A valid VKN (check digit included) decided by the parts."""
    digest = hashlib.sha256(":".join(map(str, parts)).encode()).digest()
    base = str(int.from_bytes(digest[:8], "big") % 900_000_000 + 100_000_000)
    return base + vkn.calc_check_digit(base)


@functools.lru_cache(maxsize=64)
def generated_taxpayers(customer_unique_id: str) -> tuple[tuple[dict, ...], dict]:
    """(items, {identifier: e-invoice aliases}) of the list every customer starts with: the sandbox's customer
    of the examples (1234567890) with two mailboxes, 180 other e-invoice users and 20 e-dispatch-only users, all
    with VKNs decided by the customer (so 4840000006 and 10000000146, the examples' e-archive customers, are
    not on it)."""

    def user(identifier, title, alias, app_type, index):
        created = datetime(2014, 1, 1) + timedelta(days=index * 11 % 3650, seconds=index * 37)
        return {"Identifier": identifier, "Title": title, "Alias": alias, "AppType": app_type,
                "Type": "Kamu" if index % 25 == 7 else "Özel", "FirstCreationTime": created.isoformat(),
                "AliasCreationTime": (created + timedelta(days=index % 40)).isoformat()}

    items = [user(SANDBOX_USER, "Sandbox Müşteri A.Ş.", alias, EINVOICE_APP, 0) for alias in SANDBOX_ALIASES]
    items.append(user(SANDBOX_USER, "Sandbox Müşteri A.Ş.", "urn:mail:irsaliyepk@sandbox-musteri.com.tr",
                      DISPATCH_APP, 0))
    for index in range(1, 201):
        identifier = generated_vkn(customer_unique_id, "taxpayer", index)
        title = f"{TITLE_WORDS[index % 10]} {TITLE_TRADES[index // 10 % 10]} {index:03d} A.Ş."
        domain = f"mukellef{index:03d}.com.tr"
        if index <= 180:
            items.append(user(identifier, title, f"urn:mail:defaultpk@{domain}", EINVOICE_APP, index))
        if index > 180 or index % 10 == 0:  # an e-dispatch mailbox (AppType 3) alone makes no e-invoice user
            items.append(user(identifier, title, f"urn:mail:irsaliyepk@{domain}", DISPATCH_APP, index))
    aliases = {}
    for item in items:
        if item["AppType"] == EINVOICE_APP:
            aliases.setdefault(item["Identifier"], []).append(item["Alias"])
    return tuple(items), aliases


def taxpayers(customer) -> list[dict]:
    """Every item of the customer's taxpayer list: the generated ones and those added by the control action."""
    added = Document.objects.filter(customer=customer, kind=TAXPAYER).order_by("pk").values_list("data", flat=True)
    return [*generated_taxpayers(str(customer.customer_unique_id))[0], *added]


def einvoice_aliases(customer, identifier: str) -> list[str]:
    """The e-invoice mailboxes (AppType 1) of an identifier; empty when it is no e-invoice user."""
    seeded = generated_taxpayers(str(customer.customer_unique_id))[1].get(identifier, [])
    added = Document.objects.filter(customer=customer, kind=TAXPAYER, number=identifier,
                                    data__AppType=EINVOICE_APP).values_list("data__Alias", flat=True)
    return list(dict.fromkeys([*seeded, *added]))


def title_of(customer, identifier: str) -> str | None:
    for item in generated_taxpayers(str(customer.customer_unique_id))[0]:
        if item["Identifier"] == identifier:
            return item["Title"]
    added = Document.objects.filter(customer=customer, kind=TAXPAYER, number=identifier).first()
    return added.data.get("Title") if added else None
