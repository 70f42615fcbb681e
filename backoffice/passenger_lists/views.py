"""Passenger-list pages: list / detail / build / update / bulk, the exports and the by-date report.

A list is built from the passenger-ticket list: select an expedition's tickets (or filter to one and
select all) and use "Build the passenger list" (a bulk action this app adds to that list). Views never
call the platform client, except for the kept export file; everything else is saved and enqueued.
"""

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.db.models import Count, Sum
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.utils.decorators import method_decorator
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext
from django.views.decorators.http import require_POST
from django_tables2 import RequestConfig

from backoffice.core.choices import Role, SyncState
from backoffice.core.generic import (
    BulkAction,
    BulkActionView,
    ObjectDetailView,
    ObjectEditView,
    ObjectListView,
    model_url,
    register_bulk_action,
    register_model_views,
)
from backoffice.core.generic.views import (
    BaseObjectView,
    ExportDownloadMixin,
    ExportFetchMixin,
    ReportPageMixin,
    SubmissionGuardMixin,
    describe_fields,
    export_detail_context,
    report_fetch,
    safe_return_url,
)
from backoffice.core.models import JobRun
from backoffice.core.roles import has_role
from backoffice.core.security import parse_ids
from backoffice.core.submissions import SubmissionGuard
from backoffice.tickets.models import PassengerTicket

from . import filters, services, tables
from .choices import EXPORT_PENDING, ListState
from .forms import PassengerListExportForm, PassengerListForm, ReportDateForm
from .models import PassengerList, PassengerListExport, PassengerListReportItem, PassengerListReportRun

ALL_ROLES = (Role.ACCOUNTING, Role.MANAGER, Role.ADMINISTRATOR)
# As for tickets: accounting staff and administrators build and send; managers read and export.
EDITORS = (Role.ACCOUNTING, Role.ADMINISTRATOR)
DETAIL_FIELDS = ("passenger_list_number", "expedition_number", "expedition_time", "vehicle_plate", "is_manual_plate")
OPERATOR_DETAIL_FIELDS = ("vehicle_operating_vkn_tckn", "vehicle_operating_title", "vehicle_operating_tax_center",
                          "commission_amount", "commission_tax_amount", "vehicle_operating_country",
                          "vehicle_operating_city", "vehicle_operating_district", "vehicle_operating_town",
                          "vehicle_operating_street", "vehicle_operating_building_name",
                          "vehicle_operating_building_no", "vehicle_operating_door_no", "vehicle_operating_post_code",
                          "vehicle_operating_mersis_no", "vehicle_operating_register_no",
                          "vehicle_operating_telephone", "vehicle_operating_email")


class ListsSection:
    """Templates of this app first, then the generic ones; the section's tabs."""

    section = "lists"

    def get_template_names(self):
        meta = self.get_model()._meta
        return [f"passenger_lists/{meta.model_name}_{self.action}.html", f"generic/object_{self.action}.html"]

    def base_context(self):
        context = super().base_context()
        context["lists_section"] = self.section
        context["may_edit"] = has_role(self.request.user, *EDITORS)
        return context


def _company(request):
    if request.company is None:
        raise PermissionDenied(_("Choose a company first."))
    return request.company


# ---------------------------------------------------------------------------------------------------
# Lists


class PassengerListListView(ListsSection, ObjectListView):
    model = PassengerList
    required_roles = ALL_ROLES
    table = tables.PassengerListTable
    filterset = filters.PassengerListFilterSet
    refresh_interval = 3

    def needs_refresh(self, queryset):
        return queryset.filter(sync_state__in=[SyncState.QUEUED, SyncState.SENDING]).exists()


