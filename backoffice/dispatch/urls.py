from backoffice.core.generic import get_model_urls

from . import views  # noqa: F401 (registers the views)
from .models import DispatchExport, DispatchNote, DispatchTaxpayer, ReceivedReply

app_name = "dispatch"
urlpatterns = [pattern for model in (DispatchExport, DispatchTaxpayer, ReceivedReply, DispatchNote)
               for pattern in get_model_urls("dispatch", model._meta.model_name)]
