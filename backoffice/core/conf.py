"""Per-app tunables: a Django setting of the same name wins, then the environment, then the app's default."""

import os

from django.conf import settings


def tunable(name: str, default) -> float:
    """default: the value, or an app's dict of defaults by name."""
    if hasattr(settings, name):
        return float(getattr(settings, name))
    return float(os.environ.get(name, default[name] if isinstance(default, dict) else default))
