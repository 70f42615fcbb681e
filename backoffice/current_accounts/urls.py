from backoffice.core.generic import get_model_urls

from . import views  # noqa: F401 (registers the views)
from .models import Address, Bank, Contact, CurrentAccount, Mapping

app_name = "current_accounts"
urlpatterns = [pattern for model in (CurrentAccount, Address, Bank, Contact, Mapping)
               for pattern in get_model_urls("current_accounts", model._meta.model_name)]
