"""The transport over real HTTP through the sandbox (document 1, sections 5, 7 and 8)."""

import copy
import logging
import socket
import time

import pytest

from backoffice.core.models import RemoteCall
from backoffice.core.platform import client_for
from backoffice.remote.errors import AuthenticationFailed, MaybeSent, RateLimited, RemoteError
from backoffice.remote.invoices import InvoicesClient
from tests.remote.bundle import services_for

INVOICE_ID = "6f1c0a4e-0000-4000-8000-000000000001"
STATUS_PATH = f"/invoice/v2/outboxinvoice/{INVOICE_ID}/status"


def fast(client):
    """Short backoff so that retries do not slow the suite; everything else as client_for made it."""
    client.transport.config.backoff = 0.01
    return client


def seen(sandbox, path, method="GET"):
    """{status: count} of the requests the sandbox received on one path."""
    return {row["status"]: row["count"] for row in sandbox.stats()["requests"]
            if row["path"] == path and row["method"] == method}


def rows(company, operation=None):
    calls = RemoteCall.objects.filter(company=company).order_by("created_at", "id")
    return list(calls.filter(operation=operation) if operation else calls)


def test_api_key_flow(sandbox, sandbox_company):
    client = services_for(sandbox_company)
    status = client.invoices.outbox_status(INVOICE_ID)
    report = client.companies.usage_report()
    pdf, content_type = client.invoices.outbox_pdf(INVOICE_ID)

    assert status["id"] == INVOICE_ID and isinstance(status["status"], int)
    assert report["customerUniqueId"] == str(sandbox_company.customer_unique_id)
    assert pdf.startswith(b"%PDF") and content_type == "application/pdf"
    assert sandbox.stats()["tokens_issued"] == 0
    audit = rows(sandbox_company)
    assert [(r.operation, r.method, r.status) for r in audit] == [
        ("invoice.outbox_status", "GET", 200), ("crm.usage_report", "GET", 200), ("invoice.outbox_pdf", "GET", 200)]
    assert audit[0].service == "invoice" and audit[0].path == f"/v2/outboxinvoice/{INVOICE_ID}/status"
    assert all(r.correlation_id and r.duration_ms >= 0 for r in audit)
    assert INVOICE_ID in audit[0].response_excerpt


def test_bearer_flow_fetches_one_token_for_many_calls(sandbox, sandbox_service_user_company):
    client = services_for(sandbox_service_user_company)
    for _ in range(10):
        assert client.invoices.outbox_status(INVOICE_ID)["id"] == INVOICE_ID
    # A second client of the same company (another job) reuses the process's token.
    client_for(sandbox_service_user_company, InvoicesClient).inbox_status(INVOICE_ID)

    assert sandbox.stats()["tokens_issued"] == 1
    assert seen(sandbox, STATUS_PATH) == {200: 10}
    token_rows = rows(sandbox_service_user_company, "auth.token")
    assert len(token_rows) == 1 and token_rows[0].status == 200 and token_rows[0].method == "POST"
    assert len(rows(sandbox_service_user_company)) == 12


def test_expired_token_is_renewed_once_and_the_call_succeeds(sandbox, sandbox_service_user_company):
    client = services_for(sandbox_service_user_company)
    client.invoices.outbox_status(INVOICE_ID)
    sandbox.add_fault(path="/invoice/*", expire_tokens=True, remaining=1)

    assert client.invoices.outbox_status(INVOICE_ID)["id"] == INVOICE_ID
    assert sandbox.stats()["tokens_issued"] == 2
    assert seen(sandbox, STATUS_PATH) == {200: 2, 401: 1}
    assert [r.status for r in rows(sandbox_service_user_company)] == [200, 200, 401, 200, 200]


def test_short_token_lifetime_renews_before_expiry(sandbox, sandbox_service_user_company):
    sandbox.configure(token_lifetime_seconds=2)  # we keep it 1 s (half of a short lifetime)
    client = services_for(sandbox_service_user_company)
    client.invoices.outbox_status(INVOICE_ID)
    time.sleep(1.2)
    client.invoices.outbox_status(INVOICE_ID)
    assert sandbox.stats()["tokens_issued"] == 2
    assert seen(sandbox, STATUS_PATH) == {200: 2}


