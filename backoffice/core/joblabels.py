"""What a background job is called on screen. JobRun.name stays the internal name (it keys the duplicate
protection); each app registers the words people read for its jobs in its AppConfig.ready()."""

from django.utils.text import capfirst

_LABELS: dict = {}


def register_job_labels(labels: dict) -> None:
    _LABELS.update(labels)


def job_label(name: str) -> str:
    label = _LABELS.get(name)
    return capfirst(str(label)) if label else name.replace("_", " ").capitalize()
