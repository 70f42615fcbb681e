"""Ticket pages: the generic list / detail / edit / bulk views, plus the HTML view, exports and reports.

Views never call the platform client, except for the ticket's HTML and the kept export file, which
the user waits for. Everything else is saved and enqueued by a service.
"""

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.db.models import Count, Q, Sum
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.utils.decorators import method_decorator
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from backoffice.core import jobs as core_jobs
from backoffice.core.choices import JobStatus, Role, SyncState
from backoffice.core.generic import (
    BulkAction,
    BulkActionView,
    ObjectDetailView,
    ObjectEditView,
    ObjectListView,
    model_url,
    register_model_views,
)
from backoffice.core.generic.views import (
    BaseObjectView, ExportDownloadMixin, ExportFetchMixin, ReportPageMixin, describe_fields, export_detail_context,
    report_fetch,
)
from backoffice.core.models import Company, JobRun
from backoffice.core.roles import has_role
from backoffice.core.generic.text import capfirst
from backoffice.core.submissions import notes_for
from backoffice.remote.errors import NoAnswer, RemoteError

from . import filters, services, tables
from .choices import EXPORT_PENDING, TicketKind, TicketStatus
from .forms import FORMS, ReportDateForm, TicketExportForm, TicketLineFormSet, line_initial
from .models import (
    REPORT_ITEM_MODELS,
    TICKET_MODELS,
    EventTicket,
    EventTicketReportItem,
    PassengerTicket,
    PassengerTicketReportItem,
    ReportRun,
    TicketExport,
)

ALL_ROLES = (Role.ACCOUNTING, Role.MANAGER, Role.ADMINISTRATOR)
# Accounting staff and administrators create, send and cancel; managers read and export.
EDITORS = (Role.ACCOUNTING, Role.ADMINISTRATOR)
ACTIVE_JOB_STATES = (JobStatus.QUEUED, JobStatus.RUNNING, JobStatus.RETRYING, JobStatus.DEFERRED)


class TicketsSection:
    """Templates of this app first (per model, then shared), then the generic ones; the section's tabs."""

    section = ""

    def get_template_names(self):
        meta = self.get_model()._meta
        return [f"tickets/{meta.model_name}_{self.action}.html", f"tickets/ticket_{self.action}.html",
                f"generic/object_{self.action}.html"]

    def base_context(self):
        context = super().base_context()
        context["tickets_section"] = self.section or getattr(self.get_model(), "kind", "")
        context["may_edit"] = has_role(self.request.user, *EDITORS)
        return context


# ---------------------------------------------------------------------------------------------------
# Tickets


class TicketListView(TicketsSection, ObjectListView):
    required_roles = ALL_ROLES
    refresh_interval = 5

    def needs_refresh(self, queryset):
        # Two indexed look-ups rather than one OR over the whole list.
        return (queryset.filter(sync_state__in=[SyncState.QUEUED, SyncState.SENDING]).exists()
                or queryset.filter(remote_status__in=[TicketStatus.QUEUED]).exists())

    def render(self, context, status=200):
        context["export_url"] = reverse("tickets:ticketexport_start", args=[self.get_model().kind])
        return super().render(context, status)


class TicketDetailView(TicketsSection, ObjectDetailView):
    required_roles = ALL_ROLES

    def base_queryset(self):
        return super().base_queryset().select_related("created_by")

    def get_extra_context(self, ticket):
        user = self.request.user
        model = type(ticket)
        label = model._meta.label_lower
        runs = JobRun.objects.filter(company=ticket.company_id).filter(
            Q(target=f"{label}:{ticket.pk}") | Q(target__startswith=f"{label}:{ticket.pk}+"))[:10]
        lines = list(ticket.lines.prefetch_related("taxes"))
        may_edit = has_role(user, *EDITORS)
        on_platform = bool(ticket.remote_id)
        idle = not ticket.pending_action and ticket.sync_state not in (SyncState.QUEUED, SyncState.SENDING)
        bulk = {name: model_url(model, "bulk", action=name) for name in TicketBulkView.actions}
        actions = []
        if may_edit and idle:
            if on_platform and ticket.remote_status == TicketStatus.DRAFT:
                actions.append(("send", bulk["send"], _("Send"), "primary", "send"))
            if on_platform and ticket.remote_status == TicketStatus.ERROR:
                actions.append(("draft", bulk["draft"], _("Back to draft"), "secondary", "arrow-counterclockwise"))
            if ticket.sync_state == SyncState.FAILED:
                actions.append(("resend", bulk["resend"], _("Send again"), "primary", "arrow-repeat"))
            if on_platform and ticket.remote_status not in (TicketStatus.CANCELLED, TicketStatus.DELETED):
                actions.append(("cancel", bulk["cancel"], _("Cancel ticket"), "danger", "x-octagon"))
        return {
            "ticket_fields": describe_fields(ticket, ("ticket_number", "prefix", "document_type", "ticket_date",
                                                     "payment_type", "payment_description", "currency_code",
                                                     "exchange_rate", "reference_number", "xslt_code"), user=user),
            "kind_fields": _with_province_names(describe_fields(ticket, KIND_DETAIL_FIELDS[model.kind], user=user),
                                                ticket),
            "customer_fields": describe_fields(ticket, CUSTOMER_DETAIL_FIELDS, user=user),
            "lines": lines,
            "notes": list(ticket.notes.all()),
            "submission_notes": notes_for(ticket),
            "runs": runs,
            "actions": actions,
            "edit_url": model_url(ticket, "edit") if may_edit and ticket.is_editable else None,
            "html_url": reverse(f"tickets:{model._meta.model_name}_html", args=[ticket.pk]) if on_platform else None,
            "needs_refresh": bool(ticket.pending_action) or ticket.sync_state in (SyncState.QUEUED, SyncState.SENDING)
            or ticket.remote_status == TicketStatus.QUEUED,
        }


