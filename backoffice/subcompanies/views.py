"""Pages of company management: managers read (dashboard, reports, sub-companies, requests, exports);
administrators create sub-companies and add or cancel credit offers and products. Accounting staff see
none of it (403). Every page shows the active company's records only."""

import json
import math
from datetime import timedelta

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.db.models import Count, Sum
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext
from django.views import View
from django.views.generic import TemplateView

from backoffice.core.choices import JobStatus, SyncState
from backoffice.core.models import JobRun
from backoffice.core.generic.registry import model_url, register_model_views
from backoffice.core.generic.views import BaseObjectView, BulkAction, BulkActionView, ObjectDetailView, ObjectEditView
from backoffice.core.generic.views import ObjectListView, SubmissionGuardMixin, describe_fields, safe_return_url
from backoffice.core.generic.sections import SectionMixin as CoreSectionMixin
from backoffice.core.generic.sections import section_tabs
from backoffice.core.roles import ADMINISTRATORS, MANAGERS, RoleRequiredMixin, has_role
from backoffice.core.security import parse_ids
from backoffice.core.sync import StateError

from . import report, selectors, services
from .choices import SubCompanyState
from .filters import SubCompanyFilterSet, SubCompanyOperationFilterSet, UsageSnapshotFilterSet
from .forms import CreditForm, ProductsForm, SubCompanyForm
from .models import SubCompany, SubCompanyOperation, UsageSnapshot
from .tables import SubCompanyOperationTable, SubCompanyTable, UsageSnapshotTable

IN_FLIGHT = (SyncState.LOCAL, SyncState.QUEUED, SyncState.SENDING)
# Seconds between the live refreshes of a page: while a request is on its way to the platform, and while a
# created company waits for the usage report that shows it (the report comes every 15 minutes).
SENDING_REFRESH_SECONDS = 3
WAITING_REFRESH_SECONDS = 30


def next_report_text(company) -> str:
    """When the next usage report comes, as the pages say it: "about 14:30" (Istanbul time), or ""."""
    at = services.next_report_at(company)
    if at is None:
        return ""
    # Rounded up to the minute: "about 14:30" should not be before the report.
    at = timezone.localtime(at + timedelta(seconds=59)).replace(second=0, microsecond=0)
    return _("about %(time)s") % {"time": date_format(at, "H:i")}


def refresh_state(company) -> dict:
    """What the refresh button shows: open, queued, or closed with the time left."""
    run = services.refresh_run(company)
    wait = services.report_wait_seconds(company)
    last = JobRun.objects.filter(name=services.REFRESH_JOB, company=company).order_by("-enqueued_at", "-pk").first()
    state = {"run": run, "wait": wait, "available": not run and not wait, "available_at": None, "minutes": None,
             "failed": last if last is not None and last.status == JobStatus.FAILED else None}
    if wait:
        state["minutes"] = max(1, math.ceil(wait / 60))
        state["available_at"] = timezone.now() + timedelta(seconds=wait)
    return state


class SectionMixin(CoreSectionMixin):
    """A page of the company-management section (its section and tab: its model's), under the notice of what the
    company lacks for it."""

    def section_notice(self) -> str:
        return services.api_key_missing(self.request.company)


# --- sub-companies ----------------------------------------------------------------------------------

class SubCompanyListView(SectionMixin, ObjectListView):
    required_roles = MANAGERS
    queryset = SubCompany.objects.with_state()
    table = SubCompanyTable
    filterset = SubCompanyFilterSet
    refresh_interval = SENDING_REFRESH_SECONDS

    def needs_refresh(self, queryset):
        """Live while a creation is being sent (often), or waits for the report that shows it (rarely)."""
        pending = queryset.filter(remote_id="")
        if pending.filter(sync_state__in=IN_FLIGHT).exists():
            self.refresh_interval = SENDING_REFRESH_SECONDS
            return True
        if pending.filter(sync_state=SyncState.SYNCED).exists():
            self.refresh_interval = WAITING_REFRESH_SECONDS
            return True
        return False


