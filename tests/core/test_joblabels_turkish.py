"""Issue 29: every job's name is shown in the reader's language ("Status refresh" was shown as is). The runs list
and a run's page are rendered in Turkish with a row for every job the product knows, and for rows whose name is
English words (older rows): no English label is left."""

import html
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.urls import reverse
from django.utils import translation

from backoffice.core.joblabels import all_job_labels, job_label
from backoffice.core.models import JobRun
from tests.tickets.conftest import login

pytestmark = pytest.mark.django_db

JOBS = "/jobs/"
ROOT = Path(__file__).resolve().parents[2]
# Rows as older versions left them: English words where the name should be.
OLDER = {"Status refresh": "status_refresh", "Send invoice": "invoice_push", "status refresh": "status_refresh"}


def english(name) -> str:
    with translation.override("en"):
        return job_label(name)


def turkish(name) -> str:
    with translation.override("tr"):
        return job_label(name)


def test_every_job_has_a_turkish_label_different_from_its_english_one():
    labels = all_job_labels()
    assert {"status_refresh", "invoice_push", "journal_check", "current_accounts_import_push"} <= set(labels)
    untranslated = {name: english(name) for name in labels if turkish(name) == english(name)}
    assert not untranslated
    assert turkish("status_refresh") == "Durumları platformdan yeniden oku"


def test_labels_are_found_even_when_the_registering_module_was_never_imported():
    """What a web process sees: Django set up and nothing else imported (no page imported core.refresh, whose job
    is the status refresh); every app's ready() imports its modules that hold jobs, core's its own."""
    code = ("import django; django.setup(); import sys; from django.utils import translation; "
            "from backoffice.core.joblabels import job_label; translation.activate('tr'); "
            "print(job_label('status_refresh')); print('backoffice.core.refresh' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT,
                          env={"DJANGO_SETTINGS_MODULE": "backoffice.settings", **os.environ})
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-2:] == ["Durumları platformdan yeniden oku", "True"]


def test_older_rows_with_english_words_are_shown_in_turkish():
    for words, name in OLDER.items():
        assert turkish(words) == turkish(name) != english(name)


def test_the_runs_list_and_a_runs_page_in_turkish_show_no_english_label(client, accountant, company):
    web = login(client, accountant, company, language="tr")
    names = sorted(all_job_labels()) + list(OLDER)
    runs = [JobRun.objects.create(name=name, company=company, status="succeeded") for name in names]
    assert len(runs) <= 250
    page = html.unescape(web.get(JOBS, {"per_page": 250}).content.decode())
    missing = [name for name in all_job_labels() if turkish(name) not in page]
    assert not missing
    left = sorted({english(name) for name in names if f">{english(name)}<" in page})
    assert not left, left
    for run in runs[:3] + runs[-len(OLDER):]:
        detail = html.unescape(web.get(reverse("core:jobrun_detail", args=[run.pk])).content.decode())
        assert turkish(run.name) in detail and f">{english(run.name)}<" not in detail, run.name
