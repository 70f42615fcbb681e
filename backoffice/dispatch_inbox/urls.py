from backoffice.core.generic import get_model_urls

from . import views  # noqa: F401 (registers the views)
from .models import DispatchReply, IncomingExport, IncomingNote

app_name = "dispatch_inbox"
# IncomingExport before IncomingNote: its pages live under incoming/exports/.
urlpatterns = [pattern for model in (IncomingExport, IncomingNote, DispatchReply)
               for pattern in get_model_urls("dispatch_inbox", model._meta.model_name)]
