from datetime import timedelta

from axes.utils import reset as axes_reset
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_not_required
from django.contrib.auth.forms import SetPasswordForm
from django.contrib.auth.views import LoginView, LogoutView, PasswordChangeView
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce
from django.http import Http404, HttpResponseServerError, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template import loader
from django.urls import reverse
from django.utils import timezone
from django.utils.decorators import method_decorator
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import requires_csrf_token
from django.views.decorators.http import require_POST
from django.views.generic import TemplateView

from . import dashboard, filters, forms, platform, tables
from .choices import JobStatus, Role, service_label
from .generic.registry import model_url, register_model_views, target_label
from .generic.views import (BaseObjectView, BulkAction, BulkActionView, ObjectDeleteView, ObjectDetailView,
                            ObjectEditView, ObjectListView, active_company, bulk_delete, describe_fields,
                            safe_return_url)
from .jobs import ACTIVE
from .health import health_report
from .middleware import SESSION_KEY, role_not_required
from .models import SERIES_KINDS, Company, DocumentSeries, JobRun, Membership, RemoteCall
from .roles import ADMINISTRATORS, EVERYONE, companies_for, has_role, may_manage_user, user_roles
from .security import is_locked_out, parse_id


class DashboardView(TemplateView):
    template_name = "core/dashboard.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        company = self.request.company
        if company is None:
            return context
        since = timezone.now() - timedelta(days=7)
        counts = dict(
            JobRun.objects.filter(company=company, enqueued_at__gte=since)
            .order_by().values("status").annotate(n=Count("id")).values_list("status", "n")
        )
        jobs_url = model_url(JobRun, "list")
        context["job_counts"] = [
            {"label": label, "color": JobStatus.color(value), "count": counts.get(value, 0),
             "url": f"{jobs_url}?status={value}" if jobs_url else None}
            for value, label in JobStatus.choices
        ]
        context["job_total"] = sum(counts.values())
        context["recent_jobs"] = JobRun.objects.filter(company=company)[:5]
        # What each domain shows first (core/dashboard.py, the apps' dashboard.py): a query or two each.
        context["blocks"] = dashboard.blocks(company, user=self.request.user)
        if has_role(self.request.user, Role.ADMINISTRATOR):
            calls = RemoteCall.objects.filter(company=company).defer("request_excerpt", "response_excerpt")
            context["recent_calls"] = calls[:8]
            # one query for both counts: the dashboard stays under 15 queries (no status: the call failed)
            day = calls.filter(created_at__gte=timezone.now() - timedelta(hours=24)).aggregate(
                total=Count("pk"), failed=Count("pk", filter=Q(status__gte=400) | Q(status__isnull=True)))
            context["calls_24h"], context["failed_calls_24h"] = day["total"], day["failed"]
        return context


@require_POST
def switch_company(request):
    company = get_object_or_404(companies_for(request.user), pk=parse_id(request.POST.get("company")))
    request.session[SESSION_KEY] = company.pk
    messages.success(request, _("You are now working for %(company)s.") % {"company": company.name})
    return redirect(safe_return_url(request, request.POST.get("next"), "/"))


# --- Signing in and out ----------------------------------------------------------------------------

class SignInView(LoginView):
    """Django's sign-in with the "shared computer" choice: the session then ends when the browser closes
    (and after the idle time in any case). django-axes counts the failures (settings.AXES_*)."""

    form_class = forms.SignInForm
    redirect_authenticated_user = True

    def form_valid(self, form):
        response = super().form_valid(form)
        if form.cleaned_data.get("shared_computer"):
            self.request.session.set_expiry(0)
        return response


class OwnPasswordView(PasswordChangeView):
    """Anyone signed in changes their own password (the old one asked first; the session stays)."""

    template_name = "generic/object_edit.html"
    success_url = "/"

    def get_context_data(self, **kwargs):
        return {**super().get_context_data(**kwargs), "heading": _("Change your password"),
                "submit_label": _("Change the password"), "cancel_url": "/"}

    def form_valid(self, form):
        response = super().form_valid(form)
        messages.success(self.request, _("Your password is changed; your other sessions are signed out."))
        return response


sign_in = login_not_required(SignInView.as_view())
own_password = role_not_required(OwnPasswordView.as_view())
sign_out = role_not_required(LogoutView.as_view())


