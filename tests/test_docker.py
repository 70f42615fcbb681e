"""docker/: the compose file is one that Debian's docker-compose accepts, and the image's build step that
collects static files works with the production storage. (No Docker engine here: nothing is built.)"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
COMPOSE = ROOT / "docker" / "compose.yml"
SECRETS = {
    "DJANGO_SECRET_KEY": "compose-validation-only",
    "FIELD_ENCRYPTION_KEYS": "compose-validation-only",
    "DJANGO_ALLOWED_HOSTS": "backoffice.example.com",
    "POSTGRES_PASSWORD": "compose-validation-only",
}

needs_compose = pytest.mark.skipif(shutil.which("docker-compose") is None,
                                   reason="docker-compose not installed (`make test` installs Debian's package as root)")


def compose(*args, env, tmp_path):
    # No docker/.env of a developer may leak into the check: an empty env file plus what the test gives.
    empty = tmp_path / "empty.env"
    empty.write_text("")
    clean = {key: value for key, value in os.environ.items() if key not in SECRETS}
    return subprocess.run(["docker-compose", "--env-file", str(empty), "-f", str(COMPOSE), *args],
                          cwd=ROOT, env={**clean, **env}, capture_output=True, text=True, timeout=60)


@needs_compose
def test_compose_file_is_accepted_with_every_service(tmp_path):
    result = compose("config", env=SECRETS, tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    services = compose("config", "--services", env=SECRETS, tmp_path=tmp_path).stdout.split()
    assert set(services) == {"postgres", "redis", "migrate", "web", "worker", "cron"}
    config = result.stdout
    assert "DJANGO_PRODUCTION: '1'" in config
    assert "gunicorn" in config and "--with-scheduler" in config and "backoffice.cron" in config
    assert "service_completed_successfully" in config  # web, worker, cron wait for the migrations


@needs_compose
def test_compose_scales_the_workers_by_a_number(tmp_path):
    """WORKERS in docker/.env (or --scale worker=N) runs N workers: the worker service holds nothing that exists once
    per host (a container name, a published port), so N of them can run side by side (docs/SCALING.md)."""
    def worker(env):
        result = compose("config", env=env, tmp_path=tmp_path)
        assert result.returncode == 0, result.stderr
        # The worker service's block of the YAML compose prints: from "  worker:" to the next service.
        return re.search(r"^  worker:\n(.*?)(?=^  \S|^\S)", result.stdout, re.M | re.S).group(1)

    default, scaled = worker(SECRETS), worker({**SECRETS, "WORKERS": "4"})
    assert re.search(r"^    scale: 1$", default, re.M) and re.search(r"^    scale: 4$", scaled, re.M)
    assert "container_name:" not in scaled and "ports:" not in scaled


@needs_compose
def test_a_worker_host_names_the_shared_database_redis_and_media(tmp_path):
    """A host of a larger deployment points its services at the shared PostgreSQL, Redis and media storage from
    docker/.env alone (docs/SCALING.md), and passes the lane count to the containers."""
    shared = {"DATABASE_HOST": "db.internal", "REDIS_URL": "redis://:secret@redis.internal:6379/0",
              "MEDIA_VOLUME": "/srv/backoffice-media", "TICKET_PUSH_CONCURRENCY": "2"}
    result = compose("config", env={**SECRETS, **shared}, tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    worker = re.search(r"^  worker:\n(.*?)(?=^  \S|^\S)", result.stdout, re.M | re.S).group(1)
    assert "@db.internal:5432/backoffice" in worker and "redis://:secret@redis.internal:6379/0" in worker
    assert "/srv/backoffice-media:/app/var/media" in worker and "TICKET_PUSH_CONCURRENCY: '2'" in worker


@needs_compose
def test_compose_refuses_to_run_without_the_secrets(tmp_path):
    result = compose("config", env={key: value for key, value in SECRETS.items() if key != "DJANGO_SECRET_KEY"},
                     tmp_path=tmp_path)
    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY" in result.stderr


def test_image_collectstatic_step_works_with_production_storage(tmp_path):
    """The Dockerfile's collectstatic, with its throw-away build-time values: hashed names and a manifest."""
    env = {key: value for key, value in os.environ.items()
           if key not in {"DATABASE_URL", "BACKOFFICE_EXTRA_APPS", "DJANGO_SETTINGS_MODULE"}}
    env.update(DJANGO_PRODUCTION="1", DJANGO_SECRET_KEY="build-only-not-a-secret",
               FIELD_ENCRYPTION_KEYS="YnVpbGQtb25seS1ub3QtYS1zZWNyZXQtMDEyMzQ1Njc=",
               BACKOFFICE_VAR_DIR=str(tmp_path / "var"), DJANGO_STATIC_ROOT=str(tmp_path / "static"))
    dockerfile = (ROOT / "docker" / "Dockerfile").read_text()
    assert "YnVpbGQtb25seS1ub3QtYS1zZWNyZXQtMDEyMzQ1Njc=" in dockerfile and "collectstatic --noinput" in dockerfile
    result = subprocess.run([sys.executable, "manage.py", "collectstatic", "--noinput"], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "static" / "staticfiles.json").exists()
    assert (tmp_path / "static" / "admin").is_dir()
