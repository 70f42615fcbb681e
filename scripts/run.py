"""`make run`: prepare the databases and demo data, then supervise every process of the back-office.

Children: the embedded Redis (only when REDIS_URL is unset), the sandbox server, the web UI, an RQ
worker with scheduler and the RQ cron runner. Each child's output is shown prefixed with its name. One
Ctrl-C (SIGINT) or SIGTERM stops them all; if any child dies, the others are stopped and this exits 1.

Environment: BACKOFFICE_HOST (127.0.0.1), BACKOFFICE_WEB_PORT (8000), SANDBOX_PORT (8001),
BACKOFFICE_VAR_DIR (var/), REDIS_URL, DATABASE_URL, SANDBOX_URL (default from the sandbox port).
"""

import argparse
import ctypes
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# Local addresses only: never through a proxy from the environment.
NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))
STOP_TIMEOUT = 10  # seconds a child gets to stop after SIGTERM before SIGKILL
_print_lock = threading.Lock()


def say(name, line):
    with _print_lock:
        sys.stdout.write(f"{name:>8} | {line}\n")
        sys.stdout.flush()


_LIBC = ctypes.CDLL(None, use_errno=True)  # loaded here: no dlopen between fork and exec
_PARENT = os.getpid()


def _die_with_parent():
    """Runs in the child before exec. Children run in their own session (a terminal's Ctrl-C reaches only
    us, so we stop them in order); PR_SET_PDEATHSIG still takes them down if this supervisor is killed."""
    _LIBC.prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG
    if os.getppid() != _PARENT:  # the supervisor died before prctl: no signal would come
        os._exit(1)


class Child:
    def __init__(self, name, process):
        self.name = name
        self.process = process
        self.reader = None

    def start_reader(self):
        def pump():
            for raw in self.process.stdout:
                say(self.name, raw.rstrip("\n"))

        self.reader = threading.Thread(target=pump, daemon=True)
        self.reader.start()


