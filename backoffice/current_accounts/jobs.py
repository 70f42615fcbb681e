"""Job entry points of current accounts (thin: the work is in services)."""

from django.utils.translation import gettext_lazy as _

from backoffice.core.jobs import job
from backoffice.core.models import Company

from . import services
from .models import Address, Bank, Contact, CurrentAccount, Mapping


@job(_("Send current account"))
def current_account_push(pk):
    return services.current_account_push(pk)


@job(_("Send address"))
def address_push(pk):
    return services.child_push(Address, pk)


@job(_("Send bank record"))
def bank_push(pk):
    return services.child_push(Bank, pk)


@job(_("Send contact"))
def contact_push(pk):
    return services.child_push(Contact, pk)


@job(_("Send account mapping"))
def mapping_push(pk):
    return services.child_push(Mapping, pk)


@job(_("Read current accounts from the platform"))
def current_accounts_mirror(company_id, full=False):
    company = Company.objects.get(pk=company_id)
    new = services.current_accounts_mirror(company, full=full)
    return _("%(count)s new current account(s) read.") % {"count": new}


@job(_("Read a current account from the platform"))
def current_account_details(pk):
    account = CurrentAccount.objects.select_related("company").get(pk=pk)
    counts = services.account_details_refresh(account)
    return _("Read: %(addresses)s address(es), %(banks)s bank record(s), %(contacts)s contact(s), %(mappings)s "
             "mapping(s).") % {"addresses": counts.get("address", 0), "banks": counts.get("bank", 0),
                               "contacts": counts.get("contact", 0), "mappings": counts.get("mapping", 0)}


@job(_("Read current accounts of every company"))
def current_accounts_mirror_all():
    from backoffice.core.jobs import enqueue_per_company

    return enqueue_per_company(current_accounts_mirror, name="current_accounts_mirror")


@job(_("Import current accounts"))
def current_accounts_import_push(company_id, pks):
    from .imports import push_imported

    return push_imported(company_id, pks)
