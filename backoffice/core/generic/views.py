"""Generic views in the NetBox manner: a model's list, detail, edit, delete and bulk-action pages are
subclasses that set a queryset, a table, a filter set and a form, and nothing else.

Every view refuses (403) a user without one of `required_roles` (empty: any signed-in user); shows only the active
company's records when the model has a `company` field (another company's record is a 404), unless
`company_scoped = False`; stands on the section and tab of its model's list (core.generic.sections); and finds its
template from the model's meta: "<app_label>/<model_name>_<action>.html", else "generic/object_<action>.html".
"""

from dataclasses import dataclass
from typing import Callable

from django.contrib import messages
from django.core.exceptions import FieldDoesNotExist, PermissionDenied
from django.core.paginator import EmptyPage, PageNotAnInteger
from django.db import models, transaction
from django.db.models import ProtectedError
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import NoReverseMatch, reverse
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.text import slugify
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext
from django.views import View
from django_tables2 import RequestConfig

from ..crypto import EncryptedTextField
from ..roles import EDITORS, EVERYONE, CompanyScopedMixin, RoleRequiredMixin, has_role
from ..security import parse_ids
from .bulk import bulk_delete, totals_by_currency  # noqa: F401 (totals_by_currency: the apps' import)
from .export import export_xlsx
from .guarded import SubmissionGuardMixin
from .lines import register_lookups
from .registry import extra_bulk_actions, get_model_view, model_url, user_may
from .sections import SectionMixin
from .tables import SelectionColumn
from .text import capfirst

PER_PAGE_CHOICES = (25, 50, 100, 250)
DEFAULT_PER_PAGE = 50


def active_company(request):
    if request.company is None:
        raise PermissionDenied(_("Choose a company first."))
    return request.company


def record_home(obj):
    """Where a page about a record goes back to: its detail page, else its model's list, else the start page."""
    return model_url(obj, "detail") or model_url(type(obj), "list") or "/"


def safe_return_url(request, url, fallback):
    if url and url_has_allowed_host_and_scheme(url, allowed_hosts={request.get_host()},
                                               require_https=request.is_secure()):
        return url
    return fallback


class _QuerysetRoot:
    """End of the get_queryset() chain that CompanyScopedMixin extends with super()."""

    def get_queryset(self):
        return self.base_queryset()


class _ModelContext:
    def base_context(self):
        meta = self.get_model()._meta
        return {
            "model": self.get_model(),
            "verbose_name": meta.verbose_name,
            "verbose_name_plural": meta.verbose_name_plural,
            "list_url": model_url(self.get_model(), "list") if user_may(self.request.user, self.get_model(), "list")
            else None,
        }


class BaseObjectView(RoleRequiredMixin, CompanyScopedMixin, SectionMixin, _ModelContext, _QuerysetRoot, View):
    model = None
    queryset = None
    required_roles: tuple = ()
    # None: scoped when the model has a `company` field.
    company_scoped = None
    action = ""

    def get_model(self):
        return self.model if self.model is not None else self.queryset.model

    @property
    def is_company_scoped(self) -> bool:
        if self.company_scoped is not None:
            return self.company_scoped
        try:
            self.get_model()._meta.get_field("company")
        except FieldDoesNotExist:
            return False
        return True

    def get_queryset(self):
        if not self.is_company_scoped:
            return self.base_queryset()
        return super().get_queryset()  # CompanyScopedMixin: the active company's only

    def base_queryset(self):
        """Every record this view may show before company scoping; subclasses restrict it here."""
        return (self.queryset if self.queryset is not None else self.get_model()._default_manager).all()

    def get_object(self):
        """The record of the pk in the URL, among those this view may show (any other is a 404)."""
        return get_object_or_404(self.get_queryset(), pk=self.kwargs["pk"])

    def get_template_names(self):
        meta = self.get_model()._meta
        return [f"{meta.app_label}/{meta.model_name}_{self.action}.html", f"generic/object_{self.action}.html"]

    def render(self, context, status=200):
        return TemplateResponse(self.request, self.get_template_names(), {**self.base_context(), **context},
                                status=status)


