from backoffice.core.generic import get_model_urls

from . import views  # noqa: F401 (registers the views)
from .models import CurrentAccount

app_name = "current_accounts"
urlpatterns = get_model_urls("current_accounts", CurrentAccount._meta.model_name)