class SubCompanyDetailView(SectionMixin, ObjectDetailView):
    required_roles = MANAGERS
    queryset = SubCompany.objects.select_related("report_row", "created_by")
    fields = ("name", "identifier", "remote_id", "origin", "quantity", "contact_full_name", "contact_email",
              "contact_phone", "created_by", "created_at", "seen_at", "last_seen_at")

    def get_extra_context(self, obj):
        row = obj.report_row
        cancellations = selectors.cancellations(obj)
        credits = [{"credit": c, "active": c.is_active and c.application_credit_id not in cancellations,
                    "cancelling": c.application_credit_id in cancellations,
                    "cancellation": cancellations.get(c.application_credit_id),
                    "pairs": report.flatten({k: v for k, v in c.data.items() if k != "id"})}
                   for c in services.report_credits(obj)]
        new_offers = selectors.offers_since_report(obj)
        operations = list(obj.operations.order_by("-created_at", "-pk")[:20])
        state = obj.state
        refresh_seconds = None
        if state == SubCompanyState.SENDING or obj.operations.filter(sync_state__in=IN_FLIGHT).exists():
            refresh_seconds = SENDING_REFRESH_SECONDS
        elif state == SubCompanyState.WAITING:
            refresh_seconds = WAITING_REFRESH_SECONDS
        return {
            "credits": credits,
            "new_offers": new_offers,
            "row": row,
            "row_extra": report.flatten(row.extra) if row else [],
            "operations": operations,
            "is_admin": has_role(self.request.user, *ADMINISTRATORS),
            "rule_4_reason": services.rule_4_reason(obj),
            "state": state,
            "refresh_seconds": refresh_seconds,
            "next_report": next_report_text(obj.company) if state in (SubCompanyState.SENDING,
                                                                      SubCompanyState.WAITING) else "",
        }


class SubCompanyCreateView(SectionMixin, ObjectEditView):
    required_roles = ADMINISTRATORS
    form = SubCompanyForm
    refused = services.Refused

    def save_form(self, form):
        return services.create_subcompany(company=self.request.company, user=self.request.user, **form.cleaned_data)

    def success_message(self, record, is_new):
        when = next_report_text(self.request.company)
        if when:
            return _("Sent “%(name)s” to the platform. The platform creates companies in the background: "
                     "it appears here with a usage report, the next one %(when)s (reports are fetched "
                     "every 15 minutes).") % {"name": record, "when": when}
        return _("Sent “%(name)s” to the platform. The platform creates companies in the background: "
                 "it appears here once a usage report shows it (reports are fetched every 15 "
                 "minutes).") % {"name": record}

    def return_url(self, record):
        return model_url(record, "detail")