class ObjectListView(BaseObjectView):
    """Filtered, sorted, paginated table with an Excel export and htmx refresh of the table alone."""

    action = "list"
    required_roles = EVERYONE
    table = None
    filterset = None
    filterset_form = None  # a Form class for the filter bar; None: the filter set's own form
    # Seconds between automatic refreshes while needs_refresh() is true (None: never).
    refresh_interval = None
    htmx_target = "object-list"
    title = None  # the page's heading; None: the model's verbose_name_plural

    working_statuses: tuple = ()  # the platform's statuses of a record it still works on

    def needs_refresh(self, queryset) -> bool:
        """Mirrored records refresh while some are on their way to the platform, or in one of the platform's
        working_statuses (with a refresh_interval). One indexed look-up each: an OR of the two reads every record."""
        if self.refresh_interval is None or not hasattr(self.get_model(), "sync_state"):
            return False
        return (queryset.filter(sync_state__in=["queued", "sending"]).exists()
                or bool(self.working_statuses) and queryset.filter(remote_status__in=self.working_statuses).exists())

    def get_table_kwargs(self):
        return {}

    def bulk_actions(self):
        """The bulk actions this user may run: [(name, BulkAction, url)]."""
        view_class = get_model_view(self.get_model(), "bulk")
        actions = []
        if view_class is not None and user_may(self.request.user, self.get_model(), "bulk"):
            actions = [(name, bulk_action, model_url(self.get_model(), "bulk", action=name))
                       for name, bulk_action in view_class.actions.items()]
        for name, bulk_action in extra_bulk_actions(self.get_model()).items():
            try:
                actions.append((name, bulk_action, reverse(bulk_action.url_name)))
            except NoReverseMatch:
                continue
        return [(name, bulk_action, url) for name, bulk_action, url in actions
                if url and not (bulk_action.required_roles
                                and not has_role(self.request.user, *bulk_action.required_roles))]

    def per_page(self):
        try:
            value = int(self.request.GET.get("per_page", DEFAULT_PER_PAGE))
        except ValueError:
            return DEFAULT_PER_PAGE
        return value if value in PER_PAGE_CHOICES else DEFAULT_PER_PAGE

    def export_filename(self):
        name = slugify(str(self.get_model()._meta.verbose_name_plural)) or self.get_model()._meta.model_name
        return f"{name}-{timezone.localtime():%Y%m%d-%H%M}.xlsx"

    def get(self, request, *args, **kwargs):
        queryset = self.get_queryset()
        filterset = None
        if self.filterset is not None:
            filterset = self.filterset(request.GET or None, queryset=queryset, request=request)
            queryset = filterset.qs

        if request.GET.get("export") == "xlsx":
            return export_xlsx(self.table, queryset, filename=self.export_filename(),
                               sheet_title=capfirst(self.get_model()._meta.verbose_name_plural),
                               table_kwargs=self.get_table_kwargs())

        actions = self.bulk_actions()
        table_kwargs = self.get_table_kwargs()
        if actions:
            table_kwargs.setdefault("extra_columns", []).append(("pk", SelectionColumn()))
            table_kwargs["sequence"] = ("pk", "...")
        table = self.table(queryset, **table_kwargs)
        RequestConfig(request, paginate=False).configure(table)
        try:
            table.paginate(page=request.GET.get("page", 1), per_page=self.per_page())
        except (PageNotAnInteger, EmptyPage):
            table.paginate(page=1, per_page=self.per_page())

        filter_form = None
        if filterset is not None:
            filter_form = filterset.form if self.filterset_form is None else self.filterset_form(request.GET or None)
        active_filters = [k for k, v in request.GET.items() if v and k not in ("page", "per_page", "sort")]
        if active_filters:
            table.empty_text = _("Nothing matches these filters. Clear them to see everything.")
        context = {
            "title": self.title or capfirst(self.get_model()._meta.verbose_name_plural),
            "company_scoped": self.is_company_scoped,
            "table": table,
            "filter_form": filter_form,
            "active_filter_count": len(active_filters),
            "bulk_actions": actions,
            "add_url": model_url(self.get_model(), "add") if user_may(request.user, self.get_model(), "add")
            else None,
            "refresh_url": model_url(self.get_model(), "refresh")
            if user_may(request.user, self.get_model(), "refresh") else None,
            "per_page_choices": PER_PAGE_CHOICES,
            "per_page": self.per_page(),
            "refresh_interval": self.refresh_interval if self.refresh_interval and self.needs_refresh(queryset)
            else None,
            "htmx_target": self.htmx_target,
        }
        if request.headers.get("HX-Request") and request.headers.get("HX-Target") == self.htmx_target:
            return TemplateResponse(request, "generic/includes/object_list_table.html",
                                    {**self.base_context(), **context})
        return self.render(context)