def _with_province_names(fields, ticket):
    """The province by its name, as the form offers it, not its plate code."""
    from .choices import PROVINCES

    code = getattr(ticket, "event_city_id", None)
    for field in fields:
        if code and field.value == code and field.label == capfirst(EventTicket._meta.get_field("event_city_id")
                                                                    .verbose_name):
            field.value = f"{PROVINCES.get(code, code)} ({code:02d})"
    return fields


CUSTOMER_DETAIL_FIELDS = (
    "identifier", "customer_first_name", "customer_last_name", "customer_email", "is_email_send",
    "customer_telephone", "customer_tax_center", "customer_street", "customer_building_name", "customer_building_no",
    "customer_door_no", "customer_district", "customer_town", "customer_city", "customer_post_code",
    "customer_country", "record_expenses_vkn_tckn", "record_expenses_title",
)
KIND_DETAIL_FIELDS = {
    TicketKind.EVENT: ("event_name", "event_time", "seat_number", "event_location", "event_city_id", "event_city",
                       "event_municipality", "event_organizer_vkn_tckn", "event_description"),
    TicketKind.PASSENGER: ("expedition_number", "expedition_time", "departure_date", "departure_location",
                           "destination", "vehicle_plate", "seat_number", "vehicle_operating_vkn_tckn",
                           "vehicle_operating_title", "vehicle_operating_tax_center", "commission_amount",
                           "commission_tax_amount", "vehicle_operating_country", "vehicle_operating_city",
                           "vehicle_operating_district", "vehicle_operating_town", "vehicle_operating_street",
                           "vehicle_operating_building_name", "vehicle_operating_building_no",
                           "vehicle_operating_door_no", "vehicle_operating_post_code", "vehicle_operating_mersis_no",
                           "vehicle_operating_register_no", "vehicle_operating_telephone",
                           "vehicle_operating_email"),
}


class SeatTaken(Exception):
    """Another ticket took the seat between the form's check and the save (the error is on the form)."""


