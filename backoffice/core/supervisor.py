"""Keeps the long-running processes of `make run` alive and stops all of them, grandchildren included.

A child that exits while nobody asked it to is started again after a back-off (1 s doubling to 30 s, back
to 1 s once it has stayed up 60 s); the others keep running. A child that keeps dying is reported loudly
and still retried: the developer fixes the code, the runner keeps going.

Stopping: SIGTERM to every child (those others need, Redis, last), a bounded wait for their own shutdown
(an RQ worker finishes its job: warm shutdown), then SIGKILL to whatever is left of the process tree.
RQ's work-horse puts itself in its own process group (os.setpgrp in Worker.fork_work_horse), so signalling
the worker's group misses it, and a worker that dies first leaves it an orphan. Each child is started in
its own session, which setpgrp does not leave: the session id finds every process a child started, orphans
included. With subreaper=True (the runner owns its whole process tree) orphans are also re-parented to us.

Stdlib only, Linux only (/proc, prctl), like `make run`. Start children and call run() from one thread:
PR_SET_PDEATHSIG fires when the thread that started a child ends.
"""

import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

BACKOFF_FIRST = 1.0  # seconds before the first restart
BACKOFF_MAX = 30.0
STABLE_AFTER = 60.0  # a child up this long starts again from BACKOFF_FIRST when it dies
CRASH_LOOP = (5, 60.0)  # this many deaths within this many seconds: said loudly
STOP_TIMEOUT = 10.0  # seconds the children get to stop after SIGTERM before the tree is killed

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_LIBC = ctypes.CDLL(None, use_errno=True)  # loaded here: no dlopen between fork and exec
_print_lock = threading.Lock()


def say(name, line):
    """One console line, prefixed with who says it (a child's name, or "run")."""
    with _print_lock:
        sys.stdout.write(f"{name:>8} | {line}\n")
        sys.stdout.flush()


# The process table


@dataclass(frozen=True)
class Proc:
    ppid: int
    pgrp: int
    session: int
    state: str  # "Z": a zombie, dead but not reaped


def process_table() -> dict[int, Proc]:
    table = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as stat_file:
                stat = stat_file.read().decode(errors="replace")
        except OSError:  # gone meanwhile
            continue
        # The command name (field 2) is in parentheses and may hold spaces or ")": split after the last one.
        fields = stat.rsplit(")", 1)[1].split()
        table[int(entry.name)] = Proc(ppid=int(fields[1]), pgrp=int(fields[2]), session=int(fields[3]),
                                      state=fields[0])
    return table


def process_tree(table: dict[int, Proc], roots=(), sessions=()) -> set[int]:
    """The roots, every member of the sessions, and all their descendants (zombies included)."""
    sessions = set(sessions)
    found = {pid for pid, proc in table.items() if proc.session in sessions} | (set(roots) & table.keys())
    frontier = set(found)
    while frontier:
        frontier = {pid for pid, proc in table.items() if proc.ppid in frontier} - found
        found |= frontier
    return found


