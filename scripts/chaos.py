"""`make chaos`: documents of every sending domain pushed through the real workers while everything around them
fails, then the mirror is compared with the platform (issue 11, "make chaos"; every domain: issue 32).

A bounded run (--max-seconds, 600 by default) on its own database, Redis and sandbox:
1. setup: a database of its own (PostgreSQL when DATABASE_URL is set: a new database next to it, dropped at the
   end; else a SQLite file in a temporary directory), an embedded redis-server on a unix socket keeping an
   append-only file, the sandbox (`manage.py sandbox_serve`, its own SQLite and control token), two companies
   (one with an API key, one with a service user: bearer tokens), --workers `rqworker --with-scheduler`
   processes and the RQ cron runner, as `make run` starts them;
2. chaos (--chaos-seconds): --documents documents of every sending domain are created through the services at a
   steady pace: event tickets (one job each, and batches), passenger tickets and passenger lists (here), current
   accounts with their children, chart accounts, invoices, dispatch notes, replies to incoming notes and ledger
   uploads (scripts/chaos_domains.py); drafts are sent, approved tickets cancelled, invoices posted, dispatch
   notes' statuses changed, incoming notes answered (record actions), while at random moments a work-horse or
   a whole worker (with its work-horse) is killed with SIGKILL (a new worker is started), Redis is stopped and
   started again, and 429 storms come on every service; all along, 10% of every sending service's calls are
   answered 500 after the platform applied them and bearer tokens expire after 20 uses;
3. settle (--settle-seconds): the faults are cleared and the system is left to finish, until the mirror
   matches the sandbox (or the time is up); then the cron runner stops and the jobs left are waited for;
4. checks, printed with their figures and per domain: every document saved locally exists once on the sandbox
   (matched by its natural key: number, ETTN, code, name, upload), no duplicate, no status differing from the
   sandbox's, nothing stuck (record queued, sending or with an action pending; job still active), no create
   refused, and tokens issued <= worker processes started x (run time / token lifetime + 1) + 401 answers.
   Exit 0 when every check passes, 1 when one fails (which, with examples), 2 when the run itself could not be
   made.

Every process is on loopback and stopped at the end, on Ctrl-C too. Logs are kept in the run's directory,
which is kept when a check fails (or with --keep). docs/CHAOS.md tells more.
"""

import argparse
import ctypes
import logging
import math
import os
import random
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter, defaultdict
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import chaos_domains  # noqa: E402 (scripts/, next to this file: the other sending domains)

VKN = "1234567890"  # valid check digits (the sandbox checks them)
TCKN = "10000000146"
TICKET_PATHS = {"event_ticket": "/ticket/v1/event-ticket", "passenger_ticket": "/ticket/v1/passenger-ticket"}
LIST_PATH = "/ticket/v1/passenger-list"
# Every service the back-office sends documents to: the faults hit them all (the token endpoint is spared).
FAULT_GLOBS = ("/ticket/*", *chaos_domains.SERVICE_GLOBS)
WORKING = (20,)  # a ticket the platform still processes (queued): settled means none is left
STOP_TIMEOUT = 10
DOMAIN_FIGURES = ("saved", "found", "lost", "duplicates", "differ", "still processed")
# Environment of the run's processes that must come from this run, never from the caller's shell (a test run
# calling us has its own Redis, sandbox and test app).
OWN_VARIABLES = ("DATABASE_URL", "REDIS_URL", "SANDBOX_URL", "SANDBOX_DATABASE_URL", "SANDBOX_CONTROL_TOKEN",
                 "BACKOFFICE_EXTRA_APPS", "BACKOFFICE_VAR_DIR", "DJANGO_SETTINGS_MODULE", "PYTEST_XDIST_WORKER")

_LIBC = ctypes.CDLL(None, use_errno=True)
_PARENT = os.getpid()


def say(text=""):
    sys.stdout.write(f"{text}\n")
    sys.stdout.flush()


class RunError(Exception):
    """The run itself could not be made (exit 2), as opposed to a failed check (exit 1)."""


def _die_with_parent():
    """In each child before exec: its own session (a terminal's Ctrl-C reaches only us, and we stop the
    children in order); PR_SET_PDEATHSIG takes it down if we are killed."""
    _LIBC.prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG
    if os.getppid() != _PARENT:
        os._exit(1)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# --- processes ---------------------------------------------------------------------------------------------

def _proc_table() -> dict:
    """pid -> (ppid, pgid, state) of every process we can see."""
    table = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        table[int(entry)] = (int(fields[1]), int(fields[2]), fields[0])
    return table


def descendants(pid, table=None) -> list[int]:
    table = table or _proc_table()
    children = defaultdict(list)
    for child, (parent, _pgid, _state) in table.items():
        children[parent].append(child)
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), ()):
            found.append(child)
            todo.append(child)
    return found


def horses_of(worker_pid) -> list[int]:
    """The work-horses of an RQ worker: its children in a process group of their own (RQ's fork calls
    setpgrp); the scheduler it forks stays in the worker's group."""
    table = _proc_table()
    return [pid for pid, (parent, pgid, state) in table.items() if parent == worker_pid and pgid == pid
            and state != "Z"]


def kill(pid, sig=signal.SIGKILL):
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def killpg(pgid, sig=signal.SIGKILL):
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


class Child:
    def __init__(self, name, args, env, log_path):
        self.name = name
        self.log_path = log_path
        with open(log_path, "ab") as log:
            self.process = subprocess.Popen(args, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=log,
                                            stderr=subprocess.STDOUT, start_new_session=True,
                                            preexec_fn=_die_with_parent)
        self.killed = False  # by us: not an unexpected death

    @property
    def pid(self):
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self, timeout=STOP_TIMEOUT):
        """SIGTERM (RQ's warm shutdown), then SIGKILL to the whole group and to any work-horse."""
        horses = horses_of(self.pid)
        if self.alive():
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                pass
        killpg(self.pid)
        for horse in horses:
            killpg(horse)
            kill(horse)
        self.process.wait()


def reap_orphans(owned):
    """We are a child subreaper: work-horses whose worker died become our children; reap them when they end."""
    for pid, (parent, _pgid, state) in _proc_table().items():
        if parent == _PARENT and state == "Z" and pid not in owned:
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass


# --- the sandbox -------------------------------------------------------------------------------------------

