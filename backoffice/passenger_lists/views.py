"""Passenger-list pages: list / detail / build / update / bulk, the exports and the by-date report.

A list is built from the passenger-ticket list: select an expedition's tickets (or filter to one and
select all) and use "Build the passenger list" (a bulk action this app adds to that list). Views never
call the platform client, except for the kept export file; everything else is saved and enqueued.
"""

from django.contrib import messages
from django.db.models import Count, Sum
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.decorators import method_decorator
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext
from django.views.decorators.http import require_POST
from django_tables2 import RequestConfig

from backoffice.core import batch, domains
from backoffice.core.choices import SyncState
from backoffice.core.generic.families import ReportListView, active_company, export_selected
from backoffice.core.generic.families import register_export_pages, register_record_export, register_report_pages
from backoffice.core.generic.registry import model_url, register_bulk_action, register_model_view, register_model_views
from backoffice.core.generic.guarded import GuardedButtonView
from backoffice.core.generic.reading import register_read_view
from backoffice.core.generic.views import BaseObjectView, BulkAction, BulkActionView, ObjectDetailView, ObjectEditView
from backoffice.core.generic.views import ObjectListView, describe_fields, safe_return_url
from backoffice.core.jobs import runs_of
from backoffice.core.roles import EDITORS, EVERYONE, has_role
from backoffice.core.security import parse_ids
from backoffice.core.submissions import SubmissionGuard

from . import filters, services, tables
from .choices import ListState
from .families import LIST_EXPORTS, LIST_REPORTS
from .forms import PassengerListForm
from .models import PassengerList

tickets_api = domains.api("tickets")


# ---------------------------------------------------------------------------------------------------
# Lists


class PassengerListListView(ObjectListView):
    table = tables.PassengerListTable
    filterset = filters.PassengerListFilterSet
    refresh_interval = 3  # while lists are on their way to the platform


class PassengerListDetailView(ObjectDetailView):
    fields = ("passenger_list_number", "expedition_number", "expedition_time", "vehicle_plate", "is_manual_plate")

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
        return {
            "operator_fields": [f for f in describe_fields(plist, tickets_api.OPERATOR_FIELDS, user=user)
                                if f.value not in (None, "")],
            "ticket_table": table,
            "ticket_sums": sums,
            "replaces": list(plist.replaces.all()),
            "runs": runs_of(plist),
            "edit_url": model_url(plist, "edit") if may_edit and plist.is_editable and plist.remote_id else None,
            "rebuild_url": model_url(plist, "rebuild") if may_edit and plist.remote_id and not plist.is_busy else None,
            # Building again makes a new legal list: its button carries a one-time key (core.submissions).
            "guard": SubmissionGuard(self.request).fields(),
            "resend_url": model_url(PassengerList, "bulk", action="resend")
            if may_edit and plist.sync_state == SyncState.FAILED else None,
            "export_url": model_url(plist, "export") if plist.remote_id and plist.is_current else None,
            "needs_refresh": plist.is_busy,
        }


class ListFormView(ObjectEditView):
    """The form of a list, to build or update it: one template; saved, back to the list's page."""

    form = PassengerListForm
    refused = services.PassengerListError
    form_company = True

    def get_template_names(self):
        return ["passenger_lists/passengerlist_build.html"]

    def return_url(self, plist):
        return model_url(plist, "detail")


class PassengerListBuildView(ListFormView):
    """Build a list (isNewList true). Reached from the passenger-ticket list with the selected tickets (POST
    of "pk" values: the form comes back filled from their expedition), or empty from "Add"."""

    action = "build"
    saves = staticmethod(services.passenger_list_create)

    def _expedition(self, pks):
        if not pks:
            return None
        try:
            return services.expedition_of(company=active_company(self.request), pks=pks)
        except services.PassengerListError as exc:
            messages.error(self.request, str(exc))
            return False

    def render_form(self, plist, form, status=200, expedition=None):
        pks = parse_ids(self.request.POST.getlist("pk"))
        valid = form.is_bound and form.is_valid()
        if expedition is None and form.is_bound and not valid:
            expedition = self._expedition(pks) or None
        probe = form.instance if valid else expedition.probe if expedition else None  # the list the page shows
        grouped = services.list_tickets(probe) if probe is not None else None
        existing = expedition.existing if expedition else (services.same_information(plist).first() if valid else None)
        table = tables.ListTicketTable(grouped) if grouped is not None else None
        sums = grouped.aggregate(payable=Sum("payable_amount"), count=Count("pk")) if grouped is not None else None
        return self.render({"object": plist, "form": form, "expedition": expedition, "pks": pks, "ticket_table": table,
                            "ticket_sums": sums, "existing": existing, "is_new": True,
                            "cancel_url": safe_return_url(self.request, self.request.POST.get("return_url"),
                                                          model_url(PassengerList, "list"))}, status=status)

    def post(self, request, *args, **kwargs):
        if "expedition_number" in request.POST:  # the form itself
            return super().post(request, *args, **kwargs)
        # The selection from the passenger-ticket list: the form, filled from the tickets' expedition.
        expedition = self._expedition(parse_ids(request.POST.getlist("pk")))
        if not expedition:
            if expedition is None:
                messages.warning(request, _("Select the passenger tickets of one expedition first."))
            return redirect(safe_return_url(request, request.POST.get("return_url"),
                                            reverse("tickets:passengerticket_list")))
        plist = self.get_object()
        form = PassengerListForm(instance=plist, company=request.company, initial=expedition.initial)
        return self.render_form(plist, form, expedition=expedition)

    def success_message(self, plist, is_new):
        return ngettext("The passenger list of expedition %(number)s was built with %(count)s ticket; it is being "
                        "sent to the platform.",
                        "The passenger list of expedition %(number)s was built with %(count)s tickets; it is being "
                        "sent to the platform.", plist.ticket_count) % {"number": plist.expedition_number,
                                                                         "count": plist.ticket_count}