class TicketEditView(TicketsSection, ObjectEditView):
    """Create (allocates the number) and update (only in status 0 or 40), lines in a formset."""

    required_roles = EDITORS

    def get_form_class(self):
        return FORMS[self.get_model().kind]

    def _formset(self, obj, data=None):
        initial = line_initial(obj) if obj.pk else None
        return TicketLineFormSet(data=data, prefix="lines", initial=initial)

    def _refuse_locked(self, obj):
        if obj.pk and not obj.is_editable:
            messages.warning(self.request, _("Ticket %(number)s cannot be changed now: only a draft or a ticket in "
                                             "error can be updated, and not while it is being sent.")
                             % {"number": obj.ticket_number})
            return redirect(model_url(obj, "detail"))
        return None

    def render_form(self, obj, form, status=200, formset=None):
        formset = formset if formset is not None else self._formset(obj)
        lines = formset.lines() if formset.is_bound and formset.is_valid() else None
        preview = services.totals(lines) if lines is not None else (
            {name: getattr(obj, name) for name in services.totals([])} if obj.pk else services.totals([]))
        return self.render({"object": obj, "form": form, "formset": formset, "is_new": obj.pk is None,
                            "totals": preview, "cancel_url": self.cancel_url(obj)}, status=status)

    def get(self, request, *args, **kwargs):
        obj = self.get_object()
        return self._refuse_locked(obj) or self.render_form(
            obj, self.get_form_class()(instance=obj, company=request.company))

    def post(self, request, *args, **kwargs):
        obj = self.get_object()
        locked = self._refuse_locked(obj)
        if locked:
            return locked
        is_new = obj.pk is None
        guard = self.guard_for(obj)
        form = self.get_form_class()(data=request.POST, instance=obj, company=request.company)
        formset = self._formset(obj, data=request.POST)
        answered = self.check_guard(guard, form)
        if answered is not None:
            return answered
        valid = form.is_valid()
        valid = formset.is_valid() and valid
        if not valid:
            return self.render_form(obj, form, formset=formset)
        ticket = form.save(commit=False)
        arguments = {"lines": formset.lines(), "notes": form.cleaned_data["notes_text"],
                     "requested_status": form.cleaned_data["requested_status"]}

        def save():
            # One company's saves of a seat one at a time: the seat check is made again under this lock.
            Company.objects.select_for_update().filter(pk=obj.company_id).first()
            if not form.recheck_seat():
                raise SeatTaken
            if is_new:
                ticket.prefix = form.cleaned_data["prefix"]
                return services.ticket_create(ticket=ticket, user=request.user, **arguments)
            return services.ticket_update(ticket=ticket, **arguments)

        try:
            ticket, answered = self.guarded_save(guard, form, save, note=form.duplicate_note())
        except SeatTaken:
            return self.render_form(obj, form, formset=formset)
        except services.TicketError as exc:
            form.add_error(None, str(exc))
            return self.render_form(obj, form, formset=formset)
        if answered is not None:
            return answered
        if ticket.requested_status == TicketStatus.QUEUED:
            message = _("Ticket %(number)s saved; it is being sent to the platform.")
        else:
            message = _("Ticket %(number)s saved; it is being sent to the platform as a draft.")
        messages.success(request, message % {"number": ticket.ticket_number})
        return redirect(self.return_url(ticket))


def _bulk(service, **extra):
    """A bulk action function calling a ticket service; a refusal becomes an error message."""

    def run(request, queryset):
        try:
            service(tickets=list(queryset.order_by("pk")), **extra)
        except services.TicketError as exc:
            messages.error(request, str(exc))
            return 0
        return queryset.count()

    return run


def _resend(request, queryset):
    failed = list(queryset.filter(sync_state=SyncState.FAILED).order_by("pk"))
    if not failed:
        messages.error(request, _("Only tickets whose sending failed can be sent again."))
        return 0
    if len(failed) == 1:
        services.ticket_resend(ticket=failed[0])
    else:
        services.tickets_queue(tickets=failed)
    return len(failed)


class TicketBulkView(TicketsSection, BulkActionView):
    required_roles = EDITORS
    actions = {
        "send": BulkAction(gettext_lazy("Send (draft → queued)"),
                           _bulk(services.tickets_status_change_request, status=TicketStatus.QUEUED),
                           confirm=gettext_lazy("The selected drafts will be sent to the platform's queue "
                                                "for processing."), required_roles=EDITORS),
        "draft": BulkAction(gettext_lazy("Back to draft (error → draft)"),
                            _bulk(services.tickets_status_change_request, status=TicketStatus.DRAFT),
                            confirm=gettext_lazy("The selected tickets in error will become drafts and "
                                                 "can be edited."), style="secondary", required_roles=EDITORS),
        "cancel": BulkAction(gettext_lazy("Cancel tickets"), _bulk(services.tickets_cancel_request),
                             confirm=gettext_lazy("The selected tickets will be cancelled on the platform. This "
                                                  "cannot be undone."), style="danger", required_roles=EDITORS),
        "resend": BulkAction(gettext_lazy("Send again"), _resend,
                             confirm=gettext_lazy("The selected tickets whose sending failed will be sent again."),
                             required_roles=EDITORS),
    }

    def get_template_names(self):
        return ["generic/bulk_confirm.html"]


