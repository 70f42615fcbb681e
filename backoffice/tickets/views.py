"""Ticket pages: the generic list / detail / edit / bulk views, the platform's HTML, and the pages of the
export and report families (core.generic.families).

Views never call the platform client, except for the ticket's HTML and the kept export file, which
the user waits for. Everything else is saved and enqueued by a service.
"""

from decimal import Decimal

from django.conf import settings
from django.db.models import Count, Q, Sum
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from backoffice.core import actions, batch
from backoffice.core.choices import SyncState
from backoffice.core.generic.documents import document_response
from backoffice.core.generic.families import ReportListView, register_export_pages, register_report_pages
from backoffice.core.generic.registry import model_url, register_model_view, register_model_views
from backoffice.core.generic.views import BaseObjectView, BulkActionView, ObjectDetailView, ObjectEditView
from backoffice.core.generic.views import ObjectListView, describe_fields
from backoffice.core.jobs import runs_of
from backoffice.core.models import Company
from backoffice.core.provinces import PROVINCES
from backoffice.core.roles import EDITORS, EVERYONE, has_role
from backoffice.core.submissions import notes_for
from backoffice.remote.errors import NoAnswer, RemoteError

from . import filters, services, tables
from .choices import TicketKind, TicketStatus
from .families import TICKET_EXPORTS, TICKET_REPORTS
from .forms import CUSTOMER_FIELDSETS, FORMS, KIND_FIELDSETS, TicketLineFormSet
from .models import TICKET_MODELS, EventTicket, PassengerTicket


class TicketTemplates:
    """Templates of this app first (per model, then shared), then the generic ones."""

    def get_template_names(self):
        meta = self.get_model()._meta
        return [f"tickets/{meta.model_name}_{self.action}.html", f"tickets/ticket_{self.action}.html",
                f"generic/object_{self.action}.html"]


# ---------------------------------------------------------------------------------------------------
# Tickets


class TicketListView(TicketTemplates, ObjectListView):
    refresh_interval = 5
    working_statuses = (TicketStatus.QUEUED,)

    def render(self, context, status=200):
        context["export_url"] = model_url(TICKET_EXPORTS.model, "start", kind=self.get_model().kind)
        return super().render(context, status)


class TicketDetailView(TicketTemplates, ObjectDetailView):
    def base_queryset(self):
        return super().base_queryset().select_related("created_by")

    def get_extra_context(self, ticket):
        user = self.request.user
        model = type(ticket)
        lines = list(ticket.lines.prefetch_related("taxes"))
        may_edit = has_role(user, *EDITORS)
        on_platform = bool(ticket.remote_id)
        buttons = actions.buttons(ticket, user) + batch.resend_buttons(ticket, user)
        kind_fields = describe_fields(ticket, KIND_DETAIL_FIELDS[model.kind], user=user)
        code = getattr(ticket, "event_city_id", None)
        if code:  # the province by its name, as the form offers it, not its plate code
            at = KIND_DETAIL_FIELDS[model.kind].index("event_city_id")
            kind_fields[at].value = f"{PROVINCES.get(code, code)} ({code:02d})"
        return {
            "ticket_fields": describe_fields(ticket, ("ticket_number", "prefix", "document_type", "ticket_date",
                                                     "payment_type", "payment_description", "currency_code",
                                                     "exchange_rate", "reference_number", "xslt_code"), user=user),
            "kind_fields": kind_fields,
            "customer_fields": describe_fields(ticket, CUSTOMER_DETAIL_FIELDS, user=user),
            "lines": lines,
            "notes": list(ticket.notes.all()),
            "submission_notes": notes_for(ticket),
            "runs": runs_of(ticket),
            "actions": buttons,
            "edit_url": model_url(ticket, "edit") if may_edit and ticket.is_editable else None,
            "html_url": model_url(ticket, "html") if on_platform else None,
            "needs_refresh": bool(ticket.pending_action) or ticket.sync_state in (SyncState.QUEUED, SyncState.SENDING)
            or ticket.remote_status == TicketStatus.QUEUED,
        }


# The fields of the form's customer cards (the layout code is shown with the ticket's), and the kind's own.
CUSTOMER_DETAIL_FIELDS = tuple(name for title, names, collapsed in CUSTOMER_FIELDSETS for name in names
                               if name != "xslt_code")
KIND_DETAIL_FIELDS = {kind: tuple(name for title, names, collapsed in fieldsets for name in names)
                      for kind, fieldsets in KIND_FIELDSETS.items()}


class SeatTaken(Exception):
    """Another ticket took the seat between the form's check and the save (the error is on the form)."""