class PassengerListDetailView(ListsSection, ObjectDetailView):
    model = PassengerList
    required_roles = ALL_ROLES

    def base_queryset(self):
        return super().base_queryset().select_related("replaced_by", "created_by")

    def get_extra_context(self, plist):
        user = self.request.user
        may_edit = has_role(user, *EDITORS)
        tickets = plist.tickets.order_by("ticket_number", "pk")
        # One plate for all unless the plate was given by hand: then each ticket's plate is worth a column.
        table = tables.ListTicketTable(tickets, exclude=() if plist.is_manual_plate else ("vehicle_plate",))
        RequestConfig(self.request, paginate=False).configure(table)
        sums = tickets.aggregate(payable=Sum("payable_amount"), commission=Sum("commission_amount"),
                                 commission_tax=Sum("commission_tax_amount"))
        runs = JobRun.objects.filter(company=plist.company_id, target=f"passenger_lists.passengerlist:{plist.pk}")[:10]
        urls = {name: reverse(f"passenger_lists:passengerlist_{name}", args=[plist.pk])
                for name in ("rebuild", "export")}
        return {
            "fields": describe_fields(plist, DETAIL_FIELDS, user=user),
            "operator_fields": [f for f in describe_fields(plist, OPERATOR_DETAIL_FIELDS, user=user)
                                if f.value not in (None, "")],
            "ticket_table": table,
            "ticket_sums": sums,
            "replaces": list(plist.replaces.all()),
            "runs": runs,
            "edit_url": model_url(plist, "edit") if may_edit and plist.is_editable and plist.remote_id else None,
            "rebuild_url": urls["rebuild"] if may_edit and plist.remote_id and not plist.is_busy else None,
            # Building again makes a new legal list: its button carries a one-time key (core.submissions).
            "guard": SubmissionGuard(self.request).fields(),
            "resend_url": model_url(PassengerList, "bulk", action="resend")
            if may_edit and plist.sync_state == SyncState.FAILED else None,
            "export_url": urls["export"] if plist.remote_id and plist.is_current else None,
            "needs_refresh": plist.is_busy,
        }


class PassengerListBuildView(ListsSection, SubmissionGuardMixin, BaseObjectView):
    """Build a list (isNewList true). Reached from the passenger-ticket list with the selected tickets (POST
    of "pk" values: the form comes back filled from their expedition), or empty from "Add"."""

    model = PassengerList
    required_roles = EDITORS
    action = "build"

    def _expedition(self, pks):
        if not pks:
            return None
        try:
            return services.expedition_of(company=_company(self.request), pks=pks)
        except services.PassengerListError as exc:
            messages.error(self.request, str(exc))
            return False

    def render_form(self, form, expedition=None, pks=(), status=200):
        plist = form.instance
        grouped = None
        if form.is_bound and form.is_valid():
            grouped = services.list_tickets(form.instance)
        elif expedition:
            probe = PassengerList(company=plist.company, **{k: v for k, v in expedition.initial.items()
                                                            if k in ("expedition_number", "expedition_time",
                                                                     "vehicle_plate", "is_manual_plate")})
            grouped = services.list_tickets(probe)
        existing = expedition.existing if expedition else (
            services.same_information(form.instance).first() if form.is_bound and form.is_valid() else None)
        table = tables.ListTicketTable(grouped) if grouped is not None else None
        sums = grouped.aggregate(payable=Sum("payable_amount"), count=Count("pk")) if grouped is not None else None
        return self.render({"object": plist, "form": form, "expedition": expedition, "pks": pks, "ticket_table": table,
                            "ticket_sums": sums, "existing": existing, "is_new": True,
                            "cancel_url": safe_return_url(self.request, self.request.POST.get("return_url"),
                                                          model_url(PassengerList, "list"))}, status=status)

    def get(self, request):
        plist = PassengerList(company=_company(request))
        return self.render_form(PassengerListForm(instance=plist, company=request.company))

    def post(self, request):
        plist = PassengerList(company=_company(request))
        pks = parse_ids(request.POST.getlist("pk"))
        if "expedition_number" not in request.POST:  # the selection from the passenger-ticket list
            expedition = self._expedition(pks)
            if not expedition:
                if expedition is None:
                    messages.warning(request, _("Select the passenger tickets of one expedition first."))
                return redirect(safe_return_url(request, request.POST.get("return_url"),
                                                reverse("tickets:passengerticket_list")))
            form = PassengerListForm(instance=plist, company=request.company, initial=expedition.initial)
            return self.render_form(form, expedition, pks)
        form = PassengerListForm(data=request.POST, instance=plist, company=request.company)
        guard = self.guard_for(plist)
        answered = self.check_guard(guard, form)
        if answered is not None:
            return answered
        if not form.is_valid():
            return self.render_form(form, self._expedition(pks) or None, pks)
        try:
            plist, answered = self.guarded_save(guard, form, lambda: services.passenger_list_create(
                plist=form.save(commit=False), user=request.user))
        except services.PassengerListError as exc:
            form.add_error(exc.field, str(exc))
            return self.render_form(form, None, pks)
        if answered is not None:
            return answered
        messages.success(request, ngettext(
            "The passenger list of expedition %(number)s was built with %(count)s ticket; it is being sent to the "
            "platform.",
            "The passenger list of expedition %(number)s was built with %(count)s tickets; it is being sent to the "
            "platform.", plist.ticket_count) % {"number": plist.expedition_number,
                                                                             "count": plist.ticket_count})
        return redirect(model_url(plist, "detail"))


