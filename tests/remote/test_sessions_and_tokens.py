"""One Session per company and process, and one bearer token per lifetime for the whole deployment
(issue 10: a cached transport per company; issue 11: the token cache shared in Redis), over real HTTP
through the sandbox."""

import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import redis

from backoffice.core import crypto, platform
from backoffice.core.platform import client_for
from backoffice.remote.companies import CompaniesClient
from backoffice.remote.errors import AuthenticationFailed
from backoffice.remote.invoices import InvoicesClient
from backoffice.remote.passenger_lists import PassengerListClient
from backoffice.remote.tickets import EventTicketClient, PassengerTicketClient
from backoffice.remote.tokens import RedisTokenStore, token_key

ROOT = Path(__file__).resolve().parents[2]
INVOICE_ID = "6f1c0a4e-0000-4000-8000-000000000001"
STATUS_PATH = f"/invoice/v2/outboxinvoice/{INVOICE_ID}/status"
WORKERS = 3
CALLS = 2


def seen(sandbox, path, method="GET"):
    return {row["status"]: row["count"] for row in sandbox.stats()["requests"]
            if row["path"] == path and row["method"] == method}


def connections_made(session, url) -> int:
    """How many connections the Session's pools opened to the host and port of `url`."""
    pools = session.get_adapter(url).poolmanager.pools
    host, port = urlsplit(url).hostname, urlsplit(url).port
    return sum(pools[key].num_connections for key in list(pools.keys()) if (key.key_host, key.key_port) == (host, port))


def shared_key(company):
    return token_key(company.base_url("auth") + "/v1/token", company.service_username, company.service_password)


# --- (a) one Session per company and process ------------------------------------------------------------

def test_one_session_per_company_whatever_the_client_or_variant(sandbox, make_sandbox_company):
    company, other = make_sandbox_company(), make_sandbox_company()
    events = client_for(company, EventTicketClient)
    lists = client_for(company, PassengerListClient)
    invoices = client_for(company, InvoicesClient, interactive=True)

    assert type(events) is EventTicketClient and events.kind == "event_ticket"
    assert client_for(company, PassengerTicketClient).kind == "passenger_ticket"
    assert lists.transport is events.transport  # one cached transport per company and variant
    assert invoices.transport is not events.transport  # the interactive one: one try, short timeout
    assert invoices.transport.config.max_retries == 0 and events.transport.config.max_retries > 0
    assert invoices.transport.session is events.transport.session is lists.transport.session
    assert client_for(other, EventTicketClient).transport.session is not events.transport.session

    # Calls through three clients of the company travel over one connection of its Session (at most one
    # new: a company pk that an earlier test used finds its Session, and maybe a connection, in place).
    before = connections_made(events.transport.session, sandbox.url)
    events.report("2025-06-01", 1, 1)
    invoices.outbox_status(INVOICE_ID)
    client_for(company, CompaniesClient).usage_report()
    assert connections_made(events.transport.session, sandbox.url) - before <= 1


def test_a_changed_credential_gives_a_new_transport_over_the_same_session(sandbox, sandbox_company):
    first = client_for(sandbox_company, InvoicesClient)
    first.outbox_status(INVOICE_ID)
    key = sandbox_company.api_key

    sandbox_company.api_key = "sbx-not-the-right-key"
    wrong = client_for(sandbox_company, InvoicesClient)
    assert wrong.transport is not first.transport and wrong.transport.session is first.transport.session
    with pytest.raises(AuthenticationFailed):
        wrong.outbox_status(INVOICE_ID)  # the new key is the one sent

    sandbox_company.api_key = key
    again = client_for(sandbox_company, InvoicesClient)
    assert again.transport is not wrong.transport
    assert again.outbox_status(INVOICE_ID)["id"] == INVOICE_ID
    sandbox_company.credit_quantity = 100_000  # another tier: another transport too
    assert client_for(sandbox_company, InvoicesClient).transport.config.tier != again.transport.config.tier
    assert seen(sandbox, STATUS_PATH) == {200: 2, 401: 1}


def test_a_transport_changed_in_place_is_not_handed_out_again(sandbox, sandbox_company):
    changed = client_for(sandbox_company, InvoicesClient).transport
    changed.config.backoff = 0.01
    fresh = client_for(sandbox_company, InvoicesClient).transport
    assert fresh is not changed and fresh.config.backoff == 0.5 and fresh.session is changed.session


def _session_in_child(company, parent_session, answers):
    transport = platform.transport_for(company)
    answers.put((transport.session is not parent_session,
                 platform.transport_for(company, interactive=True).session is transport.session))


