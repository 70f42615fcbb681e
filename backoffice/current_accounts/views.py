"""Current-account pages: the list (Excel export of any filter), one page per account with a tab for each
child list whose records are added and edited in place, the mappings, the Excel import.

Views validate, call one service and redirect; every queryset is the active company's (another company's
account, or a child of it, is a 404).
"""

from django import forms
from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.utils.decorators import method_decorator
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from backoffice.core import domains
from backoffice.core.generic.families import active_company, button_view
from backoffice.core.generic.reading import register_read_view
from backoffice.core.generic.guarded import SubmissionGuardMixin
from backoffice.core.generic.registry import model_url, register_model_view, register_model_views
from backoffice.core.generic.views import (BaseObjectView, ObjectDetailView, ObjectEditView, ObjectListView,
                                           describe_fields)
from backoffice.core.choices import SyncState
from backoffice.core.generic.export import XLSX
from backoffice.core.imports import ImportFileError, read, summary, template
from backoffice.core.jobs import ACTIVE as ACTIVE_JOBS
from backoffice.core.jobs import runs_of
from backoffice.core.models import JobRun
from backoffice.core.roles import EDITORS, EVERYONE, has_role

from . import filters, imports, services, tables
from .forms import CHILD_FORMS, CurrentAccountForm, FirstAddressForm
from .models import Address, Bank, Contact, CurrentAccount, Mapping

chart_api = domains.api("chart_of_accounts")

PARTS = {"address": Address, "bank": Bank, "contact": Contact, "mapping": Mapping}
COLUMNS = {
    "address": ("address_name", "city", "sub_division_name", "country", "phone_number", "email_address"),
    "bank": ("name", "bank_name", "iban_number", "bank_account_number", "receiver_name"),
    "contact": ("full_name", "phone_number", "email_address"),
    "mapping": ("account", "name"),
}


def model_of(part):
    """The child model a URL's part names (a 404 for any other)."""
    if part not in PARTS:
        raise Http404
    return PARTS[part]


def tab_url(account, part) -> str:
    """The account's page on the tab of one kind of child."""
    return f"{model_url(account, 'detail')}?tab={part}"


class CurrentAccountListView(ObjectListView):
    table = tables.CurrentAccountTable
    filterset = filters.CurrentAccountFilterSet
    refresh_interval = 3


class OptionalAddressForm(FirstAddressForm):
    """The first address on a new account's page is optional: checked only when something of it was typed."""

    def is_valid(self):
        return not self.has_any() or super().is_valid()


class CurrentAccountEditView(ObjectEditView):
    form = CurrentAccountForm
    refused = services.CurrentAccountError

    def locked_message(self, account):
        return _("This current account is on its way to the platform; wait until it is there.") \
            if account.is_busy else ""

    def get_formsets(self, account, data=None):
        # A new account may come with its first address, validated and saved with it.
        return {} if account.pk else {"address_form": OptionalAddressForm(data, prefix="address")}

    def save_form(self, form, address_form=None):
        first = address_form.save(commit=False) if address_form is not None and address_form.has_any() else None
        return services.current_account_save(form.save(commit=False), user=self.request.user, address=first)


class CurrentAccountDetailView(SubmissionGuardMixin, ObjectDetailView):
    fields = ("name", "surname", "identifier", "code", "tax_office", "maturity", "mersis_number",
              "registration_number", "professional_chamber", "chamber_registration_number", "branch_id",
              "total_balance", "is_used", "remote_id", "sync_state", "details_read_at")

    def guarded(self, obj):
        return True  # the add forms of the tabs create records

    def get_extra_context(self, account, open_part=None, open_form=None, editing=None):
        user = self.request.user
        if account.remote_id and account.details_read_at is None and account.sync_state == SyncState.SYNCED:
            # Known from the platform's list only (no code, tax office, child lists): read it all once.
            services.details_request(account)
        may_edit = has_role(user, *EDITORS)
        active = open_part or self.request.GET.get("tab") or "address"
        if active not in PARTS:
            active = "address"
        parts = []
        for part, model in PARTS.items():
            queryset = model.objects.filter(current_account=account)
            if model is Mapping:
                queryset = queryset.select_related("account")
            form = None
            if may_edit:
                form = open_form if part == open_part and open_form is not None else _child_form(model, account)
            rows = [{"record": row, "cells": [getattr(row, name) for name in COLUMNS[part]],
                     "edit_url": model_url(account, "child_edit", part=part, child=row.pk),
                     "delete_url": model_url(account, "child_delete", part=part, child=row.pk),
                     "default_url": model_url(account, "child_default", part=part, child=row.pk)}
                    for row in queryset.order_by("pk")[:500]]
            editing_here = editing if part == open_part else None
            parts.append({"part": part, "label": model._meta.verbose_name_plural, "rows": rows,
                          "headers": [model._meta.get_field(name).verbose_name for name in COLUMNS[part]],
                          "form": form, "editing": editing_here, "has_default": hasattr(model, "is_default"),
                          "active": part == active,
                          "form_url": model_url(account, "child_edit", part=part, child=editing_here)
                          if editing_here else model_url(account, "child_add", part=part)})
        return {"parts": parts, "may_edit": may_edit, "warning": services.address_warning(account),
                "runs": runs_of(account), "needs_refresh": account.is_busy or any(
                    row["record"].is_busy for part in parts for row in part["rows"]),
                "edit_url": model_url(account, "edit") if may_edit and not account.is_busy else None,
                "read_url": model_url(account, "read") if account.remote_id else None}