@dataclass
class DetailField:
    label: str
    value: object
    url: str | None = None
    kind: str = "plain"  # plain, text (long, shown as <pre>), secret, choice, bool


def describe_fields(obj, names=None, exclude=("id",), user=None):
    """The fields of a record as the detail page shows them. Secrets are only ever "set" / "not set"."""
    meta = obj._meta
    chosen = [meta.get_field(name) for name in names] if names is not None else [
        field for field in meta.concrete_fields if field.name not in exclude and not field.generated
    ]
    fields = []
    for field in chosen:
        label = capfirst(field.verbose_name)
        value = getattr(obj, field.name)
        if isinstance(field, EncryptedTextField):
            fields.append(DetailField(label, bool(value), kind="secret"))
        elif field.choices:
            fields.append(DetailField(label, getattr(obj, f"get_{field.name}_display")(), kind="choice"))
        elif isinstance(field, models.BooleanField):
            fields.append(DetailField(label, value, kind="bool"))
        elif isinstance(field, models.ForeignKey):
            linked = value is not None and (user is None or user_may(user, type(value), "detail"))
            fields.append(DetailField(label, value, url=model_url(value, "detail") if linked else None))
        elif isinstance(field, models.TextField):
            fields.append(DetailField(label, value, kind="text"))
        else:
            fields.append(DetailField(label, value))
    return fields


class ObjectDetailView(BaseObjectView):
    action = "detail"
    required_roles = EVERYONE
    fields = None  # names to show, in order; None: every concrete field but the id

    def get_extra_context(self, obj):
        return {}

    def get(self, request, *args, **kwargs):
        obj = self.get_object()
        user = request.user
        return self.render({
            "object": obj,
            "fields": describe_fields(obj, self.fields, user=user),
            "edit_url": model_url(obj, "edit") if user_may(user, type(obj), "edit") else None,
            "delete_url": model_url(obj, "delete") if user_may(user, type(obj), "delete") else None,
            **self.get_extra_context(obj),
        })


