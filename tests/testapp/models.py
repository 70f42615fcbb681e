import uuid

from django.db import models

from backoffice.core.documents import KeptDocument
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


# --- an edit page with lines and kept documents (core.generic.lines, core.documents) ------------------------
class Memo(RemoteRecord):
    """A company's record with lines and platform documents: what core's declarations are shown on."""

    title = models.CharField(max_length=100)

    def __str__(self):
        return self.title


class MemoLine(models.Model):
    memo = models.ForeignKey(Memo, on_delete=models.CASCADE, related_name="lines")
    text = models.CharField(max_length=50)
    quantity = models.PositiveIntegerField()

    class Meta:
        ordering = ["id"]


class MemoDocument(KeptDocument):
    memo = models.ForeignKey(Memo, on_delete=models.CASCADE, related_name="documents")
    kind = models.CharField(max_length=4, choices=[("pdf", "PDF"), ("html", "HTML"), ("ubl", "UBL")])
    file = models.FileField(upload_to="testapp/documents/%Y/%m/")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["memo", "kind", "standard"], name="testapp_memodocument_unique")]
