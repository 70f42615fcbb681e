from django.utils import translation

from backoffice.core.joblabels import job_label
from backoffice.core.models import JobRun


def test_registered_jobs_have_translated_labels():
    with translation.override("en"):
        assert job_label("event_ticket_push") == "Send event ticket"
        assert str(JobRun(name="usage_report_refresh", status="queued")) == "Refresh the usage report (Queued)"
    with translation.override("tr"):
        assert job_label("event_ticket_push") != "Send event ticket"


def test_unknown_job_falls_back_to_a_readable_name():
    assert job_label("some_new_job") == "Some new job"