class TicketEditView(TicketTemplates, ObjectEditView):
    """Create (allocates the number) and update (only in status 0 or 40), lines in a formset."""

    formsets = {"lines": TicketLineFormSet}
    refused = (SeatTaken, services.TicketError)
    form_company = True

    def locked_message(self, obj):
        return services.edit_refusal(obj)

    def form_context(self, obj, formsets):
        formset = formsets["lines"]
        lines = formset.kept() if formset.is_bound and formset.is_valid() else None
        preview = services.totals(lines) if lines is not None else (
            {name: getattr(obj, name) for name in services.TOTALS} if obj.pk else services.totals([]))
        return {"formset": formset, "totals": preview}

    def save_form(self, form, lines):
        # One company's saves of a seat one at a time: the seat check is made again under this lock.
        Company.objects.select_for_update().filter(pk=form.instance.company_id).first()
        if not form.recheck_seat():
            raise SeatTaken
        ticket, data = form.save(commit=False), form.cleaned_data
        arguments = {"lines": lines.kept(), "notes": data["notes_text"], "requested_status": data["requested_status"]}
        if ticket.pk is None:
            ticket.prefix = data["prefix"]
            return services.ticket_create(ticket=ticket, user=self.request.user, **arguments)
        return services.ticket_update(ticket=ticket, **arguments)

    def success_message(self, ticket, is_new):
        message = (_("Ticket %(number)s saved; it is being sent to the platform.")
                   if ticket.requested_status == TicketStatus.QUEUED
                   else _("Ticket %(number)s saved; it is being sent to the platform as a draft."))
        return message % {"number": ticket.ticket_number}


class TicketBulkView(BulkActionView):
    required_roles = EDITORS


def bulk_actions_of(model) -> dict:
    """The declared record actions (core.actions) and "send again" for tickets whose sending failed."""
    return {**actions.bulk_actions(model), "resend": batch.resend_action(
        queue_many=lambda failed: services.tickets_queue(tickets=failed),
        refused=gettext_lazy("Only tickets whose sending failed can be sent again."),
        confirm=gettext_lazy("The selected tickets whose sending failed will be sent again."))}


class TicketHtmlView(TicketTemplates, BaseObjectView):
    """The platform's rendering of a ticket, in a sandboxed frame (srcdoc: our own pages are never
    framed) and as a download. A download the user waits for: the one place a view calls the client."""

    required_roles = EVERYONE
    action = "html"

    def get(self, request, pk):
        ticket = self.get_object()
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
            return document_response(html.encode(), filename=f"{ticket.ticket_number}.html",
                                     content_type="text/html; charset=utf-8", download=True)
        response = self.render({"object": ticket, "html": html, "error": error, "slow": slow, "standard": standard,
                                "detail_url": model_url(ticket, "detail")},
                               status=504 if slow else 502 if error else 200)
        # The platform's HTML in the srcdoc frame inherits this page's policy: it may style itself (inline
        # <style> and style attributes); it still runs no script (sandbox="" and script-src 'self').
        response._csp_update = {"style-src": ["'unsafe-inline'"]}
        return response


for _model, _prefix in ((EventTicket, "event"), (PassengerTicket, "passenger")):
    _name = _model.__name__
    register_model_views(
        _model, prefix=_prefix,
        list=type(f"{_name}ListView", (TicketListView,), {
            "model": _model, "table": getattr(tables, f"{_name}Table"),
            "filterset": getattr(filters, f"{_name}FilterSet")}),
        detail=type(f"{_name}DetailView", (TicketDetailView,), {"model": _model}),
        edit=type(f"{_name}EditView", (TicketEditView,), {"model": _model, "form": FORMS[_model.kind]}),
        bulk=type(f"{_name}BulkView", (TicketBulkView,), {"model": _model, "actions": bulk_actions_of(_model)}),
    )
    register_model_view(_model, "html", path="<id:pk>/html/")(
        type(f"{_name}HtmlView", (TicketHtmlView,), {"model": _model}))


# ---------------------------------------------------------------------------------------------------
# Exports and by-date reports (core.families)


register_export_pages(
    TICKET_EXPORTS, prefix="exports", section="tickets", tab="exports", title=gettext_lazy("Ticket exports"),
    empty_text=gettext_lazy("No exports yet. Start one from a ticket list."),
    start_links=((TicketKind.EVENT, gettext_lazy("Export event tickets")),
                 (TicketKind.PASSENGER, gettext_lazy("Export passenger tickets"))),
    heading=lambda kind: _("Excel export: %(kind)s") % {"kind": kind.label},
    home=lambda kind: model_url(TICKET_MODELS[kind], "list"))


class TicketReportListView(ReportListView):
    """A report page per kind: totals as issued, cancelled (what the report marks `canceled`) and net."""

    def get_template_names(self):
        return ["tickets/report_list.html"]

    @property
    def report_name(self):
        return self.kind

    def totals(self, queryset):
        amounts = ("total_amount", "total_vat") + (("payable_amount",) if self.kind == TicketKind.PASSENGER else ())
        return split_totals(queryset, amounts)

    def render(self, context, status=200):
        response = super().render(context, status)  # a TemplateResponse: rendered after this
        totals = response.context_data["totals"]
        response.context_data["total_parts"] = [(part, totals[part]) for part in ("issued", "cancelled", "net")]
        return response


def split_totals(queryset, amounts=("total_amount", "total_vat")) -> dict:
    """Totals of report items as issued (every item, cancelled ones included), cancelled (the items the
    report marks `canceled`, document 2, section 2.5) and net (issued minus cancelled).

    The top-level keys (count, canceled and the amounts) stay the issued figures, for older readers."""
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


for _kind, _title, _table in ((TicketKind.EVENT, gettext_lazy("Event ticket report"), tables.EventTicketReportTable),
                              (TicketKind.PASSENGER, gettext_lazy("Passenger ticket report"),
                               tables.PassengerTicketReportTable)):
    register_report_pages(TICKET_REPORTS, kind=_kind, prefix=f"reports/{_kind.value}", view=type(
        f"{_kind.label}ReportListView", (TicketReportListView,),
        {"title": _title, "table": _table}))