def locked_out(request, original_response=None, credentials=None):
    """django-axes' answer to a locked-out user name or address (AXES_LOCKOUT_CALLABLE): 429, in the
    user's language, saying how long to wait and whom to ask."""
    minutes = max(1, int(settings.AXES_COOLOFF_TIME.total_seconds() // 60))
    return render(request, "registration/locked_out.html", {"minutes": minutes}, status=429)


@login_not_required
@never_cache
def health(request):
    report = health_report()
    return JsonResponse(report, status=200 if report["ok"] else 503)


def permission_denied(request, exception=None):
    return render(request, "errors/403.html", status=403)


def page_not_found(request, exception=None):
    return render(request, "errors/404.html", status=404)


@requires_csrf_token
def server_error(request):
    # No request context: the database or a context processor may be what failed.
    return HttpResponseServerError(loader.get_template("errors/500.html").render())


# --- Companies (administrators) -------------------------------------------------------------------

class CompanyViewMixin:
    required_roles = ADMINISTRATORS

    def base_queryset(self):
        member_count = (Membership.objects.filter(company=OuterRef("pk")).order_by()
                        .values("company").annotate(n=Count("pk")).values("n"))
        qs = Company.objects.annotate(member_count=Coalesce(Subquery(member_count), 0))
        if self.request.user.is_superuser:
            return qs
        # An administrator manages the companies they belong to; any other is a 404.
        return qs.filter(pk__in=Membership.objects.filter(user=self.request.user).values("company_id"))


class CompanyListView(CompanyViewMixin, ObjectListView):
    table = tables.CompanyTable
    filterset = filters.CompanyFilterSet


class CompanyDetailView(CompanyViewMixin, ObjectDetailView):
    fields = ("name", "customer_unique_id", "environment", "credit_quantity", "auth_method", "api_key",
              "service_username", "service_password", "is_active", "created_at")

    def get_extra_context(self, obj):
        return {
            "memberships": Membership.objects.filter(company=obj).select_related("user").order_by("user__username"),
            "service_urls": [(service, service_label(service), url) for service, url in obj.base_urls.items()],
            "connection_rows": platform.connection_rows(obj),
            "connection_ok": platform.connection_ok(obj.connection_check),
            "connection_test_url": reverse("core:company_connection_test", args=[obj.pk]),
        }


@method_decorator(require_POST, name="dispatch")
class CompanyConnectionTestView(CompanyViewMixin, BaseObjectView):
    """POST: test the company's connection now (a token or the API key, one harmless read per service) and
    show the result on the company page. Administrators of the company only; any other company is a 404.
    The user waits for it: the interactive client makes one attempt with a short read timeout."""

    model = Company

    def post(self, request, pk):
        company = get_object_or_404(self.get_queryset(), pk=pk)
        result = platform.connection_test(company)
        if platform.connection_ok(result):
            messages.success(request, _("The connection of %(company)s works.") % {"company": company.name})
        else:
            messages.warning(request, _("The connection test of %(company)s found problems; what to do is written "
                                        "next to each service.") % {"company": company.name})
        return redirect(model_url(company, "detail") + "#connection")


class CompanyEditView(CompanyViewMixin, ObjectEditView):
    form = forms.CompanyForm

    def save_form(self, form):
        is_new = form.instance.pk is None
        company = form.save()
        if is_new:  # the administrator who creates a company works for it
            Membership.objects.get_or_create(user=self.request.user, company=company)
        return company


register_model_views(Company, prefix="companies", list=CompanyListView, detail=CompanyDetailView,
                     edit=CompanyEditView)


# --- Members of the active company (administrators) -----------------------------------------------

class MembershipViewMixin:
    required_roles = ADMINISTRATORS
    queryset = Membership.objects.select_related("user").prefetch_related("user__groups")


class MembershipListView(MembershipViewMixin, ObjectListView):
    title = gettext_lazy("Members")
    table = tables.MembershipTable
    filterset = filters.MembershipFilterSet


class MembershipDetailView(MembershipViewMixin, ObjectDetailView):
    def get_extra_context(self, obj):
        user = obj.user
        manageable = may_manage_user(self.request.user, user)
        return {
            "member": user,
            "member_roles": [label for value, label in Role.choices if value in user_roles(user)],
            "manageable": manageable,
            # Whether, not where: the names of other companies are not ours to show.
            "works_elsewhere": Membership.objects.filter(user=user).exclude(company_id=obj.company_id).exists(),
            "locked_out": is_locked_out(user.get_username()),
            "edit_url": model_url(obj, "edit") if manageable else None,
            "password_url": reverse("core:membership_password", args=[obj.pk]) if manageable else None,
            "unlock_url": reverse("core:membership_unlock", args=[obj.pk]),
        }


class MembershipAddView(MembershipViewMixin, ObjectEditView):
    form = forms.MembershipForm

    def return_url(self, obj):
        return model_url(Membership, "list")


class MemberFormView(MembershipViewMixin, BaseObjectView):
    """A form about one member's user (roles, password) or a new user: refused (404, like any record the
    administrator may not touch) unless roles.may_manage_user."""

    action = "form"
    form_class = None
    heading = ""
    submit_label = gettext_lazy("Save")
    done_message = ""

    def get_template_names(self):
        return ["generic/object_edit.html"]

    def get_object(self):
        membership = get_object_or_404(self.get_queryset(), pk=self.kwargs["pk"])
        if not may_manage_user(self.request.user, membership.user):
            raise Http404
        return membership

    def make_form(self, obj, data=None):
        return self.form_class(user=obj.user, data=data)

    def show(self, obj, form, status=200):
        return self.render({"object": obj, "form": form, "heading": self.heading % {"user": obj.user.get_username()},
                            "submit_label": self.submit_label,
                            "cancel_url": model_url(obj, "detail")}, status=status)

    def get(self, request, *args, **kwargs):
        obj = self.get_object()
        return self.show(obj, self.make_form(obj))

    def post(self, request, *args, **kwargs):
        obj = self.get_object()
        form = self.make_form(obj, data=request.POST)
        if not form.is_valid():
            return self.show(obj, form)
        with transaction.atomic():
            form.save()
        messages.success(request, self.done_message % {"user": obj.user.get_username()})
        return redirect(model_url(obj, "detail"))


class MembershipRolesView(MemberFormView):
    form_class = forms.MemberRolesForm
    heading = gettext_lazy("Roles of %(user)s")
    done_message = gettext_lazy("The roles of %(user)s are saved. They apply from the user's next page.")


class MembershipPasswordView(MemberFormView):
    # Django's own: the password validators of settings, and a new session hash (other sessions end).
    form_class = SetPasswordForm
    heading = gettext_lazy("New password for %(user)s")
    submit_label = gettext_lazy("Set the password")
    done_message = gettext_lazy("The password of %(user)s is changed. Tell them the new one in person, not "
                                "by e-mail; their other sessions are signed out.")

    def make_form(self, obj, data=None):
        return self.form_class(obj.user, data=data)


class MemberCreateView(MembershipViewMixin, BaseObjectView):
    """A new user who works for the active company only."""

    def get_template_names(self):
        return ["generic/object_edit.html"]

    def show(self, form, status=200):
        return self.render({"form": form, "heading": _("New user"), "submit_label": _("Create the user"),
                            "is_new": True, "cancel_url": model_url(Membership, "list")}, status=status)

    def get(self, request):
        return self.show(forms.MemberCreateForm(company=active_company(request)))

    def post(self, request):
        form = forms.MemberCreateForm(data=request.POST, company=active_company(request))
        if not form.is_valid():
            return self.show(form)
        with transaction.atomic():
            user = form.save()
        messages.success(request, _("%(user)s can now sign in and works for %(company)s.")
                         % {"user": user.get_username(), "company": request.company.name})
        return redirect(model_url(Membership, "list"))


@method_decorator(require_POST, name="dispatch")
class MembershipUnlockView(MembershipViewMixin, BaseObjectView):
    """Lift a sign-in lock (too many wrong passwords) of a member of the active company."""

    def post(self, request, pk):
        membership = get_object_or_404(self.get_queryset(), pk=pk)
        axes_reset(username=membership.user.get_username())
        messages.success(request, _("%(user)s may sign in again.") % {"user": membership.user.get_username()})
        return redirect(model_url(membership, "detail"))


class MembershipDeleteView(MembershipViewMixin, ObjectDeleteView):
    pass


class MembershipBulkView(MembershipViewMixin, BulkActionView):
    actions = {
        "remove": BulkAction(gettext_lazy("Remove from the company"), bulk_delete, style="danger",
                             confirm=gettext_lazy("These users will no longer work for this company.")),
    }


register_model_views(Membership, prefix="members", list=MembershipListView, add=MembershipAddView,
                     detail=MembershipDetailView, edit=MembershipRolesView, delete=MembershipDeleteView,
                     bulk=MembershipBulkView)


# --- Remote-call audit (administrators) -----------------------------------------------------------

class RemoteCallListView(ObjectListView):
    title = gettext_lazy("Remote-call audit")
    required_roles = ADMINISTRATORS
    queryset = RemoteCall.objects.defer("request_excerpt", "response_excerpt")
    table = tables.RemoteCallTable
    filterset = filters.RemoteCallFilterSet


class RemoteCallDetailView(ObjectDetailView):
    required_roles = ADMINISTRATORS
    queryset = RemoteCall.objects.all()
    fields = ("created_at", "service", "operation", "method", "path", "status", "duration_ms", "correlation_id",
              "error", "request_excerpt", "response_excerpt")

    def get_extra_context(self, call):
        fields = describe_fields(call, self.fields, user=self.request.user)
        fields[1].value = service_label(call.service)
        return {"fields": fields}


register_model_views(RemoteCall, prefix="remote-calls", list=RemoteCallListView, detail=RemoteCallDetailView)


# --- Background work (everyone with a role, for the active company) -------------------------------

class JobRunListView(ObjectListView):
    title = gettext_lazy("Background work")
    required_roles = EVERYONE
    queryset = JobRun.objects.all()
    table = tables.JobRunTable
    filterset = filters.JobRunFilterSet
    refresh_interval = 5

    def needs_refresh(self, queryset):
        return queryset.filter(status__in=ACTIVE).exists()


class JobRunDetailView(ObjectDetailView):
    required_roles = EVERYONE
    queryset = JobRun.objects.all()
    fields = ("name", "target", "status", "progress", "message", "attempts", "enqueued_at", "started_at",
              "finished_at")

    def get_extra_context(self, run):
        fields = describe_fields(run, self.fields, user=self.request.user)
        fields[0].value = run.label  # the words people read, not the internal job name
        fields[1].value, fields[1].url = target_label(run.target)
        return {"fields": fields}


register_model_views(JobRun, prefix="jobs", list=JobRunListView, detail=JobRunDetailView)


class SeriesView(BaseObjectView):
    """The active company's document series; an administrator starts one above its next number (issue 28: the
    platform holds the numbers of a series started elsewhere), shown once more to be confirmed."""

    model = DocumentSeries
    required_roles = ADMINISTRATORS
    action = "series"

    def get_template_names(self):
        return ["core/series.html"]

    def base_context(self):
        return {"model": DocumentSeries, "verbose_name_plural": DocumentSeries._meta.verbose_name_plural}

    def show(self, form, *, confirm=False, status=200):
        rows = [(SERIES_KINDS.get(s.kind, s.kind), s) for s in self.get_queryset().order_by("kind", "prefix", "-year")]
        context = {"form": form, "rows": rows, "confirm": confirm}
        if confirm:
            series, counter = form.series(), form.cleaned_data["next_counter"]
            context.update(first=series.number(counter), skipped_from=series.number(series.next_counter),
                           skipped_to=series.number(counter - 1))
        return self.render(context, status=status)

    def form(self, data=None):
        company = active_company(self.request)
        initial = {"year": timezone.localdate().year, **{name: self.request.GET[name] for name in ("kind", "prefix")
                                                          if name in self.request.GET}}
        return forms.SeriesStartForm(data=data, company=company, initial=initial)

    def get(self, request):
        return self.show(self.form())

    def post(self, request):
        form = self.form(request.POST)
        if not form.is_valid():
            return self.show(form)
        if not form.cleaned_data["confirmed"]:
            return self.show(form, confirm=True)
        try:
            series = form.save()
        except ValidationError as error:  # another administrator or a new document moved it meanwhile
            form.add_error(None, error)
            return self.show(form)
        messages.success(request, _("The next document of %(series)s takes the number %(number)s.")
                         % {"series": f"{series.prefix}{series.year}", "number": series.number(series.next_counter)})
        return redirect("core:series")
