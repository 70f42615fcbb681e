"""pytest plugin: the platform sandbox as a real server process, reached over real HTTP.

Fixtures:
- sandbox_server (session): the running server; see SandboxServer for its methods.
- sandbox: the same after reset() (no faults, tokens, request log or rate windows; default settings).
- sandbox_company / sandbox_service_user_company: a sandbox customer plus a core Company pointed at it.
- make_sandbox_company: factory for companies with other credits or auth methods.
"""

import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from urllib.parse import urlsplit

import pytest
import requests

from tests import databases

ROOT = Path(__file__).resolve().parent.parent
SERVICES = ("auth", "ticket", "invoice", "accounting", "ledger", "dispatch", "crm")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class SandboxServer:
    def __init__(self, port: int, control_token: str):
        self.url = f"http://127.0.0.1:{port}"
        self.control_token = control_token
        self.http = requests.Session()
        self.http.trust_env = False  # never through a proxy: the sandbox is on loopback

    def service_url(self, service: str) -> str:
        return f"{self.url}/{service}"

    def control(self, method: str, path: str, json=None, timeout=10):
        path = path if path.startswith("/_control/") else "/_control/" + path.lstrip("/")
        response = self.http.request(method, self.url + path, json=json, timeout=timeout,
                                     headers={"X-Sandbox-Control": self.control_token})
        if not response.ok:
            raise RuntimeError(f"sandbox control {method} {path}: {response.status_code} {response.text}")
        return response.json()

    def reset(self, customers=False):
        return self.control("POST", "reset", {"customers": customers})

    def add_customer(self, name="Acme", credits=1000, api_key=None, username=None, password=None,
                     customer_unique_id=None, listing_permission=None) -> dict:
        body = {"name": name, "credits": credits, "api_key": api_key, "username": username, "password": password,
                "customer_unique_id": customer_unique_id, "listing_permission": listing_permission}
        return self.control("POST", "customers", {k: v for k, v in body.items() if v is not None})

    def add_fault(self, **fields) -> int:
        """A fault rule (fields of FaultRule: path, method, error_rate, error_status, latency_ms,
        latency_jitter_ms, timeout_seconds, timeout_after, after_apply "" / "error" / "drop", storm_429, retry_after,
        expire_tokens, remaining); its id."""
        return self.control("POST", "faults", fields)["id"]

    def clear_faults(self):
        return self.control("DELETE", "faults")

    def configure(self, token_lifetime_seconds=None, rate_limit_scale=None, ticket_processing_seconds=None,
                  ticket_error_rate=None, export_ready_seconds=None, clock_offset_seconds=None, token_max_uses=None):
        """Change sandbox settings (None leaves one as it is; reset() restores the defaults).

        ticket_processing_seconds: a queued ticket settles this long after it was queued (default 5);
        ticket_error_rate: 0..1 share settling to error 40 (default 0); export_ready_seconds: an export
        shows in the history this long after its start (default 3); clock_offset_seconds: added to the
        sandbox's clock (86400 makes a fresh export expire); token_max_uses: a bearer token answers 401
        after this many calls (default 0, no limit).
        """
        return self.control("POST", "settings", {
            "token_lifetime_seconds": token_lifetime_seconds, "rate_limit_scale": rate_limit_scale,
            "ticket_processing_seconds": ticket_processing_seconds, "ticket_error_rate": ticket_error_rate,
            "export_ready_seconds": export_ready_seconds, "clock_offset_seconds": clock_offset_seconds,
            "token_max_uses": token_max_uses,
        })

    def add_report_items(self, kind: str, day, count: int, customer_unique_id=None, api_key=None) -> dict:
        """Bulk report items (kind event_ticket, passenger_ticket or passenger_list) on one day, for tests
        and benchmarks; 100,000 take a few seconds."""
        body = {"kind": kind, "date": str(day), "count": count, "customer_unique_id": customer_unique_id,
                "api_key": api_key}
        return self.control("POST", "tickets/report-items", {k: v for k, v in body.items() if v is not None},
                            timeout=300)

    def stats(self) -> dict:
        return self.control("GET", "stats")


def _sandbox_env(database: Path, control_token: str) -> dict:
    return databases.sandbox_env(database, SANDBOX_CONTROL_TOKEN=control_token)


def _wait_until_up(server: SandboxServer, process, log_path: Path, deadline_seconds=60):
    deadline = time.monotonic() + deadline_seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"sandbox server exited with {process.returncode}:\n{log_path.read_text()}")
        try:
            server.stats()
            return
        except (requests.ConnectionError, RuntimeError):
            time.sleep(0.1)
    raise RuntimeError(f"sandbox server did not answer in {deadline_seconds} s:\n{log_path.read_text()}")


@pytest.fixture(scope="session")
def sandbox_server():
    workdir = Path(tempfile.mkdtemp(prefix="bo-sandbox-"))
    control_token = secrets.token_urlsafe(24)
    env = _sandbox_env(workdir / "sandbox.sqlite3", control_token)
    manage = [sys.executable, str(ROOT / "manage.py")]
    if not databases.copy_sandbox(workdir / "sandbox.sqlite3"):  # a parallel run's template, else migrate
        databases.migrate_sandbox(workdir / "sandbox.sqlite3", env)
    # The port of settings.SANDBOX_URL (tests/services_plugin.py chose it for this process).
    port = urlsplit(os.environ["SANDBOX_URL"]).port or _free_port()
    log_path = workdir / "server.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen([*manage, "sandbox_serve", f"127.0.0.1:{port}"],
                                   cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    server = SandboxServer(port, control_token)
    server.log_path = log_path
    try:
        _wait_until_up(server, process, log_path)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture
def sandbox(sandbox_server):
    sandbox_server.reset()
    return sandbox_server


@pytest.fixture
def make_sandbox_company(db, sandbox):
    """make_sandbox_company(credits=1000, auth_method="api_key", name=None) -> core Company on the sandbox."""
    from django.conf import settings

    from backoffice.core.models import Company

    def make(credits=1000, auth_method="api_key", name=None):
        name = name or f"Sandbox {uuid.uuid4().hex[:8]}"
        fields = {"name": name, "credits": credits}
        company_fields = {"auth_method": auth_method}
        if auth_method == "api_key":
            fields["api_key"] = company_fields["api_key"] = "sbx-" + secrets.token_urlsafe(24)
        else:
            fields["username"] = company_fields["service_username"] = f"svc-{uuid.uuid4().hex[:10]}"
            fields["password"] = company_fields["service_password"] = secrets.token_urlsafe(16)
        customer = sandbox.add_customer(**fields)
        # The sandbox environment's URLs of the settings are this server's (no company override).
        assert settings.PLATFORM_ENVIRONMENTS["sandbox"]["ticket"] == sandbox.service_url("ticket")
        return Company.objects.create(
            name=name, environment="sandbox", customer_unique_id=customer["customer_unique_id"],
            credit_quantity=credits, **company_fields,
        )

    return make


@pytest.fixture
def sandbox_company(make_sandbox_company):
    return make_sandbox_company()


@pytest.fixture
def sandbox_service_user_company(make_sandbox_company):
    return make_sandbox_company(auth_method="service_user")
