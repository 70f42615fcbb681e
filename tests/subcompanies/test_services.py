"""The company-management services through the sandbox over HTTP: every operation, rules 1 to 4, and the
report's 15-minute window (which our own jobs never run into)."""

import time

import pytest
import requests
from django.utils import timezone, translation

from backoffice.core import jobs
from backoffice.core.choices import JobStatus, SyncState
from backoffice.core.models import Company, JobRun, RemoteCall
from backoffice.core.platform import client_for
from backoffice.remote.companies import CompaniesClient
from backoffice.remote.errors import ApiKeyRequired, RemoteError
from backoffice.remote.tickets import EventTicketClient
from backoffice.subcompanies import services
from backoffice.subcompanies.choices import OperationKind, Origin, SubCompanyState
from backoffice.subcompanies.models import ReportCustomer, SubCompany, SubCompanyOperation, UsageSnapshot

from tests.testapp.testing import run_rq_job

from .conftest import new_tckn, new_vkn, subcompany_data


def calls(operation):
    return RemoteCall.objects.filter(operation=operation)


def test_creation_waits_for_the_platform_then_appears_with_its_credit(crm_company, sandbox, on_commit, run_jobs,
                                                                      refresh):
    sandbox.control("POST", "crm/settings", {"customer_unique_id": str(crm_company.customer_unique_id),
                                             "creation_delay_seconds": 3})
    data = subcompany_data(identifier=new_tckn(), quantity=750)
    record = on_commit(services.create_subcompany, company=crm_company, **data)
    assert (record.sync_state, record.state) == (SyncState.QUEUED, SubCompanyState.SENDING)
    run_jobs()
    record.refresh_from_db()
    assert (record.sync_state, record.state) == (SyncState.SYNCED, SubCompanyState.WAITING)
    [call] = calls("crm.create_company")
    assert call.status == 202 and data["identifier"] in call.request_excerpt

    refresh(crm_company)  # rule 3: the platform is still processing the creation
    record.refresh_from_db()
    assert record.state == SubCompanyState.WAITING and record.remote_id == ""

    sandbox.configure(clock_offset_seconds=3.5)  # the platform's 3 s go by without waiting for them
    snapshot = refresh(crm_company)
    record.refresh_from_db()
    assert record.state == SubCompanyState.ACTIVE
    row = snapshot.customers.get(depth=1)
    assert record.remote_id == row.customer_unique_id and record.report_row == row
    assert record.seen_at == snapshot.fetched_at
    [credit] = services.report_credits(record)
    assert credit.quantity == 750 and credit.is_active
    assert record.credit_offered == 750
    assert SubCompany.objects.count() == 1  # the waiting record, not a second one found in the report


def test_each_report_is_kept_as_a_snapshot_with_parsed_rows(crm_company, active_subcompany):
    sub = active_subcompany()
    snapshot = UsageSnapshot.objects.filter(company=crm_company).first()
    assert snapshot.raw["customerUniqueId"] == str(crm_company.customer_unique_id)
    root, child = snapshot.customers.order_by("position")
    assert (root.depth, root.parent, child.depth, child.parent) == (0, None, 1, root)
    assert root.application_id and root.application_source == 1 and root.application_create_date
    assert child.customer_unique_id == sub.remote_id and child.extra["identifier"] == sub.identifier
    assert isinstance(child.distributors, list) and child.distributors[0]["customerUniqueId"] == root.customer_unique_id
    assert [c.application_credit_id for c in root.credits.all()] == [c["id"] for c in snapshot.raw["credits"]]
    assert root.credit_offered == 50_000


def test_rule_2_arrives_as_the_platforms_error_on_the_record(crm_company, make_sandbox_company, active_subcompany,
                                                             on_commit, run_jobs):
    taken = active_subcompany()
    rival = make_sandbox_company(name="Rakip Dağıtıcı")
    record = on_commit(services.create_subcompany, company=rival, **subcompany_data(identifier=taken.identifier))
    run_jobs()
    record.refresh_from_db()
    assert (record.sync_state, record.state) == (SyncState.FAILED, SubCompanyState.REFUSED)
    assert "already has an active credit offer" in record.last_error and "rule 2" in record.last_error
    assert JobRun.objects.get(name="subcompany_push", company=rival).status == JobStatus.FAILED


