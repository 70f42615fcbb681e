import django_filters
from django.utils.translation import gettext_lazy as _

from backoffice.core.choices import SyncState
from backoffice.core.generic import BaseFilterSet, DateFromFilter, DateToFilter

from .choices import OperationKind, Origin, SubCompanyState
from .models import SubCompany, SubCompanyOperation, UsageSnapshot


class SubCompanyFilterSet(BaseFilterSet):
    search_fields = ("name", "identifier", "remote_id", "contact_full_name", "contact_email")
    state = django_filters.ChoiceFilter(choices=SubCompanyState.choices, field_name="state_value", label=_("State"))
    origin = django_filters.ChoiceFilter(choices=Origin.choices, label=_("Origin"))

    class Meta:
        model = SubCompany
        fields = ("q", "state", "origin")


class SubCompanyOperationFilterSet(BaseFilterSet):
    search_fields = ("last_error", "subcompanies__name", "subcompanies__identifier")
    kind = django_filters.ChoiceFilter(choices=OperationKind.choices, label=_("Operation"))
    sync_state = django_filters.ChoiceFilter(choices=SyncState.choices, label=_("Sync state"))
    date_from = DateFromFilter("created_at")
    date_to = DateToFilter("created_at")

    class Meta:
        model = SubCompanyOperation
        fields = ("q", "kind", "sync_state", "date_from", "date_to")

    def search(self, queryset, name, value):
        return super().search(queryset, name, value).distinct()


class UsageSnapshotFilterSet(BaseFilterSet):
    q = None  # nothing to search in a snapshot's list
    date_from = DateFromFilter("fetched_at")
    date_to = DateToFilter("fetched_at")

    class Meta:
        model = UsageSnapshot
        fields = ("date_from", "date_to")
