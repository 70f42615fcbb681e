import django_filters
from django.utils.translation import gettext_lazy as _

from backoffice.core.choices import SyncState
from backoffice.core.generic import BaseFilterSet, DateFromFilter, DateToFilter

from .choices import DispatchStatus, Profile, Source
from .models import DispatchNote, DispatchTaxpayer


class DispatchNoteFilterSet(BaseFilterSet):
    search_fields = ("despatch_number", "receiver_name", "receiver_identifier", "local_reference_id", "plate_number")
    remote_status = django_filters.ChoiceFilter(choices=DispatchStatus.choices, label=_("Status"))
    sync_state = django_filters.ChoiceFilter(choices=SyncState.choices, label=_("Sync state"))
    profile = django_filters.ChoiceFilter(choices=Profile.choices, label=_("Profile"))
    source = django_filters.ChoiceFilter(choices=Source.choices, label=_("Written as"))
    receiver = django_filters.CharFilter(field_name="receiver_identifier", label=_("Receiver's tax or national id"))
    date_from = DateFromFilter("issue_date", lookup_expr="gte")
    date_to = DateToFilter("issue_date", lookup_expr="lte")

    class Meta:
        model = DispatchNote
        fields = ("q", "remote_status", "sync_state", "profile", "source", "receiver", "date_from", "date_to")


class DispatchTaxpayerFilterSet(BaseFilterSet):
    search_fields = ("identifier", "title", "alias")

    class Meta:
        model = DispatchTaxpayer
        fields = ("q",)