def test_a_known_identifier_is_refused_locally(crm_company, active_subcompany, on_commit):
    sub = active_subcompany()
    with translation.override("en"), pytest.raises(services.Refused, match="already known"):
        services.create_subcompany(company=crm_company, **subcompany_data(identifier=sub.identifier))
    assert SubCompany.objects.count() == 1 and calls("crm.create_company").count() == 1


def test_credit_offer_to_one_company(crm_company, active_subcompany, on_commit, run_jobs, refresh):
    sub = active_subcompany()
    op = on_commit(services.credit_add, company=crm_company, subcompany=sub, quantity=300, show_over_usage=True)
    run_jobs()
    op.refresh_from_db()
    assert (op.kind, op.sync_state, op.last_error) == (OperationKind.ADD_CREDIT, SyncState.SYNCED, "")
    [call] = calls("crm.add_credit")
    assert sub.remote_id in call.path and '"showOverUsage": true' in call.request_excerpt
    refresh(crm_company)
    sub.refresh_from_db()
    assert sorted(c.quantity for c in services.report_credits(sub)) == [300, 1000]


def test_credit_offer_to_several_companies_in_one_batch_call(crm_company, active_subcompany, on_commit, run_jobs,
                                                             refresh):
    one, two = active_subcompany(), active_subcompany()
    op = on_commit(services.credit_add_batch, company=crm_company, subcompanies=[one, two], quantity=40)
    run_jobs()
    op.refresh_from_db()
    assert (op.kind, op.sync_state) == (OperationKind.ADD_CREDIT_BATCH, SyncState.SYNCED)
    [call] = calls("crm.add_credit_batch")
    assert one.remote_id in call.request_excerpt and two.remote_id in call.request_excerpt
    assert len(op.response) == 2 and all(isinstance(item["id"], int) for item in op.response)
    refresh(crm_company)
    for sub in (one, two):
        sub.refresh_from_db()
        assert sorted(c.quantity for c in services.report_credits(sub)) == [40, 1000]


def test_a_company_still_waiting_cannot_get_credit(crm_company, sandbox, on_commit, run_jobs):
    sandbox.control("POST", "crm/settings", {"customer_unique_id": str(crm_company.customer_unique_id),
                                             "creation_delay_seconds": 600})
    waiting = on_commit(services.create_subcompany, company=crm_company, **subcompany_data())
    run_jobs()
    with translation.override("en"), pytest.raises(services.Refused, match="not on the platform yet"):
        services.credit_add(company=crm_company, subcompany=waiting, quantity=5)
    assert not SubCompanyOperation.objects.exists()


def test_rule_1_the_last_active_offer_is_refused_locally_and_by_the_platform(crm_company, active_subcompany,
                                                                             on_commit, run_jobs, refresh):
    sub = active_subcompany()
    [first] = services.report_credits(sub)
    with translation.override("en"), pytest.raises(services.Refused, match="last active offer"):
        services.credit_cancel(company=crm_company, subcompany=sub, application_credit_id=first.application_credit_id)
    assert not SubCompanyOperation.objects.exists() and not calls("crm.cancel_credit").exists()
    # the platform enforces the rule too
    with pytest.raises(RemoteError) as refused:
        client_for(crm_company, CompaniesClient).cancel_credit(sub.remote_id, first.application_credit_id)
    assert refused.value.status == 409 and "rule 1" in refused.value.detail

    # with a second offer (accepted since the report), the first one may go
    on_commit(services.credit_add, company=crm_company, subcompany=sub, quantity=10)
    run_jobs()
    cancel = on_commit(services.credit_cancel, company=crm_company, subcompany=sub,
                       application_credit_id=first.application_credit_id)
    run_jobs()
    cancel.refresh_from_db()
    assert cancel.sync_state == SyncState.SYNCED
    assert calls("crm.cancel_credit").get(status=200).path.endswith(f"/applicationcredits/{first.application_credit_id}")
    with translation.override("en"), pytest.raises(services.Refused, match="already being cancelled"):
        services.credit_cancel(company=crm_company, subcompany=sub, application_credit_id=first.application_credit_id)
    refresh(crm_company)
    sub.refresh_from_db()
    credits = {c.application_credit_id: c.is_active for c in services.report_credits(sub)}
    assert credits[first.application_credit_id] is False and list(credits.values()).count(True) == 1
    [second] = services.active_credits(sub)
    with translation.override("en"), pytest.raises(services.Refused, match="last active offer cannot be cancelled"):
        services.credit_cancel(company=crm_company, subcompany=sub, application_credit_id=second.application_credit_id)


