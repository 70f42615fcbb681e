"""Settings of the platform simulator: another company's server that happens to live in our repository.

Run it with --settings=backoffice.sandbox.settings. It has its own database (SANDBOX_DATABASE_URL, by
default a second SQLite file in var/) and shares no table and no code with the back-office apps.
"""

import os
from pathlib import Path

from backoffice.envconf import database, env_bool, env_list, var_dir

VAR_DIR = var_dir(Path(__file__).resolve().parent.parent.parent)

DEBUG = env_bool("DJANGO_DEBUG", default=False)
SECRET_KEY = os.environ.get("SANDBOX_SECRET_KEY", "sandbox-only-insecure-secret-key-0123456789abcdefghijklmnop")
ALLOWED_HOSTS = env_list("SANDBOX_ALLOWED_HOSTS", "127.0.0.1,localhost,[::1],testserver")

# The control API (/_control/) exists only when this is set; tests and `make run` set it.
SANDBOX_CONTROL_TOKEN = os.environ.get("SANDBOX_CONTROL_TOKEN", "")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "backoffice.sandbox",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "backoffice.sandbox.urls"
WSGI_APPLICATION = None

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {"default": database("SANDBOX_DATABASE_URL", VAR_DIR / "sandbox.sqlite3", VAR_DIR)}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

LANGUAGE_CODE = "en"
TIME_ZONE = "Europe/Istanbul"
USE_I18N = True
USE_TZ = True

# The admin's CSS comes straight from the apps (no collectstatic), also with DEBUG off.
STATIC_URL = "/static/"
STATIC_ROOT = None
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s sandbox %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    # 401 / 429 / 422 are the simulator doing its job; the access log line of each request is enough.
    "loggers": {"django.request": {"level": "ERROR"}},
}
