"""The ticket bodies as they go on the wire, spelled as document 2 (4.1) writes them: the status change
{"Ids", "Status"} (the provider's client too), the cancel {"ids"}. The HTTP session is spied on at its one
point (Session.request); the call still goes to the sandbox."""

from unittest import mock

import pytest

from backoffice.core.platform import client_for
from backoffice.remote.tickets import CANCELLED, DRAFT, QUEUED, EventTicketClient, PassengerTicketClient
from tests.sandbox.test_tickets import event_ticket, passenger_ticket

pytestmark = pytest.mark.django_db


def sent_bodies(spy, suffix):
    return [call.kwargs.get("json") for call in spy.call_args_list if call.args[1].endswith(suffix)]


@pytest.mark.parametrize("client_class, ticket", [(EventTicketClient, event_ticket),
                                                  (PassengerTicketClient, passenger_ticket)])
def test_status_change_and_cancel_bodies_are_spelled_as_document_2(sandbox, sandbox_company, client_class, ticket):
    tickets = client_for(sandbox_company, client_class)
    first, second = tickets.create(ticket(1))["ettn"], tickets.create(ticket(2))["ettn"]
    session = tickets.transport.session
    with mock.patch.object(session, "request", wraps=session.request) as spy:
        tickets.update_status([first], QUEUED)
        tickets.cancel([second])

    assert sent_bodies(spy, "/updatestatuslist") == [{"Ids": [first], "Status": 20}]
    assert sent_bodies(spy, "/cancel") == [{"ids": [second]}]
    # ... and the platform did what they asked.
    assert tickets.get(first)["status"] != DRAFT and tickets.get(second)["status"] == CANCELLED
