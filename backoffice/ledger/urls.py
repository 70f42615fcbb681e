from backoffice.core.generic import get_model_urls

from . import views  # noqa: F401 (registers the views)
from .models import Journal, Part, Period

app_name = "ledger"
# Named pages first, so that "journals/" is never taken for a period's pk.
urlpatterns = [pattern for model in (Journal, Part, Period)
               for pattern in get_model_urls("ledger", model._meta.model_name)]
