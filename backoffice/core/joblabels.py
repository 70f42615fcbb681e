"""What a background job is called on screen. JobRun.name stays the internal name (it keys the duplicate
protection); each app registers the words people read for its jobs in its AppConfig.ready().

Labels are lazy texts, translated when shown, so every row shows in the reader's language whatever language
the worker ran in. The modules that register labels as they are imported (each app's jobs, core.refresh) are
imported before the first label is looked up: a web process that never imported core.refresh showed its job
as "Status refresh" (issue 29). A row whose name is an older English label is shown by that label, translated.
"""

from importlib import import_module

from .generic.text import capfirst

_LABELS: dict = {}
_DISCOVERED = False
# Modules that register job labels when imported, besides each installed app's `jobs`.
LABEL_MODULES = ("backoffice.core.refresh",)


def register_job_labels(labels: dict) -> None:
    """Labels by job name. Names are unique across apps: a second, different label for a name is refused
    (one app's generic name must never relabel another's jobs)."""
    from django.core.exceptions import ImproperlyConfigured

    for name, label in labels.items():
        known = _LABELS.get(name)
        if known is not None and str(known) != str(label):
            raise ImproperlyConfigured(f"job name {name!r} is registered twice with different labels")
        _LABELS[name] = label


def discover() -> None:
    """Import every module that registers job labels (once per process)."""
    global _DISCOVERED
    if _DISCOVERED:
        return
    from django.apps import apps

    _DISCOVERED = True
    names = [f"{config.name}.jobs" for config in apps.get_app_configs() if config.name.startswith("backoffice.")]
    for module in (*names, *LABEL_MODULES):
        try:
            import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:  # an app without jobs is fine; a jobs module that fails to import is not
                raise


def _by_english_label(name: str):
    """The label of a job whose row holds English words instead of the job's name (older rows)."""
    from django.utils import translation

    wanted = " ".join(name.replace("_", " ").split()).casefold()
    with translation.override("en"):
        # The label itself, or the words the name once fell back to ("Status refresh" for status_refresh).
        return next((label for key, label in _LABELS.items()
                     if wanted in (str(label).casefold(), key.replace("_", " ").casefold())), None)


def job_label(name: str) -> str:
    """The job's words in the active language; an unknown name as readable words."""
    discover()
    label = _LABELS.get(name) or _by_english_label(name or "")
    return capfirst(str(label)) if label else (name or "").replace("_", " ").capitalize()


def all_job_labels() -> dict:
    """{name: lazy label} of every job known to the product."""
    discover()
    return dict(_LABELS)


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