class SubCompanyBulkView(SubmissionGuardMixin, BulkActionView):
    """Bulk actions from the sub-company table: a form (quantity or products), then one batch call."""

    required_roles = ADMINISTRATORS
    actions = {
        # function=None: post() below runs the form and the service.
        "add_credit": BulkAction(gettext_lazy("Add a credit offer"), None, style="primary",
                                 confirm=gettext_lazy("One credit offer of this quantity for each selected "
                                                      "sub-company, in one call to the platform.")),
        "add_products": BulkAction(gettext_lazy("Add products"), None, style="secondary",
                                   confirm=gettext_lazy("These products for each selected sub-company, in one "
                                                        "call to the platform.")),
    }
    forms = {"add_credit": CreditForm, "add_products": ProductsForm}

    def guard_target(self, context):
        return context.get("objects") or None  # the confirmation form hands out credit or products: keyed

    def post(self, request, *args, **kwargs):
        name = kwargs["action"]
        bulk_action = self.bulk_action(name)
        list_url = model_url(SubCompany, "list") or "/"
        return_url = safe_return_url(request, request.POST.get("return_url"), list_url)
        pks = parse_ids(request.POST.getlist("pk"))
        selection = list(self.get_queryset().filter(pk__in=pks).order_by("name", "pk"))
        if not selection:
            messages.warning(request, _("Select at least one record first."))
            return redirect(return_url)
        form = self.forms[name](request.POST if request.POST.get("confirm") else None)

        def show():
            return self.render({"bulk_action": bulk_action, "action_name": name, "objects": selection,
                                "count": len(selection), "pks": [s.pk for s in selection],
                                "return_url": return_url, "form": form})

        def send():
            if name == "add_credit":
                return services.credit_add_batch(
                    company=request.company, subcompanies=selection, quantity=form.cleaned_data["quantity"],
                    show_over_usage=form.cleaned_data["show_over_usage"], user=request.user)
            return services.products_add_batch(company=request.company, subcompanies=selection,
                                               product_types=form.cleaned_data["product_types"], user=request.user)

        if not form.is_bound:
            return show()
        operation, answered = self.guarded_submit(self.guard_for(selection), form, send, refused=services.Refused,
                                                  invalid=show)
        if answered is not None:
            return answered
        messages.success(request, ngettext("%(action)s: sent for %(count)s sub-company.",
                                           "%(action)s: sent for %(count)s sub-companies.", len(selection))
                         % {"action": bulk_action.label, "count": len(selection)})
        return redirect(model_url(operation, "detail") or return_url)


register_model_views(SubCompany, prefix="sub-companies", list=SubCompanyListView, detail=SubCompanyDetailView,
                     add=SubCompanyCreateView, bulk=SubCompanyBulkView)


class SubCompanyFormView(SectionMixin, SubmissionGuardMixin, BaseObjectView):
    """A form about one sub-company (administrators): validate, call the service, back to the detail. Each
    sends a request that hands out credit or products: its one-time key makes Back-and-resubmit show the
    request already sent instead of a second one."""

    model = SubCompany
    required_roles = ADMINISTRATORS
    form_class = None
    title = ""

    def get_template_names(self):
        return ["subcompanies/subcompany_action.html"]

    def context(self, obj, form, **extra):
        return {"object": obj, "form": form, "title": self.title, "detail_url": model_url(obj, "detail"), **extra}

    def get(self, request, *args, **kwargs):
        obj = self.get_object()
        return self.render(self.context(obj, self.form_class()))

    def post(self, request, *args, **kwargs):
        obj = self.get_object()
        form = self.form_class(request.POST)
        operation, answered = self.guarded_submit(
            self.guard_for(obj), form, lambda: self.perform(obj, form.cleaned_data), refused=services.Refused,
            invalid=lambda: self.render(self.context(obj, form)))
        if answered is not None:
            return answered
        messages.success(request, _("%(request)s is on its way to the platform.") % {"request": operation})
        return redirect(model_url(obj, "detail"))


class CreditAddView(SubCompanyFormView):
    form_class = CreditForm
    title = gettext_lazy("Add a credit offer")

    def perform(self, obj, data):
        return services.credit_add(company=self.request.company, subcompany=obj, quantity=data["quantity"],
                                   show_over_usage=data["show_over_usage"], user=self.request.user)


class ProductsAddView(SubCompanyFormView):
    form_class = ProductsForm
    title = gettext_lazy("Add products")

    def context(self, obj, form, **extra):
        return super().context(obj, form, rule_4_reason=services.rule_4_reason(obj), **extra)

    def perform(self, obj, data):
        return services.products_add(company=self.request.company, subcompany=obj,
                                     product_types=data["product_types"], user=self.request.user)


