import django_filters
from django.utils.translation import gettext_lazy as _

from backoffice.core.choices import SyncState
from backoffice.core.generic import BaseFilterSet, DateFromFilter, DateToFilter

from .choices import ListState
from .models import PassengerList


class PassengerListFilterSet(BaseFilterSet):
    search_fields = ("passenger_list_number", "expedition_number", "vehicle_plate", "remote_id",
                     "vehicle_operating_title")
    state = django_filters.ChoiceFilter(choices=ListState.choices, label=_("Tax authority"))
    sync_state = django_filters.ChoiceFilter(choices=SyncState.choices, label=_("Sync state"))
    expedition_number = django_filters.CharFilter(label=_("Expedition number"))
    date_from = DateFromFilter("expedition_time", label=_("Expedition from"))
    date_to = DateToFilter("expedition_time", label=_("Expedition until"))

    class Meta:
        model = PassengerList
        fields = ("q", "state", "sync_state", "expedition_number", "date_from", "date_to")
