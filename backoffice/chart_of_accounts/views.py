"""Chart-of-accounts pages: the tree as a list (Excel export of any filter), an account's page with the
current accounts mapped to it, the form, the start from the uniform chart, reading the platform's chart."""

from django import forms
from django.contrib import messages
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from backoffice.core.generic.families import active_company
from backoffice.core.generic.reading import register_read_view
from backoffice.core.generic.registry import model_url, register_model_view, register_model_views
from backoffice.core.generic.views import (BaseObjectView, ObjectDetailView, ObjectEditView, ObjectListView,
                                           describe_fields)
from backoffice.core.jobs import runs_of
from backoffice.core.roles import EDITORS

from . import filters, services, tables, uniform
from .forms import AccountForm
from .models import Account


class AccountListView(ObjectListView):
    table = tables.AccountTable
    filterset = filters.AccountFilterSet
    refresh_interval = 3


class AccountDetailView(ObjectDetailView):
    fields = ("full_code", "name", "type", "base_code", "parent", "code", "unit_code", "is_bundle_account",
              "currency_code_id", "has_child", "remote_id", "sync_state")

    def get_extra_context(self, account):
        mappings = account.mappings.select_related("current_account").order_by("current_account__name")[:200]
        fields = describe_fields(account, self.fields, user=self.request.user)
        # The platform's currencyCodeId is a number; people read the currency's code (TRY, USD, EUR).
        fields[self.fields.index("currency_code_id")].value = account.currency or ""
        return {"fields": fields, "mappings": mappings, "runs": runs_of(account), "currency": account.currency,
                "edit_url": model_url(account, "edit") if not account.is_busy else None}


class AccountEditView(ObjectEditView):
    form = AccountForm
    form_company = True
    saves = staticmethod(services.account_save)
    refused = services.ChartError

    def form_context(self, account, formsets):
        return {"uniform_main": uniform.main_accounts()}

    def locked_message(self, account):
        return _("This account is on its way to the platform; wait until it is there.") if account.is_busy else ""



register_model_views(Account, prefix="accounts", list=AccountListView, detail=AccountDetailView,
                     edit=AccountEditView)


class UniformForm(forms.Form):
    codes = forms.MultipleChoiceField(label=gettext_lazy("Main accounts"), widget=forms.CheckboxSelectMultiple,
                                      choices=())

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["codes"].choices = [(code, f"{code} {name}") for code, name in uniform.main_accounts()]
        self.fields["codes"].error_messages["required"] = _("Choose at least one main account.")


@register_model_view(Account, "uniform", path="uniform/")
class UniformView(BaseObjectView):
    """Start from the uniform chart of accounts (Tekdüzen Hesap Planı): the chosen main accounts are added
    and sent; the common ones are chosen already. Sending it twice adds nothing twice (known codes are
    skipped), so the form needs no one-time key."""

    required_roles = EDITORS

    def get_template_names(self):
        return ["chart_of_accounts/account_uniform.html"]

    def page(self, form, status=200):
        known = set(Account.objects.filter(company=self.request.company, type=0).values_list("full_code", flat=True))
        classes = []
        for code, name in uniform.UNIFORM_CHART:
            level = uniform.level(code)
            if level == uniform.CLASS:
                classes.append({"code": code, "name": name, "groups": []})
            elif level == uniform.GROUP and classes:
                classes[-1]["groups"].append({"code": code, "name": name, "accounts": []})
            elif level == uniform.MAIN and classes and classes[-1]["groups"]:
                classes[-1]["groups"][-1]["accounts"].append({"code": code, "name": name, "known": code in known})
        chosen = set(form["codes"].value() or ()) if form.is_bound else set(uniform.COMMON)
        return self.render({"form": form, "classes": classes, "chosen": chosen, "known_count": len(known)},
                           status=status)

    def get(self, request):
        return self.page(UniformForm())

    def post(self, request):
        form = UniformForm(request.POST)
        if not form.is_valid():
            return self.page(form)
        added = services.start_from_uniform(active_company(request), form.cleaned_data["codes"])
        messages.success(request, _("%(count)s main account(s) added; they are being sent to the platform.")
                         % {"count": added})
        return redirect(model_url(Account, "list"))


register_read_view(Account, services.mirror_request, name="mirror", whole=True, roles=EDITORS, message=gettext_lazy(
    "Reading the chart of accounts from the platform; the list fills as pages arrive."))
