"""The pages of an export or report family (core/families.py), registered from its declaration.

    register_export_pages(TICKET_EXPORTS, prefix="exports", section="tickets", tab="exports",
                          title=_("Ticket exports"), start_links=..., table=..., filterset=...)
    register_report_pages(TICKET_REPORTS, kind=TicketKind.EVENT, view=EventReportListView, prefix="reports/event")

An export family gets its list (with "read the history" and a start button per kind), detail, start form,
download and fetch; a report family a page per kind with a date picker and a fetch button. URL names are
the model's: <app>:<model>_list, _detail, _start, _history, _download, _fetch.
"""

from datetime import timedelta

from django.contrib import messages
from django.http import FileResponse, Http404
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.utils import timezone
from django.utils.decorators import method_decorator
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from ..exports import EXPORT_PENDING, ExportError, ExportState, export_expired, export_expires_at
from ..models import JobRun
from ..reports import REPORT_ACTIVE
from ..roles import EVERYONE
from .filters import export_filterset
from .forms import ReportDateForm
from .reading import ReadView
from .registry import model_url, register_model_views, register_view_of
from .tables import export_table
from .views import BaseObjectView, ObjectDetailView, ObjectListView, active_company  # noqa: F401 (the apps' import)

EXPORT_STARTED = gettext_lazy("The export was started; the file appears here when the platform has prepared it.")
EXPORT_FIELDS = ("state", "export_id", "file_name", "filters", "created_at", "platform_created", "fetched_at", "size",
                 "requested_by", "message")


# ---------------------------------------------------------------------------------------------------
# A family's platform exports (core/exports.py): list, detail, start form, download, fetch, history


class FamilyPage(BaseObjectView):
    family = None
    required_roles = EVERYONE


class ExportListView(ObjectListView):
    family = None
    refresh_interval = 3
    start_links = ()  # ((kind or None, button label), ...)

    def needs_refresh(self, queryset):
        return queryset.filter(state__in=EXPORT_PENDING).exists()

    def get_template_names(self):
        return ["generic/exports/export_list.html"]

    def render(self, context, status=200):
        model = self.get_model()
        context["history_url"] = model_url(model, "history")
        context["start_links"] = [(model_url(model, "start", **({"kind": kind} if kind else {})), label)
                                  for kind, label in self.start_links]
        return super().render(context, status)


class ExportDetailView(ObjectDetailView):
    family = None

    def base_queryset(self):
        return super().base_queryset().select_related("requested_by")

    def get_template_names(self):
        return ["generic/exports/export_detail.html"]

    def get_extra_context(self, export):
        """Its job, whether it still works, its window, its two actions (URL names <app>:<model>_download / _fetch)."""
        meta = export._meta
        return {
            "run": JobRun.objects.filter(company=export.company_id, target=f"{meta.label_lower}:{export.pk}").first(),
            "pending": export.state in EXPORT_PENDING,
            "expires_at": export_expires_at(export),
            "download_url": reverse(f"{meta.app_label}:{meta.model_name}_download", args=[export.pk])
            if export.state == ExportState.READY and export.file else None,
            "fetch_url": reverse(f"{meta.app_label}:{meta.model_name}_fetch", args=[export.pk])
            if export.state == ExportState.AVAILABLE and not export_expired(export) else None,
        }


class ExportStartView(FamilyPage):
    """The family's export form (of one kind when the family has kinds); managers may export too."""

    action = "start"
    heading = None  # heading(kind) -> the page's heading (kind None without kinds)
    subtitle = ""
    home = None  # home(kind) -> where Cancel goes

    def kind(self):
        if not self.family.kinds:
            return None
        try:
            return self.family.kinds(self.kwargs["kind"])
        except ValueError:
            raise Http404 from None

    def form(self, data=None):
        kind = self.kind()
        return self.family.form(data=data, **({"kind": kind} if kind is not None else {}))

    def get_template_names(self):
        return ["generic/exports/export_start.html"]

    def show(self, form):
        kind = self.kind()
        return self.render({"form": form, "kind": kind, "heading": self.heading(kind),
                            "subtitle": self.subtitle, "cancel_url": self.home(kind)})

    def get(self, request, **kwargs):
        return self.show(self.form())

    def post(self, request, **kwargs):
        company = active_company(request)
        form = self.form(request.POST)
        if not form.is_valid():
            return self.show(form)
        export = self.family.start(company=company, filters=form.export_filters(), user=request.user,
                                   kind=self.kind())
        messages.success(request, EXPORT_STARTED)
        return redirect(model_url(export, "detail"))