class CreditCancelView(SectionMixin, BaseObjectView):
    """A confirmation page first (with the rule 1 check); the cancellation goes only on the POST."""

    model = SubCompany
    required_roles = ADMINISTRATORS

    def get_template_names(self):
        return ["subcompanies/credit_cancel.html"]

    def get(self, request, *args, **kwargs):
        obj = self.get_object()
        credit_id = kwargs["credit_id"]
        credit = next((c for c in services.report_credits(obj) if c.application_credit_id == credit_id), None)
        return self.render({
            "object": obj, "credit_id": credit_id, "credit": credit,
            "pairs": report.flatten(credit.data) if credit else [],
            "refusal": services.cancel_refusal(obj, credit_id), "detail_url": model_url(obj, "detail"),
        })

    def post(self, request, *args, **kwargs):
        obj = self.get_object()
        try:
            operation = services.credit_cancel(company=request.company, subcompany=obj,
                                               application_credit_id=kwargs["credit_id"], user=request.user)
        except services.Refused as exc:
            messages.error(request, exc.message)
        else:
            messages.success(request, _("%(request)s is on its way to the platform.") % {"request": operation})
        return redirect(model_url(obj, "detail"))


class ResendView(RoleRequiredMixin, View):
    """Send a refused or failed record again (administrators)."""

    required_roles = ADMINISTRATORS
    model = None

    def post(self, request, *args, **kwargs):
        if request.company is None:
            raise PermissionDenied
        record = get_object_or_404(self.model.objects.filter(company=request.company), pk=kwargs["pk"])
        try:
            services.record_resend(record)
        except StateError as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, _("“%(record)s” is queued to be sent again.") % {"record": record})
        return redirect(model_url(record, "detail"))


# --- requests (credit offers, cancellations, products) ---------------------------------------------

class SubCompanyOperationListView(SectionMixin, ObjectListView):
    required_roles = MANAGERS
    queryset = SubCompanyOperation.objects.prefetch_related("subcompanies")
    table = SubCompanyOperationTable
    filterset = SubCompanyOperationFilterSet
    refresh_interval = 5

    def needs_refresh(self, queryset):
        return queryset.filter(sync_state__in=IN_FLIGHT).exists()


class SubCompanyOperationDetailView(SectionMixin, ObjectDetailView):
    required_roles = MANAGERS
    queryset = SubCompanyOperation.objects.select_related("created_by")
    fields = ("kind", "sync_state", "last_error", "quantity", "show_over_usage", "application_credit_id",
              "created_by", "created_at", "synced_at", "attempts")

    def get_extra_context(self, obj):
        fields = describe_fields(obj, self.fields, user=self.request.user)
        # An id, not an amount: no thousands separator, and a label instead of the API's field name.
        field = fields[self.fields.index("application_credit_id")]
        field.label = _("Number of the cancelled offer")
        field.value = str(field.value) if field.value is not None else None
        return {"targets": obj.subcompanies.order_by("name", "pk"), "products": obj.product_labels(),
                "fields": fields,
                "response_pairs": report.flatten(obj.response) if obj.response else [],
                "is_admin": has_role(self.request.user, *ADMINISTRATORS),
                "refresh_seconds": SENDING_REFRESH_SECONDS if obj.sync_state in IN_FLIGHT else None}


register_model_views(SubCompanyOperation, prefix="sub-companies/requests", list=SubCompanyOperationListView,
                     detail=SubCompanyOperationDetailView)


# --- usage reports ----------------------------------------------------------------------------------

class UsageSnapshotListView(SectionMixin, ObjectListView):
    required_roles = MANAGERS
    queryset = UsageSnapshot.objects.annotate(
        customer_count=Count("customers"), credit_offered=Sum("customers__credit_offered"),
        credit_used=Sum("customers__credit_used"), credit_over_used=Sum("customers__credit_over_used"))
    table = UsageSnapshotTable
    filterset = UsageSnapshotFilterSet


