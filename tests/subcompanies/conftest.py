import random
import time

import django_rq
import pytest
from stdnum.tr import tckimlik, vkn

from backoffice.subcompanies import services
from backoffice.subcompanies.models import UsageSnapshot
from tests.testapp.testing import Queues, _empty

# Rate-limit windows shrunk the same way in the sandbox and in our limiter: the report's 15 minutes
# become 0.45 s (ours 0.95 s with the limiter's 0.5 s safety margin), so a test can fetch several reports.
SCALE = 0.0005
# The browser tests watch the refresh button wait: a window long enough to see (1.8 s, ours 2.3 s).
PAGE_SCALE = 0.002


def new_vkn() -> str:
    """A tax number with a valid check digit, fresh for each call (the sandbox's state outlives a test)."""
    first = f"{random.randrange(1, 10)}{random.randrange(10**7, 10**8):08d}"
    return first + vkn.calc_check_digit(first)


def new_tckn() -> str:
    first = f"{random.randrange(1, 10)}{random.randrange(10**7, 10**8):08d}"
    return first + tckimlik.calc_check_digits(first)


def bad_check_digit(number: str) -> str:
    return number[:-1] + str((int(number[-1]) + 1) % 10)


def subcompany_data(**fields):
    return {"identifier": new_vkn(), "name": "Alt Şirket A.Ş.", "quantity": 1000, "contact_full_name": "Ayşe Yılmaz",
            "contact_email": "ayse@example.com", "contact_phone": "5321234567", **fields}


@pytest.fixture
def rq_queue():
    queue = django_rq.get_queue("default")
    _empty(queue)
    yield Queues(queue)
    _empty(queue)


@pytest.fixture
def run_jobs(rq_queue, django_capture_on_commit_callbacks):
    """run_jobs(): run every job on the queue here, as a worker would, until none is left (jobs that
    defer themselves go to the schedule and are not run)."""

    def run():
        ran = 0
        for _ in range(100):
            jobs = rq_queue.get_jobs()
            if not jobs:
                return ran
            for job in jobs:
                rq_queue.remove(job)
                with django_capture_on_commit_callbacks(execute=True):
                    job.func(*job.args, **job.kwargs)
                ran += 1
        raise AssertionError("jobs keep enqueuing jobs")

    return run


@pytest.fixture
def on_commit(django_capture_on_commit_callbacks):
    """Wrap a service call so that its after-commit enqueue happens (tests run inside a transaction)."""

    def call(function, **kwargs):
        with django_capture_on_commit_callbacks(execute=True):
            return function(**kwargs)

    return call


@pytest.fixture
def fast_windows(settings, sandbox):
    settings.RATE_LIMIT_SCALE = SCALE
    sandbox.configure(rate_limit_scale=SCALE)


@pytest.fixture
def crm_company(make_sandbox_company, sandbox, fast_windows):
    """A distributor on the sandbox whose creations are processed at once, with short report windows."""
    company = make_sandbox_company(credits=50_000, name="Dağıtıcı A.Ş.")
    sandbox.control("POST", "crm/settings", {"customer_unique_id": str(company.customer_unique_id),
                                             "creation_delay_seconds": 0})
    return company


@pytest.fixture
def refresh(run_jobs, on_commit):
    """refresh(company): wait until the report window opens, then fetch the report through its job."""

    def fetch(company, timeout=10):
        deadline = time.monotonic() + timeout
        while (wait := services.report_wait_seconds(company)) and time.monotonic() < deadline:
            time.sleep(min(wait, 0.2))
        run = on_commit(services.usage_report_request, company=company)
        run_jobs()
        run.refresh_from_db()
        assert run.status == "succeeded", run.message
        return UsageSnapshot.objects.filter(company=company).first()

    return fetch


@pytest.fixture
def active_subcompany(crm_company, on_commit, run_jobs, refresh):
    """A sub-company created through the sandbox and already shown by a report."""

    def make(**fields):
        record = on_commit(services.create_subcompany, company=crm_company, **subcompany_data(**fields))
        run_jobs()
        refresh(crm_company)
        record.refresh_from_db()
        assert record.remote_id, record.last_error
        return record

    return make


@pytest.fixture
def admin_client(client, administrator):
    client.force_login(administrator)
    return client