def test_rule_4_products_are_refused_locally_with_the_reason(crm_company, sandbox, active_subcompany, refresh,
                                                             on_commit, run_jobs):
    owner = str(crm_company.customer_unique_id)
    sandbox.control("POST", "crm/sub-customers", {"customer_unique_id": owner, "identifier": new_vkn(),
                                                  "name": "Havuzsuz Ltd.", "pool_product": False, "credit": 100})
    sandbox.control("POST", "crm/sub-customers", {"customer_unique_id": owner, "identifier": new_vkn(),
                                                  "name": "Teklifsiz Ltd."})
    ready = active_subcompany()  # its report shows the two above too
    no_pool = SubCompany.objects.get(name="Havuzsuz Ltd.")
    no_offer = SubCompany.objects.get(name="Teklifsiz Ltd.")
    assert no_pool.origin == Origin.REPORT and no_pool.state == SubCompanyState.ACTIVE

    with translation.override("en"):
        with pytest.raises(services.Refused, match="shared pool product"):
            services.products_add(company=crm_company, subcompany=no_pool, product_types=[2])
        with pytest.raises(services.Refused, match="no credit offer") as refused:
            services.products_add_batch(company=crm_company, subcompanies=[ready, no_offer], product_types=[2])
    assert "Teklifsiz Ltd." in refused.value.message and "Alt Şirket" not in refused.value.message
    assert not SubCompanyOperation.objects.exists()
    # the platform enforces the rule too
    with pytest.raises(RemoteError) as platform:
        client_for(crm_company, CompaniesClient).add_products(no_pool.remote_id, [2])
    assert platform.value.status == 409 and "rule 4" in platform.value.detail

    op = on_commit(services.products_add, company=crm_company, subcompany=ready, product_types=[5, 2])
    run_jobs()
    op.refresh_from_db()
    assert (op.sync_state, op.product_types) == (SyncState.SYNCED, [2, 5])
    assert op.response["productTypes"] == [2, 5]

    # once the company has an offer (accepted since the report), the batch goes through
    on_commit(services.credit_add, company=crm_company, subcompany=no_offer, quantity=25)
    run_jobs()
    batch = on_commit(services.products_add_batch, company=crm_company, subcompanies=[ready, no_offer],
                      product_types=[13])
    run_jobs()
    batch.refresh_from_db()
    assert (batch.kind, batch.sync_state) == (OperationKind.ADD_PRODUCTS_BATCH, SyncState.SYNCED)
    assert calls("crm.add_products_batch").get().status == 200


def test_the_report_window_defers_our_job_and_never_earns_a_429(sandbox, sandbox_company, on_commit, run_jobs,
                                                                rq_queue):
    # Real 15-minute windows (scale 1) on both sides.
    run = on_commit(services.usage_report_request, company=sandbox_company)
    run_jobs()
    run.refresh_from_db()
    assert run.status == JobStatus.SUCCEEDED
    wait = services.report_wait_seconds(sandbox_company)
    assert 880 < wait <= 920
    assert services.report_wait_seconds(sandbox_company) <= wait  # asking does not use a slot

    with translation.override("en"), pytest.raises(services.Refused, match="15 minutes"):
        services.usage_report_request(company=sandbox_company)  # the button: nothing queued
    # the periodic job comes round anyway: it waits for the window instead of calling
    again = on_commit(jobs.enqueue_per_company, func=services.usage_report_refresh, name=services.REFRESH_JOB)
    assert again == 1
    run_jobs()
    deferred = JobRun.objects.filter(name=services.REFRESH_JOB).latest("pk")
    assert deferred.pk != run.pk and deferred.status == JobStatus.DEFERRED
    assert UsageSnapshot.objects.filter(company=sandbox_company).count() == 1
    stats = sandbox.stats()
    report_calls = [row for row in stats["requests"] if row["path"] == "/crm/v1/sharedpoolusage/report"]
    assert report_calls == [{"method": "GET", "path": "/crm/v1/sharedpoolusage/report", "status": 200, "count": 1}]

    # Someone calling past our limiter gets the platform's 429 inside the window.
    http = requests.Session()
    http.trust_env = False
    refused = http.get(sandbox.service_url("crm") + "/v1/sharedpoolusage/report",
                       headers={"x-api-key": sandbox_company.api_key}, timeout=10)
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) > 800


