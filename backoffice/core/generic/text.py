"""The Turkish-aware capfirst() lives in core.text (imported while the app registry loads); kept here for
the generic machinery's imports."""

from ..text import capfirst  # noqa: F401