class PassengerListEditView(ListFormView):
    """Update the list of the expedition (isNewList false): regroups its tickets and sends the operator
    fields again. Document 2, section 3: a reported list cannot be updated."""

    saves = staticmethod(services.passenger_list_update)

    def locked_message(self, plist):
        if plist.state == ListState.REPORTED:
            return _("Passenger list %(number)s was reported to the tax authority and cannot be updated. Build it "
                     "again to replace it.") % {"number": plist}
        return "" if plist.is_editable else _("Passenger list %(number)s cannot be changed now.") % {"number": plist}

    def form_context(self, obj, formsets):
        return {"ticket_table": tables.ListTicketTable(services.list_tickets(obj))}

    def success_message(self, plist, is_new):
        return ngettext("Passenger list %(number)s saved with %(count)s ticket; it is being sent to the platform.",
                        "Passenger list %(number)s saved with %(count)s tickets; it is being sent to the platform.",
                        plist.ticket_count) % {"number": plist, "count": plist.ticket_count}


class PassengerListBulkView(BulkActionView):
    required_roles = EVERYONE
    actions = {
        "export": BulkAction(gettext_lazy("Platform Excel export"), export_selected(
            LIST_EXPORTS, refused=gettext_lazy("Only lists the platform has can be exported.")),
                             confirm=gettext_lazy("The platform prepares an Excel file of the selected lists; it is "
                                                  "downloaded and kept here as soon as it is ready.")),
        "resend": batch.resend_action(
            refused=gettext_lazy("Only lists whose sending failed can be sent again."),
            confirm=gettext_lazy("The selected lists whose sending failed will be sent again.")),
    }


register_model_views(PassengerList, prefix="lists", list=PassengerListListView, detail=PassengerListDetailView,
                     add=PassengerListBuildView, edit=PassengerListEditView, bulk=PassengerListBulkView)

# The passenger-ticket list gets the action that builds the list of the selected tickets' expedition.
register_bulk_action(tickets_api.PassengerTicket, "passenger_list", BulkAction(
    gettext_lazy("Build the passenger list"), None, style="success", required_roles=EDITORS,
    url_name="passenger_lists:passengerlist_add"))


@register_model_view(PassengerList, "rebuild", path="<id:pk>/rebuild/")
@method_decorator(require_POST, name="dispatch")
class PassengerListRebuildView(GuardedButtonView, BaseObjectView):
    """Create the list again with the same information: the new one replaces it (document 2, section 3)."""

    required_roles = EDITORS
    refused = services.PassengerListError

    def perform(self, plist):
        return services.passenger_list_rebuild(plist=plist, user=self.request.user)

    def done_message(self, plist, new):
        return _("A new list of expedition %(number)s is being sent; it replaces %(old)s once the platform has "
                 "it.") % {"number": new.expedition_number, "old": plist}


register_record_export(PassengerList, LIST_EXPORTS, section="passenger_lists", tab="lists")


register_read_view(PassengerList, lambda company: services.query_sync_request(company=company), name="query",
                   whole=True, roles=EDITORS, message=gettext_lazy(
                       "Reading the platform's passenger lists; lists built elsewhere appear in a moment."))


# ---------------------------------------------------------------------------------------------------
# Exports and the by-date report of lists (core.families)


register_export_pages(
    LIST_EXPORTS, prefix="exports", section="passenger_lists", tab="exports",
    title=gettext_lazy("Passenger list exports"),
    start_links=((None, gettext_lazy("Export passenger lists")),),
    heading=lambda kind: _("Excel export: passenger lists"),
    subtitle=gettext_lazy("The lists whose expedition falls in this range. The platform prepares a ZIP of Excel "
                          "files; it is downloaded and kept here as soon as it is ready."),
    home=lambda kind: model_url(PassengerList, "list"))


class PassengerListReportView(ReportListView):
    """The date picker, the stored items of the current fetch, totals and Excel."""

    title = gettext_lazy("Passenger list report")
    table = tables.PassengerListReportTable
    report_name = "passenger-list"

    def get_template_names(self):
        return ["passenger_lists/report_list.html"]

    def totals(self, queryset):
        return queryset.aggregate(count=Count("pk"), total_payable_amount=Sum("total_payable_amount"),
                                  total_commission_amount=Sum("total_commission_amount"),
                                  total_commission_tax_amount=Sum("total_commission_tax_amount"))


register_report_pages(LIST_REPORTS, view=PassengerListReportView, prefix="report")