class ExportDownloadView(FamilyPage):
    """GET: the kept ZIP of a ready export of the view's queryset."""

    def get(self, request, pk):
        export = get_object_or_404(self.get_queryset(), pk=pk)
        if export.state != ExportState.READY or not export.file:
            raise Http404
        return FileResponse(export.file.open("rb"), as_attachment=True, filename=export.download_name(),
                            content_type="application/zip")


@method_decorator(require_POST, name="dispatch")
class ExportFetchView(FamilyPage):
    """Fetch an export waiting on the platform (started elsewhere) while its window is open."""

    def post(self, request, pk):
        export = get_object_or_404(self.get_queryset(), pk=pk)
        try:
            self.family.fetch_request(export=export)
        except ExportError as exc:
            messages.error(request, str(exc))
        return redirect(model_url(export, "detail"))


@method_decorator(require_POST, name="dispatch")
class ExportHistoryView(FamilyPage):
    """Read the platform's export history (exports started elsewhere appear) in the background."""

    def post(self, request):
        self.family.history_request(company=active_company(request))
        messages.info(request, _("Reading the platform's export history; new exports appear in a moment."))
        return redirect(model_url(self.get_model(), "list"))


def register_export_pages(family, *, prefix, title, start_links, heading, home, subtitle="", empty_text=None,
                          section="", tab=""):
    """Register the pages of an export family under `prefix` of its app's URLs; the section and tab are those of
    the family's list (core.generic.sections) unless given."""
    table, filterset = export_table(family, empty_text), export_filterset(family)
    detail_fields = ("kind", *EXPORT_FIELDS) if family.kinds else EXPORT_FIELDS
    common = {"family": family, "model": family.model, "section": section, "tab": tab}
    name = family.model.__name__
    register_model_views(
        family.model, prefix=prefix,
        list=type(f"{name}ListView", (ExportListView,), {**common, "title": title, "table": table,
                                                          "filterset": filterset, "start_links": start_links}),
        detail=type(f"{name}DetailView", (ExportDetailView,), {**common, "fields": detail_fields}))
    start_path = "new/<slug:kind>/" if family.kinds else "new/"
    pages = {"start": (start_path, ExportStartView, {"heading": staticmethod(heading), "home": staticmethod(home),
                                                     "subtitle": subtitle}),
             "history": ("history/", ExportHistoryView, {}),
             "download": ("<id:pk>/download/", ExportDownloadView, {}),
             "fetch": ("<id:pk>/fetch/", ExportFetchView, {})}
    for action, (path, base, extra) in pages.items():
        register_view_of(family.model, action, base, path=path, family=family, section=section, tab=tab, **extra)


def button_view(model, run, *, roles, message, section="", tab=""):
    """A list page's POST button that starts background work: run(request), the message, back to the list (the
    whole-list read of core.generic.reading, started from the request)."""
    return type(f"{model.__name__}ButtonView", (ReadView,), {
        "model": model, "start": lambda self, request: run(request), "required_roles": roles, "section": section,
        "tab": tab, "message": message})


# --- exports of chosen records (filters: the platform's ids) -------------------------------------------------

def export_selected(family, *, refused):
    """A list's bulk action: a platform Excel export of the selected records the platform has."""

    def run(request, queryset):
        ids = list(queryset.exclude(remote_id="").values_list("remote_id", flat=True))
        if not ids:
            messages.error(request, refused)
            return 0
        family.start(company=active_company(request), filters={"ids": ids}, user=request.user)
        messages.info(request, _("The export was started; its file appears under Exports when the platform has "
                                 "prepared it."))
        return len(ids)

    return run


