import django_filters
from django.utils.translation import gettext_lazy as _

from backoffice.core.choices import SyncState
from backoffice.core.generic import BaseFilterSet

from .models import CurrentAccount


class CurrentAccountFilterSet(BaseFilterSet):
    search_fields = ("name", "surname", "identifier", "code")
    identifier = django_filters.CharFilter(label=_("Tax or national id"))
    code = django_filters.CharFilter(label=_("Account code"))
    sync_state = django_filters.ChoiceFilter(choices=SyncState.choices, label=_("Sync state"))

    class Meta:
        model = CurrentAccount
        fields = ("q", "identifier", "code", "sync_state")
