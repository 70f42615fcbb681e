from backoffice.core.generic import get_model_urls

from . import inbox_views, views  # noqa: F401 (registers the views)
from .models import (
                     DispatchExport,
                     DispatchNote,
                     DispatchReply,
                     DispatchTaxpayer,
                     IncomingExport,
                     IncomingNote,
                     ReceivedReply,
)

app_name = "dispatch"
# IncomingExport before IncomingNote: its pages live under incoming/exports/.
urlpatterns = [pattern for model in (DispatchExport, IncomingExport, DispatchTaxpayer, IncomingNote, DispatchReply,
                                     ReceivedReply, DispatchNote)
               for pattern in get_model_urls("dispatch", model._meta.model_name)]