class Sandbox:
    def __init__(self, url, control_token):
        import requests

        self.url = url
        self.control_token = control_token
        self.http = requests.Session()
        self.http.trust_env = False  # loopback only, never through a proxy of the environment

    def control(self, method, path, body=None, timeout=30):
        response = self.http.request(method, f"{self.url}/_control/{path}", json=body, timeout=timeout,
                                     headers={"X-Sandbox-Control": self.control_token})
        if not response.ok:
            raise RunError(f"sandbox control {method} {path}: {response.status_code} {response.text[:300]}")
        return response.json()

    def try_control(self, method, path, body=None):
        """A control call whose refusal is an answer (a field this sandbox does not know yet): None then."""
        try:
            return self.control(method, path, body)
        except RunError:
            return None

    def stats(self) -> dict:
        return self.control("GET", "stats")

    def get(self, path, api_key, params=None):
        """One read of the platform's API (path with its service, e.g. /ticket/v1/...) with a check-only key."""
        response = self.http.get(f"{self.url}{path}", params=params, timeout=60, headers={"x-api-key": api_key})
        if response.status_code != 200:
            raise RunError(f"sandbox GET {path} {params or ''}: {response.status_code} {response.text[:300]}")
        return response.json() if response.content else None

    def pages(self, path, api_key, **params) -> list:
        """Every item of a list operation, walked 500 at a time with the API key."""
        from backoffice.remote.common import envelope, list_params

        items, index = [], 1
        while True:
            page = envelope(self.get(path, api_key, {**params, **list_params(index, 500)}))
            items += page["items"]
            if not page["hasNextPage"] or not page["items"]:
                return items
            index += 1


# --- the plan ----------------------------------------------------------------------------------------------

@dataclass
class Unit:
    """Documents created at one moment: one ticket, a batch, an expedition's tickets, or a list."""

    at: float
    kind: str  # event | batch | expedition | list, or one of chaos_domains' (base, account, chart, invoice, ...)
    company: int  # index into the run's companies
    count: int = 1
    status: int = 0  # requested status of tickets
    expedition: int = 0  # the expedition; for the other domains the unit's number within its kind


