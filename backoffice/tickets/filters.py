import django_filters
from django.utils.translation import gettext_lazy as _

from backoffice.core.choices import SyncState
from backoffice.core.generic import BaseFilterSet, DateFromFilter, DateToFilter

from .choices import PaymentType, TicketStatus
from .models import EventTicket, PassengerTicket


class TicketFilterSet(BaseFilterSet):
    number = django_filters.CharFilter(field_name="ticket_number", lookup_expr="startswith", label=_("Ticket number"),
                                       method="filter_number")
    remote_status = django_filters.ChoiceFilter(choices=TicketStatus.choices, label=_("Platform status"))
    sync_state = django_filters.ChoiceFilter(choices=SyncState.choices, label=_("Sync state"))
    payment_type = django_filters.ChoiceFilter(choices=PaymentType.choices, label=_("Payment type"))
    date_from = DateFromFilter("ticket_date")
    date_to = DateToFilter("ticket_date")

    def filter_number(self, queryset, name, value):
        return queryset.filter(ticket_number__startswith=value.strip().upper()) if value.strip() else queryset


class EventTicketFilterSet(TicketFilterSet):
    search_fields = ("ticket_number", "identifier", "customer_first_name", "customer_last_name", "event_name",
                     "seat_number")

    class Meta:
        model = EventTicket
        fields = ("q", "number", "remote_status", "sync_state", "payment_type", "date_from", "date_to")


class PassengerTicketFilterSet(TicketFilterSet):
    search_fields = ("ticket_number", "identifier", "customer_first_name", "customer_last_name",
                     "expedition_number", "vehicle_plate")
    expedition_number = django_filters.CharFilter(label=_("Expedition number"))

    class Meta:
        model = PassengerTicket
        fields = ("q", "number", "remote_status", "sync_state", "payment_type", "expedition_number", "date_from",
                  "date_to")
