"""The pages of incoming dispatch notes and of our replies, checked as every model's are (tests/viewcases.py)."""

from django.conf import settings
from django.shortcuts import resolve_url

from backoffice.core.generic.registry import model_url
from backoffice.core.roles import EVERYONE
from backoffice.dispatch.api import Answer
from backoffice.dispatch_inbox.choices import ReplyWay
from backoffice.dispatch_inbox.models import DispatchReply, IncomingNote
from tests.viewcases import ModelViewCase


class TestIncomingNoteViews(ModelViewCase):
    model = IncomingNote
    rights = {"list": EVERYONE, "detail": EVERYONE}

    @staticmethod
    def make(company):
        return IncomingNote.objects.create(company=company, remote_id=f"in-{company.pk}")


class TestDispatchReplyViews(ModelViewCase):
    model = DispatchReply
    rights = {"list": EVERYONE}

    @staticmethod
    def make(company):
        note = IncomingNote.objects.create(company=company, remote_id=f"in-{company.pk}")
        return DispatchReply.objects.create(company=company, note=note, way=ReplyWay.PARTIAL, answer=Answer.PARTIAL,
                                            receipt_number=f"IRS2026{company.pk:09d}")

    def test_the_detail_is_the_notes_page_for_every_role_and_another_companys_reply_a_404(self, client, records,
                                                                                          members):
        """A reply is shown on its note's page: its own URL goes there (the anchor of the reply)."""
        own, other = records
        assert client.get(model_url(own, "detail"))["Location"].startswith(resolve_url(settings.LOGIN_URL) + "?next=")
        for role, user in members.items():
            client.force_login(user)
            response = client.get(model_url(own, "detail"))
            if role in {str(allowed) for allowed in EVERYONE}:
                assert response.status_code == 302, role
                assert response["Location"] == f"{model_url(own.note, 'detail')}#reply-{own.pk}"
                assert client.get(model_url(other, "detail")).status_code == 404, role
            else:
                assert response.status_code == 403, role
