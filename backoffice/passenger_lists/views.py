"""Passenger-list pages: list / detail / build / update / bulk, the exports and the by-date report.

A list is built from the passenger-ticket list: select an expedition's tickets (or filter to one and
select all) and use "Build the passenger list" (a bulk action this app adds to that list). Views never
call the platform client, except for the kept export file; everything else is saved and enqueued.
"""

from django.contrib import messages
from django.db.models import Count, Sum
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.utils.decorators import method_decorator
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext
from django.views.decorators.http import require_POST
from django_tables2 import RequestConfig

from backoffice.core import batch
from backoffice.core.choices import SyncState
from backoffice.core.generic.registry import model_url, register_bulk_action, register_model_view, register_model_views
from backoffice.core.generic.views import BaseObjectView, BulkAction, BulkActionView, ObjectDetailView, ObjectEditView
from backoffice.core.generic.views import ObjectListView, SubmissionGuardMixin, describe_fields, safe_return_url
from backoffice.core.generic.families import (
    ReportListView,
    active_company,
    register_export_pages,
    register_report_pages,
)
from backoffice.core.generic.sections import SectionMixin
from backoffice.core.models import JobRun
from backoffice.core.roles import EDITORS, EVERYONE, has_role
from backoffice.core.security import parse_ids
from backoffice.core.submissions import SubmissionGuard
from backoffice.tickets.models import PassengerTicket

from . import filters, services, tables
from .choices import ListState
from .families import LIST_EXPORTS, LIST_REPORTS
from .forms import PassengerListForm
from .models import PassengerList
DETAIL_FIELDS = ("passenger_list_number", "expedition_number", "expedition_time", "vehicle_plate", "is_manual_plate")
OPERATOR_DETAIL_FIELDS = ("vehicle_operating_vkn_tckn", "vehicle_operating_title", "vehicle_operating_tax_center",
                          "commission_amount", "commission_tax_amount", "vehicle_operating_country",
                          "vehicle_operating_city", "vehicle_operating_district", "vehicle_operating_town",
                          "vehicle_operating_street", "vehicle_operating_building_name",
                          "vehicle_operating_building_no", "vehicle_operating_door_no", "vehicle_operating_post_code",
                          "vehicle_operating_mersis_no", "vehicle_operating_register_no",
                          "vehicle_operating_telephone", "vehicle_operating_email")


class ListsSection(SectionMixin):
    section = "passenger_lists"
    tab = "lists"


# ---------------------------------------------------------------------------------------------------
# Lists


class PassengerListListView(ListsSection, ObjectListView):
    model = PassengerList
    required_roles = EVERYONE
    table = tables.PassengerListTable
    filterset = filters.PassengerListFilterSet
    refresh_interval = 3

    def needs_refresh(self, queryset):
        return queryset.filter(sync_state__in=[SyncState.QUEUED, SyncState.SENDING]).exists()


class PassengerListDetailView(ListsSection, ObjectDetailView):
    model = PassengerList
    required_roles = EVERYONE

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
        urls = {name: model_url(plist, name) for name in ("rebuild", "export")}
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
            return services.expedition_of(company=active_company(self.request), pks=pks)
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
        plist = PassengerList(company=active_company(request))
        return self.render_form(PassengerListForm(instance=plist, company=request.company))

    def post(self, request):
        plist = PassengerList(company=active_company(request))
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
        plist, answered = self.guarded_submit(
            self.guard_for(plist), form, lambda: services.passenger_list_create(plist=form.save(commit=False),
                                                                               user=request.user),
            refused=services.PassengerListError,
            invalid=lambda: self.render_form(form, None if form.is_valid() else self._expedition(pks) or None, pks))
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


def _export_selected(request, queryset):
    ids = list(queryset.exclude(remote_id="").values_list("remote_id", flat=True))
    if not ids:
        messages.error(request, _("Only lists the platform has can be exported."))
        return 0
    LIST_EXPORTS.start(company=active_company(request), filters={"ids": ids}, user=request.user)
    messages.info(request, _("The export was started; its file appears under Exports when the platform has "
                             "prepared it."))
    return len(ids)