class TicketHtmlView(TicketsSection, BaseObjectView):
    """The platform's rendering of a ticket, in a sandboxed frame (srcdoc: our own pages are never
    framed) and as a download. A download the user waits for: the one place a view calls the client."""

    required_roles = ALL_ROLES
    action = "html"

    def get(self, request, pk):
        ticket = get_object_or_404(self.get_queryset(), pk=pk)
        standard = request.GET.get("layout") != "company"
        html, error, slow = "", "", False
        try:
            html = services.ticket_html(ticket=ticket, standard=standard)
        except NoAnswer:
            slow = True
            error = _("The platform did not answer within %(seconds)s seconds. It may be busy: try again in a "
                      "moment.") % {"seconds": f"{settings.PLATFORM_INTERACTIVE_READ_TIMEOUT:g}"}
        except (RemoteError, services.TicketError) as exc:
            error = exc.user_message() if isinstance(exc, RemoteError) else str(exc)
        if request.GET.get("download") and html:
            response = HttpResponse(html, content_type="text/html; charset=utf-8")
            response["Content-Disposition"] = f'attachment; filename="{ticket.ticket_number}.html"'
            response["Content-Security-Policy"] = "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:"
            return response
        response = self.render({"object": ticket, "html": html, "error": error, "slow": slow, "standard": standard,
                                "detail_url": model_url(ticket, "detail")}, status=504 if slow else 502 if error else 200)
        # The platform's HTML in the srcdoc frame inherits this page's policy: it may style itself (inline
        # <style> and style attributes); it still runs no script (sandbox="" and script-src 'self').
        response._csp_update = {"style-src": ["'unsafe-inline'"]}
        return response


for _model, _prefix in ((EventTicket, "event"), (PassengerTicket, "passenger")):
    register_model_views(
        _model, prefix=_prefix,
        list=type(f"{_model.__name__}ListView", (TicketListView,), {
            "model": _model, "table": getattr(tables, f"{_model.__name__}Table"),
            "filterset": getattr(filters, f"{_model.__name__}FilterSet")}),
        detail=type(f"{_model.__name__}DetailView", (TicketDetailView,), {"model": _model}),
        edit=type(f"{_model.__name__}EditView", (TicketEditView,), {"model": _model}),
        bulk=type(f"{_model.__name__}BulkView", (TicketBulkView,), {"model": _model}),
    )


# ---------------------------------------------------------------------------------------------------
# Exports


class TicketExportListView(TicketsSection, ObjectListView):
    title = gettext_lazy("Ticket exports")
    section = "exports"
    required_roles = ALL_ROLES
    queryset = TicketExport.objects.all()
    table = tables.TicketExportTable
    filterset = filters.TicketExportFilterSet
    refresh_interval = 3

    def needs_refresh(self, queryset):
        return queryset.filter(state__in=EXPORT_PENDING).exists()


class TicketExportDetailView(TicketsSection, ObjectDetailView):
    section = "exports"
    required_roles = ALL_ROLES
    queryset = TicketExport.objects.select_related("requested_by")
    fields = ("kind", "state", "export_id", "file_name", "filters", "created_at", "platform_created", "fetched_at",
              "size", "requested_by", "message")

    def get_extra_context(self, export):
        return export_detail_context(export)


register_model_views(TicketExport, prefix="exports", list=TicketExportListView, detail=TicketExportDetailView)


class TicketExportStartView(TicketsSection, BaseObjectView):
    """The export form of one kind (document 2, 4.1 / 4.2); managers may export too."""

    model = TicketExport
    section = "exports"
    required_roles = ALL_ROLES
    action = "start"

    def kind(self):
        try:
            return TicketKind(self.kwargs["kind"])
        except ValueError:
            raise Http404 from None

    def get_template_names(self):
        return ["tickets/ticketexport_start.html"]

    def _render(self, form):
        kind = self.kind()
        return self.render({"form": form, "kind": kind, "kind_label": kind.label,
                            "cancel_url": model_url(TICKET_MODELS[kind], "list")})

    def get(self, request, kind):
        return self._render(TicketExportForm(kind=self.kind()))

    def post(self, request, kind):
        kind = self.kind()
        if request.company is None:
            raise PermissionDenied(_("Choose a company first."))
        form = TicketExportForm(data=request.POST, kind=kind)
        if not form.is_valid():
            return self._render(form)
        export = services.export_start(company=request.company, kind=kind,
                                       filters=services.export_filters(kind, form.cleaned_data), user=request.user)
        messages.success(request, _("The export was started; the file appears here when the platform has "
                                    "prepared it."))
        return redirect(model_url(export, "detail"))


class TicketExportActionView(TicketsSection, BaseObjectView):
    model = TicketExport
    required_roles = ALL_ROLES


class TicketExportDownloadView(ExportDownloadMixin, TicketExportActionView):
    pass


@method_decorator(require_POST, name="dispatch")
class TicketExportFetchView(ExportFetchMixin, TicketExportActionView):
    fetch_error = services.TicketError

    def fetch(self, export):
        services.export_fetch_request(export=export)


