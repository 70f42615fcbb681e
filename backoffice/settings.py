"""One env-driven settings module.

Defaults give a working development setup with no services: SQLite (WAL) for the mirror, a second
SQLite file for the sandbox, and the embedded Redis that `make run` / `make test` start. Environment
variables switch to PostgreSQL, a real Redis and production hardening; the README lists every one.
"""

import os
from pathlib import Path

import dj_database_url
from django.utils.translation import gettext_lazy as _

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("BACKOFFICE_VAR_DIR", BASE_DIR / "var"))
VAR_DIR.mkdir(parents=True, exist_ok=True)


def env_bool(name, default=False):
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name, default=""):
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


PRODUCTION = env_bool("DJANGO_PRODUCTION")
DEBUG = env_bool("DJANGO_DEBUG", default=not PRODUCTION)

_DEV_SECRET = "dev-only-insecure-secret-key-change-me-in-production-0123456789abcdef"
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "" if PRODUCTION else _DEV_SECRET)
if PRODUCTION and not SECRET_KEY:
    raise RuntimeError("DJANGO_SECRET_KEY must be set when DJANGO_PRODUCTION is on")

# Fernet key(s) for credentials at rest, comma-separated, newest first (MultiFernet rotation).
# Development derives one from SECRET_KEY; production must set it (see core.crypto).
FIELD_ENCRYPTION_KEYS = env_list("FIELD_ENCRYPTION_KEYS")
if PRODUCTION and not FIELD_ENCRYPTION_KEYS:
    raise RuntimeError("FIELD_ENCRYPTION_KEYS must be set when DJANGO_PRODUCTION is on")

ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", "" if PRODUCTION else "127.0.0.1,localhost,testserver,[::1]")
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "django_rq",
    "django_tables2",
    "django_filters",
    "backoffice.core",
    "backoffice.subcompanies",
    "backoffice.tickets",
    "backoffice.passenger_lists",
]
# Test-only apps (the test suite sets tests.testapp); never set in production.
INSTALLED_APPS += env_list("BACKOFFICE_EXTRA_APPS")

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
    "backoffice.core.middleware.ActiveCompanyMiddleware",
]

ROOT_URLCONF = "backoffice.urls"
WSGI_APPLICATION = "backoffice.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "backoffice.core.context_processors.backoffice",
            ],
        },
    },
]


def _sqlite(path):
    # Web, worker and cron write at once: WAL lets readers go on while one writes, the busy timeout
    # waits for the lock instead of failing, and IMMEDIATE takes the write lock at BEGIN so that a
    # transaction never has to upgrade a read lock (the classic "database is locked" deadlock).
    return {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": str(path),
        "OPTIONS": {
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            "transaction_mode": "IMMEDIATE",
            "timeout": 30,
        },
        "TEST": {"NAME": str(VAR_DIR / f"test_{Path(path).name}")},
    }


def _database(url_var, sqlite_path):
    url = os.environ.get(url_var)
    if not url:
        return _sqlite(sqlite_path)
    config = dj_database_url.parse(url, conn_max_age=60, conn_health_checks=True)
    if config["ENGINE"] == "django.db.backends.sqlite3":
        return _sqlite(config["NAME"])
    return config


# The sandbox is another company's server: it runs with backoffice.sandbox.settings and its own
# database (SANDBOX_DATABASE_URL), and shares no table with the mirror.
DATABASES = {"default": _database("DATABASE_URL", VAR_DIR / "backoffice.sqlite3")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "core:dashboard"
LOGOUT_REDIRECT_URL = "login"

# Turkish first, English second; Istanbul time; Turkish number and date formats.
LANGUAGE_CODE = "tr"
LANGUAGES = [("tr", _("Turkish")), ("en", _("English"))]
LOCALE_PATHS = [BASE_DIR / "backoffice" / "locale"]
TIME_ZONE = "Europe/Istanbul"
USE_I18N = True
USE_TZ = True
USE_THOUSAND_SEPARATOR = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(os.environ.get("DJANGO_STATIC_ROOT", BASE_DIR / "staticfiles"))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if PRODUCTION
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}
# WhiteNoise serves the collected files (production, docker); development serves them from
# STATICFILES_DIRS through runserver, so there is nothing to collect first.
if PRODUCTION or STATIC_ROOT.exists():
    MIDDLEWARE.insert(1, "whitenoise.middleware.WhiteNoiseMiddleware")
MEDIA_ROOT = Path(os.environ.get("DJANGO_MEDIA_ROOT", VAR_DIR / "media"))
MEDIA_URL = "/media/"