class PassengerListEditView(ListsSection, ObjectEditView):
    """Update the list of the expedition (isNewList false): regroups its tickets and sends the operator
    fields again. Document 2, section 3: a reported list cannot be updated."""

    model = PassengerList
    required_roles = EDITORS
    form = PassengerListForm

    def get_form_kwargs(self):
        return {"company": self.request.company}

    def _refuse_locked(self, plist):
        if not plist.is_editable:
            if plist.state == ListState.REPORTED:
                messages.warning(self.request, _("Passenger list %(number)s was reported to the tax authority and "
                                                 "cannot be updated. Build it again to replace it.")
                                 % {"number": plist})
            else:
                messages.warning(self.request, _("Passenger list %(number)s cannot be changed now.")
                                 % {"number": plist})
            return redirect(model_url(plist, "detail"))
        return None

    def render_form(self, obj, form, status=200):
        table = tables.ListTicketTable(services.list_tickets(obj))
        return self.render({"object": obj, "form": form, "is_new": False, "ticket_table": table,
                            "cancel_url": self.cancel_url(obj)}, status=status)

    def get(self, request, *args, **kwargs):
        plist = self.get_object()
        return self._refuse_locked(plist) or super().get(request, *args, **kwargs)

    def post(self, request, *args, **kwargs):
        plist = self.get_object()
        locked = self._refuse_locked(plist)
        if locked:
            return locked
        form = PassengerListForm(data=request.POST, instance=plist, company=request.company)
        if not form.is_valid():
            return self.render_form(plist, form)
        try:
            plist = services.passenger_list_update(plist=form.save(commit=False))
        except services.PassengerListError as exc:
            form.add_error(exc.field, str(exc))
            return self.render_form(plist, form)
        messages.success(request, ngettext(
            "Passenger list %(number)s saved with %(count)s ticket; it is being sent to the platform.",
            "Passenger list %(number)s saved with %(count)s tickets; it is being sent to the platform.",
            plist.ticket_count) % {"number": plist, "count": plist.ticket_count})
        return redirect(model_url(plist, "detail"))

    def get_template_names(self):
        return ["passenger_lists/passengerlist_build.html"]


def _resend(request, queryset):
    count = 0
    for plist in queryset.filter(sync_state=SyncState.FAILED):
        services.passenger_list_resend(plist=plist)
        count += 1
    if not count:
        messages.error(request, _("Only lists whose sending failed can be sent again."))
    return count


def _export_selected(request, queryset):
    ids = list(queryset.exclude(remote_id="").values_list("remote_id", flat=True))
    if not ids:
        messages.error(request, _("Only lists the platform has can be exported."))
        return 0
    services.export_start(company=_company(request), filters={"ids": ids}, user=request.user)
    messages.info(request, _("The export was started; its file appears under Exports when the platform has "
                             "prepared it."))
    return len(ids)