@method_decorator(require_POST, name="dispatch")
class RecordExportView(FamilyPage):
    """A detail page's button: a platform Excel export of this record (ids = its platform id)."""

    def post(self, request, pk):
        record = get_object_or_404(self.get_queryset().exclude(remote_id=""), pk=pk)
        export = self.family.start(company=record.company, filters={"ids": [record.remote_id]}, user=request.user)
        messages.success(request, EXPORT_STARTED)
        return redirect(model_url(export, "detail"))


def register_record_export(model, family, *, section="", tab=""):
    """The named view "export" of a model's records (<app>:<model>_export)."""
    register_view_of(model, "export", RecordExportView, path="<id:pk>/export/", family=family, section=section,
                     tab=tab)


# --- reports ---------------------------------------------------------------------------------------------

class ReportListView(ObjectListView):
    """A report page of one kind: a date picker (yesterday unless given), the stored items of the current run,
    totals and Excel (<report_name>-report-<date>.xlsx), refreshing while a fetch of that day runs. Subclasses give
    totals(queryset) and a template with the totals block."""

    family = None
    kind = None
    refresh_interval = 3
    date_form_class = ReportDateForm  # a form with a `date` field
    report_name = ""

    def report_runs(self, day):
        """This company's runs of the report of `day`, newest first."""
        return self.family.run_model.objects.filter(company=self.request.company, report_date=day,
                                                    **self.family.identity(self.kind))

    def report_date(self):
        form = self.date_form_class(self.request.GET or None)
        if form.is_bound and form.is_valid():
            return form.cleaned_data["date"], form
        day = timezone.localdate() - timedelta(days=1)
        return day, self.date_form_class(initial={"date": day})

    def needs_refresh(self, queryset):
        day, _form = self.report_date()
        return self.report_runs(day).filter(state__in=REPORT_ACTIVE).exists()

    def export_filename(self):
        day, _form = self.report_date()
        return f"{self.report_name}-report-{day:%Y-%m-%d}.xlsx"

    def base_queryset(self):
        day, _form = self.report_date()
        run = self.family.current_run(company=self.request.company, report_date=day, kind=self.kind)
        queryset = super().base_queryset()
        return queryset.filter(run=run) if run is not None else queryset.none()

    def totals(self, queryset) -> dict:
        return {}

    def render(self, context, status=200):
        day, form = self.report_date()
        context.update({"report_date": day, "date_form": form, "totals": self.totals(self.get_queryset()),
                        "latest_run": self.report_runs(day).first(), "kind": self.kind,
                        "fetch_url": model_url(self.get_model(), "fetch")})
        return super().render(context, status)


@method_decorator(require_POST, name="dispatch")
class ReportFetchView(FamilyPage):
    """The report page's fetch button: the report of a valid date requested, back to that day's page."""

    kind = None

    def post(self, request):
        company, form = active_company(request), ReportDateForm(request.POST)
        list_url = model_url(self.get_model(), "list")
        if not form.is_valid():
            messages.error(request, "; ".join(str(e) for errors in form.errors.values() for e in errors))
            return redirect(list_url)
        day = form.cleaned_data["date"]
        self.family.request(company=company, report_date=day, kind=self.kind)
        messages.info(request, _("Fetching the report of %(date)s from the platform.")
                      % {"date": day.strftime("%d.%m.%Y")})
        return redirect(f"{list_url}?date={day:%Y-%m-%d}")


def register_report_pages(family, *, kind=None, view, prefix):
    """Register the report page of one kind (view: a ReportListView subclass) and its fetch button."""
    model = family.item_models[kind]
    view.family, view.kind, view.model = family, kind, model
    register_model_views(model, prefix=prefix, list=view)
    register_view_of(model, "fetch", ReportFetchView, path="fetch/", family=family, kind=kind, section=view.section,
                     tab=view.tab)
