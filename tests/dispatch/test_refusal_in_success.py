"""A dispatch status change answered 200 with an Error (document 1, section 7; document 3, 4.5 "null, or
Error") is a refusal: the note keeps the platform's text and its status, the action is not taken as done."""

import pytest
from django.utils import translation

from backoffice.core import actions
from backoffice.dispatch.choices import DispatchStatus
from backoffice.dispatch.models import DispatchNote
from backoffice.remote.errors import RemoteError

from .test_services import listed, new_note, pushed  # noqa: F401 (listed is a fixture)

pytestmark = pytest.mark.django_db


def test_a_send_refused_in_a_200_keeps_the_platforms_text(sandbox, sandbox_company, listed):  # noqa: F811
    note = pushed(new_note(sandbox_company, status=DispatchStatus.DRAFT))
    sandbox.add_fault(path="/dispatch/v2/outboxdespatch/updatestatuslist", method="PUT", error_rate=1.0,
                      error_status=200)
    actions.action_request(DispatchNote, "send", [note])
    with translation.override("en"), pytest.raises(RemoteError):
        actions.action_run(DispatchNote, "send", [note.pk])
    note.refresh_from_db()
    assert "The sandbox was told to refuse this request." in note.last_error
    assert note.last_error_source == "platform" and not note.pending_action
    assert note.remote_status == DispatchStatus.DRAFT
