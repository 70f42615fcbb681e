from backoffice.core import sync

from . import services
from .models import Probe


def probe_push(pk):
    return sync.record_push(Probe, pk, send=services.probe_send, reconcile=services.probe_reconcile)