def test_the_company_learns_its_own_customer_unique_id_from_the_report(crm_company, refresh):
    uid = crm_company.customer_unique_id
    Company.objects.filter(pk=crm_company.pk).update(customer_unique_id=None)
    crm_company.refresh_from_db()
    refresh(crm_company)
    crm_company.refresh_from_db()
    assert str(crm_company.customer_unique_id) == str(uid)
    assert ReportCustomer.objects.filter(company=crm_company, depth=0).get().customer_unique_id == str(uid)


def _lost_answer_then_report(crm_company, sub, sandbox, settings, on_commit, run_jobs, refresh, **fault):
    """A credit offer whose answer is lost (the fault), then the reconciliation through the next report."""
    settings.PLATFORM_TIMEOUT = (5, 0.5)
    settings.JOB_RETRY_BASE_SECONDS = 0
    settings.CRM_SETTLE_SECONDS = 0
    refresh(crm_company)  # the report before the request: its offers are known
    sandbox.add_fault(path=f"/crm/v1/crm/customers/{sub.remote_id}/addapplicationcredit", method="POST",
                      remaining=1, **fault)
    op = on_commit(services.credit_add, company=crm_company, subcompany=sub, quantity=5)
    run_jobs()
    op.refresh_from_db()
    assert op.maybe_sent_at is not None and op.sync_state == SyncState.QUEUED  # retried by the runner, later
    run = JobRun.objects.get(name="operation_push")
    assert run.status == JobStatus.RETRYING
    with translation.override("en"):
        on_commit(lambda: run_rq_job(run))  # no report after the request yet: it asks for one and waits
    run.refresh_from_db()
    op.refresh_from_db()
    assert run.status == JobStatus.DEFERRED and "waiting for the next usage report" in run.message
    assert op.sync_state == SyncState.QUEUED
    # A request held by the fault takes effect when the sandbox answers it, timeout_seconds later in real time:
    # the report must come after that (in production CRM_SETTLE_SECONDS, 15 minutes, covers the platform's).
    settles = (op.maybe_sent_at - timezone.now()).total_seconds() + fault.get("timeout_seconds", 0) + 0.3
    time.sleep(max(0.0, settles))
    refresh(crm_company)
    with translation.override("en"):
        result = run_rq_job(run)
    op.refresh_from_db()
    return op, result


def test_a_credit_offer_whose_answer_timed_out_is_found_in_the_next_report(crm_company, active_subcompany, sandbox,
                                                                           settings, on_commit, run_jobs, refresh):
    """The platform took the request but its answer came too late: not sent again, found in the report."""
    sub = active_subcompany()
    op, result = _lost_answer_then_report(crm_company, sub, sandbox, settings, on_commit, run_jobs, refresh,
                                          timeout_seconds=1.5)
    assert result == "Found on the platform; not sent again."
    assert op.sync_state == SyncState.SYNCED
    assert calls("crm.add_credit").count() == 1
    assert len(op.response["newCreditIds"][sub.remote_id]) == 1


