from backoffice.core.generic import get_model_urls

from . import views  # noqa: F401 (registers the views)
from .models import Invoice, PdfBundle, Taxpayer

app_name = "invoices"
urlpatterns = [pattern for model in (PdfBundle, Taxpayer, Invoice)
               for pattern in get_model_urls("invoices", model._meta.model_name)]
