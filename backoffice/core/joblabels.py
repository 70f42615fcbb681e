"""What a background job is called on screen. JobRun.name stays the internal name (it keys the duplicate
protection); each app registers the words people read for its jobs in its AppConfig.ready()."""

from .generic.text import capfirst

_LABELS: dict = {}


def register_job_labels(labels: dict) -> None:
    """Labels by job name. Names are unique across apps: a second, different label for a name is refused
    (one app's generic name must never relabel another's jobs)."""
    from django.core.exceptions import ImproperlyConfigured

    for name, label in labels.items():
        known = _LABELS.get(name)
        if known is not None and str(known) != str(label):
            raise ImproperlyConfigured(f"job name {name!r} is registered twice with different labels")
        _LABELS[name] = label


def job_label(name: str) -> str:
    label = _LABELS.get(name)
    return capfirst(str(label)) if label else name.replace("_", " ").capitalize()


def target_label(target: str):
    """What a job worked on, as people read it: ("Etkinlik bileti 12", its detail URL or None), from the
    internal "app_label.model:pk[+...]" (no query: a list of jobs stays one query)."""
    from django.apps import apps

    from .generic.registry import model_url

    label, _sep, rest = (target or "").partition(":")
    pk = rest.split("+", 1)[0]
    try:
        model = apps.get_model(label) if label else None
    except (LookupError, ValueError):
        model = None
    if model is None:
        return target, None
    if not pk.isdigit():
        return capfirst(model._meta.verbose_name), None
    return f"{capfirst(model._meta.verbose_name)} {pk}", model_url(model, "detail", pk=int(pk))
