"""One env-driven settings module.

Defaults give a working development setup with no services: SQLite (WAL) for the mirror, a second
SQLite file for the sandbox, and the embedded Redis that `make run` / `make test` start. Environment
variables switch to PostgreSQL, a real Redis and production hardening; the README lists every one.
"""

import os
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit

from django.utils.translation import gettext_lazy as _

from backoffice.envconf import database, env_bool, env_list, var_dir

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = var_dir(BASE_DIR)


# Safe by default: anything but an explicit DJANGO_DEVELOPMENT=1 (set by `make run` and `make test`) is a
# production start, with DEBUG off, HTTPS hardening, and refusal to start without real secrets.
DEVELOPMENT = env_bool("DJANGO_DEVELOPMENT") and not env_bool("DJANGO_PRODUCTION")
PRODUCTION = not DEVELOPMENT
# DJANGO_DEBUG can only switch DEBUG off in development, never on outside it.
DEBUG = DEVELOPMENT and env_bool("DJANGO_DEBUG", default=True)

_DEV_SECRET = "dev-only-insecure-secret-key-change-me-in-production-0123456789abcdef"
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", _DEV_SECRET if DEVELOPMENT else "")
# Fernet key(s) for credentials at rest, comma-separated, newest first (MultiFernet rotation).
# Development derives one from SECRET_KEY; anywhere else it must be set (see core.crypto).
FIELD_ENCRYPTION_KEYS = env_list("FIELD_ENCRYPTION_KEYS")
if PRODUCTION:
    _refusals = []
    if not SECRET_KEY or SECRET_KEY == _DEV_SECRET:
        _refusals.append("DJANGO_SECRET_KEY must be set to a secret of your own (50 or more random characters)")
    if not FIELD_ENCRYPTION_KEYS:
        _refusals.append("FIELD_ENCRYPTION_KEYS must be set (python -c 'from cryptography.fernet import Fernet; "
                         "print(Fernet.generate_key().decode())'); a key derived from SECRET_KEY is for "
                         "development only")
    if _refusals:
        raise RuntimeError("Refusing to start outside development (DJANGO_DEVELOPMENT=1 is not set): "
                           + "; ".join(_refusals) + ".")

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
    "axes",
    "csp",
    "backoffice.core",
    "backoffice.subcompanies",
    "backoffice.tickets",
    "backoffice.passenger_lists",
    "backoffice.chart_of_accounts",
    "backoffice.current_accounts",
    "backoffice.invoices",
    "backoffice.ledger",
    "backoffice.dispatch",
    "backoffice.dispatch_inbox",
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
    "backoffice.core.middleware.IdleSessionMiddleware",
    "backoffice.core.middleware.RoleRequiredMiddleware",
    "backoffice.core.middleware.ActiveCompanyMiddleware",
    "csp.middleware.CSPMiddleware",
    # Last: it answers a locked-out sign-in (django-axes).
    "axes.middleware.AxesMiddleware",
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


# The sandbox is another company's server: it runs with backoffice.sandbox.settings and its own
# database (SANDBOX_DATABASE_URL), and shares no table with the mirror.
DATABASES = {"default": database("DATABASE_URL", VAR_DIR / "backoffice.sqlite3", VAR_DIR)}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [{"NAME": f"django.contrib.auth.password_validation.{name}"} for name in (
    "UserAttributeSimilarityValidator", "MinimumLengthValidator", "CommonPasswordValidator",
    "NumericPasswordValidator")]

# django-axes first: it refuses a locked-out user name or address before any password is checked.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
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
# Kept files (exports) are never served under a URL: only their views send them, after the company and
# role checks, and they are stored under random names.
MEDIA_URL = "/media/"

# Redis holds only the queue. Unset REDIS_URL means the embedded server that `make run` starts on a
# socket in var/ (see backoffice/core/embedded_redis.py).
EMBEDDED_REDIS_SOCKET = VAR_DIR / "redis.sock"
REDIS_URL = os.environ.get("REDIS_URL") or f"unix://{EMBEDDED_REDIS_SOCKET}"
RQ_QUEUES = {
    "default": {"URL": REDIS_URL, "DEFAULT_TIMEOUT": 600},
}
RQ_SHOW_ADMIN_LINK = False
RQ = {"JOB_CLASS": "rq.job.Job", "WORKER_CLASS": "backoffice.core.worker.Worker"}
# Fair between companies: each company's jobs on a queue of its own, taken in turn by the workers (core.jobs).
# Off (0): one queue for all, first in first out, as before; the fairness benchmark measures both.
JOB_QUEUE_PER_COMPANY = env_bool("JOB_QUEUE_PER_COMPANY", True)
# Seconds between two heartbeats of a running job; a job silent for 3 beats + 10 s is lost (core.jobs).
WORKER_HEARTBEAT_SECONDS = int(os.environ.get("WORKER_HEARTBEAT_SECONDS", 5))

