import django_filters
from django.utils.translation import gettext_lazy as _

from backoffice.core.choices import SyncState
from backoffice.core import dashboard as core_dashboard
from backoffice.core.generic import BaseFilterSet, DateFromFilter, DateToFilter

from . import invoicing
from .choices import Answer, DispatchStatus, Profile, ReplyStatus, Source
from .models import DispatchNote, DispatchTaxpayer, ReceivedReply


class DispatchNoteFilterSet(BaseFilterSet):
    search_fields = ("despatch_number", "receiver_name", "receiver_identifier", "local_reference_id", "plate_number")
    remote_status = django_filters.ChoiceFilter(choices=DispatchStatus.choices, label=_("Status"))
    sync_state = django_filters.ChoiceFilter(choices=SyncState.choices, label=_("Sync state"))
    profile = django_filters.ChoiceFilter(choices=Profile.choices, label=_("Profile"))
    source = django_filters.ChoiceFilter(choices=Source.choices, label=_("Written as"))
    receiver = django_filters.CharFilter(field_name="receiver_identifier", label=_("Receiver's tax or national id"))
    date_from = DateFromFilter("issue_date", lookup_expr="gte")
    date_to = DateToFilter("issue_date", lookup_expr="lte")
    # the dashboard's list of sent notes within (or just past) their 7-day invoicing window, not invoiced yet
    view = django_filters.ChoiceFilter(choices=(("to_invoice", _("To be invoiced")),), method="filter_view",
                                       label=_("Show"))
    # the 7-day watch (dispatch.invoicing): each value a range of dates over the partial index
    invoicing = django_filters.ChoiceFilter(choices=invoicing.FILTER_CHOICES, method="filter_invoicing",
                                            label=_("Invoicing"))

    class Meta:
        model = DispatchNote
        fields = ("q", "remote_status", "sync_state", "profile", "source", "receiver", "date_from", "date_to", "view",
                  "invoicing")

    def filter_view(self, queryset, name, value):
        if value == "to_invoice":
            return invoicing.invoicing_window(queryset, core_dashboard.today())
        return queryset

    def filter_invoicing(self, queryset, name, value):
        return invoicing.filtered(queryset, value)


class DispatchTaxpayerFilterSet(BaseFilterSet):
    search_fields = ("identifier", "title", "alias")

    class Meta:
        model = DispatchTaxpayer
        fields = ("q",)


class ReceivedReplyFilterSet(BaseFilterSet):
    """The filters of document 3, 4.5 (receipt number, status, creation dates) on the mirror, and the answer."""

    search_fields = ("receipt_number", "despatch_number", "sender_title", "sender_identifier")
    remote_status = django_filters.ChoiceFilter(choices=ReplyStatus.choices, label=_("Status"))
    answer = django_filters.ChoiceFilter(choices=Answer.choices, label=_("Answer"))
    date_from = DateFromFilter("received_at", label=_("Received from"))
    date_to = DateToFilter("received_at", label=_("Received until"))

    class Meta:
        model = ReceivedReply
        fields = ("q", "remote_status", "answer", "date_from", "date_to")