def plan_units(documents, span, rng, domains=None) -> tuple[list, dict]:
    """The documents of the run. With `domains` (chaos_domains.Domains) the other sending domains take their
    shares first (chaos_domains.plan: about 45% of 1,000) and the tickets the rest. Of the tickets' documents: 10%
    passenger lists (one per expedition), 35% passenger tickets (spread over those expeditions), 20% event tickets
    sent in batch jobs, the rest event tickets sent one job each (half of them drafts, which record actions send
    later). Spread over `span` seconds, alternately for each company."""
    total, others, other_units = documents, {}, []
    if domains is not None:
        try:
            counts, documents = chaos_domains.plan(documents)
        except ValueError as exc:
            raise RunError(str(exc)) from None
        others = chaos_domains.figures_of(counts)
        other_units = domains.units(counts, span, rng, Unit)
    lists = max(1, round(documents * 0.10))
    passenger = max(lists, round(documents * 0.35))
    batched = round(documents * 0.20)
    single = documents - lists - passenger - batched
    if single < 1:
        raise RunError("--documents is too small: at least 4")
    units = []
    # Expeditions: tickets first, their list a few seconds later.
    per_expedition = [passenger // lists + (1 if i < passenger % lists else 0) for i in range(lists)]
    for expedition, count in enumerate(per_expedition):
        at = rng.uniform(0, span * 0.85)
        company = expedition % 2
        units.append(Unit(at, "expedition", company, count, status=20, expedition=expedition))
        units.append(Unit(min(span, at + rng.uniform(1, 8)), "list", company, expedition=expedition))
    if batched:
        batches = 1 if batched < 2 else max(2, math.ceil(batched / 100))
        sizes = [batched // batches + (1 if i < batched % batches else 0) for i in range(batches)]
        for index, size in enumerate(sizes):
            units.append(Unit(rng.uniform(span * 0.1, span * 0.8), "batch", index % 2, size, status=20))
    for index in range(single):
        units.append(Unit(rng.uniform(0, span), "event", index % 2, status=0 if index % 2 else 20))
    units += other_units
    units.sort(key=lambda unit: (unit.at, unit.kind != "base"))
    figures = {"documents": total, "event tickets (one job each)": single, "event tickets (batch jobs)": batched,
               "passenger tickets": passenger, "passenger lists": lists, **others}
    return units, figures


# --- the run -----------------------------------------------------------------------------------------------

@dataclass
class Tally:
    workers_started: int = 0
    horses_killed: int = 0
    workers_killed: int = 0
    redis_restarts: int = 0
    storms: int = 0
    token_expiry_rules: int = 0
    unexpected_exits: Counter = field(default_factory=Counter)
    sent_requests: int = 0
    sent_tickets: int = 0
    cancel_requests: int = 0
    cancelled_tickets: int = 0
    actions_refused: int = 0
    events_skipped: int = 0
    create_errors: list = field(default_factory=list)


class Run:
    def __init__(self, options):
        self.options = options
        self.rng = random.Random(options.seed)
        self.started = time.monotonic()
        self.deadline = self.started + options.max_seconds
        self.workdir = Path(tempfile.mkdtemp(prefix="bo-chaos-"))
        self.logs = self.workdir / "logs"
        self.logs.mkdir()
        self.children: list[Child] = []
        self.workers: list[Child] = []
        self.cron = None
        self.sandbox_child = None
        self.redis_process = None
        self.redis_down_until = None
        self.later = []  # (monotonic time, callable)
        self.tally = Tally()
        self.pg_admin_url = self.pg_database = None
        self.companies = []  # core Company rows
        self.verify_keys = {}  # company pk -> API key of the sandbox customer, for the checks
        self.after_apply = self.token_uses = False
        self.workers_from = None
        self.supervised_at = 0.0
        self.domains = chaos_domains.Domains(self, describe)

    # --- setup ---------------------------------------------------------------------------------------------

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def setup(self):
        o = self.options
        var = self.workdir / "var"
        var.mkdir()
        database_url = self._database()
        self.redis_socket = self.workdir / "redis" / "redis.sock"
        self.redis_dir = self.workdir / "redis"
        self.start_redis()
        port = free_port()
        control_token = secrets.token_urlsafe(24)
        base = {name: value for name, value in os.environ.items() if name not in OWN_VARIABLES}
        base.update({"PYTHONUNBUFFERED": "1", "DJANGO_DEVELOPMENT": "1", "DJANGO_DEBUG": "0"})
        self.env = {**base, "DJANGO_SETTINGS_MODULE": "backoffice.settings", "BACKOFFICE_VAR_DIR": str(var),
                    "DATABASE_URL": database_url, "REDIS_URL": f"unix://{self.redis_socket}",
                    "SANDBOX_URL": f"http://127.0.0.1:{port}"}
        # Retries on a compressed clock, so that a run of minutes sees several; the caller's values win.
        for name, value in (("JOB_RETRY_BASE_SECONDS", "2"), ("JOB_RETRY_MAX_SECONDS", "30")):
            self.env[name] = os.environ.get(name, value)
        sandbox_env = {**base, "DJANGO_SETTINGS_MODULE": "backoffice.sandbox.settings", "BACKOFFICE_VAR_DIR": str(var),
                       "SANDBOX_DATABASE_URL": f"sqlite:///{self.workdir / 'sandbox.sqlite3'}",
                       "SANDBOX_CONTROL_TOKEN": control_token}
        manage = [sys.executable, str(ROOT / "manage.py")]
        for name, args, env in (("migrate", [*manage, "migrate", "--noinput", "-v", "0"], self.env),
                                ("migrate sandbox", [*manage, "migrate", "--noinput", "-v", "0"], sandbox_env)):
            done = subprocess.run(args, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                  timeout=max(30, self.left()))
            if done.returncode:
                raise RunError(f"{name} failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
        self.sandbox_child = self.spawn("sandbox", [*manage, "sandbox_serve", f"127.0.0.1:{port}"], sandbox_env)
        self.sandbox = Sandbox(f"http://127.0.0.1:{port}", control_token)
        self._wait(lambda: self._sandbox_up(), 60, "the sandbox to answer")

        # This process uses the same database, Redis and sandbox as its children.
        os.environ.update(self.env)
        for name in OWN_VARIABLES:
            if name not in self.env:
                os.environ.pop(name, None)
        import django

        django.setup()
        self._quiet_logging()
        self._faults_and_settings()
        self._companies()
        self.domains.prepare(o.dispatch_error_rate)
        self._faults()
        for _ in range(o.workers):
            self.start_worker()
        self.cron = self.spawn("cron", [*manage, "rqcron", "backoffice.cron"], self.env)
        self._wait(lambda: self._registered_workers() >= o.workers, 60, "the workers to register")
        self.workers_from = time.monotonic()

    def _database(self) -> str:
        url = os.environ.get("DATABASE_URL", "")
        if not url or url.startswith("sqlite"):
            return f"sqlite:///{self.workdir / 'backoffice.sqlite3'}"
        # PostgreSQL: a database of its own on the same server, made and dropped from the server's maintenance
        # database (the named one need not exist, as for pytest-django's test database).
        import psycopg

        parts = urlsplit(url)
        if parts.scheme not in ("postgres", "postgresql", "pgsql"):
            raise RunError(f"DATABASE_URL: only PostgreSQL or SQLite are supported here, not {parts.scheme}")
        name = f"{(parts.path.strip('/') or 'backoffice')[:30]}_chaos_{uuid.uuid4().hex[:8]}"
        admin_url = urlunsplit(parts._replace(scheme="postgresql", path="/postgres"))
        try:
            with psycopg.connect(admin_url, autocommit=True) as connection:
                connection.execute(f'CREATE DATABASE "{name}"')
        except psycopg.Error as exc:
            raise RunError(f"could not create database {name} on the server of DATABASE_URL: {exc}") from None
        self.pg_database, self.pg_admin_url = name, admin_url
        return urlunsplit(parts._replace(path=f"/{self.pg_database}"))

    def _sandbox_up(self) -> bool:
        if not self.sandbox_child.alive():
            raise RunError(f"the sandbox exited:\n{self.sandbox_child.log_path.read_text()[-3000:]}")
        try:
            self.sandbox.stats()
            return True
        except Exception:
            return False

    def _wait(self, predicate, timeout, what):
        deadline = time.monotonic() + min(timeout, max(1, self.left()))
        while not predicate():
            if time.monotonic() > deadline:
                raise RunError(f"timed out waiting for {what}")
            time.sleep(0.2)

    def _quiet_logging(self):
        """This process's own log lines (an enqueue refused while Redis is down) go to a file, not the report."""
        handler = logging.FileHandler(self.logs / "driver.log")
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
        for logger in (logging.getLogger(), logging.getLogger("django")):
            for old in list(logger.handlers):
                logger.removeHandler(old)
            logger.addHandler(handler)

    def _faults_and_settings(self):
        o = self.options
        self.sandbox.control("POST", "reset", {})
        answer = self.sandbox.control("POST", "settings", {"token_lifetime_seconds": o.token_lifetime,
                                                           "token_max_uses": o.token_uses})
        self.token_uses = answer.get("token_max_uses") == o.token_uses

    def _faults(self):
        """10% of every sending service's calls answered 500 after the platform applied them. The token endpoint
        is left alone: a token issued but never received would count against the token check unfairly."""
        o = self.options
        for glob in FAULT_GLOBS:
            rule = {"path": glob, "method": "*", "error_rate": o.error_rate, "error_status": 500}
            self.after_apply = self.sandbox.try_control("POST", "faults", {**rule, "after_apply": "error"}) \
                is not None
            if not self.after_apply:
                self.sandbox.control("POST", "faults", rule)  # an older sandbox: 500 before applying
            if o.drop_rate and self.after_apply:
                self.sandbox.control("POST", "faults", {**rule, "error_rate": o.drop_rate, "after_apply": "drop"})

    def _companies(self):
        from backoffice.core.models import Company

        o = self.options
        for index, auth in enumerate(("api_key", "service_user")):
            name = f"Chaos {index + 1} {'API key' if auth == 'api_key' else 'service user'}"
            verify_key = "chaos-verify-" + secrets.token_urlsafe(18)
            fields = {"name": name, "credits": o.credits}
            company_fields = {"auth_method": auth}
            if auth == "api_key":
                fields["api_key"] = company_fields["api_key"] = "chaos-" + secrets.token_urlsafe(24)
            else:
                fields["username"] = company_fields["service_username"] = f"chaos-svc-{uuid.uuid4().hex[:8]}"
                fields["password"] = company_fields["service_password"] = secrets.token_urlsafe(16)
            customer = self.sandbox.control("POST", "customers", fields)
            # A key of its own for the checks: they must not use (or count) the company's tokens.
            self.sandbox.control("POST", "customers", {"name": name, "api_key": verify_key,
                                                       "customer_unique_id": customer["customer_unique_id"]})
            company = Company.objects.create(name=name, environment="sandbox", credit_quantity=o.credits,
                                             customer_unique_id=customer["customer_unique_id"], **company_fields)
            self.companies.append(company)
            self.verify_keys[company.pk] = verify_key

    # --- children ------------------------------------------------------------------------------------------

    def spawn(self, name, args, env) -> Child:
        child = Child(name, args, env, self.logs / f"{name}.log")
        self.children.append(child)
        return child

    def start_worker(self):
        if self.redis_down_until is not None:
            # `rqworker` exits at once without Redis: start it when Redis is back, as a supervisor backs off.
            self.later.append((self.redis_down_until + 0.5, self.start_worker))
            return None
        index = self.tally.workers_started + 1
        manage = [sys.executable, str(ROOT / "manage.py")]
        worker = self.spawn(f"worker-{index}", [*manage, "rqworker", "default", "--with-scheduler",
                                                *self.options.worker_args.split()], self.env)
        self.workers.append(worker)
        self.tally.workers_started += 1
        return worker

    def start_redis(self):
        from backoffice.core import embedded_redis

        self.redis_process = embedded_redis.start(
            self.redis_socket, log_path=self.logs / "redis.log", append_only_dir=self.redis_dir,
            start_new_session=True, preexec_fn=_die_with_parent)
        self.redis_down_until = None

    def _registered_workers(self) -> int:
        import django_rq
        from rq import Worker

        try:
            return len(Worker.all(connection=django_rq.get_connection("default")))
        except Exception:
            return 0

    def supervise(self, every=0.5):
        """Children that died without us: counted (a finding) and started again; Redis outside its planned
        downtime too. At most every `every` seconds (it reads /proc)."""
        if time.monotonic() - self.supervised_at < every:
            return
        self.supervised_at = time.monotonic()
        owned = {child.pid for child in self.children}
        reap_orphans(owned)
        if not self.sandbox_child.alive():
            raise RunError(f"the sandbox exited:\n{self.sandbox_child.log_path.read_text()[-3000:]}")
        for worker in list(self.workers):
            if not worker.alive():
                self.workers.remove(worker)
                if not worker.killed:
                    self.tally.unexpected_exits[f"worker (code {worker.process.returncode})"] += 1
                    self.start_worker()
        if self.cron is not None and not self.cron.alive():
            self.tally.unexpected_exits[f"cron (code {self.cron.process.returncode})"] += 1
            self.cron = self.spawn(f"cron-{sum(c.name.startswith('cron') for c in self.children) + 1}",
                                   [sys.executable, str(ROOT / "manage.py"), "rqcron", "backoffice.cron"], self.env)
        if self.redis_down_until is None and self.redis_process.poll() is not None:
            self.tally.unexpected_exits["redis"] += 1
            self.start_redis()
        now = time.monotonic()
        for item in [item for item in self.later if item[0] <= now]:
            self.later.remove(item)
            item[1]()

    # --- chaos events --------------------------------------------------------------------------------------

    def event(self, kind):
        o = self.options
        if kind == "horse":
            busy = [(worker, horses_of(worker.pid)) for worker in self.workers if worker.alive()]
            busy = [(worker, horses) for worker, horses in busy if horses]
            if not busy:
                return False
            _worker, horses = self.rng.choice(busy)
            for horse in horses:
                kill(horse)
            self.tally.horses_killed += 1
        elif kind == "worker":
            alive = [worker for worker in self.workers if worker.alive()]
            if not alive:
                return False
            worker = self.rng.choice(alive)
            horses = horses_of(worker.pid)
            worker.killed = True
            killpg(worker.pid)  # the worker and its scheduler, as when its machine dies
            for horse in horses:
                kill(horse)
            self.tally.workers_killed += 1
            self.later.append((time.monotonic() + self.rng.uniform(1, 3), self.start_worker))
        elif kind == "redis":
            if self.redis_down_until is not None:
                return False
            sig = signal.SIGKILL if self.tally.redis_restarts % 2 == 0 else signal.SIGTERM
            self.redis_process.send_signal(sig)
            self.redis_process.wait()
            self.redis_down_until = time.monotonic() + self.rng.uniform(1, 4)
            self.tally.redis_restarts += 1
            self.later.append((self.redis_down_until, self.start_redis))
        elif kind == "storm":
            # Every service at once, each for its own next 5 to 30 calls.
            retry_after = self.rng.randint(1, 5)
            for glob in FAULT_GLOBS:
                self.sandbox.control("POST", "faults", {"path": glob, "method": "*", "storm_429": True,
                                                        "retry_after": retry_after,
                                                        "remaining": self.rng.randint(5, 30)})
            self.tally.storms += 1
        if not self.token_uses and o.token_uses:
            # An older sandbox without token_max_uses: expire the tokens at every event instead.
            self.sandbox.control("POST", "faults", {"expire_tokens": True, "remaining": 1})
            self.tally.token_expiry_rules += 1
        return True

    # --- documents and actions -----------------------------------------------------------------------------

    def create(self, unit, now_dt):
        from django.db import transaction
        from django.utils import timezone

        from backoffice.core.models import DocumentSeries
        from backoffice.passenger_lists.models import PassengerList
        from backoffice.passenger_lists.services import passenger_list_create
        from backoffice.tickets import services
        from backoffice.tickets.models import EventTicket, PassengerTicket, TicketLine

        if unit.kind not in ("event", "expedition", "list", "batch"):
            return self.domains.create(unit, now_dt)
        company = self.companies[unit.company]
        line = {"service_description": "Bilet", "amount": Decimal("100.00"), "vat_rate": Decimal("20"), "taxes": []}
        expedition_time = timezone.make_aware(datetime(2026, 6, 1, 8, 0)) + timedelta(hours=unit.expedition)
        expedition = {"expedition_number": f"C{unit.company + 1}-{unit.expedition + 1:04d}",
                      "expedition_time": expedition_time, "vehicle_plate": "34 ABC 123"}
        if unit.kind == "event":
            ticket = EventTicket(company=company, prefix="ETK", ticket_date=now_dt, payment_type="NAKIT",
                                 customer_first_name="Ayşe", customer_last_name="Yılmaz", seat_number="A-1",
                                 event_name="Bahar Konseri", event_location="Salon A", event_city_id=34,
                                 event_city="İstanbul", event_municipality="Kadıköy", event_time=now_dt,
                                 event_organizer_vkn_tckn=VKN)
            services.ticket_create(ticket=ticket, lines=[line], requested_status=unit.status)
        elif unit.kind == "expedition":
            for seat in range(1, unit.count + 1):
                ticket = PassengerTicket(company=company, prefix="YLC", ticket_date=now_dt, payment_type="NAKIT",
                                         identifier=TCKN, customer_first_name="Yolcu", customer_last_name=f"No {seat}",
                                         departure_date=expedition_time, departure_location="İstanbul",
                                         destination="Ankara", seat_number=str(seat), **expedition)
                services.ticket_create(ticket=ticket, lines=[line], requested_status=unit.status)
        elif unit.kind == "list":
            passenger_list_create(plist=PassengerList(company=company, is_manual_plate=False, **expedition))
        elif unit.kind == "batch":
            # Saved locally first (as a form's many rows would be), then sent together: core.batch.
            with transaction.atomic():
                tickets = []
                for index in range(unit.count):
                    number = DocumentSeries.allocate(company=company, kind="event_ticket", prefix="ETB",
                                                     year=now_dt.year)
                    tickets.append(EventTicket(
                        company=company, ticket_number=number, prefix="ETB", ticket_date=now_dt, payment_type="NAKIT",
                        customer_first_name="Ayşe", customer_last_name="Yılmaz", seat_number=f"B-{index + 1}",
                        event_name="Bahar Konseri", event_location="Salon A", event_city_id=34, event_city="İstanbul",
                        event_municipality="Kadıköy", event_time=now_dt, event_organizer_vkn_tckn=VKN,
                        requested_status=unit.status, total_amount=Decimal("100"), total_vat=Decimal("20"),
                        payable_amount=Decimal("120")))
                tickets = EventTicket.objects.bulk_create(tickets)
                TicketLine.objects.bulk_create([
                    TicketLine(event_ticket=ticket, position=1, service_description="Bilet", amount=Decimal("100"),
                               vat_rate=Decimal("20"), vat_amount=Decimal("20")) for ticket in tickets])
            services.tickets_queue(tickets=list(EventTicket.objects.filter(pk__in=[t.pk for t in tickets])))

    def actions(self, targets):
        """Record actions as users ask them: drafts sent (0 -> 20), approved tickets cancelled (-> 100), a few at
        a time, each request for one company."""
        from backoffice.core.choices import SyncState
        from backoffice.tickets import services
        from backoffice.tickets.choices import TicketStatus
        from backoffice.tickets.models import EventTicket

        for company in self.companies:
            idle = EventTicket.objects.filter(company=company, sync_state=SyncState.SYNCED, pending_action="")
            if self.tally.sent_tickets < targets["send"]:
                drafts = list(idle.filter(remote_status=TicketStatus.DRAFT, prefix="ETK").order_by("?")[:5])
                if drafts:
                    try:
                        services.tickets_status_change_request(tickets=drafts, status=TicketStatus.QUEUED)
                        self.tally.sent_requests += 1
                        self.tally.sent_tickets += len(drafts)
                    except services.TicketError:
                        self.tally.actions_refused += 1
            if self.tally.cancelled_tickets < targets["cancel"]:
                approved = list(idle.filter(remote_status=TicketStatus.APPROVED).order_by("?")[:5])
                if approved:
                    try:
                        services.tickets_cancel_request(tickets=approved)
                        self.tally.cancel_requests += 1
                        self.tally.cancelled_tickets += len(approved)
                    except services.TicketError:
                        self.tally.actions_refused += 1

    # --- phases --------------------------------------------------------------------------------------------

    def chaos(self, units, figures):
        from django.utils import timezone

        o = self.options
        start = time.monotonic()
        end = start + o.chaos_seconds
        targets = {"send": round(figures["event tickets (one job each)"] / 2 * 0.6),
                   "cancel": round((figures["event tickets (one job each)"] + figures["event tickets (batch jobs)"])
                                   * 0.1)}
        # Every kind of event comes, in a shuffled order, before any comes again.
        bag, rounds = [], 0
        next_event = start + self.rng.uniform(*o.event_every)
        next_action = start + o.action_every
        pending = list(units)
        # The first round must complete (a short run sees every kind): the phase runs on past its end, up to its
        # length again, until it has.
        last_end = end + o.chaos_seconds
        while (time.monotonic() < end or pending) and self.left() > o.settle_seconds / 2:
            self.supervise()
            now = time.monotonic()
            if (now >= end and rounds <= 1 and (bag or rounds == 0) and now < last_end
                    and self.left() > o.settle_seconds + 25):  # never at the cost of the settling time
                end = now + 0.1
            while pending and pending[0].at <= now - start:
                unit = pending.pop(0)
                try:
                    self.create(unit, timezone.now())
                except Exception as exc:  # a finding, not the end of the run
                    self.tally.create_errors.append(f"{unit.kind} of company {unit.company + 1}: "
                                                    f"{exc.__class__.__name__}: {str(exc)[:200]}")
            if now < end and now >= next_event:
                if not bag:
                    # The first round has one event of each kind (a short run sees them all), then by weight.
                    bag = ["horse", "worker", "redis", "storm"] if rounds == 0 else \
                        ["horse", "horse", "horse", "worker", "worker", "redis", "storm", "storm"]
                    self.rng.shuffle(bag)
                    rounds += 1
                if self.event(bag[-1]):
                    bag.pop()
                    next_event = now + self.rng.uniform(*o.event_every)
                else:
                    # Nothing to hit right now (no job running): another kind first, this one a moment later.
                    self.tally.events_skipped += 1
                    bag.insert(0, bag.pop())
                    next_event = now + 0.2
            if now < end and now >= next_action:
                self.actions(targets)
                self.domains.follow_up(now)
                next_action = now + o.action_every
            time.sleep(0.1)
        if pending:
            raise RunError(f"{len(pending)} planned document groups were not created in the time budget")
        self.chaos_seconds = time.monotonic() - start

    def settle(self):
        """No more faults: wait until the mirror matches the sandbox, then for the jobs left once cron stopped."""
        o = self.options
        self.sandbox.control("DELETE", "faults")
        # Workers killed a moment ago come back now rather than later; Redis too.
        while self.later:
            item = min(self.later, key=lambda item: item[0])
            self.later.remove(item)
            item[1]()
        self.supervise(every=0)
        start = time.monotonic()
        deadline = min(start + o.settle_seconds, self.deadline - 25)
        self.converged = None
        last_compare = 0.0
        last_follow = 0.0
        while time.monotonic() < deadline:
            self.supervise()
            if time.monotonic() - last_follow >= 2:
                # The users' next steps go on (drafts sent, invoices posted, notes answered, months uploaded).
                last_follow = time.monotonic()
                self.domains.follow_up(last_follow)
            if not local_busy(self.companies) and time.monotonic() - last_compare >= 3 \
                    and not self.domains.open_steps():
                last_compare = time.monotonic()
                if compare(self).clean():
                    self.converged = time.monotonic() - start
                    break
            time.sleep(1)
        # Jobs lost at the very end (a worker that died with Redis after taking a job: RQ gives it up some 70 s
        # later) come back only through the sweep, which the cron runner enqueues: it runs on until no job is
        # active (the periodic ones come and go) or the settling time is up.
        while self.converged is not None and time.monotonic() < deadline and active_runs().exists():
            self.supervise()
            time.sleep(0.5)
        # The cron runner only enqueues; once it stops, what is still active is stuck (or still running).
        self.cron.stop()
        self.cron = None
        drain_until = min(time.monotonic() + 30, self.deadline - 15)
        while time.monotonic() < drain_until and active_runs().exists():
            self.supervise()
            time.sleep(0.5)
        self.settle_seconds = time.monotonic() - start

    def cleanup(self):
        for child in reversed(self.children):
            try:
                child.stop(timeout=STOP_TIMEOUT if child.name.startswith("worker") else 5)
            except Exception:
                pass
        if self.redis_process is not None and self.redis_process.poll() is None:
            self.redis_process.terminate()
            try:
                self.redis_process.wait(5)
            except subprocess.TimeoutExpired:
                self.redis_process.kill()
                self.redis_process.wait()
        # Whatever is left below us (a work-horse orphaned by a killed worker): gone too.
        for pid in descendants(_PARENT):
            kill(pid)
        reap_orphans(set())
        if self.pg_database:
            try:
                from django.db import connections

                connections.close_all()
            except Exception:
                pass
            try:
                import psycopg

                with psycopg.connect(self.pg_admin_url, autocommit=True) as connection:
                    connection.execute(f'DROP DATABASE IF EXISTS "{self.pg_database}" WITH (FORCE)')
            except Exception as exc:
                say(f"note: could not drop database {self.pg_database}: {exc}")


# --- what the mirror and the sandbox say -------------------------------------------------------------------

def active_runs():
    from backoffice.core.jobs import ACTIVE
    from backoffice.core.models import JobRun

    return JobRun.objects.filter(status__in=ACTIVE)


def local_busy(companies) -> int:
    """Records still on their way: queued, sending or with an action pending."""
    from django.db.models import Q

    from backoffice.core.choices import SyncState

    busy = Q(sync_state__in=[SyncState.QUEUED, SyncState.SENDING]) | ~Q(pending_action="")
    return sum(model.objects.filter(busy, company__in=companies).count() for model in record_models())


def record_models():
    from backoffice.passenger_lists.models import PassengerList
    from backoffice.tickets.models import EventTicket, PassengerTicket

    return [EventTicket, PassengerTicket, PassengerList, *chaos_domains.record_models()]


@dataclass
class Comparison:
    saved: int = 0
    found: int = 0
    lost: list = field(default_factory=list)
    duplicates: list = field(default_factory=list)
    differs: list = field(default_factory=list)
    on_sandbox: int = 0
    working: int = 0  # documents the sandbox still processes (a ticket queued, 20...): their status will change
    by_domain: dict = field(default_factory=lambda: defaultdict(Counter))

    def clean(self) -> bool:
        return self.saved == self.found and not (self.lost or self.duplicates or self.differs or self.working)

    def figures(self) -> tuple:
        return (self.saved, self.found, len(self.lost), len(self.duplicates), len(self.differs), self.working)

    @contextmanager
    def domain(self, name):
        """What the block adds is the domain's too (the report's per-domain lines)."""
        before = self.figures()
        yield
        for label, now, then in zip(DOMAIN_FIGURES, self.figures(), before):
            self.by_domain[name][label] += now - then


def compare(run) -> Comparison:
    """Every local document matched with the sandbox's, read through the platform's own list operations."""

    result = Comparison()
    for company in run.companies:
        key = run.verify_keys[company.pk]
        with result.domain("tickets"):
            compare_tickets(run, result, company, key)
        with result.domain("passenger lists"):
            compare_lists(run, result, company, key)
    run.domains.compare(result, lambda company: run.verify_keys[company.pk])
    return result


def compare_tickets(run, result, company, key):
    from backoffice.core.choices import SyncState
    from backoffice.tickets.models import EventTicket, PassengerTicket

    for model, kind in ((EventTicket, "event_ticket"), (PassengerTicket, "passenger_ticket")):
        remote = defaultdict(list)
        for item in run.sandbox.pages(TICKET_PATHS[kind], key):
            remote[str(item.get("ticketNumber") or "")].append(item)
        result.on_sandbox += sum(len(items) for items in remote.values())
        local = {t.ticket_number: t for t in model.objects.filter(company=company)}
        for number, items in remote.items():
            if len(items) > 1 or number not in local:
                result.duplicates.append((kind, number, f"{len(items)} on the sandbox, "
                                          f"{'known' if number in local else 'unknown'} here"))
        for number, ticket in local.items():
            result.saved += 1
            items = remote.get(number) or []
            if not items:
                result.lost.append(describe(ticket, kind, "not on the sandbox"))
                continue
            result.found += len(items) == 1
            item = items[0]
            status = item.get("status")
            if ticket.remote_id != str(item.get("ettn") or item.get("id") or ""):
                result.differs.append(describe(ticket, kind, f"ETTN here {ticket.remote_id or '-'}, "
                                                             f"on the sandbox {item.get('ettn')}"))
            elif ticket.sync_state != SyncState.SYNCED or ticket.remote_status != status:
                result.differs.append(describe(ticket, kind, f"sandbox status {status}"))
            if status in WORKING:
                result.working += 1


def compare_lists(run, result, company, key):
    """Passenger lists: the query shows the current ones (a replaced list leaves it) and no status."""
    from backoffice.core.choices import SyncState
    from backoffice.passenger_lists.choices import ListState
    from backoffice.passenger_lists.models import PassengerList

    remote_lists = defaultdict(list)
    for item in run.sandbox.pages(LIST_PATH, key):
        remote_lists[str(item.get("id") or "")].append(item)
    result.on_sandbox += sum(len(items) for items in remote_lists.values())
    local_lists = list(PassengerList.objects.filter(company=company))
    known = {plist.remote_id for plist in local_lists if plist.remote_id}
    expeditions = Counter((item.get("expeditionNumber"), item.get("expeditionTime"))
                          for items in remote_lists.values() for item in items)
    for ettn, items in remote_lists.items():
        if ettn not in known:
            result.duplicates.append(("passenger_list", ettn, f"{items[0].get('expeditionNumber')}: unknown here"))
    for (number, moment), count in expeditions.items():
        if count > 1:
            result.duplicates.append(("passenger_list", number, f"{count} current lists of one expedition"))
    for plist in local_lists:
        result.saved += 1
        items = remote_lists.get(plist.remote_id) if plist.remote_id else None
        current = plist.state != ListState.REPLACED
        if not items:
            if current:
                result.lost.append(describe(plist, "passenger_list", "not among the sandbox's current lists"))
            else:
                result.found += 1  # replaced on both sides
            continue
        result.found += 1
        if plist.sync_state != SyncState.SYNCED or not current:
            result.differs.append(describe(plist, "passenger_list", "current on the sandbox"))


def last_run(record):
    """The newest job that worked on the record: its own, or a batch or action job whose selection has it."""
    from backoffice.core.jobs import runs_of
    from backoffice.core.models import JobRun

    runs = list(runs_of(record, 1))
    if runs:
        return runs[0]
    selections = JobRun.objects.filter(company=record.company_id,
                                       target__startswith=f"{record._meta.label_lower}:").filter(target__contains="+")
    for run in selections.order_by("-pk"):
        args = (run.job_args or {}).get("args") or []
        if any(isinstance(arg, list) and record.pk in arg for arg in args):
            return run
    return None


def describe(record, kind, what) -> str:
    number = getattr(record, "ticket_number", "") or getattr(record, "expedition_number", "") or \
        chaos_domains.label_of(record)
    run = last_run(record)
    job = f"; last job {run.name} #{run.pk} {run.status} x{run.attempts}: {run.message[:160]}" if run else ""
    return (f"{kind} {number} #{record.pk} ({record.company.auth_method}): {what}; here {record.sync_state}, "
            f"status {record.remote_status}, attempts {record.attempts}, action {record.pending_action or '-'}, "
            f"error {record.last_error[:160] or '-'}{job}")


def requests_on(stats, method, path, statuses=None) -> int:
    return sum(row["count"] for row in stats["requests"] if row["method"] == method and row["path"] == path
               and (statuses is None or row["status"] in statuses))


def queue_figures() -> str:
    """What RQ holds in every queue it knows (rq:queues: the shared one and any company's): queued, started and
    scheduled jobs, and how many scheduled ones are overdue (nobody moves them to the queue: no live scheduler)."""
    import django_rq
    from rq import Queue
    from rq.registry import ScheduledJobRegistry, StartedJobRegistry

    try:
        connection = django_rq.get_connection("default")
        queued = started = scheduled = overdue = 0
        for queue in Queue.all(connection=connection):
            registry = ScheduledJobRegistry(queue=queue)
            queued += queue.count
            started += StartedJobRegistry(queue=queue).count
            scheduled += registry.count
            overdue += connection.zcount(registry.key, 0, time.time() - 10)
        return f"{queued} queued, {started} started, {scheduled} scheduled ({overdue} overdue by more than 10 s)"
    except Exception as exc:  # a figure, not a check
        return f"not readable ({exc.__class__.__name__})"


def log_counts(run) -> dict:
    counts = Counter()
    for path in run.logs.glob("worker-*.log"):
        text = path.read_text(errors="replace")
        counts["tracebacks"] += text.count("Traceback (most recent call last)")
        counts["Redis connection errors"] += text.count("could not connect to Redis")
        counts["work-horses that died"] += text.count("Work horse killed for job")
    return counts


# --- the report --------------------------------------------------------------------------------------------

def report(run, figures) -> bool:
    from django.db.models import Count

    from backoffice.core.choices import JobStatus
    from backoffice.core.models import JobRun

    o, t = run.options, run.tally
    stats = run.sandbox.stats()
    comparison = compare(run)
    busy = local_busy(run.companies)
    stuck_runs = list(active_runs().order_by("pk")[:10])
    stuck_runs_count = active_runs().count()
    run_time = time.monotonic() - run.workers_from
    tokens = stats.get("tokens_issued", 0)
    answers_401 = stats.get("responses_401", stats.get("by_status", {}).get("401", 0))
    token_limit = t.workers_started * (run_time / o.token_lifetime + 1) + answers_401
    by_status = stats.get("by_status", {})
    refused_by_path = Counter({path: requests_on(stats, method, path, {400, 409, 422}) for method, path in
                               [("POST", path) for path in (*TICKET_PATHS.values(), LIST_PATH)]
                               + chaos_domains.CREATE_PATHS})
    creates_refused = sum(refused_by_path.values())
    list_applied = requests_on(stats, "POST", LIST_PATH,
                               {200, 500, 0} if run.after_apply else {200, 0})

    say("")
    say("== make chaos ==")
    kinds = ", ".join(f"{name} {count}" for name, count in figures.items() if name != "documents")
    say(f"documents:   {figures['documents']} ({kinds}); companies: API key 1, service user 1; "
        f"database: {'PostgreSQL' if run.pg_database else 'SQLite'}; seed {o.seed}")
    say(f"chaos:       {run.chaos_seconds:.0f} s: work-horses killed {t.horses_killed}, "
        f"workers killed {t.workers_killed} (worker processes started {t.workers_started}), "
        f"Redis restarts {t.redis_restarts}, 429 storms {t.storms}; "
        f"calls of every service ({', '.join(FAULT_GLOBS)}) answered {o.error_rate:.0%} 500 "
        f"{'after applying' if run.after_apply else 'BEFORE applying (sandbox without after_apply)'}"
        f"{f', {o.drop_rate:.0%} dropped after applying' if o.drop_rate and run.after_apply else ''}; "
        f"bearer tokens expire after {o.token_uses} uses"
        f"{'' if run.token_uses else ' (approximated: sandbox without token_max_uses)'}, "
        f"live {o.token_lifetime} s")
    say(f"actions:     drafts sent {t.sent_tickets} in {t.sent_requests} requests, tickets cancelled "
        f"{t.cancelled_tickets} in {t.cancel_requests} requests, requests refused {t.actions_refused}")
    say("follow-ups:  " + (", ".join(f"{name} {count}" for name, count in sorted(run.domains.tally.items()))
                           or "none"))
    for reason, count in run.domains.refusals.most_common():
        logging.getLogger("chaos").warning("request refused %s time(s): %s", count, reason)  # logs/driver.log
    unexpected = ", ".join(f"{name} {count}" for name, count in t.unexpected_exits.items()) or "none"
    say(f"processes:   unexpected exits {unexpected}; worker logs: "
        + ", ".join(f"{name} {count}" for name, count in log_counts(run).items()))
    say(f"sandbox:     {sum(row['count'] for row in stats['requests'])} requests, by status "
        + ", ".join(f"{status} {count}" for status, count in sorted(by_status.items())))
    jobs = dict(JobRun.objects.values_list("status").annotate(n=Count("pk")).values_list("status", "n"))
    say("jobs:        " + ", ".join(f"{JobStatus(status).label} {count}" for status, count in sorted(jobs.items()))
        + f"; lost and enqueued again {sum(JobRun.objects.values_list('lost_count', flat=True))}")
    say(f"queue:       {queue_figures()}")
    settled = (f"mirror matched the sandbox after {run.converged:.0f} s, jobs left done "
               f"{run.settle_seconds - run.converged:.0f} s later" if run.converged is not None
               else f"mirror did not match the sandbox within {run.settle_seconds:.0f} s")
    say(f"settle:      {settled}; wall time {time.monotonic() - run.started:.0f} s of {o.max_seconds:.0f}")
    say("")
    errors = t.create_errors + run.domains.errors
    checks = [
        ("documents created through the services without error", f"{len(errors)} errors", not errors, errors),
        ("documents saved locally / found once on the sandbox", f"{comparison.saved} / {comparison.found}",
         comparison.saved == comparison.found, []),
        ("lost (saved locally, not on the sandbox)", len(comparison.lost), not comparison.lost, comparison.lost),
        ("duplicates on the sandbox", len(comparison.duplicates), not comparison.duplicates,
         [" ".join(map(str, d)) for d in comparison.duplicates]),
        ("passenger lists created on the sandbox (request log) / lists",
         f"{list_applied} / {figures['passenger lists']}", list_applied <= figures["passenger lists"], []),
        ("creates refused by the sandbox (sent twice or invalid)", creates_refused, creates_refused == 0,
         [f"{path}: {count}" for path, count in refused_by_path.items() if count]),
        ("status differs from the sandbox's", f"{len(comparison.differs)} (tickets the sandbox still processes: "
                                              f"{comparison.working})", not comparison.differs, comparison.differs),
        ("stuck records (queued, sending or action pending)", busy, busy == 0, stuck_records(run)),
        ("stuck jobs (still active)", stuck_runs_count, stuck_runs_count == 0,
         [f"{r.name} {r.target} {r.status} x{r.attempts} lost {r.lost_count}: {r.message[:160]}" for r in stuck_runs]),
        (f"tokens issued <= {t.workers_started} x ({run_time:.0f} / {o.token_lifetime} + 1) + {answers_401} (401s)",
         f"{tokens} <= {token_limit:.0f}", tokens <= token_limit, []),
    ]
    width = max(len(name) for name, *_ in checks)
    failed = []
    for name, figure, ok, examples in checks:
        say(f"{'ok  ' if ok else 'FAIL'} {name:<{width}}  {figure}")
        if not ok:
            failed.append(name)
            for example in examples[:8]:
                say(f"       - {example}")
            if len(examples) > 8:
                say(f"       - ... and {len(examples) - 8} more")
    say("")
    say("per domain:  " + ", ".join(DOMAIN_FIGURES) + "; stuck")
    stuck = stuck_by_domain(run)
    for name, counts in comparison.by_domain.items():
        say(f"  {name:<18} " + " / ".join(str(counts[label]) for label in DOMAIN_FIGURES) + f"; {stuck[name]}")
    say("")
    say("result:      " + ("every check passed" if not failed else f"{len(failed)} check(s) failed: "
                           + "; ".join(failed)))
    return not failed


def stuck_records(run) -> list:
    from django.db.models import Q

    from backoffice.core.choices import SyncState

    busy = Q(sync_state__in=[SyncState.QUEUED, SyncState.SENDING]) | ~Q(pending_action="")
    found = []
    for model in record_models():
        for record in model.objects.filter(busy, company__in=run.companies)[:10]:
            found.append(describe(record, model._meta.model_name, "stuck"))
    return found


def stuck_by_domain(run) -> Counter:
    """Stuck records (queued, sending, action pending) per domain of the report."""
    from django.db.models import Q

    from backoffice.core.choices import SyncState

    busy = Q(sync_state__in=[SyncState.QUEUED, SyncState.SENDING]) | ~Q(pending_action="")
    counts = Counter()
    for model in record_models():
        counts[DOMAIN_OF.get(model._meta.app_label, model._meta.app_label)] += \
            model.objects.filter(busy, company__in=run.companies).count()
    return counts


DOMAIN_OF = {"tickets": "tickets", "passenger_lists": "passenger lists", "current_accounts": "current accounts",
             "chart_of_accounts": "chart accounts", "invoices": "invoices", "dispatch": "dispatch notes",
             "dispatch_inbox": "replies", "ledger": "ledger uploads"}


# --- main --------------------------------------------------------------------------------------------------

def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--documents", type=int, default=1000, help="documents created (default 1000)")
    parser.add_argument("--workers", type=int, default=4, help="RQ worker processes at a time (default 4)")
    parser.add_argument("--chaos-seconds", type=float, default=300, help="length of the chaos phase (default 300)")
    parser.add_argument("--settle-seconds", type=float, default=200, help="time the system gets to settle "
                                                                          "(default 200)")
    parser.add_argument("--max-seconds", type=float, default=600, help="wall time of the whole run (default 600)")
    parser.add_argument("--event-every", type=float, nargs=2, default=(8.0, 20.0), metavar=("MIN", "MAX"),
                        help="seconds between two chaos events (default 8 20)")
    parser.add_argument("--action-every", type=float, default=6.0, help="seconds between record actions (default 6)")
    parser.add_argument("--error-rate", type=float, default=0.1, help="share of ticket calls answered 500 after "
                                                                      "applying (default 0.1)")
    parser.add_argument("--dispatch-error-rate", type=float, default=0.1,
                        help="share of dispatch notes and replies the sandbox's tax authority puts in error (a "
                             "platform answer, not a fault; default 0.1)")
    parser.add_argument("--credits", type=int, default=2_000_000,
                        help="credits of each company, which set its rate-limit tier (default 2,000,000: T5, whose "
                             "invoice status queries let the polls follow 80 e-archive invoices one call each)")
    parser.add_argument("--drop-rate", type=float, default=0.0, help="share of ticket calls left unanswered after "
                                                                     "applying (default 0)")
    parser.add_argument("--token-uses", type=int, default=20, help="a bearer token expires after this many calls")
    parser.add_argument("--token-lifetime", type=int, default=120, help="bearer token lifetime in seconds")
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: a new one, printed)")
    parser.add_argument("--worker-args", default="", help="more arguments of `manage.py rqworker` (e.g. "
                                                          "\"--worker-class my.Worker\")")
    parser.add_argument("--keep", action="store_true", help="keep the run's directory (logs, databases)")
    options = parser.parse_args(argv)
    if options.seed is None:
        options.seed = random.SystemRandom().randrange(1_000_000)
    if options.workers < 1 or options.documents < 4:
        parser.error("at least 1 worker and 4 documents")
    return options


def main(argv=None) -> int:
    options = parse(argv)
    _LIBC.prctl(36, 1)  # PR_SET_CHILD_SUBREAPER: work-horses of killed workers become ours to stop
    run = Run(options)

    def interrupted(signum, frame):
        raise KeyboardInterrupt

    # SIGINT too: a shell starting us in the background leaves it ignored, which Python would keep.
    signal.signal(signal.SIGINT, interrupted)
    signal.signal(signal.SIGTERM, interrupted)
    say(f"chaos: run directory {run.workdir} (seed {options.seed})")
    passed = False
    code = 2
    try:
        run.setup()
        units, figures = plan_units(options.documents, options.chaos_seconds * 0.8, run.rng, run.domains)
        say(f"chaos: {options.documents} documents over {options.chaos_seconds:.0f} s, {options.workers} workers, "
            f"settle up to {options.settle_seconds:.0f} s")
        run.chaos(units, figures)
        say(f"chaos: faults off after {run.chaos_seconds:.0f} s; settling")
        run.settle()
        passed = report(run, figures)
        code = 0 if passed else 1
    except KeyboardInterrupt:
        say("chaos: interrupted; stopping everything")
        code = 130
    except RunError as exc:
        say(f"chaos: the run could not be made: {exc}")
    finally:
        run.cleanup()
        if passed and not options.keep:
            import shutil

            shutil.rmtree(run.workdir, ignore_errors=True)
        else:
            say(f"chaos: logs and databases kept in {run.workdir}")
    return code


if __name__ == "__main__":
    sys.exit(main())
