"""The dispatch note pages, checked as every model's are (tests/viewcases.py)."""

from backoffice.core.roles import EDITORS, EVERYONE
from backoffice.dispatch.models import DispatchNote
from tests.viewcases import ModelViewCase


class TestDispatchNoteViews(ModelViewCase):
    model = DispatchNote
    rights = {"list": EVERYONE, "detail": EVERYONE, "add": EDITORS, "edit": EDITORS}

    @staticmethod
    def make(company):
        return DispatchNote.objects.create(company=company, receiver_name=f"Alıcı {company.pk}")