class ObjectEditView(SubmissionGuardMixin, BaseObjectView):
    """Create (no pk in the URL) and update. A new company-scoped record belongs to the active company, and its form
    carries a one-time key and the company it was opened for (core.submissions): Back-and-resubmit shows the record
    already created, a company switched in another tab is refused. `formsets = {"lines": LineFormSet}` (prefix =
    name; validated with the form, saved with it in one transaction: save_form(form, lines=...)); `lookups =
    {"customer": Lookup(...)}`, each the model's view of that name, with this view's roles (core.generic.lines)."""

    action = "edit"
    required_roles = EDITORS
    form = None
    formsets: dict = {}
    lookups: dict = {}
    saves = None  # staticmethod(the domain's save service): see save_form
    # None: guard the creation of company-scoped records; True / False to decide otherwise.
    submission_guard = None
    # Errors of the save (a service's refusal) shown on the form, their `field` when they have one.
    refused: tuple = ()
    invalid_status = 200  # of the page that shows the errors
    form_company = False  # True: the form takes the active company (form(..., company=request.company))

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        register_lookups(cls)

    def guarded(self, obj):
        return obj.pk is None and (self.is_company_scoped if self.submission_guard is None else self.submission_guard)

    def get_object(self):
        if "pk" in self.kwargs:
            return super().get_object()
        obj = self.get_model()()
        if self.is_company_scoped:
            obj.company = active_company(self.request)
        return obj

    def get_form_kwargs(self):
        return {"company": self.request.company} if self.form_company else {}

    def get_formsets(self, obj, data=None) -> dict:
        """The declared formsets, bound to `data` (a POST) or showing the record's lines."""
        return {name: formset(data=data, instance=obj, prefix=name) for name, formset in self.formsets.items()}

    def save_form(self, form, **formsets):
        """Save and return the record (with its lines): through the domain's service when the view names one
        (`saves`: service(record, *each formset's kept lines, user=)), else as the form saves it."""
        if self.saves is not None:
            kept = (formset.kept() for formset in formsets.values())
            return self.saves(form.save(commit=False), *kept, user=self.request.user)
        obj = form.save()
        for formset in formsets.values():  # built on the same instance: it has its pk now
            formset.save()
        return obj

    def return_url(self, obj):
        return safe_return_url(self.request, self.request.POST.get("return_url") or
                               self.request.GET.get("return_url"), record_home(obj))

    def cancel_url(self, obj):
        fallback = (model_url(obj, "detail") if obj.pk else None) or model_url(type(obj), "list") or "/"
        return safe_return_url(self.request, self.request.GET.get("return_url"), fallback)

    def form_context(self, obj, formsets) -> dict:
        """What the form's page shows besides the form and its lines (choices the browser offers, ...)."""
        return {}

    def render_form(self, obj, form, status=200):
        formsets = getattr(self, "bound_formsets", None) or self.get_formsets(obj)
        return self.render({"object": obj, "form": form, "is_new": obj.pk is None, "cancel_url": self.cancel_url(obj),
                            **formsets, **self.form_context(obj, formsets)}, status=status)

    def locked_message(self, obj) -> str:
        """Why this record cannot be changed now ("" when it can): the page goes back to its detail."""
        return ""

    def locked(self, obj):
        message = self.locked_message(obj) if obj.pk else ""
        if message:
            messages.warning(self.request, message)
            return redirect(record_home(obj))
        return None

    def success_message(self, obj, is_new) -> str:
        message = _("Created %(name)s “%(object)s”.") if is_new else _("Saved %(name)s “%(object)s”.")
        return message % {"name": obj._meta.verbose_name, "object": obj}

    def get(self, request, *args, **kwargs):
        obj = self.get_object()
        return self.locked(obj) or self.render_form(obj, self.form(instance=obj, **self.get_form_kwargs()))

    def post(self, request, *args, **kwargs):
        obj = self.get_object()
        if (locked := self.locked(obj)) is not None:
            return locked
        is_new = obj.pk is None
        form = self.form(data=request.POST, files=request.FILES, instance=obj, **self.get_form_kwargs())
        self.bound_formsets = formsets = self.get_formsets(obj, data=request.POST)
        obj, answered = self.guarded_submit(
            self.guard_for(obj), form, lambda: self.save_form(form, **formsets), refused=self.refused,
            valid=lambda: all([form.is_valid(), *(formset.is_valid() for formset in formsets.values())]),
            invalid=lambda: self.render_form(obj, form, self.invalid_status),
            note=getattr(form, "duplicate_note", None))  # a form that lets a second record through says why
        if answered is not None:
            return answered
        messages.success(request, self.success_message(obj, is_new))
        return redirect(self.return_url(obj))


class ObjectDeleteView(BaseObjectView):
    """A confirmation page first; the record goes only on the confirming POST."""

    action = "delete"
    required_roles = EDITORS

    def get(self, request, *args, **kwargs):
        obj = self.get_object()
        return self.render({"object": obj, "cancel_url": model_url(obj, "detail") or model_url(type(obj), "list")})

    def post(self, request, *args, **kwargs):
        obj = self.get_object()
        name = str(obj)
        try:
            obj.delete()
        except ProtectedError:
            messages.error(request, _("“%(object)s” cannot be deleted: other records refer to it.") % {"object": name})
            return redirect(record_home(obj))
        messages.success(request, _("Deleted %(name)s “%(object)s”.") % {"name": obj._meta.verbose_name,
                                                                          "object": name})
        return redirect(model_url(type(obj), "list") or "/")


