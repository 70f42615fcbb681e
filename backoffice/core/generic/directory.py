"""The pages of a directory of registered users the platform publishes (e-invoice users, dispatch-note users): the
list with its search, and the button that reads the list again now (administrators; a job of a few minutes).
A domain declares them once with register_directory_pages()."""

from django.contrib import messages
from django.shortcuts import redirect

from ..roles import ADMINISTRATORS, EVERYONE, has_role
from .registry import model_url, register_model_views, register_view_of
from .views import BaseObjectView, ObjectListView


class DirectoryListView(ObjectListView):
    required_roles = EVERYONE
    note = ""  # a line above the table (what the list is for)
    note_context = staticmethod(dict)

    def get_template_names(self):
        return ["generic/directory_list.html"]

    def render(self, context, status=200):
        context["may_refresh"] = has_role(self.request.user, *ADMINISTRATORS)
        context["directory_refresh_url"] = model_url(self.model, "refresh")
        context["directory_note"] = str(self.note) % self.note_context() if self.note else ""
        return super().render(context, status)


class DirectoryRefreshView(BaseObjectView):
    required_roles = ADMINISTRATORS
    request_refresh = None  # () -> the JobRun of the refresh
    started = running = ""

    def post(self, request):
        run = type(self).request_refresh()
        messages.info(request, str(self.started) if run.is_new else str(self.running))
        return redirect(model_url(self.model, "list"))


def register_directory_pages(model, *, prefix, title, table, filterset, request_refresh, started, running, note="",
                             note_context=dict, section="", tab=""):
    """The list (under `prefix`) and its refresh button of one directory model; the section and tab are those of
    its list (core.generic.sections) unless given."""
    common = {"model": model, "section": section, "tab": tab}
    register_model_views(model, prefix=prefix, list=type(f"{model.__name__}ListView", (DirectoryListView,), {
        **common, "title": title, "table": table, "filterset": filterset, "note": note,
        "note_context": staticmethod(note_context)}))
    register_view_of(model, "refresh", DirectoryRefreshView, path="refresh/", section=section, tab=tab,
                     request_refresh=staticmethod(request_refresh), started=started, running=running)