def test_a_forked_process_gets_a_session_of_its_own(sandbox, sandbox_company):
    """An RQ work-horse is forked from the worker: it must not share the worker's pooled sockets."""
    parent_session = platform.transport_for(sandbox_company).session
    context = multiprocessing.get_context("fork")
    answers = context.Queue()
    child = context.Process(target=_session_in_child, args=(sandbox_company, parent_session, answers))
    child.start()
    own, shared_within = answers.get(timeout=60)
    child.join(timeout=60)
    assert child.exitcode == 0 and own and shared_within
    assert platform.transport_for(sandbox_company).session is parent_session


@pytest.mark.django_db(transaction=True)
def test_parallel_lanes_share_one_session_and_ask_for_one_token(sandbox, sandbox_service_user_company):
    sandbox.add_fault(path="/auth/v1/token", latency_ms=800)  # the lanes arrive while the token is on its way
    lanes = 4
    start = threading.Barrier(lanes)
    results, errors = [], []

    def lane():
        try:
            start.wait(timeout=60)
            client = client_for(sandbox_service_user_company, InvoicesClient)
            client.outbox_status(INVOICE_ID)
            results.append((client.transport, client.transport.session))
        except Exception as exc:  # noqa: BLE001 (reported by the assertion below)
            errors.append(exc)

    threads = [threading.Thread(target=lane) for _ in range(lanes)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors and len(results) == lanes
    assert len({id(transport) for transport, _ in results}) == 1 and len({id(s) for _, s in results}) == 1
    assert sandbox.stats()["tokens_issued"] == 1
    assert seen(sandbox, STATUS_PATH) == {200: lanes}


# --- (b) the token cache is shared by the processes of the deployment -----------------------------------

def start_workers(company, count):
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "backoffice.settings", "PYTHONUNBUFFERED": "1"}
    job = json.dumps({"company_key": str(company.pk), "base_urls": company.base_urls, "invoice_id": INVOICE_ID,
                      "username": company.service_username, "password": company.service_password, "calls": CALLS})
    workers = []
    for _ in range(count):
        log = tempfile.TemporaryFile("w+")  # noqa: SIM115 (closed with the worker; a pipe could fill and block it)
        worker = subprocess.Popen([sys.executable, "-m", "tests.remote.token_worker"], cwd=ROOT, env=env, text=True,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log)
        worker.log = log
        worker.stdin.write(job + "\n")  # credentials on a pipe, never on a command line
        worker.stdin.flush()
        workers.append(worker)
    return workers


def worker_log(worker) -> str:
    worker.log.seek(0)
    return worker.log.read()


def test_processes_share_one_token_kept_encrypted_in_redis(sandbox, sandbox_service_user_company,
                                                          redis_connection):
    sandbox.configure(token_lifetime_seconds=600)
    # The token issuer is slow: every worker asks while the first one's request is still on its way.
    sandbox.add_fault(path="/auth/v1/token", latency_ms=1500)
    workers = start_workers(sandbox_service_user_company, WORKERS)
    try:
        for worker in workers:  # each one set up and waiting: start them together
            assert worker.stdout.readline().strip() == "ready", worker_log(worker)
        for worker in workers:
            worker.stdin.write("go\n")
            worker.stdin.flush()
        outputs = [worker.communicate(timeout=120)[0] for worker in workers]
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
                worker.wait()
            worker.log.close()
    answers = []
    for worker, out in zip(workers, outputs):
        assert worker.returncode == 0, worker_log(worker)
        answers.append(json.loads(out.strip().splitlines()[-1]))

    tokens = {token for answer in answers for token in answer["tokens"]}
    assert len(tokens) == 1 and sandbox.stats()["tokens_issued"] == 1
    assert seen(sandbox, STATUS_PATH) == {200: WORKERS * CALLS}
    [token] = tokens
    store = platform.token_store()
    name = store.redis_key(shared_key(sandbox_service_user_company))
    stored = redis_connection.get(name)
    assert stored and token.encode() not in stored  # kept encrypted, with the field key
    assert crypto.decrypt(stored.decode().split(" ", 1)[1]) == token
    password = sandbox_service_user_company.service_password.encode()
    assert password not in stored and password not in name.encode()
    assert 0 < redis_connection.pttl(name) <= (600 - 60) * 1000  # kept until 60 s before the platform's expiry
    assert store.get(shared_key(sandbox_service_user_company)) == token


# --- (c) a 401 on a cached token renews it once ---------------------------------------------------------

