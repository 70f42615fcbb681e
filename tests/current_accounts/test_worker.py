"""Current accounts through a real `manage.py rqworker --with-scheduler`, the test Redis and the sandbox over
HTTP: an account with its first address and a bank record reaches the platform, a create answered 500
after it took effect is found rather than sent twice, and an import is sent with its progress."""

import io

import pytest
from django.utils import translation
from django.utils.translation import gettext
from openpyxl import Workbook

from backoffice.core.choices import JobStatus, SyncState
from backoffice.core.imports import read
from backoffice.core.models import JobRun
from backoffice.current_accounts import imports, services
from backoffice.current_accounts.models import Bank, CurrentAccount
from backoffice.remote.accounting import condition
from tests.testapp.testing import output, wait_for

from .test_services import ACCOUNT_PATH, VKN, first_address, new_account

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

WORKER_ENV = {"JOB_RETRY_BASE_SECONDS": "1", "JOB_RETRY_MAX_SECONDS": "2", "JOB_MAX_ATTEMPTS": "4",
              "PLATFORM_READ_TIMEOUT": "2", "SYNC_STUCK_AFTER_SECONDS": "60"}


@pytest.fixture(scope="module")
def worker_env():
    return WORKER_ENV


def wait(worker, predicate, message, timeout=40):
    try:
        return wait_for(predicate, timeout=timeout, interval=0.2, message=message)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n--- worker output ---\n{output(worker)[-5000:]}") from None


def synced(model, pk):
    return model.objects.filter(pk=pk, sync_state=SyncState.SYNCED).exists()


def on_platform(company, identifier=VKN):
    return services.accounting_client(company).current_accounts(
        conditions=[condition("Identifier", "eşittir", identifier)])["items"]


def test_an_account_its_address_and_bank_reach_the_platform(worker, sandbox_company):
    account = services.current_account_save(new_account(sandbox_company), address=first_address())
    bank = services.child_save(Bank(current_account=account, name="Ana", iban_number="TR330006100519786457841326"))
    wait(worker, lambda: synced(CurrentAccount, account.pk), "the account to be synced")
    wait(worker, lambda: synced(Bank, bank.pk), "the bank record to be synced (after its account)")
    account.refresh_from_db()
    banks = services.accounting_client(sandbox_company).children("bank", account.remote_id)
    assert [(item["name"], item["isDefault"]) for item in banks] == [("Ana", True)]
    assert account.address_set.get().sync_state == SyncState.SYNCED


def test_a_create_answered_500_after_it_took_effect_is_sent_once(worker, sandbox, sandbox_company):
    sandbox.add_fault(path=ACCOUNT_PATH, method="POST", error_rate=1, after_apply="error", remaining=1)
    account = services.current_account_save(new_account(sandbox_company, code="W1"))
    wait(worker, lambda: synced(CurrentAccount, account.pk), "the account to be found on the platform")
    assert len(on_platform(sandbox_company)) == 1
    run = JobRun.objects.filter(name="current_account_push", status=JobStatus.SUCCEEDED).latest("enqueued_at")
    with translation.override("tr"):  # the worker writes its messages in the site's language
        assert run.message == gettext("Found on the platform; not sent again.")


def test_an_import_is_sent_with_its_progress(worker, sandbox_company, accountant):
    workbook = Workbook()
    sheet = workbook.active
    sheet.append(["Name or title", "Tax or national id", "Account code", "Contact name"])
    for number in range(5):
        sheet.append([f"Firma {number}", VKN, f"K{number}", f"Kişi {number}"])
    data = io.BytesIO()
    workbook.save(data)
    data.seek(0)
    checked = read(data, imports.ACCOUNT_SHEET)
    pks = imports.import_accounts(sandbox_company, checked, accountant)
    assert not checked.errors and len(pks) == 5
    wait(worker, lambda: JobRun.objects.filter(name="current_accounts_import_push",
                                               status=JobStatus.SUCCEEDED).exists(), "the import job to finish")
    run = JobRun.objects.get(name="current_accounts_import_push")
    with translation.override("tr"):
        done = gettext("%(sent)s account(s) sent, %(failed)s refused or left for a retry (see each account).")
    assert run.progress == 100 and run.message == done % {"sent": 5, "failed": 0}
    assert CurrentAccount.objects.filter(pk__in=pks, sync_state=SyncState.SYNCED).count() == 5
    assert len(on_platform(sandbox_company)) == 5
