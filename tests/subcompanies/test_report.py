"""Parsing the usage report (document 1, 2.1), its figures, and the credit forecast."""

from datetime import datetime, timedelta, timezone

import pytest
from django.utils import translation

from backoffice.subcompanies import report, services
from backoffice.subcompanies.choices import Origin, SubCompanyState
from backoffice.subcompanies.models import ReportCustomer, SubCompany

# The database engine matters here (report rows stored and summed): CI's SQLite pass runs these too.
pytestmark = pytest.mark.database

ROOT = "11111111-1111-4111-8111-111111111111"
CHILD = "22222222-2222-4222-8222-222222222222"
GRANDCHILD = "33333333-3333-4333-8333-333333333333"


def node(uid, *, children=(), **fields):
    return {"customerUniqueId": uid, "applicationId": 7, "applicationSource": 1, "applicationStatus": 2,
            "applicationCreateDate": "2026-01-05T10:00:00", "distributors": [], "credits": [], "usages": [],
            "overUsages": [], "subCustomers": list(children), **fields}


BODY = node(ROOT, credits=[{"id": 1, "quantity": 1000}, {"id": 2, "quantity": 500, "isActive": False}],
            usages=[{"quantity": 300}, {"quantity": 50, "productType": 2}], overUsages=[{"quantity": 7}],
            children=[node(CHILD, credits=[{"id": 3, "weird": {"a": [1, 2]}}], usages=[{"amount": 5}],
                           identifier="1234567890", name="Alt A.Ş.",
                           children=[node(GRANDCHILD, credits=[{"id": 4, "quantity": 10}])])])


def test_the_tree_and_the_documented_fields():
    root = report.parse(BODY)
    assert [c.customer_unique_id for c in root.walk()] == [ROOT, CHILD, GRANDCHILD]
    assert [c.depth for c in root.walk()] == [0, 1, 2]
    assert (root.application_id, root.application_source, root.application_status) == (7, 1, 2)
    assert root.application_create_date.tzinfo is not None
    assert [credit_id for credit_id, _ in root.credits] == [1, 2]
    child = root.children[0]
    assert child.extra == {"identifier": "1234567890", "name": "Alt A.Ş."}  # kept, not invented


def test_figures_are_read_from_assumed_fields_or_left_unknown():
    root = report.parse(BODY)
    assert (root.credit_offered, root.credit_used, root.credit_over_used) == (1000, 350, 7)  # inactive not offered
    child = root.children[0]
    assert child.credit_offered is None and child.credit_used is None  # elements without "quantity"
    assert child.credit_over_used == 0  # an empty list: nothing over-used
    assert report.total("nonsense") is None


@pytest.mark.parametrize("body", [[], "x", {"credits": []}, node(ROOT, credits=[{"quantity": 5}]),
                                  node(ROOT, credits=[{"id": "not a number"}])])
def test_a_body_that_is_not_a_report_is_refused(body):
    with pytest.raises(report.ReportError):
        report.parse(body)


def test_unknown_elements_flatten_to_key_value_pairs():
    assert report.flatten({"a": 1, "b": {"c": [True, None]}, "d": [], "e": {}}) == [
        ("a", 1), ("b.c[0]", True), ("b.c[1]", None), ("d", "[]"), ("e", "{}")]


def test_identifiers_are_found_whatever_the_field_is_called():
    assert report.identifiers_in({"taxNumber": "1234567890", "n": 5, "flag": True, "x": {"y": 1}}) == {"1234567890",
                                                                                                      "5"}


T0 = datetime(2026, 3, 1, tzinfo=timezone.utc)


def at(days):
    return T0 + timedelta(days=days)


def test_forecast_at_the_recent_rate():
    result = report.forecast(ROOT, "Acme", [(at(10), 1000, 400), (at(0), 1000, 200), (at(5), 1000, 300)])
    assert result.enough_data and result.points == 3
    assert result.rate_per_day == 20 and result.remaining == 600
    assert result.runs_out_at == at(10 + 30)


@pytest.mark.parametrize("history,reason", [
    ([], "does not give"),
    ([(at(0), 1000, 200)], "Fewer than two"),
    ([(at(0), 1000, 200), (at(3), 1000, 200)], "No credit was used"),
    ([(at(0), 1000, 300), (at(3), 1000, 200)], "No credit was used"),
    ([(at(0), None, 200), (at(3), None, 300)], "does not give"),
])
def test_forecast_says_honestly_when_there_is_not_enough_data(history, reason):
    with translation.override("en"):
        result = report.forecast(ROOT, "Acme", history)
    assert not result.enough_data and reason in result.reason and result.runs_out_at is None