class PassengerListBulkView(ListsSection, BulkActionView):
    model = PassengerList
    required_roles = EVERYONE
    actions = {
        "export": BulkAction(gettext_lazy("Platform Excel export"), _export_selected,
                             confirm=gettext_lazy("The platform prepares an Excel file of the selected lists; it is "
                                                  "downloaded and kept here as soon as it is ready.")),
        "resend": BulkAction(gettext_lazy("Send again"), batch.resend_bulk(
            refused_message=gettext_lazy("Only lists whose sending failed can be sent again.")),
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


@register_model_view(PassengerList, "rebuild", path="<id:pk>/rebuild/")
@method_decorator(require_POST, name="dispatch")
class PassengerListRebuildView(ListsSection, SubmissionGuardMixin, BaseObjectView):
    """Create the list again with the same information: the new one replaces it (document 2, section 3).
    The button's one-time key makes a second click, Back or a second tab show the list already built."""

    model = PassengerList
    required_roles = EDITORS

    def post(self, request, pk):
        plist = get_object_or_404(self.get_queryset(), pk=pk)
        new, answered = self.guarded_submit(
            self.guard_for(plist), None, lambda: services.passenger_list_rebuild(plist=plist, user=request.user),
            valid=lambda: True, refused=services.PassengerListError,
            invalid=lambda: redirect(model_url(plist, "detail")))
        if answered is not None:
            return answered
        messages.success(request, _("A new list of expedition %(number)s is being sent; it replaces %(old)s once the "
                                    "platform has it.") % {"number": new.expedition_number, "old": plist})
        return redirect(model_url(new, "detail"))


@register_model_view(PassengerList, "export", path="<id:pk>/export/")
@method_decorator(require_POST, name="dispatch")
class PassengerListExportOneView(ListsSection, BaseObjectView):
    """Start a platform Excel export of this list (ids = its ettn)."""

    model = PassengerList
    required_roles = EVERYONE

    def post(self, request, pk):
        plist = get_object_or_404(self.get_queryset().exclude(remote_id=""), pk=pk)
        export = LIST_EXPORTS.start(company=plist.company, filters={"ids": [plist.remote_id]}, user=request.user)
        messages.success(request, _("The export was started; the file appears here when the platform has "
                                    "prepared it."))
        return redirect(model_url(export, "detail"))


@register_model_view(PassengerList, "query", path="query/")
@method_decorator(require_POST, name="dispatch")
class PassengerListQueryView(ListsSection, BaseObjectView):
    """Read the platform's lists (paged, 500 at a time) in the background."""

    model = PassengerList
    required_roles = EDITORS

    def post(self, request):
        services.query_sync_request(company=active_company(request))
        messages.info(request, _("Reading the platform's passenger lists; lists built elsewhere appear in a "
                                 "moment."))
        return redirect(model_url(PassengerList, "list"))


# ---------------------------------------------------------------------------------------------------
# Exports and the by-date report of lists (core.families)


register_export_pages(
    LIST_EXPORTS, prefix="exports", section="passenger_lists", tab="exports",
    title=gettext_lazy("Passenger list exports"), table=tables.PassengerListExportTable,
    filterset=filters.PassengerListExportFilterSet,
    start_links=((None, gettext_lazy("Export passenger lists")),),
    heading=lambda kind: _("Excel export: passenger lists"),
    subtitle=gettext_lazy("The lists whose expedition falls in this range. The platform prepares a ZIP of Excel "
                          "files; it is downloaded and kept here as soon as it is ready."),
    home=lambda kind: model_url(PassengerList, "list"))


class PassengerListReportView(ListsSection, ReportListView):
    """The date picker, the stored items of the current fetch, totals and Excel."""

    title = gettext_lazy("Passenger list report")
    tab = "report"
    table = tables.PassengerListReportTable
    report_name = "passenger-list"

    def get_template_names(self):
        return ["passenger_lists/report_list.html"]

    def totals(self, queryset):
        return queryset.aggregate(count=Count("pk"), total_payable_amount=Sum("total_payable_amount"),
                                  total_commission_amount=Sum("total_commission_amount"),
                                  total_commission_tax_amount=Sum("total_commission_tax_amount"))


register_report_pages(LIST_REPORTS, view=PassengerListReportView, prefix="report")