def test_persisting_401_fails_clearly_after_one_renewal(sandbox, sandbox_service_user_company):
    sandbox.add_fault(path="/invoice/*", expire_tokens=True)
    client = services_for(sandbox_service_user_company)
    with pytest.raises(AuthenticationFailed) as caught:
        client.invoices.outbox_status(INVOICE_ID)
    assert caught.value.status == 401 and caught.value.permanent
    assert "401" in str(caught.value) and "service user" in str(caught.value)
    assert sandbox.stats()["tokens_issued"] == 2
    assert seen(sandbox, STATUS_PATH) == {401: 2}


def test_wrong_api_key_fails_clearly_without_retry(sandbox, sandbox_company):
    sandbox_company.api_key = "sbx-not-the-right-key"
    with pytest.raises(AuthenticationFailed, match="API key") as caught:
        client_for(sandbox_company, InvoicesClient).outbox_status(INVOICE_ID)
    assert caught.value.detail == "The API key is not valid." and caught.value.correlation_id
    assert seen(sandbox, STATUS_PATH) == {401: 1}


def test_wrong_service_password_fails_at_the_token_issuer(sandbox, sandbox_service_user_company):
    sandbox_service_user_company.service_password = "not-the-password"
    with pytest.raises(AuthenticationFailed, match="token issuer refused"):
        client_for(sandbox_service_user_company, InvoicesClient).outbox_status(INVOICE_ID)
    assert seen(sandbox, STATUS_PATH) == {}
    assert [(r.operation, r.status) for r in rows(sandbox_service_user_company)] == [("auth.token", 401)]


def test_5xx_on_get_is_retried(sandbox, sandbox_company):
    sandbox.add_fault(path="/invoice/*", method="GET", error_rate=1.0, error_status=503, remaining=1)
    assert fast(services_for(sandbox_company)).invoices.outbox_status(INVOICE_ID)["id"] == INVOICE_ID
    assert seen(sandbox, STATUS_PATH) == {503: 1, 200: 1}
    assert [r.status for r in rows(sandbox_company)] == [503, 200]


def test_5xx_on_get_gives_up_after_max_retries(sandbox, sandbox_company):
    sandbox.add_fault(path="/invoice/*", error_rate=1.0, error_status=502)
    with pytest.raises(RemoteError) as caught:
        fast(services_for(sandbox_company)).invoices.outbox_status(INVOICE_ID)
    assert caught.value.status == 502 and not caught.value.permanent
    assert caught.value.title == "Injected fault"
    assert seen(sandbox, STATUS_PATH) == {502: 4}  # the first try and 3 retries
    assert len(rows(sandbox_company)) == 4


def test_5xx_on_post_is_not_retried(sandbox, sandbox_company):
    sandbox.add_fault(path="/invoice/*", method="POST", error_rate=1.0, error_status=503, remaining=1)
    with pytest.raises(RemoteError) as caught:
        fast(services_for(sandbox_company)).invoices.outbox_status_list([INVOICE_ID])
    assert type(caught.value) is RemoteError
    assert caught.value.status == 503 and not caught.value.permanent
    assert seen(sandbox, "/invoice/v2/outboxinvoice/status", "POST") == {503: 1}


def test_post_read_timeout_is_maybe_sent(sandbox, sandbox_company):
    sandbox.add_fault(path="/invoice/*", method="POST", timeout_seconds=1.5, remaining=1)
    client = services_for(sandbox_company)
    client.transport.config.timeout = (2, 0.5)
    with pytest.raises(MaybeSent) as caught:
        client.invoices.outbox_status_list([INVOICE_ID])
    assert not caught.value.permanent
    audit = rows(sandbox_company)
    assert len(audit) == 1 and audit[0].status is None and "ReadTimeout" in audit[0].error


def test_get_read_timeout_is_retried(sandbox, sandbox_company):
    sandbox.add_fault(path="/invoice/*", method="GET", timeout_seconds=1.5, remaining=1)
    client = fast(services_for(sandbox_company))
    client.transport.config.timeout = (2, 0.5)
    assert client.invoices.outbox_status(INVOICE_ID)["id"] == INVOICE_ID
    assert [r.status for r in rows(sandbox_company)] == [None, 200]


