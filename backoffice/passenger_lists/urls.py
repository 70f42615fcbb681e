from backoffice.core.generic import get_model_urls

from . import views  # noqa: F401 (registers the views)
from .models import PassengerList, PassengerListExport, PassengerListReportItem

app_name = "passenger_lists"

urlpatterns = [pattern for model in (PassengerList, PassengerListExport, PassengerListReportItem)
               for pattern in get_model_urls("passenger_lists", model._meta.model_name)]
