"""Credentials that cannot be sent, refusals of the platform by source, and the connection check of
backoffice.remote.connection, over real HTTP: the sandbox, and a small local server for answers the
sandbox never gives (a 403, a proxy's HTML page)."""

import copy
import datetime
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from backoffice.core.models import RemoteCall
from backoffice.core.platform import client_for, transport_for
from backoffice.remote import connection
from backoffice.remote.errors import (
    CREDENTIALS,
    LOCAL,
    NETWORK,
    PERMISSION,
    PLATFORM,
    AuthenticationFailed,
    CredentialsUnsendable,
    NoAnswer,
    RemoteError,
)
from backoffice.remote.tickets import EventTicketClient
from backoffice.remote.transport import printable_ascii

TODAY = datetime.date(2026, 11, 24)


def requests_seen(sandbox):
    return sum(row["count"] for row in sandbox.stats()["requests"])


def check(company):
    return {row.service: row for row in connection.check_connection(transport_for(company, interactive=True),
                                                                    today=TODAY)}


def point(settings, service, url):
    """The sandbox environment's URL of one service (an operator's setting, trusted) pointed elsewhere."""
    environments = copy.deepcopy(settings.PLATFORM_ENVIRONMENTS)
    environments["sandbox"][service] = url
    settings.PLATFORM_ENVIRONMENTS = environments


def dead_url():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}/ticket"


@pytest.fixture
def stranger():
    """A server that answers every request the same way: {status, content_type, body} set by the test."""
    answer = {"status": 200, "content_type": "text/html", "body": b"<html><body>Login</body></html>"}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(answer["status"])
            self.send_header("Content-Type", answer["content_type"])
            self.send_header("Content-Length", str(len(answer["body"])))
            self.end_headers()
            self.wfile.write(answer["body"])

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    answer["url"] = f"http://127.0.0.1:{server.server_address[1]}"
    yield answer
    server.shutdown()
    server.server_close()


# --- the rule: printable ASCII ---------------------------------------------------------------------------

@pytest.mark.parametrize("value,ok", [
    ("sbx-AbC_123.~", True), ("key with space", True), ("", True),
    ("anahtarş", False), ("ı-key", False), ("key\n", False), ("“quoted”", False), ("tab\tkey", False),
])
def test_printable_ascii(value, ok):
    assert printable_ascii(value) is ok


def test_non_ascii_api_key_is_our_own_clear_error_and_nothing_is_sent(sandbox, sandbox_company):
    sandbox_company.api_key = "sbx-anahtarş"
    with pytest.raises(CredentialsUnsendable) as caught:
        client_for(sandbox_company, EventTicketClient).report(TODAY, 1, 1)
    error = caught.value
    assert error.permanent and error.source == LOCAL and error.field == "api_key" and error.status is None
    assert "API key contains characters that cannot be sent" in error.user_message()
    assert "nothing was sent" in error.user_message()
    assert not isinstance(error, UnicodeError)
    assert requests_seen(sandbox) == 0 and not RemoteCall.objects.exists()


def test_non_ascii_service_password_is_refused_before_asking_for_a_token(sandbox, sandbox_service_user_company):
    sandbox_service_user_company.service_password = "parola-ğüş"
    with pytest.raises(CredentialsUnsendable) as caught:
        client_for(sandbox_service_user_company, EventTicketClient).report(TODAY, 1, 1)
    assert caught.value.field == "service_password" and caught.value.source == LOCAL
    assert sandbox.stats()["tokens_issued"] == 0 and requests_seen(sandbox) == 0


# --- sources of the platform's refusals ------------------------------------------------------------------

def test_wrong_api_key_is_a_refusal_of_the_credentials(sandbox, sandbox_company):
    sandbox_company.api_key = "sbx-wrong-key"
    with pytest.raises(AuthenticationFailed) as caught:
        client_for(sandbox_company, EventTicketClient).report(TODAY, 1, 1)
    assert caught.value.source == CREDENTIALS and caught.value.status == 401 and caught.value.permanent


def test_wrong_service_password_is_a_refusal_of_the_credentials(sandbox, sandbox_service_user_company):
    sandbox_service_user_company.service_password = "not-the-password"
    with pytest.raises(AuthenticationFailed) as caught:
        client_for(sandbox_service_user_company, EventTicketClient).report(TODAY, 1, 1)
    assert caught.value.source == CREDENTIALS and caught.value.operation == "auth.token"