@dataclass
class BulkAction:
    """One action on the rows selected in a list. `function(request, queryset)` does the work on the
    (company-scoped) selection and returns how many records it changed."""

    label: str
    function: Callable
    confirm: str = gettext_lazy("Apply this action to the selected records?")
    style: str = "primary"  # Bootstrap colour of the button
    required_roles: tuple = ()
    # Registered from another app (registry.register_bulk_action): the URL name its button posts to.
    url_name: str = ""
    ask: bool = True  # False: harmless (a read), done without the confirmation page
    # A confirmation of its own (sending to the tax authority: recipients, mailboxes, totals): its template, and
    # details(request, selection) -> its extra context; a "refused" list there (names) keeps Confirm off.
    template: str = ""
    details: Callable | None = None
    # The label of a checkbox the confirmation needs ticked ("I checked ..."): a stray Enter or click sends nothing.
    check: str = ""


class BulkActionView(BaseObjectView):
    """The list's checkboxes (POST) or a record's link (GET ?pk=): a confirmation page listing the selection, then
    the action on the confirming POST. GET only ever shows the confirmation."""

    action = "bulk"
    actions: dict[str, BulkAction] = {}
    max_listed = 100

    def get_template_names(self):
        meta = self.get_model()._meta
        return [f"{meta.app_label}/{meta.model_name}_bulk.html", "generic/bulk_confirm.html"]

    def bulk_action(self, name):
        bulk_action = self.actions.get(name)
        if bulk_action is None:
            raise Http404
        if bulk_action.required_roles and not has_role(self.request.user, *bulk_action.required_roles):
            raise PermissionDenied
        return bulk_action

    def confirmation(self, bulk_action, name, selection, return_url, status=200, unchecked=False):
        listed = list(selection[: self.max_listed])
        context = {
            "bulk_action": bulk_action, "action_name": name, "objects": listed, "count": selection.count(),
            "pks": list(selection.values_list("pk", flat=True)), "return_url": return_url,
            "form_url": model_url(self.get_model(), "bulk", action=name), "unchecked": unchecked,
        }
        if bulk_action.details is not None:
            context.update(bulk_action.details(self.request, selection))
        if bulk_action.template:
            return TemplateResponse(self.request, [bulk_action.template], {**self.base_context(), **context},
                                    status=status)
        return self.render(context, status=status)

    def get(self, request, *args, **kwargs):
        list_url = model_url(self.get_model(), "list") or "/"
        bulk_action = self.bulk_action(kwargs["action"])
        pks = parse_ids(request.GET.getlist("pk"))
        selection = self.get_queryset().filter(pk__in=pks)
        if not bulk_action.ask or not pks or not selection.exists():
            return redirect(list_url)
        return self.confirmation(bulk_action, kwargs["action"], selection,
                                 safe_return_url(request, request.GET.get("return_url"), list_url))

    def post(self, request, *args, **kwargs):
        bulk_action = self.bulk_action(kwargs["action"])
        list_url = model_url(self.get_model(), "list") or "/"
        return_url = safe_return_url(request, request.POST.get("return_url"), list_url)
        pks = parse_ids(request.POST.getlist("pk"))
        selection = self.get_queryset().filter(pk__in=pks)
        if not pks or not selection.exists():
            messages.warning(request, _("Select at least one record first."))
            return redirect(return_url)
        if bulk_action.ask and not request.POST.get("confirm"):
            return self.confirmation(bulk_action, kwargs["action"], selection, return_url)
        if bulk_action.ask and bulk_action.check and not request.POST.get("checked"):
            return self.confirmation(bulk_action, kwargs["action"], selection, return_url, status=400, unchecked=True)
        with transaction.atomic():
            count = bulk_action.function(request, selection)
        if count:
            messages.success(request, ngettext("%(action)s: %(count)s record.", "%(action)s: %(count)s records.",
                                               count) % {"action": bulk_action.label, "count": count})
        return redirect(return_url)