@pytest.mark.parametrize("after_apply", ["error", "drop"])
def test_a_credit_offer_answered_500_after_taking_effect_is_not_sent_twice(crm_company, active_subcompany, sandbox,
                                                                           settings, on_commit, run_jobs, refresh,
                                                                           after_apply):
    sub = active_subcompany()
    before = len(services.report_credits(sub))
    op, result = _lost_answer_then_report(crm_company, sub, sandbox, settings, on_commit, run_jobs, refresh,
                                          error_rate=1, error_status=500, after_apply=after_apply)
    assert result == "Found on the platform; not sent again."
    assert calls("crm.add_credit").count() == 1
    sub.refresh_from_db()
    assert len(services.report_credits(sub)) == before + 1  # one offer on the platform, not two


def test_a_credit_offer_refused_with_500_before_taking_effect_is_sent_again_after_the_report(
        crm_company, active_subcompany, sandbox, settings, on_commit, run_jobs, refresh):
    sub = active_subcompany()
    before = len(services.report_credits(sub))
    op, result = _lost_answer_then_report(crm_company, sub, sandbox, settings, on_commit, run_jobs, refresh,
                                          error_rate=1, error_status=500)
    assert result == "Sent to the platform." and op.sync_state == SyncState.SYNCED
    assert calls("crm.add_credit").count() == 2
    refresh(crm_company)
    sub.refresh_from_db()
    assert len(services.report_credits(sub)) == before + 1


def test_a_creation_answered_500_after_taking_effect_is_not_sent_twice(crm_company, sandbox, settings, on_commit,
                                                                       run_jobs, refresh):
    settings.JOB_RETRY_BASE_SECONDS = 0
    settings.CRM_SETTLE_SECONDS = 0
    sandbox.add_fault(path="/crm/v1/crm/customers", method="POST", remaining=1, error_rate=1, error_status=500,
                      after_apply="error")
    record = on_commit(services.create_subcompany, company=crm_company, **subcompany_data(identifier=new_tckn()))
    run_jobs()
    record.refresh_from_db()
    assert record.maybe_sent_at is not None and record.sync_state == SyncState.QUEUED
    run = JobRun.objects.get(name="subcompany_push")
    with translation.override("en"):
        on_commit(lambda: run_rq_job(run))  # waits for a report
    refresh(crm_company)
    with translation.override("en"):
        assert run_rq_job(run) == "Found on the platform; not sent again."
    record.refresh_from_db()
    assert record.sync_state == SyncState.SYNCED and record.remote_id
    assert calls("crm.create_company").count() == 1


def test_a_service_user_company_without_api_key_gets_a_clear_message_and_makes_no_call(
        make_sandbox_company, on_commit):
    company = make_sandbox_company(auth_method="service_user")
    assert not company.api_key
    with translation.override("en"), pytest.raises(services.Refused, match="takes only an API key"):
        on_commit(services.create_subcompany, company=company, **subcompany_data(identifier=new_tckn()))
    with translation.override("en"), pytest.raises(services.Refused, match="takes only an API key"):
        services.usage_report_request(company=company)
    assert not SubCompany.objects.filter(company=company).exists()
    with pytest.raises(ApiKeyRequired):  # and the client itself refuses before sending anything
        client_for(company, CompaniesClient).usage_report()
    assert not RemoteCall.objects.filter(company=company).exists()


def test_a_service_user_company_with_an_api_key_uses_the_key_for_company_management(db, sandbox):
    """Both stored: the documents go with the bearer token, company management with the API key (a bearer
    token there is refused, as document 1, section 5, rule 2 says)."""
    customer = sandbox.add_customer(name="İki Anahtar", credits=50_000, api_key="sbx-both-key", username="svc-both",
                                    password="pw-both-1")
    company = Company.objects.create(name="İki Anahtar", environment="sandbox", auth_method="service_user",
                                     customer_unique_id=customer["customer_unique_id"], credit_quantity=50_000,
                                     api_key="sbx-both-key", service_username="svc-both", service_password="pw-both-1")
    client_for(company, CompaniesClient).usage_report()
    client_for(company, EventTicketClient).list(1, 1)
    [crm_call] = calls("crm.usage_report")
    assert crm_call.status == 200
    assert sandbox.stats()["tokens_issued"] == 1  # the token went to the ticket service only
