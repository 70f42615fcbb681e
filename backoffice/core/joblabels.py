"""What a background job is called on screen. JobRun.name stays the internal name (it keys the duplicate
protection); the words people read for it are in registry["job_labels"], filled as the modules that hold jobs
are imported: each app's DomainConfig names them (core.domains; core's ready() imports core.refresh), so every process
knows every label before its first page or job (issue 29: a web process that had not imported core.refresh
showed its job as "Status refresh").

Labels are lazy texts, translated when shown, so every row shows in the reader's language whatever language
the worker ran in. A row whose name is an older English label is shown by that label, translated.
"""

from django.core.exceptions import ImproperlyConfigured
from django.utils import translation

from .registry import registry
from .text import capfirst


def register_job_labels(labels: dict) -> None:
    """Labels by job name. Names are unique across apps: a second, different label for a name is refused
    (one app's generic name must never relabel another's jobs)."""
    known_labels = registry["job_labels"]
    for name, label in labels.items():
        known = known_labels.get(name)
        if known is not None and str(known) != str(label):
            raise ImproperlyConfigured(f"job name {name!r} is registered twice with different labels")
        known_labels[name] = label


def _by_english_label(name: str):
    """The label of a job whose row holds English words instead of the job's name (older rows)."""
    wanted = " ".join(name.replace("_", " ").split()).casefold()
    with translation.override("en"):
        # The label itself, or the words the name once fell back to ("Status refresh" for status_refresh).
        return next((label for key, label in registry["job_labels"].items()
                     if wanted in (str(label).casefold(), key.replace("_", " ").casefold())), None)


def job_label(name: str) -> str:
    """The job's words in the active language; an unknown name as readable words."""
    label = registry["job_labels"].get(name) or _by_english_label(name or "")
    return capfirst(str(label)) if label else (name or "").replace("_", " ").capitalize()


def all_job_labels() -> dict:
    """{name: lazy label} of every job known to the product."""
    return dict(registry["job_labels"])