def _child_form(model, account, *args, **kwargs):
    form_class = CHILD_FORMS[model]
    if model is Mapping:
        kwargs["company"] = account.company
    return form_class(*args, prefix=model.part, **kwargs)


register_model_views(CurrentAccount, prefix="accounts", list=CurrentAccountListView, detail=CurrentAccountDetailView,
                     edit=CurrentAccountEditView)


@register_model_view(CurrentAccount, "child_add", path="<id:pk>/<slug:part>/add/")
class ChildAddView(SubmissionGuardMixin, BaseObjectView):
    """Add an address, bank record, contact or mapping on the account's page (its tab, in place)."""

    required_roles = EDITORS
    refused = services.CurrentAccountError

    def get_template_names(self):
        return ["current_accounts/currentaccount_detail.html"]

    def detail(self, account, part, form, editing=None, status=200):
        view = CurrentAccountDetailView(request=self.request, kwargs={"pk": account.pk})
        context = {"object": account, **view.get_extra_context(account, part, form, editing),
                   "fields": describe_fields(account, CurrentAccountDetailView.fields, user=self.request.user)}
        return self.render(context, status=status)

    def get(self, request, pk, part, child=None):
        account = get_object_or_404(self.get_queryset(), pk=pk)
        return redirect(tab_url(account, part))

    def instance(self, account, model, child):
        return model(current_account=account, company=account.company)

    def post(self, request, pk, part, child=None):
        account = get_object_or_404(self.get_queryset(), pk=pk)
        model = model_of(part)
        instance = self.instance(account, model, child)
        form = _child_form(model, account, data=request.POST, instance=instance)
        guard = self.guard_for(account) if instance.pk is None else None
        record, answered = self.guarded_submit(
            guard, form, lambda: services.child_save(form.save(commit=False)), refused=self.refused,
            invalid=lambda: self.detail(account, part, form, editing=instance.pk))
        if answered is not None:
            return answered
        messages.success(request, _("Saved “%(record)s”; it is being sent to the platform.") % {"record": record})
        return redirect(tab_url(account, part))


@register_model_view(CurrentAccount, "child_edit", path="<id:pk>/<slug:part>/<int:child>/")
class ChildEditView(ChildAddView):
    """Edit one record in its tab: GET opens its form in place of the add form."""

    def instance(self, account, model, child):
        record = get_object_or_404(model.objects.filter(current_account=account), pk=child)
        if record.is_busy:
            raise services.CurrentAccountError(_("This record is on its way to the platform; wait until it is "
                                                 "there."))
        return record

    def get(self, request, pk, part, child=None):
        account = get_object_or_404(self.get_queryset(), pk=pk)
        model = model_of(part)
        try:
            record = self.instance(account, model, child)
        except services.CurrentAccountError as exc:
            messages.warning(request, str(exc))
            return redirect(tab_url(account, part))
        return self.detail(account, part, _child_form(model, account, instance=record), editing=record.pk)

    def post(self, request, pk, part, child=None):
        try:
            return super().post(request, pk, part, child)
        except services.CurrentAccountError as exc:
            messages.warning(request, str(exc))
            return redirect(tab_url(get_object_or_404(self.get_queryset(), pk=pk), part))


@register_model_view(CurrentAccount, "child_delete", path="<id:pk>/<slug:part>/<int:child>/delete/")
class ChildDeleteView(BaseObjectView):
    """A confirmation page, then the deletion (on the platform first when it has the record)."""

    required_roles = EDITORS

    def get_template_names(self):
        return ["current_accounts/child_delete.html"]

    def record(self, pk, part, child):
        account = get_object_or_404(self.get_queryset(), pk=pk)
        return account, get_object_or_404(model_of(part).objects.filter(current_account=account), pk=child)

    def get(self, request, pk, part, child):
        account, record = self.record(pk, part, child)
        return self.render({"object": account, "record": record, "part": part,
                            "record_name": record._meta.verbose_name,
                            "cancel_url": tab_url(account, part)})

    def post(self, request, pk, part, child):
        account, record = self.record(pk, part, child)
        try:
            gone = services.child_delete(record)
        except services.CurrentAccountError as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, _("Deleted “%(record)s”.") % {"record": record} if gone else
                             _("“%(record)s” is being deleted on the platform.") % {"record": record})
        return redirect(tab_url(account, part))


@register_model_view(CurrentAccount, "child_default", path="<id:pk>/<slug:part>/<int:child>/default/")
@method_decorator(require_POST, name="dispatch")
class ChildDefaultView(ChildDeleteView):
    """Make an address (bank record) the default; the platform clears the others."""

    def post(self, request, pk, part, child):
        account, record = self.record(pk, part, child)
        if not hasattr(record, "is_default"):
            raise Http404
        try:
            services.child_make_default(record)
        except services.CurrentAccountError as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, _("“%(record)s” is now the default.") % {"record": record})
        return redirect(tab_url(account, part))