@method_decorator(require_POST, name="dispatch")
class TicketExportHistoryView(TicketExportActionView):
    """Read the platform's export history (exports started elsewhere appear) in the background."""

    def post(self, request):
        if request.company is None:
            raise PermissionDenied(_("Choose a company first."))
        for kind in TicketKind:
            core_jobs.enqueue("backoffice.tickets.jobs.export_history_sync", name="export_history_sync",
                              company=request.company, target=kind.value, args=[request.company.pk, kind.value])
        messages.info(request, _("Reading the platform's export history; new exports appear in a moment."))
        return redirect(model_url(TicketExport, "list"))


# ---------------------------------------------------------------------------------------------------
# By-date reports


class ReportListView(ReportPageMixin, TicketsSection, ObjectListView):
    """A report page per kind: a date picker, the stored items of the current run, totals and Excel."""

    required_roles = ALL_ROLES
    kind = None
    refresh_interval = 3
    date_form_class = ReportDateForm

    @property
    def report_name(self):
        return self.kind

    def report_runs(self, day):
        return ReportRun.objects.filter(company=self.request.company, kind=self.kind, report_date=day)

    def base_queryset(self):
        day, _form = self.report_date()
        run = services.current_report_run(company=self.request.company, kind=self.kind, report_date=day)
        queryset = super().base_queryset()
        return queryset.filter(run=run) if run is not None else queryset.none()

    @staticmethod
    def split_totals(queryset, amounts=("total_amount", "total_vat")) -> dict:
        """Totals of report items as issued (every item, cancelled ones included), cancelled (the items the
        report marks `canceled`, document 2, section 2.5) and net (issued minus cancelled).

        The top-level keys (count, canceled and the amounts) stay the issued figures, for older readers."""
        from decimal import Decimal

        cancelled = Q(canceled=True)
        aggregates = {"issued_count": Count("pk"), "cancelled_count": Count("pk", filter=cancelled)}
        for name in amounts:
            aggregates[f"issued_{name}"] = Sum(name)
            aggregates[f"cancelled_{name}"] = Sum(name, filter=cancelled)
        raw = queryset.aggregate(**aggregates)
        parts = {part: {"count": raw[f"{part}_count"],
                        **{name: raw[f"{part}_{name}"] or Decimal("0.00") for name in amounts}}
                 for part in ("issued", "cancelled")}
        parts["net"] = {key: parts["issued"][key] - parts["cancelled"][key] for key in parts["issued"]}
        return {**parts["issued"], "canceled": parts["cancelled"]["count"], **parts}

    def render(self, context, status=200):
        day, form = self.report_date()
        amounts = ("total_amount", "total_vat") + (("payable_amount",) if self.kind == TicketKind.PASSENGER else ())
        totals = self.split_totals(self.get_queryset(), amounts)
        latest = self.report_runs(day).first()
        context.update({"report_date": day, "date_form": form, "totals": totals, "latest_run": latest,
                        "total_parts": [(part, totals[part]) for part in ("issued", "cancelled", "net")],
                        "kind": self.kind, "fetch_url": reverse("tickets:report_fetch", args=[self.kind])})
        return super().render(context, status)

    def get_template_names(self):
        return ["tickets/report_list.html"]


class EventReportListView(ReportListView):
    title = gettext_lazy("Event ticket report")
    section = "event_report"
    kind = TicketKind.EVENT
    queryset = EventTicketReportItem.objects.all()
    table = tables.EventTicketReportTable


class PassengerReportListView(ReportListView):
    title = gettext_lazy("Passenger ticket report")
    section = "passenger_report"
    kind = TicketKind.PASSENGER
    queryset = PassengerTicketReportItem.objects.all()
    table = tables.PassengerTicketReportTable


register_model_views(EventTicketReportItem, prefix="reports/event", list=EventReportListView)
register_model_views(PassengerTicketReportItem, prefix="reports/passenger", list=PassengerReportListView)


@method_decorator(require_POST, name="dispatch")
class ReportFetchView(TicketsSection, BaseObjectView):
    model = ReportRun
    required_roles = ALL_ROLES

    def post(self, request, kind):
        try:
            kind = TicketKind(kind)
        except ValueError:
            raise Http404 from None
        if request.company is None:
            raise PermissionDenied(_("Choose a company first."))
        return report_fetch(request, form=ReportDateForm(request.POST),
                            list_url=model_url(REPORT_ITEM_MODELS[kind], "list"),
                            request_report=lambda day: services.report_request(company=request.company, kind=kind,
                                                                               report_date=day))


def ticket_home(request):
    """The menu's entry: the event tickets (the passenger tickets, exports and reports are tabs)."""
    return redirect("tickets:eventticket_list")