# The platform. Base URLs per environment; a Company may override each one. The sandbox runs on
# 127.0.0.1:8001 under one prefix per service, so the client's base URLs work unchanged.
SANDBOX_URL = os.environ.get("SANDBOX_URL", "http://127.0.0.1:8001").rstrip("/")
# The sandbox environment is offered in the company form in development, or when the operator set
# SANDBOX_URL: a production start does not send credentials to whatever listens on 127.0.0.1:8001.
SANDBOX_ENABLED = DEVELOPMENT or bool(os.environ.get("SANDBOX_URL"))
PLATFORM_SERVICES = ["auth", "ticket", "invoice", "accounting", "ledger", "dispatch", "crm"]
# Hosts of the provider's production environment; its test environment's add "test" (identitytest, ...).
# Confirm them against the provider and override with PLATFORM_<ENV>_<SERVICE>_URL, e.g. PLATFORM_TEST_TICKET_URL.
_HOSTS = {"auth": "identity", "ticket": "ticketapi", "invoice": "efaturaapi", "accounting": "accountingapi",
          "ledger": "edefterapi", "dispatch": "eirsaliyeapi", "crm": "crmapi"}
PLATFORM_ENVIRONMENTS = {
    "sandbox": {service: f"{SANDBOX_URL}/{service}" for service in PLATFORM_SERVICES},
    "test": {service: f"https://{host}test.platform.invalid" for service, host in _HOSTS.items()},
    "production": {service: f"https://{host}.platform.invalid" for service, host in _HOSTS.items()},
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
# Service URLs typed in the product's pages (a company's "Advanced: service URLs") must be https, on one of
# these hosts (".example.com" allows its subdomains too) and resolve to public addresses only, checked
# again at every connection. Default: the hosts of the test and production URLs above. The URLs of
# settings and the environment themselves (PLATFORM_<ENV>_<SERVICE>_URL, SANDBOX_URL) are trusted as set.
PLATFORM_ALLOWED_HOSTS = env_list("PLATFORM_ALLOWED_HOSTS") or sorted({
    urlsplit(url).hostname for env, urls in PLATFORM_ENVIRONMENTS.items() if env != "sandbox"
    for url in urls.values() if urlsplit(url).hostname
})
# A call a user waits for in the browser (a ticket's HTML): one attempt, this read timeout (seconds).
PLATFORM_INTERACTIVE_READ_TIMEOUT = float(os.environ.get("PLATFORM_INTERACTIVE_READ_TIMEOUT", 10))
# Rate-limit windows are multiplied by this (tests shrink them; production keeps 1).
RATE_LIMIT_SCALE = float(os.environ.get("RATE_LIMIT_SCALE", 1))

# Records left QUEUED or SENDING longer than this are enqueued again by the sweep.
SYNC_STUCK_AFTER_SECONDS = int(os.environ.get("SYNC_STUCK_AFTER_SECONDS", 600))
# The credit forecast of the sub-company dashboard uses only usage reports at least this far apart: two
# reports 15 minutes apart say nothing about a month (subcompanies.report.forecast).
SUBCOMPANY_FORECAST_MIN_SPAN_HOURS = float(os.environ.get("SUBCOMPANY_FORECAST_MIN_SPAN_HOURS", 24))
# Background jobs (core.jobs): a transient error is retried after base * 2^(n-1) seconds (with jitter,
# at most the cap) until the attempts run out; then the job and its record are FAILED.
JOB_MAX_ATTEMPTS = int(os.environ.get("JOB_MAX_ATTEMPTS", 6))
JOB_RETRY_BASE_SECONDS = float(os.environ.get("JOB_RETRY_BASE_SECONDS", 15))
JOB_RETRY_MAX_SECONDS = float(os.environ.get("JOB_RETRY_MAX_SECONDS", 900))

SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False
# A session ends after this much idle time (core.middleware.IdleSessionMiddleware: the pages' own
# background refreshes do not count as activity), and at browser close when the user ticks "shared
# computer" on the sign-in page, or for everyone with DJANGO_SESSION_EXPIRE_AT_BROWSER_CLOSE=1.
SESSION_IDLE_SECONDS = int(os.environ.get("DJANGO_SESSION_IDLE_SECONDS", 8 * 3600))
SESSION_COOKIE_AGE = SESSION_IDLE_SECONDS
SESSION_EXPIRE_AT_BROWSER_CLOSE = env_bool("DJANGO_SESSION_EXPIRE_AT_BROWSER_CLOSE")
# DENY everywhere; a view that shows a document preview in a frame of our own uses @xframe_options_sameorigin.
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"

# Content-Security-Policy (django-csp; Django 5.2 has none built in): our own vendored files only, no
# inline script or style anywhere. The ticket view page widens style-src for the platform's HTML in its
# sandboxed frame (tickets.views.TicketHtmlView), and nothing else.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "frame-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    },
}

# Sign-in throttling (django-axes, failures kept in the database so every web process sees them): after
# AXES_FAILURE_LIMIT wrong passwords for one user name, or from one address, that name or address is
# refused for the cool-off time, even with the right password. Behind a reverse proxy set
# DJANGO_TRUSTED_PROXY_COUNT so that the address is the client's, not the proxy's.
AXES_FAILURE_LIMIT = int(os.environ.get("AXES_FAILURE_LIMIT", 5))
AXES_COOLOFF_TIME = timedelta(minutes=int(os.environ.get("AXES_COOLOFF_MINUTES", 15)))
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "backoffice.core.views.locked_out"
AXES_CLIENT_IP_CALLABLE = "backoffice.core.security.client_ip"
AXES_ENABLE_ADMIN = True
AXES_VERBOSE = False
TRUSTED_PROXY_COUNT = int(os.environ.get("DJANGO_TRUSTED_PROXY_COUNT", 0))

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
        # django-axes tells every sign-in at INFO; failures and lockouts are WARNING.
        "axes": {"level": "WARNING"},
    },
}
