"""`make run`'s supervisor (backoffice/core/supervisor.py) with real processes: a dead child is started
again with a growing back-off while the others keep running, a stop leaves no process behind (an RQ
work-horse in the middle of a job included), and a restarted Redis brings its scheduled jobs back.

Each test has its own embedded Redis on its own socket: the workers started here never see the suite's
queues. The supervisor runs in a thread of the test process; request_stop() is what its SIGINT and
SIGTERM handlers call in scripts/run.py.
"""

import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

import pytest
import redis
from rq import Queue
from rq.job import Job
from rq.registry import ScheduledJobRegistry

from backoffice.core import embedded_redis
from backoffice.core.supervisor import Backoff, Supervisor, alive, command, process_table
from tests.testapp.testing import wait_for

ROOT = Path(__file__).resolve().parent.parent
FOREVER = [sys.executable, "-c", "import signal; signal.pause()"]  # runs until a signal ends it


def load_run_script():
    spec = importlib.util.spec_from_file_location("make_run_script", ROOT / "scripts" / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Console:
    """The supervisor's console lines, kept for the assertions (and shown when one fails)."""

    def __init__(self):
        self.lines = []
        self._lock = threading.Lock()

    def __call__(self, name, line):
        with self._lock:
            self.lines.append(f"{name:>8} | {line}")

    def text(self):
        with self._lock:
            return "\n".join(self.lines)

    def has(self, fragment):
        return fragment in self.text()


@contextmanager
def supervising(supervisor, console):
    """start_all, run() in a thread; on leaving, stop (as Ctrl-C does) and check that it ended."""
    result = []
    thread = threading.Thread(target=lambda: result.append(supervisor.run()), daemon=True)
    try:
        supervisor.start_all()
        thread.start()
        yield result
    finally:
        supervisor.request_stop()
        if thread.is_alive():
            thread.join(supervisor.stop_timeout + 30)
        elif not thread.ident:  # never started (start_all failed): stop here
            supervisor.stop_all()
        left = supervisor.tree()
        for pid in left:  # never leave anything behind, even when the test failed
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        assert not thread.is_alive(), f"the supervisor did not stop:\n{console.text()}"


@pytest.fixture
def redis_dir():
    # A short path of its own: a unix socket path is limited to 107 bytes.
    path = Path(tempfile.mkdtemp(prefix="bo-sv-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def worker_env(tmp_path, redis_url):
    env = {key: value for key, value in os.environ.items()
           if key not in {"REDIS_URL", "DATABASE_URL", "SANDBOX_DATABASE_URL", "BACKOFFICE_EXTRA_APPS",
                          "DJANGO_SETTINGS_MODULE"}}
    env.update(REDIS_URL=redis_url, BACKOFFICE_VAR_DIR=str(tmp_path / "var"), DJANGO_DEVELOPMENT="1",
               PYTHONUNBUFFERED="1")
    return env


def rq_worker(supervisor, tmp_path, redis_url, **options):
    return supervisor.add("worker", command([sys.executable, str(ROOT / "manage.py"), "rqworker", "default",
                                             "--with-scheduler"], cwd=ROOT, env=worker_env(tmp_path, redis_url)),
                          **options)


def work_horse(worker_pid):
    """The pid of the worker's work-horse: its child in a process group of its own (os.setpgrp)."""
    return next((pid for pid, proc in process_table().items()
                 if proc.ppid == worker_pid and proc.pgrp == pid and proc.state != "Z"), None)


def test_backoff_doubles_up_to_the_cap_and_starts_over_after_a_stable_run():
    backoff = Backoff(first=1, maximum=30, stable_after=60)
    assert [backoff.after_death(uptime=2) for _ in range(7)] == [1, 2, 4, 8, 16, 30, 30]
    assert backoff.after_death(uptime=60) == 1  # it had stayed up a minute: a fresh failure
    assert backoff.after_death(uptime=0.5) == 2


def test_a_killed_child_is_started_again_and_the_others_keep_running():
    console = Console()
    supervisor = Supervisor(say=console, backoff_first=0.2, tick=0.05)
    victim = supervisor.add("victim", command(FOREVER))
    bystander = supervisor.add("bystander", command(FOREVER))
    with supervising(supervisor, console):
        first_pid, bystander_pid = victim.process.pid, bystander.process.pid
        os.kill(first_pid, signal.SIGKILL)
        wait_for(lambda: victim.starts == 2 and victim.running, timeout=30, message="the restart")
        assert victim.process.pid != first_pid and alive(victim.process.pid)
        assert bystander.process.pid == bystander_pid and alive(bystander_pid), console.text()
        assert console.has("victim was killed by SIGKILL after "), console.text()
        assert console.has("restarting it in 0.2 s (at "), console.text()
        assert console.has(f"restarted victim (pid {victim.process.pid})"), console.text()
        pids = supervisor.tree()
    assert not {pid for pid in pids if alive(pid)}


def test_a_child_that_keeps_dying_waits_longer_each_time_and_is_reported_loudly():
    console = Console()
    supervisor = Supervisor(say=console, backoff_first=0.2, backoff_max=0.8, crash_loop=(4, 60), tick=0.05)
    failing = supervisor.add("failing", command([sys.executable, "-c", "import sys; sys.exit(3)"]))
    steady = supervisor.add("steady", command(FOREVER))
    with supervising(supervisor, console):
        wait_for(lambda: len(failing.deaths) >= 5, timeout=60, message="five deaths")
        deaths = failing.deaths[:5]
        assert [delay for _, _, delay in deaths] == [0.2, 0.4, 0.8, 0.8, 0.8], console.text()
        assert all(how == "exited with code 3" for _, how, _ in deaths)
        # Each restart waited at least its back-off.
        for (died, _, delay), (next_died, _, _) in zip(deaths, deaths[1:]):
            assert next_died - died >= delay
        assert console.text().count("failing exited with code 3 after") >= 5
        # Loud once it died 4 times within the window, and not again at every death.
        assert console.text().count("!!! failing died ") == 1, console.text()
        assert "failing died 4 times within 60 s" in console.text()
        assert steady.starts == 1 and alive(steady.process.pid)


def test_a_child_deaf_to_sigterm_is_killed_at_the_deadline_and_a_second_ctrl_c_kills_at_once():
    deaf = [sys.executable, "-c", "import signal; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                                  "print('deaf now', flush=True); signal.pause()"]
    console = Console()
    supervisor = Supervisor(say=console, stop_timeout=0.5, tick=0.05)
    supervisor.add("deaf", command(deaf))
    with supervising(supervisor, console) as result:
        pid = supervisor.child("deaf").process.pid
        wait_for(lambda: console.has("deaf | deaf now"), timeout=30, message="the child to ignore SIGTERM")
        supervisor.request_stop()
        wait_for(lambda: result, timeout=30, message="the stop")
    assert result == [0] and not alive(pid), console.text()
    assert console.has("deaf did not stop in time: killing"), console.text()

    console = Console()
    supervisor = Supervisor(say=console, stop_timeout=600, tick=0.05)  # a deadline no test would wait for
    supervisor.add("deaf", command(deaf))
    with supervising(supervisor, console) as result:
        pid = supervisor.child("deaf").process.pid
        wait_for(lambda: console.has("deaf | deaf now"), timeout=30, message="the child to ignore SIGTERM")
        supervisor.request_stop()
        wait_for(lambda: console.has("stopping…"), timeout=10, message="the stop to begin")
        supervisor.request_stop()  # Ctrl-C again
        wait_for(lambda: result, timeout=30, message="the stop")
    assert result == [0] and not alive(pid), console.text()
    assert console.has("killing deaf at once"), console.text()


@pytest.mark.worker
def test_a_stop_leaves_no_process_behind_not_even_a_work_horse_in_the_middle_of_a_job(tmp_path, redis_dir):
    console = Console()
    socket_path = redis_dir / "redis.sock"
    redis_url = f"unix://{socket_path}"
    supervisor = Supervisor(say=console, stop_timeout=3, tick=0.05)
    supervisor.add("redis", lambda **options: embedded_redis.start(socket_path, **options))
    worker = rq_worker(supervisor, tmp_path, redis_url, needs=("redis",))
    with supervising(supervisor, console) as result:
        connection = redis.Redis.from_url(redis_url)
        job = Queue("default", connection=connection).enqueue("time.sleep", 600, job_timeout=900)
        horse = wait_for(lambda: work_horse(worker.process.pid), timeout=60,
                         message="the work-horse to run the job")
        wait_for(lambda: job.get_status(refresh=True) == "started", timeout=30, message="the job to start")
        tree = supervisor.tree()
        assert {horse, worker.process.pid} <= tree
        assert process_table()[horse].pgrp != process_table()[worker.process.pid].pgrp  # out of the worker's group
        supervisor.request_stop()  # what Ctrl-C does
        wait_for(lambda: result, timeout=supervisor.stop_timeout + 30, message="the stop")
    assert result == [0], console.text()
    left = {pid for pid in tree if alive(pid)}
    assert not left, f"left after the stop: {left}\n{console.text()}"
    assert console.has("worker did not stop in time: killing"), console.text()


@pytest.mark.worker
def test_a_worker_that_dies_does_not_leave_its_work_horse_running(tmp_path, redis_dir):
    console = Console()
    socket_path = redis_dir / "redis.sock"
    redis_url = f"unix://{socket_path}"
    supervisor = Supervisor(say=console, backoff_first=0.5, tick=0.05)
    supervisor.add("redis", lambda **options: embedded_redis.start(socket_path, **options))
    worker = rq_worker(supervisor, tmp_path, redis_url, needs=("redis",))
    with supervising(supervisor, console):
        Queue("default", connection=redis.Redis.from_url(redis_url)).enqueue("time.sleep", 600, job_timeout=900)
        first_worker = worker.process.pid
        horse = wait_for(lambda: work_horse(first_worker), timeout=60, message="the work-horse to run the job")
        os.kill(first_worker, signal.SIGKILL)
        wait_for(lambda: worker.starts == 2 and worker.running, timeout=30, message="the worker's restart")
        wait_for(lambda: not alive(horse), timeout=10, message="the orphaned work-horse to be gone")
        assert console.has("worker was killed by SIGKILL"), console.text()


@pytest.mark.worker
def test_a_restarted_redis_keeps_its_scheduled_jobs_and_the_worker_schedules_them_again(tmp_path, redis_dir):
    console = Console()
    socket_path = redis_dir / "redis.sock"
    redis_url = f"unix://{socket_path}"
    supervisor = Supervisor(say=console, backoff_first=0.5, tick=0.05)
    redis_child = supervisor.add("redis", lambda **options: embedded_redis.start(
        socket_path, append_only_dir=redis_dir, log_path=redis_dir / "redis.log", **options))
    run_script = load_run_script()
    worker = rq_worker(supervisor, tmp_path, redis_url, needs=("redis",),
                       before_start=lambda: run_script.release_dead_scheduler_locks(redis_url, private=True))
    with supervising(supervisor, console):
        connection = redis.Redis.from_url(redis_url)
        lock = "rq:scheduler-lock:default"
        wait_for(lambda: connection.exists(lock), timeout=60, message="the worker's scheduler to take its lock")
        queue = Queue("default", connection=connection)
        job = queue.enqueue_in(timedelta(seconds=5), "time.sleep", 0)
        assert job.id in ScheduledJobRegistry(queue=queue).get_job_ids()
        first_worker = worker.process.pid
        os.kill(redis_child.process.pid, signal.SIGKILL)  # a crash: no chance to write anything more
        wait_for(lambda: redis_child.starts == 2 and redis_child.running, timeout=60, message="Redis's restart")
        # The worker is started again after Redis so that it gets a scheduler (its old one died with the
        # connection): stopped and started, or started at once if it had died meanwhile.
        wait_for(lambda: worker.running and worker.started_at > redis_child.started_at, timeout=60,
                 message=f"the worker's restart\n{console.text()}")
        assert worker.process.pid != first_worker
        assert console.has("redis restarted: restarting worker") or console.has("redis restarted: starting worker"), \
            console.text()
        connection = redis.Redis.from_url(redis_url)
        assert connection.exists(job.key), f"the restart lost the job\n{(redis_dir / 'redis.log').read_text()}"
        # Kept by the append-only file, then enqueued at its time by the new worker's scheduler: not 10
        # minutes later, when RQ's maintenance would have started a scheduler despite the dead one's lock.
        wait_for(lambda: Job.fetch(job.id, connection=connection).get_status() == "finished", timeout=60,
                 message=f"the scheduled job to run after the restart\n{console.text()}")


def test_scheduler_locks_are_released_only_when_their_holder_is_gone(redis_dir):
    run_script = load_run_script()
    socket_path = redis_dir / "redis.sock"
    process = embedded_redis.start(socket_path)
    try:
        connection = redis.Redis.from_url(f"unix://{socket_path}")
        gone = subprocess.Popen([sys.executable, "-c", "pass"])
        gone.wait()
        here = socket.gethostname()
        holders = {"dead": (here, gone.pid), "alive": (here, os.getpid()), "elsewhere": ("other-host", gone.pid),
                   "unregistered": None}
        for queue_name, holder in holders.items():
            connection.set(f"rq:scheduler-lock:{queue_name}", f"scheduler-{queue_name}", ex=61)
            if holder:
                connection.hset(f"rq:scheduler:scheduler-{queue_name}",
                                mapping={"hostname": holder[0], "pid": str(holder[1])})

        def held():
            return sorted(key.decode().rsplit(":", 1)[1] for key in connection.keys("rq:scheduler-lock:*"))

        run_script.release_dead_scheduler_locks(f"unix://{socket_path}")
        assert held() == ["alive", "elsewhere", "unregistered"]
        # The embedded Redis of `make run`: its one worker is not running, so a holder with no record is dead.
        run_script.release_dead_scheduler_locks(f"unix://{socket_path}", private=True)
        assert held() == ["alive", "elsewhere"]
    finally:
        process.kill()
        process.wait()