# Redis holds only the queue. Unset REDIS_URL means the embedded server that `make run` starts on a
# socket in var/ (see scripts/embedded_redis.py).
EMBEDDED_REDIS_SOCKET = VAR_DIR / "redis.sock"
REDIS_URL = os.environ.get("REDIS_URL") or f"unix://{EMBEDDED_REDIS_SOCKET}"
RQ_QUEUES = {
    "default": {"URL": REDIS_URL, "DEFAULT_TIMEOUT": 600},
}
RQ_SHOW_ADMIN_LINK = False
RQ = {"JOB_CLASS": "rq.job.Job"}

# The platform. Base URLs per environment; a Company may override each one. The sandbox runs on
# 127.0.0.1:8001 under one prefix per service, so the client's base URLs work unchanged.
SANDBOX_URL = os.environ.get("SANDBOX_URL", "http://127.0.0.1:8001").rstrip("/")
PLATFORM_SERVICES = ["auth", "ticket", "invoice", "accounting", "ledger", "dispatch", "crm"]
PLATFORM_ENVIRONMENTS = {
    "sandbox": {service: f"{SANDBOX_URL}/{service}" for service in PLATFORM_SERVICES},
    # Hosts of the provider's test and production environments: confirm against the provider and
    # override with PLATFORM_<ENV>_<SERVICE>_URL, e.g. PLATFORM_TEST_TICKET_URL.
    "test": {
        "auth": "https://identitytest.platform.invalid",
        "ticket": "https://ticketapitest.platform.invalid",
        "invoice": "https://efaturaapitest.platform.invalid",
        "accounting": "https://accountingapitest.platform.invalid",
        "ledger": "https://edefterapitest.platform.invalid",
        "dispatch": "https://eirsaliyeapitest.platform.invalid",
        "crm": "https://crmapitest.platform.invalid",
    },
    "production": {
        "auth": "https://identity.platform.invalid",
        "ticket": "https://ticketapi.platform.invalid",
        "invoice": "https://efaturaapi.platform.invalid",
        "accounting": "https://accountingapi.platform.invalid",
        "ledger": "https://edefterapi.platform.invalid",
        "dispatch": "https://eirsaliyeapi.platform.invalid",
        "crm": "https://crmapi.platform.invalid",
    },
}
for _env, _urls in PLATFORM_ENVIRONMENTS.items():
    for _service in list(_urls):
        _override = os.environ.get(f"PLATFORM_{_env.upper()}_{_service.upper()}_URL")
        if _override:
            _urls[_service] = _override.rstrip("/")

# Operation paths the documents do not show are defaults; override any of them here, e.g.
# PLATFORM_ENDPOINTS = {"crm.add_products": ("POST", "/v1/crm/customers/{customerUniqueId}/products")}.
PLATFORM_ENDPOINTS = {}
PLATFORM_TIMEOUT = (float(os.environ.get("PLATFORM_CONNECT_TIMEOUT", 5)), float(os.environ.get("PLATFORM_READ_TIMEOUT", 30)))
# Rate-limit windows are multiplied by this (tests shrink them; production keeps 1).
RATE_LIMIT_SCALE = float(os.environ.get("RATE_LIMIT_SCALE", 1))

# Records left QUEUED or SENDING longer than this are enqueued again by the sweep.
SYNC_STUCK_AFTER_SECONDS = int(os.environ.get("SYNC_STUCK_AFTER_SECONDS", 600))
# Background jobs (core.jobs): a transient error is retried after base * 2^(n-1) seconds (with jitter,
# at most the cap) until the attempts run out; then the job and its record are FAILED.
JOB_MAX_ATTEMPTS = int(os.environ.get("JOB_MAX_ATTEMPTS", 6))
JOB_RETRY_BASE_SECONDS = float(os.environ.get("JOB_RETRY_BASE_SECONDS", 15))
JOB_RETRY_MAX_SECONDS = float(os.environ.get("JOB_RETRY_MAX_SECONDS", 900))

SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False
# DENY everywhere; a view that shows a document preview in a frame of our own uses @xframe_options_sameorigin.
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
if PRODUCTION:
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", True)
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_HSTS_SECONDS = int(os.environ.get("DJANGO_HSTS_SECONDS", 31536000))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SECURE_REDIRECT_EXEMPT = [r"^health/?$"]

LOG_LEVEL = os.environ.get("LOG_LEVEL", "INFO")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"redact": {"()": "backoffice.core.redaction.RedactingFilter"}},
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {
        "console": {"class": "logging.StreamHandler", "formatter": "plain", "filters": ["redact"]},
    },
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        "django": {"handlers": ["console"], "level": LOG_LEVEL, "propagate": False},
        "urllib3": {"level": "WARNING"},
    },
}