class PassengerListBulkView(ListsSection, BulkActionView):
    model = PassengerList
    required_roles = ALL_ROLES
    actions = {
        "export": BulkAction(gettext_lazy("Platform Excel export"), _export_selected,
                             confirm=gettext_lazy("The platform prepares an Excel file of the selected lists; it is "
                                                  "downloaded and kept here as soon as it is ready.")),
        "resend": BulkAction(gettext_lazy("Send again"), _resend,
                             confirm=gettext_lazy("The selected lists whose sending failed will be sent again."),
                             required_roles=EDITORS),
    }

    def get_template_names(self):
        return ["generic/bulk_confirm.html"]


register_model_views(PassengerList, prefix="lists", list=PassengerListListView, detail=PassengerListDetailView,
                     add=PassengerListBuildView, edit=PassengerListEditView, bulk=PassengerListBulkView)

# The passenger-ticket list gets the action that builds the list of the selected tickets' expedition.
register_bulk_action(PassengerTicket, "passenger_list", BulkAction(
    gettext_lazy("Build the passenger list"), None, style="success", required_roles=EDITORS,
    url_name="passenger_lists:passengerlist_add"))


@method_decorator(require_POST, name="dispatch")
class PassengerListRebuildView(ListsSection, SubmissionGuardMixin, BaseObjectView):
    """Create the list again with the same information: the new one replaces it (document 2, section 3).
    The button's one-time key makes a second click, Back or a second tab show the list already built."""

    model = PassengerList
    required_roles = EDITORS

    def post(self, request, pk):
        plist = get_object_or_404(self.get_queryset(), pk=pk)
        guard = self.guard_for(plist)
        earlier = guard.earlier()
        if earlier is not None:
            return self.replayed(earlier)
        refusal = guard.refusal()
        if refusal:
            messages.error(request, refusal)
            return redirect(model_url(plist, "detail"))
        try:
            new, answered = self.guarded_save(guard, None, lambda: services.passenger_list_rebuild(
                plist=plist, user=request.user))
        except services.PassengerListError as exc:
            messages.error(request, str(exc))
            return redirect(model_url(plist, "detail"))
        if answered is not None:
            return answered
        messages.success(request, _("A new list of expedition %(number)s is being sent; it replaces %(old)s once the "
                                    "platform has it.") % {"number": new.expedition_number, "old": plist})
        return redirect(model_url(new, "detail"))


@method_decorator(require_POST, name="dispatch")
class PassengerListExportOneView(ListsSection, BaseObjectView):
    """Start a platform Excel export of this list (ids = its ettn)."""

    model = PassengerList
    required_roles = ALL_ROLES

    def post(self, request, pk):
        plist = get_object_or_404(self.get_queryset().exclude(remote_id=""), pk=pk)
        export = services.export_start(company=plist.company, filters={"ids": [plist.remote_id]}, user=request.user)
        messages.success(request, _("The export was started; the file appears here when the platform has "
                                    "prepared it."))
        return redirect(model_url(export, "detail"))


@method_decorator(require_POST, name="dispatch")
class PassengerListQueryView(ListsSection, BaseObjectView):
    """Read the platform's lists (paged, 500 at a time) in the background."""

    model = PassengerList
    required_roles = EDITORS

    def post(self, request):
        services.query_sync_request(company=_company(request))
        messages.info(request, _("Reading the platform's passenger lists; lists built elsewhere appear in a "
                                 "moment."))
        return redirect(model_url(PassengerList, "list"))


# ---------------------------------------------------------------------------------------------------
# Exports


class PassengerListExportListView(ListsSection, ObjectListView):
    section = "exports"
    title = gettext_lazy("Passenger list exports")
    model = PassengerListExport
    required_roles = ALL_ROLES
    table = tables.PassengerListExportTable
    filterset = filters.PassengerListExportFilterSet
    refresh_interval = 3

    def needs_refresh(self, queryset):
        return queryset.filter(state__in=EXPORT_PENDING).exists()


class PassengerListExportDetailView(ListsSection, ObjectDetailView):
    section = "exports"
    model = PassengerListExport
    required_roles = ALL_ROLES
    fields = ("state", "export_id", "file_name", "filters", "created_at", "platform_created", "fetched_at", "size",
              "requested_by", "message")

    def base_queryset(self):
        return super().base_queryset().select_related("requested_by")

    def get_extra_context(self, export):
        return export_detail_context(export)


