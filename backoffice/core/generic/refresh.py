"""The list's "Re-read now" button: the platform's statuses of the active company's recent records, read
again in the background (core.refresh). One record or a selection goes through the list's bulk action."""

from django.contrib import messages
from django.shortcuts import redirect
from django.utils.decorators import method_decorator
from django.views.decorators.http import require_POST

from .. import refresh
from ..roles import EVERYONE
from .registry import model_url, register_view_of
from .views import BaseObjectView, active_company


@method_decorator(require_POST, name="dispatch")
class RefreshView(BaseObjectView):
    required_roles = EVERYONE

    def post(self, request):
        refresh.refresh_request(self.get_model(), active_company(request))
        messages.info(request, refresh.refresh_message())
        return redirect(model_url(self.get_model(), "list"))


def register_refresh_view(model) -> None:
    register_view_of(model, "refresh", RefreshView, path="refresh/")
