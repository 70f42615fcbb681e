import django_filters
from django import forms
from django.utils.translation import gettext_lazy as _

from backoffice.core.choices import SyncState
from backoffice.core.generic import BaseFilterSet

from .choices import AccountType
from .models import Account


class AccountFilterSet(BaseFilterSet):
    search_fields = ("full_code", "name")
    code = django_filters.CharFilter(field_name="full_code", lookup_expr="startswith", label=_("Code starts with"))
    type = django_filters.ChoiceFilter(choices=AccountType.choices, label=_("Account type"))
    is_bundle_account = django_filters.BooleanFilter(label=_("Pool account"), widget=forms.Select(
        choices=[("", _("All")), ("true", _("Yes")), ("false", _("No"))]))
    sync_state = django_filters.ChoiceFilter(choices=SyncState.choices, label=_("Sync state"))

    class Meta:
        model = Account
        fields = ("q", "code", "type", "is_bundle_account", "sync_state")