register_model_views(PassengerListExport, prefix="exports", list=PassengerListExportListView,
                     detail=PassengerListExportDetailView)


class PassengerListExportStartView(ListsSection, BaseObjectView):
    """The export form (document 2, 4.3: an expedition-time range); managers may export too."""

    model = PassengerListExport
    section = "exports"
    required_roles = ALL_ROLES
    action = "start"

    def _render(self, form):
        return self.render({"form": form, "cancel_url": model_url(PassengerListExport, "list")})

    def get(self, request):
        return self._render(PassengerListExportForm())

    def post(self, request):
        company = _company(request)
        form = PassengerListExportForm(data=request.POST)
        if not form.is_valid():
            return self._render(form)
        export = services.export_start(company=company, filters=services.export_filters(form.cleaned_data),
                                       user=request.user)
        messages.success(request, _("The export was started; the file appears here when the platform has "
                                    "prepared it."))
        return redirect(model_url(export, "detail"))


class PassengerListExportActionView(ListsSection, BaseObjectView):
    model = PassengerListExport
    section = "exports"
    required_roles = ALL_ROLES


class PassengerListExportDownloadView(ExportDownloadMixin, PassengerListExportActionView):
    pass


@method_decorator(require_POST, name="dispatch")
class PassengerListExportFetchView(ExportFetchMixin, PassengerListExportActionView):
    fetch_error = services.PassengerListError

    def fetch(self, export):
        services.export_fetch_request(export=export)


@method_decorator(require_POST, name="dispatch")
class PassengerListExportHistoryView(PassengerListExportActionView):
    """Read the platform's export history (exports started elsewhere appear) in the background."""

    def post(self, request):
        company = _company(request)
        from backoffice.core import jobs as core_jobs

        core_jobs.enqueue("backoffice.passenger_lists.jobs.export_history_sync", name="passenger_list_export_history",
                          company=company, args=[company.pk])
        messages.info(request, _("Reading the platform's export history; new exports appear in a moment."))
        return redirect(model_url(PassengerListExport, "list"))


# ---------------------------------------------------------------------------------------------------
# The by-date report of lists


class PassengerListReportView(ReportPageMixin, ListsSection, ObjectListView):
    """The date picker, the stored items of the current fetch, totals and Excel."""

    section = "report"
    title = gettext_lazy("Passenger list report")
    model = PassengerListReportItem
    required_roles = ALL_ROLES
    table = tables.PassengerListReportTable
    refresh_interval = 3
    date_form_class = ReportDateForm
    report_name = "passenger-list"

    def report_runs(self, day):
        return PassengerListReportRun.objects.filter(company=self.request.company, report_date=day)

    def base_queryset(self):
        day, _form = self.report_date()
        run = services.current_report_run(company=self.request.company, report_date=day)
        queryset = super().base_queryset()
        return queryset.filter(run=run) if run is not None else queryset.none()

    def render(self, context, status=200):
        day, form = self.report_date()
        totals = self.get_queryset().aggregate(
            count=Count("pk"), total_payable_amount=Sum("total_payable_amount"),
            total_commission_amount=Sum("total_commission_amount"),
            total_commission_tax_amount=Sum("total_commission_tax_amount"))
        latest = self.report_runs(day).first()
        context.update({"report_date": day, "date_form": form, "totals": totals, "latest_run": latest,
                        "fetch_url": reverse("passenger_lists:report_fetch")})
        return super().render(context, status)

    def get_template_names(self):
        return ["passenger_lists/report_list.html"]


register_model_views(PassengerListReportItem, prefix="report", list=PassengerListReportView)


@method_decorator(require_POST, name="dispatch")
class ReportFetchView(ListsSection, BaseObjectView):
    model = PassengerListReportRun
    required_roles = ALL_ROLES

    def post(self, request):
        company = _company(request)
        return report_fetch(request, form=ReportDateForm(request.POST),
                            list_url=model_url(PassengerListReportItem, "list"),
                            request_report=lambda day: services.report_request(company=company, report_date=day))