def test_forecast_of_a_very_slow_rate_gives_no_date():
    result = report.forecast(ROOT, "Acme", [(at(0), 10**12, 1), (at(30), 10**12, 2)])
    assert result.enough_data and result.beyond_horizon and result.runs_out_at is None


def test_forecast_of_a_company_already_out_of_credit():
    result = report.forecast(ROOT, "Acme", [(at(0), 1000, 1000)])
    assert result.exhausted and result.remaining == 0 and result.enough_data


def test_snapshot_rows_and_subcompanies(company):
    waiting = SubCompany.objects.create(company=company, identifier="1234567890", name="Alt A.Ş.",
                                        sync_state="synced")
    snapshot = services.snapshot_save(company=company, body=BODY)
    rows = list(ReportCustomer.objects.filter(snapshot=snapshot).order_by("position"))
    assert [(r.depth, r.parent_id) for r in rows] == [(0, None), (1, rows[0].pk), (2, rows[1].pk)]
    assert [c.application_credit_id for c in rows[0].credits.all()] == [1, 2]
    assert rows[1].credits.get().data == {"id": 3, "weird": {"a": [1, 2]}}
    waiting.refresh_from_db()
    assert waiting.remote_id == CHILD and waiting.state == SubCompanyState.ACTIVE and waiting.report_row == rows[1]
    # only direct sub-companies become SubCompany rows; the grandchild stays in the report
    assert SubCompany.objects.count() == 1
    company.refresh_from_db()
    assert str(company.customer_unique_id) == ROOT

    # a second report: the same sub-company, figures updated, nothing duplicated
    later = services.snapshot_save(company=company, body=node(ROOT, children=[node(CHILD, usages=[{"quantity": 9}])]),
                                   fetched_at=snapshot.fetched_at + timedelta(minutes=15))
    waiting.refresh_from_db()
    assert waiting.credit_used == 9 and waiting.last_seen_at == later.fetched_at and waiting.seen_at == snapshot.fetched_at
    assert SubCompany.objects.count() == 1


def test_a_subcompany_found_in_the_report_is_listed(company):
    services.snapshot_save(company=company, body=node(ROOT, children=[node(CHILD, name="Portal Ltd.",
                                                                           identifier="1234567890")]))
    found = SubCompany.objects.get()
    assert (found.origin, found.name, found.identifier, found.remote_id) == (Origin.REPORT, "Portal Ltd.",
                                                                             "1234567890", CHILD)
    assert found.state == SubCompanyState.ACTIVE


def test_the_periodic_refresh_covers_the_companies_that_use_company_management(company, other_company, rq_queue):
    from backoffice.core.models import Company, JobRun

    unused = Company.objects.create(name="Kullanmayan A.Ş.", api_key="key-unused")
    assert services.usage_reports_enqueue() == 0  # nobody has used it yet: the first report is asked for by hand
    services.snapshot_save(company=company, body=node(ROOT))
    SubCompany.objects.create(company=other_company, identifier="1234567890", name="Alt")
    assert services.usage_reports_enqueue() == 2
    assert services.usage_reports_enqueue() == 0  # already queued: not twice
    runs = JobRun.objects.filter(name="usage_report_refresh")
    assert set(runs.values_list("company", flat=True)) == {company.pk, other_company.pk}
    assert not runs.filter(company=unused).exists()
    # A company that sends its documents with a service user and has no API key is not asked (nothing to ask
    # with: company management takes only an API key).
    keyless = Company.objects.create(name="Anahtarsız A.Ş.", auth_method="service_user", service_username="s",
                                     service_password="p")
    SubCompany.objects.create(company=keyless, identifier="1234567891", name="Alt 2")
    assert services.usage_reports_enqueue() == 0 and not runs.filter(company=keyless).exists()


def test_the_periodic_refresh_spreads_the_companies_over_its_interval(company, other_company, rq_queue,
                                                                     django_capture_on_commit_callbacks):
    """Document 1, section 8: scheduled work spread; each company's report at its own offset in the 15 min."""
    import time as clock

    from rq.registry import ScheduledJobRegistry

    from backoffice.core.models import JobRun
    from backoffice.core.schedule import company_offset

    for owner in (company, other_company):
        services.snapshot_save(company=owner, body=node(ROOT))
    before = clock.time()
    with django_capture_on_commit_callbacks(execute=True):
        assert services.usage_reports_enqueue() == 2
    registry = ScheduledJobRegistry(queue=rq_queue)
    for owner in (company, other_company):
        offset = company_offset(owner.pk, services.USAGE_REPORT_INTERVAL)
        run = JobRun.objects.get(name="usage_report_refresh", company=owner)
        if offset:
            at = registry.get_scheduled_time(run.rq_job_id).timestamp()
            assert before + offset - 1 <= at <= clock.time() + offset + 1
    assert company_offset(company.pk, 900) != company_offset(other_company.pk, 900)