class UsageSnapshotDetailView(SectionMixin, ObjectDetailView):
    required_roles = MANAGERS
    fields = ("fetched_at",)

    def get_extra_context(self, obj):
        rows = list(obj.customers.prefetch_related("credits").order_by("position"))
        labels = selectors.labels_for(obj.company, rows)
        return {
            "rows": [{"row": row, "label": labels.get(row.customer_unique_id, row.label),
                      "extra": report.flatten(row.extra),
                      **{name: [report.flatten(e) for e in getattr(row, name)]
                         for name in ("distributors", "usages", "over_usages")},
                      "credits": [(c, report.flatten({k: v for k, v in c.data.items() if k != "id"}))
                                  for c in row.credits.all()]}
                     for row in rows],
            "raw": json.dumps(obj.raw, indent=2, ensure_ascii=False),
        }


register_model_views(UsageSnapshot, prefix="sub-companies/reports", list=UsageSnapshotListView,
                     detail=UsageSnapshotDetailView)


class UsageDashboardView(RoleRequiredMixin, TemplateView):
    """Managers' view of the shared pool: charts, trend, forecast, and the refresh button."""

    required_roles = MANAGERS
    template_name = "subcompanies/usage_dashboard.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        company = self.request.company
        context["section_tabs"] = section_tabs("subcompanies", "dashboard", services.api_key_missing(company))
        if company is None:
            return context
        snapshot = selectors.latest_snapshot(company)
        context["snapshot"] = snapshot
        context["refresh"] = refresh_state(company)
        subcompanies = SubCompany.objects.filter(company=company).with_state()
        context["waiting_count"] = subcompanies.filter(state_value=SubCompanyState.WAITING).count()
        context["subcompany_count"] = subcompanies.filter(state_value=SubCompanyState.ACTIVE).count()
        context["next_report"] = next_report_text(company) if context["waiting_count"] else ""
        if snapshot is None:
            return context
        rows = list(snapshot.customers.order_by("position"))
        labels = selectors.labels_for(company, rows)
        trend = selectors.trend_series(company)
        series = {
            "names": {"offered": _("Credit offered"), "used": _("Credit used"), "over_used": _("Credit over-used")},
            "companies": selectors.company_series(snapshot, labels),
            "trend": {**trend, "times": [date_format(timezone.localtime(t), "SHORT_DATETIME_FORMAT")
                                         for t in trend["times"]]},
        }
        context.update({
            "totals": selectors.totals(snapshot),
            "series": series,
            "chart_height": min(640, max(260, 36 * len(rows) + 80)),
            "trend_points": len(trend["times"]),
            "forecasts": selectors.forecasts(company, snapshot, labels),
            "forecast_days": report.FORECAST_WINDOW.days,
            "forecast_min_span": report.min_span_text(report.forecast_min_span()),
        })
        return context


class UsageRefreshView(RoleRequiredMixin, View):
    """The manual refresh: queue the job while the platform's window is open, else say when."""

    required_roles = MANAGERS

    def post(self, request, *args, **kwargs):
        target = safe_return_url(request, request.POST.get("next"), reverse("subcompanies:usage_dashboard"))
        if request.company is None:
            raise PermissionDenied
        try:
            services.usage_report_request(company=request.company)
        except services.Refused as exc:
            messages.warning(request, exc.message)
        else:
            messages.success(request, _("The usage report is being fetched; this page shows it when it arrives."))
        return redirect(target)


class UsageRefreshStatusView(RoleRequiredMixin, View):
    """The refresh card alone (htmx polls it while a refresh is queued)."""

    required_roles = MANAGERS

    def get(self, request, *args, **kwargs):
        if request.company is None:
            raise PermissionDenied
        snapshot = selectors.latest_snapshot(request.company)
        response = TemplateResponse(request, "subcompanies/includes/refresh_card.html", {
            "refresh": refresh_state(request.company), "snapshot": snapshot})
        # A new report arrived since the page was drawn: reload the whole page with it.
        if str(snapshot.pk if snapshot else "") != request.GET.get("since", ""):
            response["HX-Refresh"] = "true"
        return response
