"""An answer with a 2xx status whose body carries an Error is the platform's refusal (document 1, section 7:
"null, or Error"), in every client: raised as a permanent RemoteError with the platform's own text, downloads
included. The sandbox answers 200 with an Error on demand: a fault rule with error_status 200."""

import uuid

import pytest

from backoffice.core.models import RemoteCall
from backoffice.core.platform import client_for
from backoffice.remote.accounting import AccountingClient
from backoffice.remote.dispatch import DispatchClient, OutboxExportClient
from backoffice.remote.errors import PLATFORM, RemoteError
from backoffice.remote.tickets import EventTicketClient
from backoffice.remote.transport import refusal_in

pytestmark = pytest.mark.django_db

NOTE_ID = str(uuid.uuid4())


def refuse(sandbox, path, method="*"):
    """Every request on path answers 200 with an Error, nothing applied."""
    sandbox.add_fault(path=path, method=method, error_rate=1.0, error_status=200)


def assert_refused(raised, text):
    error = raised.value
    assert error.permanent and error.source == PLATFORM and error.status == 200
    assert text in error.user_message() and text in str(error)


def test_a_ticket_status_change_answered_200_with_an_error_object_is_refused(sandbox, sandbox_company):
    refuse(sandbox, "/ticket/v1/event-ticket/updatestatuslist", "PUT")
    with pytest.raises(RemoteError) as raised:
        client_for(sandbox_company, EventTicketClient).update_status([NOTE_ID], 20)
    assert_refused(raised, "The sandbox was told to refuse this request.")
    assert raised.value.title == "Injected refusal"
    audit = RemoteCall.objects.get(company=sandbox_company, operation="event_ticket.update_status")
    assert audit.status == 200 and "refuse this request" in audit.error


def test_a_dispatch_status_change_answered_200_with_an_error_is_refused(sandbox, sandbox_company):
    refuse(sandbox, "/dispatch/v2/outboxdespatch/updatestatuslist", "PUT")
    with pytest.raises(RemoteError) as raised:
        client_for(sandbox_company, DispatchClient).update_status([NOTE_ID], 0)
    assert_refused(raised, "Message: The sandbox was told to refuse this request.")


def test_an_accounting_list_answered_200_with_an_error_text_is_refused_not_empty(sandbox, sandbox_company):
    refuse(sandbox, "/accounting/v1/currentaccount", "GET")
    with pytest.raises(RemoteError) as raised:
        client_for(sandbox_company, AccountingClient).current_accounts()
    assert_refused(raised, "The sandbox was told to refuse this request.")


@pytest.mark.parametrize("client_class,path", [
    (EventTicketClient, "/ticket/v1/event-ticket/export/*/download"),
    (OutboxExportClient, "/dispatch/v1/outboxdespatch/export/*/download"),
])
def test_an_excel_download_answered_200_with_an_error_is_refused_not_kept_as_a_zip(sandbox, sandbox_company,
                                                                                  client_class, path):
    refuse(sandbox, path, "GET")
    with pytest.raises(RemoteError) as raised:
        client_for(sandbox_company, client_class).export_download(str(uuid.uuid4()))
    assert_refused(raised, "The sandbox was told to refuse this request.")


def test_a_refusal_after_the_operation_applied_is_raised_too(sandbox, sandbox_company):
    sandbox.add_fault(path="/dispatch/v2/outboxdespatch/updatestatuslist", error_rate=1.0, error_status=200,
                      after_apply="error")
    with pytest.raises(RemoteError) as raised:
        client_for(sandbox_company, DispatchClient).update_status([NOTE_ID], 0)
    assert_refused(raised, "after applying it")


@pytest.mark.parametrize("content", [
    b'{"Error": {"title": "Hata", "detail": "Durum de\xc4\x9fi\xc5\x9ftirilemez."}}',
    b'{"Error": "Fatura muhasebele\xc5\x9ftirilmi\xc5\x9f."}',
    b'{"error": {"Code": 12, "Message": "Excel haz\xc4\xb1r de\xc4\x9fil"}}',
    b'\xef\xbb\xbf  {"Error": "with a byte-order mark"}',  # a download labelled as a file: judged by its bytes
])
def test_what_is_a_refusal(content):
    assert refusal_in(content) is not None


@pytest.mark.parametrize("content", [
    b"", b"null", b"{}", b'{"Error": null}', b'{"Error": ""}', b'{"Error": "  "}', b'{"Error": {}}',
    b'{"Error": {"title": null, "detail": ""}}', b'{"Error": false}', b'{"id": "x", "error": null}',
    b'[{"Error": "in a list item, not the answer"}]', b'"Error"',
    b"PK\x03\x04 a zip", b"%PDF-1.7", b"<html>{\"Error\": 1}</html>", b'{"Response": "UEsDBA=="}',
])
def test_what_is_no_refusal(content):
    assert refusal_in(content) is None