def dead_invoice_service(settings):
    """The sandbox environment's invoice URL (an operator's setting) pointed at a port nobody listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    environments = copy.deepcopy(settings.PLATFORM_ENVIRONMENTS)
    environments["sandbox"]["invoice"] = f"http://127.0.0.1:{port}/invoice"
    settings.PLATFORM_ENVIRONMENTS = environments


def test_post_that_never_connected_is_a_plain_transient_error(db, sandbox_company, settings):
    dead_invoice_service(settings)
    with pytest.raises(RemoteError) as caught:
        client_for(sandbox_company, InvoicesClient).outbox_status_list([INVOICE_ID])
    assert type(caught.value) is RemoteError and not caught.value.permanent
    assert "cannot reach" in str(caught.value)
    assert "ConnectionError" in rows(sandbox_company)[0].error


def test_get_that_cannot_connect_is_retried_then_transient(db, sandbox_company, settings):
    dead_invoice_service(settings)
    with pytest.raises(RemoteError, match="cannot reach") as caught:
        fast(services_for(sandbox_company)).invoices.outbox_status(INVOICE_ID)
    assert not caught.value.permanent
    assert len(rows(sandbox_company)) == 4


def test_429_from_the_platform_carries_retry_after(sandbox, sandbox_company):
    sandbox.add_fault(path="/invoice/*", storm_429=True, retry_after=7, remaining=1)
    with pytest.raises(RateLimited) as caught:
        client_for(sandbox_company, InvoicesClient).outbox_status(INVOICE_ID)
    assert caught.value.wait == 7 and not caught.value.local and caught.value.status == 429
    assert seen(sandbox, STATUS_PATH) == {429: 1}  # a 429 is not retried


def test_local_limiter_holds_the_call_back_without_sending(sandbox, sandbox_company):
    client = services_for(sandbox_company)
    client.companies.usage_report()
    with pytest.raises(RateLimited) as caught:
        client.companies.usage_report()  # 1 per 15 minutes
    assert caught.value.local and 890 < caught.value.wait <= 15 * 60 * 1.02
    assert seen(sandbox, "/crm/v1/sharedpoolusage/report") == {200: 1}
    assert len(rows(sandbox_company)) == 1


def test_4xx_is_permanent_with_the_platforms_message(sandbox, sandbox_company):
    client = services_for(sandbox_company)
    with pytest.raises(RemoteError) as caught:
        client.invoices.inbox_list(pageIndex=0, pageSize=10)
    assert caught.value.status == 422 and caught.value.permanent
    assert caught.value.detail == "pageIndex: pageIndex must be at least 1."
    assert "pageIndex" in rows(sandbox_company)[0].error


def test_no_secret_in_audit_rows_or_log_lines(sandbox, sandbox_company, sandbox_service_user_company, caplog):
    caplog.set_level(logging.DEBUG)
    for name in ("urllib3", "requests", "backoffice"):
        caplog.set_level(logging.DEBUG, logger=name)
    api_client = fast(services_for(sandbox_company))
    bearer_client = fast(services_for(sandbox_service_user_company))
    api_client.invoices.outbox_status(INVOICE_ID)
    bearer_client.invoices.outbox_status(INVOICE_ID)
    bearer_client.invoices.inbox_list(pageIndex=1, pageSize=5)
    sandbox.add_fault(path="/invoice/*", expire_tokens=True, remaining=1)
    bearer_client.invoices.outbox_status(INVOICE_ID)  # 401, new token, retry
    sandbox.add_fault(path="/invoice/*", error_rate=1.0, error_status=500, remaining=1)
    api_client.invoices.outbox_status(INVOICE_ID)
    wrong = services_for(sandbox_company)
    wrong.transport.config.api_key = "sbx-wrong-key-123456"
    with pytest.raises(AuthenticationFailed):
        wrong.invoices.outbox_status(INVOICE_ID)

    tokens = list(bearer_client.transport._seen_tokens)  # the expired one and its renewal
    secrets = {sandbox_company.api_key, sandbox_service_user_company.service_password, "sbx-wrong-key-123456",
               *tokens}
    assert len(tokens) >= 2 and all(len(s) >= 8 for s in secrets)
    audit = list(RemoteCall.objects.all())
    assert len(audit) == 10 and any(r.operation == "auth.token" for r in audit)
    texts = [" ".join(str(getattr(r, f.name)) for f in RemoteCall._meta.fields) for r in audit]
    texts += [record.getMessage() for record in caplog.records] + [caplog.text]
    assert any("urllib3" in record.name for record in caplog.records)  # urllib3 did log at DEBUG
    leaks = [(secret, text) for secret in secrets for text in texts if secret in text]
    assert not leaks
    token_row = RemoteCall.objects.filter(operation="auth.token").first()
    assert "password=***" in token_row.request_excerpt and '"access_token": "***"' in token_row.response_excerpt