def test_a_401_on_the_shared_token_renews_it_once_for_everyone(sandbox, sandbox_service_user_company):
    company = sandbox_service_user_company
    background = client_for(company, InvoicesClient)
    background.outbox_status(INVOICE_ID)
    store = platform.token_store()
    first = store.get(shared_key(company))
    assert first

    sandbox.add_fault(path="/invoice/*", expire_tokens=True, remaining=1)
    assert background.outbox_status(INVOICE_ID)["id"] == INVOICE_ID
    renewed = store.get(shared_key(company))
    assert renewed and renewed != first
    # Another transport of the company (and any other process) takes the renewed token without asking.
    client_for(company, InvoicesClient, interactive=True).outbox_status(INVOICE_ID)
    assert sandbox.stats()["tokens_issued"] == 2
    assert seen(sandbox, STATUS_PATH) == {200: 3, 401: 1}


def test_a_late_401_drops_only_the_token_that_failed(sandbox, sandbox_service_user_company):
    """A caller whose old token was refused after another had renewed it must not drop the new one."""
    store = platform.token_store()
    key = shared_key(sandbox_service_user_company)
    store.put(key, "token-renewed-by-another-process", 60)
    store.drop(key, "token-that-was-refused")
    assert store.get(key) == "token-renewed-by-another-process"
    store.drop(key, "token-renewed-by-another-process")
    assert store.get(key) is None


# --- (d) a token read from Redis once per process, then held until its Redis key expires ----------------

def _other_process_store(redis_connection):
    """The store of another process of the deployment: the same Redis, key secret and cipher, holding nothing."""
    return RedisTokenStore(redis_connection, crypto.encrypt, crypto.decrypt, prefix=platform.token_store().prefix,
                           key_secret=platform.token_store().key_secret)


def test_a_token_is_read_from_redis_once_then_held_until_its_key_expires(sandbox, sandbox_service_user_company,
                                                                       redis_connection):
    sandbox.configure(token_lifetime_seconds=600)
    client_for(sandbox_service_user_company, InvoicesClient).outbox_status(INVOICE_ID)
    key = shared_key(sandbox_service_user_company)
    other = _other_process_store(redis_connection)
    token = other.get(key)  # the first read: GET and PTTL in one round trip
    name = other.redis_key(key)
    left_ms = redis_connection.pttl(name)
    assert token and 0 < left_ms <= (600 - 60) * 1000

    redis_connection.set(name, "what a read of Redis would see now", px=left_ms)
    assert other.get(key) == token  # held: nothing read from Redis
    # and not past the key's own expiry (PTTL counts whole milliseconds: 5 ms of slack)
    assert other.held._tokens[key][1] - time.monotonic() <= left_ms / 1000 + 0.005

    redis_connection.delete(name)
    fresh = _other_process_store(redis_connection)
    assert fresh.get(key) is None  # a process that holds nothing reads Redis
    redis_connection.set(name, "no expiry: not a key this store wrote")
    assert fresh.get(key) is None


def test_a_token_held_by_one_process_and_refused_is_dropped_and_the_renewed_one_read(
        sandbox, sandbox_service_user_company, redis_connection):
    company = sandbox_service_user_company
    client_for(company, InvoicesClient).outbox_status(INVOICE_ID)
    key = shared_key(company)
    stale = platform.token_store().get(key)
    elsewhere = _other_process_store(redis_connection)
    assert elsewhere.get(key) == stale  # another process holds the token too

    # The platform refuses the token; this process renews it (one 401, one new token).
    sandbox.add_fault(path="/invoice/*", expire_tokens=True, remaining=1)
    client_for(company, InvoicesClient).outbox_status(INVOICE_ID)
    renewed = platform.token_store().get(key)
    assert renewed != stale and elsewhere.get(key) == stale  # the other process still holds the old one

    # The other process learns it from the platform's 401 on its held token: drops that one only, reads the renewed.
    elsewhere.drop(key, stale)
    assert elsewhere.get(key) == renewed
    assert platform.token_store().get(key) == renewed
    assert sandbox.stats()["tokens_issued"] == 2


def test_calls_go_on_with_the_held_token_while_redis_is_away(sandbox, sandbox_service_user_company):
    company = sandbox_service_user_company
    client = client_for(company, InvoicesClient)
    client.outbox_status(INVOICE_ID)
    store = platform.token_store()
    held = store.held.get(shared_key(company))
    assert held
    away = redis.Redis(host="127.0.0.1", port=1, socket_connect_timeout=0.2)  # nothing listens on port 1
    away_store = RedisTokenStore(away, crypto.encrypt, crypto.decrypt, prefix=store.prefix, key_secret=store.key_secret)
    away_store.held.put(shared_key(company), held, 60)
    assert away_store.get(shared_key(company)) == held
    away_store.drop(shared_key(company), held)  # Redis away: dropped here all the same
    assert away_store.get(shared_key(company)) is None
    away_store.put(shared_key(company), "fetched-while-redis-was-away", 60)
    assert away_store.get(shared_key(company)) == "fetched-while-redis-was-away"
