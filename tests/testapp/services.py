"""Push of a Probe: to the sandbox over HTTP, or to a stand-in platform kept in the test database."""

from backoffice.core.platform import client_for
from backoffice.remote.invoices import InvoicesClient
from backoffice.remote.errors import MaybeSent, RateLimited, RemoteError

from .models import LocalCall


def probe_send(probe) -> dict:
    if probe.payload.get("via") == "platform":
        return _platform_send(probe)
    return _local_send(probe)


def probe_reconcile(probe) -> dict | None:
    if probe.payload.get("via") == "platform":
        return _platform_reconcile(probe)
    LocalCall.objects.create(probe=probe, kind="reconcile", outcome="asked")
    return _fields(probe) if probe.calls.filter(delivered=True).exists() else None


def _fields(probe):
    return {"remote_id": f"P-{probe.uuid.hex[:12]}", "remote_status": 1}


def _local_send(probe):
    script = probe.payload.get("script", [])
    sends = probe.calls.filter(kind="send").count()
    outcome = script[sends] if sends < len(script) else "ok"
    name, _, arg = outcome.partition(":")
    delivered = name in ("ok", "maybe_sent")
    LocalCall.objects.create(probe=probe, kind="send", outcome=outcome, delivered=delivered)
    if name == "transient":
        raise RemoteError(status=503, title="Service Unavailable")
    if name in ("maybe_sent", "lost"):
        raise MaybeSent()
    if name == "rate_limited":
        raise RateLimited(float(arg or 1), local=False)
    if name == "permanent":
        raise RemoteError(status=422, permanent=True, title="Doğrulama hatası", detail="payload eksik")
    return _fields(probe)


# Over HTTP: the push is the invoice service's "statuses of these ids" POST (not idempotent for the
# transport: never retried blindly), the reconcile its GET status of one id (404: the platform has nothing).
def _platform_fields(answer):
    return {"remote_id": str(answer["id"]), "remote_status": answer["status"]}


def _platform_send(probe):
    [answer] = client_for(probe.company, InvoicesClient).outbox_status_list([probe.uuid])
    return _platform_fields(answer)


def _platform_reconcile(probe):
    try:
        answer = client_for(probe.company, InvoicesClient).outbox_status(str(probe.uuid))
    except RemoteError as exc:
        if exc.status == 404:
            return None
        raise
    return _platform_fields(answer) if answer else None