def alive(pid: int) -> bool:
    """Running (not a zombie)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat_file:
            return stat_file.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return False


def _kill(pids, sig):
    for pid in pids:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def become_subreaper():
    """Orphans of our descendants are re-parented to us instead of init: none escapes the stop."""
    _LIBC.prctl(_PR_SET_CHILD_SUBREAPER, 1)


def _death_signal_preexec(parent_pid):
    def preexec():
        # Runs in the child before exec: if the supervisor is killed outright, its children get SIGTERM.
        _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent_pid:  # the supervisor died before prctl: no signal would come
            os._exit(1)

    return preexec


# Children


class Backoff:
    """Seconds before a restart: first, doubled at each death up to maximum, back to first once the child
    had stayed up stable_after seconds."""

    def __init__(self, first=BACKOFF_FIRST, maximum=BACKOFF_MAX, stable_after=STABLE_AFTER):
        self.first, self.maximum, self.stable_after = first, maximum, stable_after
        self.delay = None

    def after_death(self, uptime: float) -> float:
        if self.delay is None or uptime >= self.stable_after:
            self.delay = self.first
        else:
            self.delay = min(self.delay * 2, self.maximum)
        return self.delay

    def reset(self):
        self.delay = None


def command(args, *, cwd=None, env=None):
    """A start function for Supervisor.add that runs args, its output shown line by line."""
    def start(**popen_options):
        return subprocess.Popen(args, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, errors="replace", bufsize=1, **popen_options)

    return start


@dataclass
class Child:
    name: str
    start: Callable[..., subprocess.Popen]  # called with the Popen options the supervisor needs
    needs: tuple[str, ...] = ()  # children this one must be restarted after (it loses them otherwise)
    before_start: Callable[[], None] | None = None
    backoff: Backoff = field(default_factory=Backoff)
    process: subprocess.Popen | None = None
    started_at: float = 0.0
    starts: int = 0
    restart_at: float | None = None  # monotonic time of the next start, while dead
    deaths: list = field(default_factory=list)  # (monotonic time, how it ended, delay before the restart)
    replacing: bool = False  # stopped on purpose to be started again at once
    kill_at: float | None = None
    loud_at: float | None = None  # when the crash loop was last announced

    @property
    def running(self):
        return self.process is not None


class Supervisor:
    def __init__(self, *, say=say, backoff_first=BACKOFF_FIRST, backoff_max=BACKOFF_MAX, stable_after=STABLE_AFTER,
                 crash_loop=CRASH_LOOP, stop_timeout=STOP_TIMEOUT, tick=0.2, subreaper=False):
        self.say = say
        self.backoff = (backoff_first, backoff_max, stable_after)
        self.crash_loop = crash_loop
        self.stop_timeout = stop_timeout
        self.tick = tick
        self.subreaper = subreaper
        self.children: list[Child] = []
        self.stopping = False
        self.hurry = False  # a second Ctrl-C: kill at once
        self._sessions: set[int] = set()  # sessions of dead children that may still hold processes
        self._readers: list[threading.Thread] = []
        if subreaper:
            become_subreaper()

    # Setting up

    def add(self, name, start, *, needs=(), before_start=None) -> Child:
        child = Child(name, start, tuple(needs), before_start, Backoff(*self.backoff))
        self.children.append(child)
        return child

    def child(self, name) -> Child:
        return next(child for child in self.children if child.name == name)

    def start_all(self):
        """Start every child in the order added; a child that cannot start at all stops the start-up."""
        for child in self.children:
            if not self.stopping:
                self._start(child)

    # Signals (handlers only set flags: the loop does the work)

    def request_stop(self, signum=None, frame=None):
        if self.stopping:
            self.hurry = True
        self.stopping = True

    # The loop

    def run(self) -> int:
        """Watch the children until a stop is requested, then stop them all. Returns the exit code: 1 when
        a process outlived its SIGKILL."""
        last_scan = 0.0
        while not self.stopping:
            self.step()
            if self.subreaper or self._sessions:
                now = time.monotonic()
                if now - last_scan >= 1.0:
                    last_scan = now
                    self._tidy(process_table())
            time.sleep(self.tick)
        self.say("run", "stopping… (Ctrl-C again to kill at once)")
        return 0 if self.stop_all() else 1

    def step(self):
        for child in self.children:
            if self.stopping:
                return
            now = time.monotonic()
            if child.running:
                code = child.process.poll()
                if code is not None:
                    self._exited(child, code, now)
                elif child.kill_at is not None and now >= child.kill_at:
                    self.say("run", f"{child.name} did not stop in {self.stop_timeout:g} s: killing it")
                    _kill(process_tree(process_table(), [child.process.pid], [child.process.pid]), signal.SIGKILL)
                    child.kill_at = None
            if not child.running and child.restart_at is not None and now >= child.restart_at:
                self._start(child, restart=True)

    def _start(self, child, restart=False):
        if self._sessions:  # what a dead incarnation left behind (an orphan work-horse) goes now
            self._tidy(process_table(), sig=signal.SIGKILL, wait=2.0)
        if child.before_start:
            try:
                child.before_start()
            except Exception as exc:  # a preparation that failed is said, the child starts anyway
                self.say("run", f"before starting {child.name}: {exc}")
        options = {"start_new_session": True, "preexec_fn": _death_signal_preexec(os.getpid())}
        try:
            process = child.start(**options)
        except Exception as exc:
            if not restart:
                raise RuntimeError(f"{child.name} could not start: {exc}") from exc
            self._died(child, f"could not start ({exc})", time.monotonic(), uptime=0.0)
            return
        child.process, child.started_at, child.restart_at = process, time.monotonic(), None
        child.replacing, child.kill_at = False, None
        child.starts += 1
        if process.stdout is not None:
            self._read(child.name, process.stdout)
        self.say("run", f"{'restarted' if restart else 'started'} {child.name} (pid {process.pid})")
        if restart:
            self._restart_dependents(child)

    def _read(self, name, stream):
        def pump():
            for raw in stream:
                self.say(name, raw.rstrip("\n"))

        reader = threading.Thread(target=pump, name=f"output of {name}", daemon=True)
        reader.start()
        self._readers = [thread for thread in self._readers if thread.is_alive()] + [reader]

    def _restart_dependents(self, needed):
        """A restarted Redis: an RQ worker reconnects by itself, but the scheduler process it forked died
        with the connection and is started again only at the worker's 10-minute maintenance."""
        for child in self.children:
            if needed.name not in child.needs:
                continue
            if child.running and not child.replacing:
                self.say("run", f"{needed.name} restarted: restarting {child.name} so that it reconnects fully")
                child.replacing = True
                child.kill_at = time.monotonic() + self.stop_timeout
                child.process.send_signal(signal.SIGTERM)
            elif not child.running:
                self.say("run", f"{needed.name} restarted: starting {child.name} at once")
                child.backoff.reset()  # it died of the missing dependency, not of itself
                child.restart_at = time.monotonic()

    def _exited(self, child, code, now):
        process, child.process = child.process, None
        self._sessions.add(process.pid)
        if child.replacing:
            self.say("run", f"{child.name} stopped: starting it again")
            child.restart_at = now
            child.replacing = False
            child.kill_at = None
            # Its work-horse, if it outlived it, goes before the new one starts (_start's tidy).
            return
        self._died(child, _describe(code), now, uptime=now - child.started_at)
        # Leftovers (a work-horse mid-job, the RQ scheduler process) are asked to stop now and killed at
        # the restart at the latest.
        self._tidy(process_table(), sig=signal.SIGTERM)

    def _died(self, child, how, now, uptime):
        delay = child.backoff.after_death(uptime)
        child.restart_at = now + delay
        child.deaths.append((now, how, delay))
        del child.deaths[:-100]  # a child dying for days keeps only its recent history
        at = time.strftime("%H:%M:%S", time.localtime(time.time() + delay))
        lived = f" after {uptime:.1f} s" if uptime else ""
        self.say("run", f"{child.name} {how}{lived}: restarting it in {delay:g} s (at {at})")
        count, window = self.crash_loop
        recent = [death for death in child.deaths if now - death[0] <= window]
        if len(recent) >= count and (child.loud_at is None or now - child.loud_at >= window):
            child.loud_at = now
            self.say("run", f"!!! {child.name} died {len(recent)} times within {window:g} s: it keeps failing "
                            f"(see its lines above). Still retrying, at most every {child.backoff.maximum:g} s; "
                            f"once fixed it comes back by itself. !!!")

    def _tidy(self, table, sig=None, wait=0.0):
        """Send sig to what is left in dead children's sessions (waiting up to wait seconds for it to go),
        forget the sessions that are empty (their ids may be reused), reap re-parented orphans when we are
        the subreaper."""
        signalled = set()
        for session in list(self._sessions):
            members = {pid for pid, proc in table.items() if proc.session == session and proc.state != "Z"}
            if not members:
                self._sessions.discard(session)
            elif sig:
                _kill(members, sig)
                signalled |= members
        self._wait_gone(signalled, wait)

    def _wait_gone(self, pids, seconds) -> set[int]:
        """Wait up to `seconds` for the pids to end (reaping orphans when we are the subreaper); those still alive."""
        end = time.monotonic() + seconds
        while True:
            if self.subreaper:
                self._reap(process_table())
            pids = {pid for pid in pids if alive(pid)}
            if not pids or time.monotonic() >= end:
                return pids
            time.sleep(0.05)

    def _reap(self, table):
        ours = {child.process.pid for child in self.children if child.running}
        me = os.getpid()
        for pid, proc in table.items():
            # Only orphans: a child's own Popen reaps it (and must see its exit code).
            if proc.ppid == me and proc.state == "Z" and pid not in ours:
                try:
                    os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    pass

    # Stopping

    def tree(self, table=None) -> set[int]:
        """Every live process of ours: the children, their sessions and descendants (with subreaper=True,
        every descendant of this process)."""
        table = process_table() if table is None else table
        roots = [child.process.pid for child in self.children if child.running]
        sessions = self._sessions | set(roots)
        if self.subreaper:
            roots.append(os.getpid())
        return {pid for pid in process_tree(table, roots, sessions) if pid != os.getpid() and table[pid].state != "Z"}

    def stop_all(self):
        """SIGTERM to the children (those that others need last), a bounded wait, then SIGKILL to the tree."""
        self.stopping = True
        deadline = time.monotonic() + self.stop_timeout
        needed = {name for child in self.children for name in child.needs}
        tiers = [[child for child in self.children if child.name not in needed],
                 [child for child in self.children if child.name in needed]]
        for number, tier in enumerate(tiers):
            running = [child for child in tier if child.running]
            for child in running:
                if child.process.poll() is None:
                    child.process.send_signal(signal.SIGTERM)
            # What the others need gets a moment even when they used up the time.
            tier_deadline = deadline if number == 0 else max(deadline, time.monotonic() + 2.0)
            while any(child.process.poll() is None for child in running):
                if self.hurry or time.monotonic() >= tier_deadline:
                    late = ", ".join(child.name for child in running if child.process.poll() is None)
                    self.say("run", f"killing {late} at once" if self.hurry
                             else f"{late} did not stop in time: killing")
                    break
                time.sleep(0.05)
        # The tree, including what the children left (an RQ work-horse in the middle of a job).
        table = process_table()
        left = self.tree(table)
        _kill(left, signal.SIGKILL)
        for child in self.children:
            if child.running:
                child.process.wait()
                self._sessions.add(child.process.pid)
                child.process = None
        left = self._wait_gone(left, 5.0)
        if left:
            self.say("run", f"!!! processes still alive after SIGKILL: {sorted(left)} !!!")
        self._tidy(process_table())
        for reader in self._readers:
            reader.join(2)
        return not left


def _describe(code):
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"