def test_other_refusals_are_the_platforms_and_no_answer_is_the_networks(sandbox, sandbox_company, settings):
    sandbox.add_fault(path="/ticket/*", error_status=422, error_rate=1, remaining=1)
    with pytest.raises(RemoteError) as caught:
        client_for(sandbox_company, EventTicketClient, interactive=True).report(TODAY, 1, 1)
    assert caught.value.source == PLATFORM and caught.value.status == 422
    point(settings, "ticket", dead_url())
    with pytest.raises(RemoteError) as caught:
        client_for(sandbox_company, EventTicketClient, interactive=True).report(TODAY, 1, 1)
    assert caught.value.source == NETWORK and "cannot reach" in str(caught.value)


def test_403_is_a_missing_permission(db, sandbox_company, settings, stranger):
    stranger.update(status=403, content_type="application/json", body=b'{"title": "Forbidden", "detail": "no"}')
    point(settings, "ticket", stranger["url"] + "/ticket")
    with pytest.raises(RemoteError) as caught:
        client_for(sandbox_company, EventTicketClient, interactive=True).report(TODAY, 1, 1)
    assert caught.value.source == PERMISSION and caught.value.permanent


# --- the connection check ----------------------------------------------------------------------------------

def test_check_with_a_good_api_key(sandbox, sandbox_company):
    rows = check(sandbox_company)
    assert list(rows) == ["auth", "ticket", "crm"]
    assert {service: row.outcome for service, row in rows.items()} == {"auth": "ok", "ticket": "ok", "crm": "ok"}
    assert sandbox.stats()["tokens_issued"] == 0


def test_check_with_a_wrong_api_key_stops_at_the_first_refusal(sandbox, sandbox_company):
    sandbox_company.api_key = "sbx-wrong-key"
    rows = check(sandbox_company)
    assert (rows["auth"].outcome, rows["ticket"].outcome, rows["crm"].outcome) == ("credentials", "credentials",
                                                                                   "skipped")
    assert rows["auth"].status == 401
    # The crm read (once per 15 minutes) was not spent on a key already refused.
    assert not RemoteCall.objects.filter(operation="crm.usage_report").exists()


def test_check_with_a_non_ascii_api_key_sends_nothing(sandbox, sandbox_company):
    sandbox_company.api_key = "sbx-ışık"
    rows = check(sandbox_company)
    assert rows["auth"].outcome == "unsendable" and rows["auth"].field == "api_key"
    assert rows["ticket"].outcome == rows["crm"].outcome == "skipped"
    assert requests_seen(sandbox) == 0


def test_check_with_a_service_user_asks_for_a_new_token(sandbox, sandbox_service_user_company):
    client_for(sandbox_service_user_company, EventTicketClient).report(TODAY, 1, 1)  # a token is cached now
    rows = check(sandbox_service_user_company)
    # Company management takes only an API key, which this company has not: not tried, nothing sent there.
    assert [row.outcome for row in rows.values()] == ["ok", "ok", "no_api_key"]
    assert sandbox.stats()["tokens_issued"] == 2  # the cached one was not trusted


def test_check_with_a_wrong_service_password(sandbox, sandbox_service_user_company):
    sandbox_service_user_company.service_password = "not-the-password"
    rows = check(sandbox_service_user_company)
    assert [row.outcome for row in rows.values()] == ["credentials", "skipped", "skipped"]


def test_check_of_an_unreachable_and_a_slow_service(sandbox, sandbox_company, settings):
    sandbox.add_fault(path="/crm/*", timeout_seconds=3, remaining=1)
    settings.PLATFORM_INTERACTIVE_READ_TIMEOUT = 0.5
    point(settings, "ticket", dead_url())
    rows = check(sandbox_company)
    assert (rows["ticket"].outcome, rows["crm"].outcome) == ("unreachable", "timeout")
    assert rows["auth"].outcome == "skipped"  # no read reached the platform: the key is not known to work


def test_check_of_a_403_and_of_an_html_answer(db, sandbox, sandbox_company, settings, stranger):
    stranger.update(status=403, content_type="application/json", body=b'{"title": "Forbidden"}')
    point(settings, "ticket", stranger["url"] + "/ticket")
    rows = check(sandbox_company)
    assert rows["ticket"].outcome == "permission" and rows["ticket"].status == 403
    assert rows["auth"].outcome == "ok"  # the crm read went through
    stranger.update(status=200, content_type="text/html", body=b"<html><body>Proxy login</body></html>")
    rows = check(sandbox_company)
    assert rows["ticket"].outcome == "unexpected"
    assert rows["crm"].outcome == "limited" and rows["crm"].wait > 0  # once per 15 minutes: held back here


def test_outcome_of_a_bug_is_a_row(db):
    row = connection.outcome_of(KeyError("x"), "ticket", "event_ticket.report")
    assert (row.outcome, row.detail) == ("error", "KeyError")
    assert connection.outcome_of(NoAnswer("slow", timed_out=False), "crm").outcome == "unreachable"
