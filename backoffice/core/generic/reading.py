""""Read from the platform now": a button that queues a read and says so, declared once.

    # one record: POST <app>:<model>_read, back to the record's page
    register_read_view(CurrentAccount, services.details_request, roles=EDITORS,
                       message=gettext_lazy("Reading the account from the platform; this page shows it when done."))
    # the whole list: POST <app>:<model>_mirror, back to the list; `running` when the read was queued already
    register_read_view(Period, lambda company: mirror.mirror_request(company.pk), name="mirror", whole=True,
                       roles=EDITORS, message=..., running=...)

`request` is the service that enqueues the job (core.jobs.enqueue): given the record (one the platform has:
another company's, or one not on the platform, is a 404), or the active company for the whole list. Nothing
here waits for the platform.
"""

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect
from django.utils.decorators import method_decorator
from django.views.decorators.http import require_POST

from ..roles import EVERYONE
from .registry import model_url, register_view_of
from .views import BaseObjectView, active_company


@method_decorator(require_POST, name="dispatch")
class ReadView(BaseObjectView):
    """POST only: enqueue the read of one record (pk in the URL) or of the company's list, say so, go back."""

    read = None  # the request, a staticmethod
    message = ""
    running = ""  # said instead of `message` when the job was queued already ("" : the message)

    def said(self, run) -> str:
        return self.running if self.running and not getattr(run, "is_new", True) else self.message

    def start(self, request):
        """The whole list's read (core.generic.families.button_view starts other work from the request)."""
        return self.read(active_company(request))

    def post(self, request, pk=None):
        if pk is None:
            run, back = self.start(request), model_url(self.get_model(), "list")
        else:
            record = get_object_or_404(self.get_queryset().exclude(remote_id=""), pk=pk)
            run, back = self.read(record), model_url(record, "detail")
        messages.info(request, self.said(run))
        return redirect(back or "/")


def register_read_view(model, request, *, message, running="", roles=EVERYONE, name="read", whole=False,
                       section="", tab=""):
    """Register the named view `name` of the model: POST-only, `roles` may use it; the section and tab are
    the model's (core.generic.sections) unless given."""
    return register_view_of(model, name, ReadView, path=f"{name}/" if whole else f"<id:pk>/{name}/",
                            read=staticmethod(request), message=message, running=running, required_roles=roles,
                            section=section, tab=tab)
