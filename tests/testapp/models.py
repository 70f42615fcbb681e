import uuid

from django.db import models

from backoffice.core.models import RemoteRecord


class Probe(RemoteRecord):
    """A mirrored record with nothing domain-specific: what the push machinery is tested with.

    payload["via"] == "platform": pushed to the sandbox over HTTP; otherwise to LocalPlatform below,
    which follows payload["script"] (one outcome per send: ok, transient, maybe_sent, lost,
    rate_limited:<seconds>, permanent).
    """

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    payload = models.JSONField(default=dict, blank=True)

    def __str__(self):
        return f"probe {self.pk}"


class LocalCall(models.Model):
    """What the stand-in platform received: one row per send or reconcile call."""

    probe = models.ForeignKey(Probe, on_delete=models.CASCADE, related_name="calls")
    kind = models.CharField(max_length=10)  # send / reconcile
    outcome = models.CharField(max_length=20)
    delivered = models.BooleanField(default=False)
    at = models.DateTimeField(auto_now_add=True)
