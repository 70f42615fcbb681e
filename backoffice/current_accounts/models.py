"""Current accounts (cari hesaplar) as the platform keeps them (document 3, 2.1 to 2.5): the account,
its addresses, bank records and contacts, and its mappings to sub-accounts of the chart of accounts.

Every record here is mirrored (RemoteRecord): edited locally, pushed by core.resources, and read back
from the platform. A child's pending_action "delete" is a deletion on its way; the row goes when the
platform has done it, and stays with the platform's Error when it refused.
"""

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from backoffice.core.fields import MONEY
from backoffice.core.models import RemoteRecord, made_by, record_indexes
from backoffice.core.search import FoldedSearchField


def _unique_remote(name):
    return models.UniqueConstraint(fields=["company", "remote_id"], condition=~Q(remote_id=""), name=name)


class CurrentAccount(RemoteRecord):
    remote_id = models.CharField(_("platform id"), max_length=64, blank=True, db_index=True)
    branch_id = models.BigIntegerField(_("branch id"), null=True, blank=True,
                                       help_text=_("Only when the company uses branches."))
    name = models.CharField(_("name or title"), max_length=500)
    identifier = models.CharField(_("tax or national id"), max_length=11,
                                  help_text=_("VKN (10 digits) or TCKN (11 digits)."))
    code = models.CharField(_("account code"), max_length=50, blank=True,
                            help_text=_("Tells apart two accounts with the same tax or national id; it goes with the "
                                        "account on every invoice and dispatch note."))
    surname = models.CharField(_("surname"), max_length=250, blank=True,
                               help_text=_("Required for a person (an 11-digit national id)."))
    tax_office = models.CharField(_("tax office"), max_length=150, blank=True)
    maturity = models.PositiveIntegerField(_("payment term (days)"), null=True, blank=True)
    mersis_number = models.CharField(_("MERSIS number"), max_length=50, blank=True)
    registration_number = models.CharField(_("trade registry number"), max_length=50, blank=True)
    professional_chamber = models.CharField(_("professional chamber"), max_length=250, blank=True)
    chamber_registration_number = models.CharField(_("chamber registration number"), max_length=50, blank=True)
    total_balance = models.DecimalField(_("balance"), null=True, blank=True, **MONEY)
    is_used = models.BooleanField(_("used in documents"), default=False)
    # When the whole account and its child lists were last read from the platform (the list has less).
    details_read_at = models.DateTimeField(_("details read at"), null=True, blank=True)
    created_by = made_by()
    # What the list's search and find_accounts() look in, folded the Turkish way (core.search).
    search_text = FoldedSearchField(sources=("name", "surname", "identifier", "code"))

    class Meta(RemoteRecord.Meta):
        ordering = ["name", "id"]
        verbose_name = _("current account")
        verbose_name_plural = _("current accounts")
        constraints = [
            _unique_remote("ca_account_unique_remote"),
        ]
        # "Two accounts cannot share an identifier unless distinguished by code" (2.1) is checked by the
        # service, not by a constraint: the platform's list has no code, so mirrored twins arrive without one.
        indexes = [*record_indexes("ca_account"),
                   models.Index(fields=["company", "name", "id"], name="ca_account_co_name"),
                   models.Index(fields=["company", "identifier"], name="ca_account_co_identifier")]

    def __str__(self):
        label = f"{self.name} {self.surname}".strip()
        return f"{label} ({self.code})" if self.code else label

    @property
    def is_person(self) -> bool:
        return len(self.identifier or "") == 11


class AccountChild(RemoteRecord):
    """What addresses, bank records, contacts and mappings share: their account and branch."""

    remote_id = models.CharField(_("platform id"), max_length=64, blank=True, db_index=True)
    current_account = models.ForeignKey(CurrentAccount, on_delete=models.CASCADE, related_name="%(class)s_set",
                                        verbose_name=_("current account"))
    branch_id = models.BigIntegerField(_("branch id"), null=True, blank=True)

    # The endpoint-table part (current_account_<part>.*) of this kind of child, and the field that names one
    # (its label here, and how the platform's record of a lost create is found again).
    part = ""
    label_field = ""

    class Meta(RemoteRecord.Meta):
        abstract = True
        ordering = ["id"]

    def __str__(self):
        return getattr(self, self.label_field)