# Read the account and its child lists again from the platform (in the background).
register_read_view(CurrentAccount, services.details_request, roles=EDITORS, message=gettext_lazy(
    "Reading the account from the platform; this page shows it when done."))


register_model_view(CurrentAccount, "mirror", path="mirror/")(button_view(
    CurrentAccount, lambda request: services.mirror_request(active_company(request),
                                                            full=request.POST.get("full") == "1"),
    roles=EDITORS, section="accounting", tab="current_accounts",
    message=gettext_lazy("Reading the current accounts from the platform; the list fills as pages arrive.")))


class ImportForm(forms.Form):
    file = forms.FileField(label=gettext_lazy("Excel file (.xlsx)"),
                           widget=forms.ClearableFileInput(attrs={"accept": ".xlsx"}))


@register_model_view(CurrentAccount, "import", path="import/")
class ImportView(SubmissionGuardMixin, BaseObjectView):
    """Import current accounts (with their first address, bank record and contact) or chart accounts from
    the template: every row checked first, errors per row and cell, nothing saved while any is left."""

    required_roles = EDITORS
    tab = "imports"

    def get_template_names(self):
        return ["current_accounts/import.html"]

    def kind(self):
        kind = self.request.POST.get("kind") or self.request.GET.get("kind") or "accounts"
        return kind if kind in imports.SHEETS else "accounts"

    def guard_target(self, context):
        return self.request.company if self.kind() == "accounts" else None

    def page(self, form, checked=None, status=200):
        kind = self.kind()
        runs = JobRun.objects.filter(company=self.request.company, name="current_accounts_import_push")[:5]
        return self.render({"form": form, "kind": kind, "sheet": imports.SHEETS[self.kind()], "checked": checked,
                            "summary": summary(checked) if checked else "",
                            "errors": checked.errors[:500] if checked else [], "runs": runs,
                            "running": any(run.status in ACTIVE_JOBS for run in runs),
                            "template_url": model_url(CurrentAccount, "import_template", kind=self.kind())},
                           status=status)

    def get(self, request):
        return self.page(ImportForm())

    def post(self, request):
        form = ImportForm(request.POST, request.FILES)
        if not form.is_valid():
            return self.page(form)
        company = active_company(request)
        try:
            checked = read(form.cleaned_data["file"], imports.SHEETS[self.kind()])
        except ImportFileError as exc:
            form.add_error("file", str(exc))
            return self.page(form)
        if checked.errors:
            return self.page(form, checked)
        if self.kind() == "chart":
            count = chart_api.import_chart(company, checked)
            if checked.errors:
                return self.page(form, checked)
            messages.success(request, summary(checked) + " " + _(
                "%(count)s chart account(s) imported; they are being sent to the platform.") % {"count": count})
            return redirect(model_url(chart_api.Account, "list"))
        rows = imports.check_accounts(company, checked)
        if checked.errors:
            return self.page(form, checked)
        saved, answered = self.guarded_submit(
            self.guard_for(company), form, lambda: _Imported(imports.save_accounts(company, rows, request.user)),
            valid=lambda: True, invalid=lambda: self.page(form, checked))
        if answered is not None:
            return answered
        messages.success(request, summary(checked) + " " + _(
            "%(count)s current account(s) imported; they are being sent to the platform (progress below).") % {
            "count": len(saved.pks)})
        return redirect(model_url(CurrentAccount, "import"))


class _Imported:
    """The import's result, recorded on the one-time key as the first account it made (Back and submit again
    shows it instead of importing twice)."""

    def __init__(self, pks):
        self.pks = pks
        first = CurrentAccount.objects.filter(pk=pks[0]).first() if pks else None
        self._meta, self.pk = CurrentAccount._meta, first.pk if first else 0
        self.company = first.company if first else None


@register_model_view(CurrentAccount, "import_template", path="import/template/<slug:kind>/")
class ImportTemplateView(BaseObjectView):
    required_roles = EVERYONE

    def get(self, request, kind):
        if kind not in imports.SHEETS:
            raise Http404
        response = HttpResponse(template(imports.SHEETS[kind]), content_type=XLSX)
        response["Content-Disposition"] = f'attachment; filename="{kind}-template.xlsx"'
        return response


class ChildPageView(BaseObjectView):
    """A child record's own address: its account's page, on its tab (where a replayed form lands, too)."""

    required_roles = EVERYONE

    def get(self, request, pk):
        record = get_object_or_404(self.get_queryset(), pk=pk)
        return redirect(tab_url(record.current_account, record.part))


for _model, _prefix in ((Address, "addresses"), (Bank, "banks"), (Contact, "contacts"), (Mapping, "mappings")):
    register_model_views(_model, prefix=_prefix, detail=type(f"{_model.__name__}PageView",
                                                                        (ChildPageView,), {"model": _model}))
