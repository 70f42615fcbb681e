"""An invoice found by its reference (the ettn we gave it) is ours only when its content is (issue 28): a
resend never takes another invoice under our ettn for ours."""

import pytest

from backoffice.core.choices import SyncState
from backoffice.invoices import services
from backoffice.invoices.models import Invoice
from backoffice.remote.errors import RemoteError

from .test_services import english, new_invoice  # noqa: F401 (fixture)

# The database engine matters here (invoice numbers reconciled by queries over the mirror): CI's SQLite pass runs
# these too.
pytestmark = [pytest.mark.django_db, pytest.mark.database]


def test_a_resend_never_takes_another_invoice_under_our_ettn_for_ours(sandbox_company):
    ours = new_invoice(sandbox_company)
    # A database restored from an older backup: the platform holds another invoice under the ettn we gave ours.
    other = services.invoice_body(ours)
    other["description"] = "Portaldan kesilen fatura"
    services.accounting(sandbox_company).save(other)
    Invoice.objects.filter(pk=ours.pk).update(attempts=1)  # a resend: the push looks for it first
    with pytest.raises(RemoteError):
        services.invoice_push(ours.pk)
    ours.refresh_from_db()
    assert ours.sync_state == SyncState.FAILED and not ours.remote_id and not ours.invoice_number
    assert f"another invoice under this invoice's ettn {ours.ettn}" in ours.last_error
    assert "description" in ours.last_error and "enter it again as a new invoice" in ours.last_error


def test_a_resend_takes_its_own_invoice_found_by_ettn(sandbox_company):
    ours = new_invoice(sandbox_company)
    services.accounting(sandbox_company).save(services.invoice_body(ours))  # our save arrived, its answer was lost
    Invoice.objects.filter(pk=ours.pk).update(attempts=1)
    assert services.invoice_push(ours.pk) == "Found on the platform; not sent again."
    ours.refresh_from_db()
    assert ours.sync_state == SyncState.SYNCED and ours.remote_id == ours.ettn
