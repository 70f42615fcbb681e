"""Shared machinery of every domain's pages: generic views, the URL registry, base tables and filters.

A domain app needs only a few lines per model:

    class TicketListView(ObjectListView):
        queryset = Ticket.objects.select_related("company")
        table = TicketTable
        filterset = TicketFilterSet

    register_model_views(Ticket, prefix="tickets", list=TicketListView, detail=..., edit=...)

and in urls.py: `app_name = "tickets"; urlpatterns = [*get_model_urls("tickets", "ticket")]`.
"""

from .filters import BaseFilterSet, DateFromFilter, DateToFilter, YesNoFilter
from .registry import (
    get_model_urls,
    model_url,
    register_bulk_action,
    register_model_view,
    register_model_views,
    user_may,
)
from .tables import BaseTable, ChoiceBadgeColumn, DateTimeColumn, LinkedColumn, ProgressColumn, SelectionColumn
from .views import (
    BaseObjectView,
    BulkAction,
    BulkActionView,
    ObjectDeleteView,
    ObjectDetailView,
    ObjectEditView,
    ObjectListView,
    bulk_delete,
)

__all__ = [
    "BaseFilterSet", "DateFromFilter", "DateToFilter", "YesNoFilter",
    "get_model_urls", "model_url", "register_bulk_action", "register_model_view", "register_model_views", "user_may",
    "BaseTable", "ChoiceBadgeColumn", "DateTimeColumn", "LinkedColumn", "ProgressColumn", "SelectionColumn",
    "BaseObjectView", "BulkAction", "BulkActionView", "ObjectDeleteView", "ObjectDetailView", "ObjectEditView", "ObjectListView",
    "bulk_delete",
]
