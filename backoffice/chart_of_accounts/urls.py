from backoffice.core.generic import get_model_urls

from . import views  # noqa: F401 (registers the views)
from .models import Account

app_name = "chart_of_accounts"
urlpatterns = get_model_urls("chart_of_accounts", Account._meta.model_name)