class Supervisor:
    def __init__(self, env):
        self.env = env
        self.children: list[Child] = []
        self.stopping = False

    def spawn(self, name, args, extra_env=None):
        process = subprocess.Popen(
            args, cwd=ROOT, env={**self.env, **(extra_env or {})}, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, errors="replace", bufsize=1, start_new_session=True,
            preexec_fn=_die_with_parent,
        )
        child = Child(name, process)
        child.start_reader()
        self.children.append(child)
        say("run", f"started {name} (pid {process.pid})")
        return child

    def adopt(self, name, process):
        self.children.append(Child(name, process))
        say("run", f"started {name} (pid {process.pid})")

    def request_stop(self, signum, frame):
        self.stopping = True

    def stop_all(self):
        """Stop in reverse start order (Redis last, so workers can say goodbye), then kill what is left."""
        for child in reversed(self.children):
            if child.process.poll() is None:
                child.process.send_signal(signal.SIGTERM)
                try:
                    child.process.wait(STOP_TIMEOUT)
                except subprocess.TimeoutExpired:
                    say("run", f"{child.name} did not stop in {STOP_TIMEOUT} s: killing it")
            # Also whatever it left behind in its process group (an RQ work horse, say).
            try:
                os.killpg(child.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            child.process.wait()
            if child.reader:
                child.reader.join(2)

    def watch(self):
        """Wait for a signal or for a child to die. Returns the exit code."""
        while not self.stopping:
            for child in self.children:
                code = child.process.poll()
                if code is not None:
                    say("run", f"{child.name} exited with code {code}: stopping everything")
                    self.stop_all()
                    return 1
            time.sleep(0.2)
        say("run", "stopping…")
        self.stop_all()
        say("run", "all stopped")
        return 0


def port_free(host, port):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def manage(*args):
    return [sys.executable, str(ROOT / "manage.py"), *args]


def prepare(env, sandbox):
    """Migrate both databases and load the demo data (idempotent), failing loudly."""
    steps = [("migrate", manage("migrate", "--noinput"))]
    if sandbox:
        steps.append(("migrate sandbox", manage("migrate", "--noinput", "--settings=backoffice.sandbox.settings")))
    steps.append(("seed_demo", manage("seed_demo", *([] if sandbox else ["--no-sandbox"]))))
    for name, args in steps:
        process = subprocess.Popen(args, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True, errors="replace")
        for line in process.stdout:
            say("prepare", line.rstrip("\n"))
        if process.wait() != 0:
            say("run", f"{name} failed with code {process.returncode}")
            sys.exit(process.returncode)


def announce_when_ready(url, supervisor, show_banner, timeout=60):
    """Print the addresses and logins once the health endpoint says every check is fine (or at the timeout),
    so that they are not buried under the children's start-up output."""
    def poll():
        deadline = time.monotonic() + timeout
        while not supervisor.stopping:
            try:
                with NO_PROXY.open(url, timeout=3) as response:
                    if response.status == 200:
                        show_banner("everything is up")
                        return
            except Exception:
                pass
            if time.monotonic() > deadline:
                show_banner(f"not every check is ok yet: see {url}")
                return
            time.sleep(2)

    threading.Thread(target=poll, daemon=True).start()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--no-prepare", action="store_true", help="skip migrate and seed_demo")
    options = parser.parse_args(argv)

    host = os.environ.get("BACKOFFICE_HOST", "127.0.0.1")
    web_port = int(os.environ.get("BACKOFFICE_WEB_PORT", 8000))
    sandbox_port = int(os.environ.get("SANDBOX_PORT", 8001))
    var_dir = Path(os.environ.get("BACKOFFICE_VAR_DIR", ROOT / "var")).resolve()
    var_dir.mkdir(parents=True, exist_ok=True)

    env = dict(os.environ)
    env["BACKOFFICE_VAR_DIR"] = str(var_dir)
    env["PYTHONUNBUFFERED"] = "1"
    # `make run` is development: DEBUG, the development secret key, demo data (settings.DEVELOPMENT).
    env["DJANGO_DEVELOPMENT"] = "1"
    env.setdefault("SANDBOX_URL", f"http://{host}:{sandbox_port}")
    # The sandbox's control API (fault switches) answers only with this token.
    from backoffice.core.management import demo

    env.setdefault("SANDBOX_CONTROL_TOKEN", demo.load_or_create(var_dir)["sandbox.control_token"])

    sandbox = (ROOT / "backoffice" / "sandbox" / "settings.py").exists()
    cron = (ROOT / "backoffice" / "cron.py").exists()

    busy = [port for port in ([web_port] + ([sandbox_port] if sandbox else [])) if not port_free(host, port)]
    if busy:
        say("run", f"port(s) {', '.join(map(str, busy))} on {host} already in use (another `make run`?)")
        return 2

    if not options.no_prepare:
        try:
            prepare(env, sandbox)
        except KeyboardInterrupt:
            return 130

    supervisor = Supervisor(env)
    signal.signal(signal.SIGINT, supervisor.request_stop)
    signal.signal(signal.SIGTERM, supervisor.request_stop)
    try:
        if not os.environ.get("REDIS_URL"):
            from backoffice.core import embedded_redis

            socket_path = var_dir / "redis.sock"
            process = embedded_redis.start(socket_path, log_path=var_dir / "redis.log",
                                           start_new_session=True, preexec_fn=_die_with_parent)
            supervisor.adopt("redis", process)
            env["REDIS_URL"] = f"unix://{socket_path}"

        if sandbox:
            if (ROOT / "backoffice" / "sandbox" / "management" / "commands" / "sandbox_serve.py").exists():
                args = manage("sandbox_serve", f"{host}:{sandbox_port}", "--settings=backoffice.sandbox.settings")
            else:
                args = manage("runserver", f"{host}:{sandbox_port}", "--noreload",
                              "--settings=backoffice.sandbox.settings")
            supervisor.spawn("sandbox", args)
        else:
            say("run", "backoffice/sandbox/settings.py not found: no sandbox server")
        # The web pages as users see them: the product's own error pages (a wrong address is the Turkish
        # "page not found" with what to do next, not Django's English debug page). DJANGO_DEBUG=1 make run
        # brings the debug pages back; --insecure serves the static files with DEBUG off.
        supervisor.spawn("web", manage("runserver", f"{host}:{web_port}", "--noreload", "--insecure"),
                         extra_env={"DJANGO_DEBUG": os.environ.get("DJANGO_DEBUG", "0")})
        supervisor.spawn("worker", manage("rqworker", "default", "--with-scheduler"))
        if cron:
            supervisor.spawn("cron", manage("rqcron", "backoffice.cron"))
        else:
            say("run", "backoffice/cron.py not found: no cron runner")
    except Exception as exc:
        say("run", f"start-up failed: {exc}")
        supervisor.stop_all()
        return 1

    def show_banner(status):
        banner(status, host, web_port, sandbox_port if sandbox else None, var_dir, env["REDIS_URL"])

    announce_when_ready(f"http://{host}:{web_port}/health/", supervisor, show_banner)
    return supervisor.watch()


def banner(status, host, web_port, sandbox_port, var_dir, redis_url):
    from backoffice.core.management import demo

    values = demo.read(var_dir / demo.FILENAME)
    lines = ["", status, f"web UI:   http://{host}:{web_port}/   (health: http://{host}:{web_port}/health/)"]
    if sandbox_port:
        lines.append(f"sandbox:  http://{host}:{sandbox_port}/   (admin: {values.get('sandbox.admin_user', '?')} / "
                     f"{values.get('sandbox.admin_password', '?')})")
    lines.append(f"redis:    {redis_url.split('@')[-1]}")
    for role, username in demo.DEMO_USERS.items():
        lines.append(f"login:    {username} / {values.get(f'password.{username}', '?')}   ({role})")
    operator = demo.DEMO_OPERATOR
    lines.append(f"login:    {operator} / {values.get(f'password.{operator}', '?')}   (superuser: /admin/, /admin/rq/)")
    lines += [f"secrets:  {var_dir / demo.FILENAME}", "Ctrl-C stops everything.", ""]
    for line in lines:
        say("run", line)


if __name__ == "__main__":
    sys.exit(main())