class DefaultChild(AccountChild):
    """Addresses and bank records: one of them is the account's default (2.2, 2.3)."""

    is_default = models.BooleanField(_("default"), default=False)

    class Meta(AccountChild.Meta):
        abstract = True


class Address(DefaultChild):
    part, label_field = "address", "address_name"
    address_name = models.CharField(_("address name"), max_length=250)
    sub_division_name = models.CharField(_("district"), max_length=100)
    city = models.CharField(_("city"), max_length=100)
    country = models.CharField(_("country"), max_length=100, default="Türkiye")
    region = models.CharField(_("neighbourhood"), max_length=100, blank=True)
    street_name = models.CharField(_("street"), max_length=100, blank=True)
    building_name = models.CharField(_("building name"), max_length=100, blank=True)
    building_number = models.CharField(_("building number"), max_length=100, blank=True)
    door_number = models.CharField(_("door number"), max_length=100, blank=True)
    postal_zone = models.CharField(_("postal code"), max_length=100, blank=True)
    email_address = models.CharField(_("e-mail address"), max_length=250, blank=True)
    fax_number = models.CharField(_("fax number"), max_length=11, blank=True)
    phone_number = models.CharField(_("phone number"), max_length=11, blank=True)
    web_site = models.CharField(_("web site"), max_length=250, blank=True)

    class Meta(DefaultChild.Meta):
        verbose_name = _("address")
        verbose_name_plural = _("addresses")
        indexes = record_indexes("ca_address")
        constraints = [_unique_remote("ca_address_unique_remote")]


class Bank(DefaultChild):
    part, label_field = "bank", "name"
    name = models.CharField(_("name"), max_length=100)
    bank_name = models.CharField(_("bank"), max_length=100, blank=True)
    bank_branch_name = models.CharField(_("bank branch"), max_length=100, blank=True)
    bank_account_number = models.CharField(_("account number"), max_length=50, blank=True)
    iban_number = models.CharField(_("IBAN"), max_length=26, blank=True)
    receiver_name = models.CharField(_("account holder"), max_length=100, blank=True)
    type = models.CharField(_("account type"), max_length=100, blank=True)

    class Meta(DefaultChild.Meta):
        verbose_name = _("bank record")
        verbose_name_plural = _("bank records")
        indexes = record_indexes("ca_bank")
        constraints = [_unique_remote("ca_bank_unique_remote")]


class Contact(AccountChild):
    part, label_field = "contact", "full_name"
    full_name = models.CharField(_("full name"), max_length=100)
    phone_number = models.CharField(_("phone number"), max_length=11, blank=True)
    email_address = models.CharField(_("e-mail address"), max_length=250, blank=True)

    class Meta(AccountChild.Meta):
        verbose_name = _("contact")
        verbose_name_plural = _("contacts")
        indexes = record_indexes("ca_contact")
        constraints = [_unique_remote("ca_contact_unique_remote")]


class Mapping(AccountChild):
    """A current account mapped to a sub-account of the chart (2.5)."""

    part, label_field = "mapping", "name"
    account = models.ForeignKey("chart_of_accounts.Account", on_delete=models.PROTECT, related_name="mappings",
                                verbose_name=_("sub-account"))
    name = models.CharField(_("description"), max_length=250, blank=True)

    class Meta(AccountChild.Meta):
        verbose_name = _("account mapping")
        verbose_name_plural = _("account mappings")
        indexes = record_indexes("ca_mapping")
        constraints = [_unique_remote("ca_mapping_unique_remote"),
                       # Never the same sub-account twice to one current account (2.5).
                       models.UniqueConstraint(fields=["current_account", "account"], name="ca_mapping_unique_pair")]

    def __str__(self):
        return self.name or str(self.account)

