"""The company's chart of accounts as the platform keeps it (document 3, 2.7 and 4.3): main accounts
(kebir), group accounts and sub-accounts (muavin) in a tree, each sub-account in one currency.

full_code is ours: the account's own code, written once for the tree's order and for "an account cannot be
added twice" (a main account's code is its baseCode; a group or sub-account's is its parent's code, a dot and
its unitCode).
"""

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from backoffice.core.models import RemoteRecord, record_indexes
from backoffice.core.search import FoldedSearchField

from .choices import AccountType, currency_code

SEPARATOR = "."


def full_code(type, base_code="", code="", unit_code="") -> str:
    """An account's own code from the platform's fields; a platform that already sends the whole code in
    `code` (ending with the unit code) is read as it is."""
    if type == AccountType.MAIN or not unit_code:
        return code or base_code
    if code.endswith(SEPARATOR + unit_code):
        return code
    return f"{code}{SEPARATOR}{unit_code}"


class Account(RemoteRecord):
    remote_id = models.CharField(_("platform id"), max_length=64, blank=True, db_index=True)
    type = models.PositiveSmallIntegerField(_("account type"), choices=AccountType.choices)
    base_code = models.CharField(_("main account code"), max_length=50,
                                 help_text=_("The main account (kebir) this account belongs to, e.g. 120."))
    name = models.CharField(_("account name"), max_length=250)
    parent = models.ForeignKey("self", on_delete=models.PROTECT, null=True, blank=True, related_name="children",
                               verbose_name=_("parent account"))
    parent_remote_id = models.CharField(_("parent's platform id"), max_length=64, blank=True)
    code = models.CharField(_("parent account code"), max_length=50, blank=True,
                            help_text=_("For group and sub-accounts: the code of the parent account."))
    unit_code = models.CharField(_("unit code"), max_length=50, blank=True,
                                 help_text=_("The part that tells this account from its parent, e.g. 001."))
    is_bundle_account = models.BooleanField(
        _("pool account"), default=False,
        help_text=_("Sub-accounts only: a pool account can be mapped to several current accounts."))
    currency_code_id = models.PositiveIntegerField(_("currency"), null=True, blank=True)
    has_child = models.BooleanField(_("has sub-accounts"), default=False)
    full_code = models.CharField(_("account code"), max_length=160)
    search_text = FoldedSearchField(sources=("full_code", "name"))

    class Meta(RemoteRecord.Meta):
        ordering = ["full_code", "id"]
        verbose_name = _("chart account")
        verbose_name_plural = _("chart of accounts")
        constraints = [
            models.UniqueConstraint(fields=["company", "remote_id"], condition=~Q(remote_id=""),
                                    name="coa_account_unique_remote"),
            # "An account already added cannot be added again" (4.3).
            models.UniqueConstraint(fields=["company", "full_code"], name="coa_account_unique_code"),
        ]
        indexes = [*record_indexes("coa_account"),
                   models.Index(fields=["company", "full_code"], name="coa_account_co_code"),
                   models.Index(fields=["company", "parent_remote_id"], name="coa_account_co_parent")]

    def __str__(self):
        return f"{self.full_code} {self.name}"

    def save(self, *args, **kwargs):
        self.full_code = full_code(self.type, self.base_code, self.code, self.unit_code)
        super().save(*args, **kwargs)

    @property
    def currency(self) -> str:
        return currency_code(self.currency_code_id)

    @property
    def level(self) -> int:
        return self.full_code.count(SEPARATOR)
