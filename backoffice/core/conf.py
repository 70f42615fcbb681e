"""Per-app tunables: a Django setting of the same name wins, then the environment, then the app's default."""

import os

from django.conf import settings


def tunable(name: str, defaults: dict) -> float:
    if hasattr(settings, name):
        return float(getattr(settings, name))
    return float(os.environ.get(name, defaults[name]))
