"""The e-ledger's pages, checked as every model's are (tests/viewcases.py)."""

from datetime import date

from django.core.files.base import ContentFile

from backoffice.core.roles import EDITORS, EVERYONE
from backoffice.ledger.models import Journal, Period
from tests.viewcases import ModelViewCase


class TestPeriodViews(ModelViewCase):
    model = Period
    rights = {"list": EVERYONE, "detail": EVERYONE}

    @staticmethod
    def make(company):
        return Period.objects.create(company=company, remote_id=f"P-{company.pk}", fiscal_year_start=date(2026, 1, 1),
                                     fiscal_year_end=date(2026, 12, 31))


class TestJournalViews(ModelViewCase):
    model = Journal
    rights = {"list": EVERYONE, "detail": EVERYONE, "add": EDITORS}

    @staticmethod
    def make(company):
        journal = Journal(company=company, start_date=date(2026, 3, 1), end_date=date(2026, 3, 31),
                          source_kind="txt", source_name="mart.txt")
        journal.source.save("mart.txt", ContentFile(b"Y|2026-01-01\n"), save=False)
        journal.save()
        return journal
