import django_filters
from django.utils.translation import gettext_lazy as _

from backoffice.core.choices import SyncState
from backoffice.core.generic import BaseFilterSet, DateFromFilter, DateToFilter

from . import watch
from .choices import Answer, DispatchStatus, ReplyStatus
from .models import DispatchReply, IncomingNote


class IncomingNoteFilterSet(BaseFilterSet):
    """The inbox: ?view=awaiting (the default of the page's first tab) shows what still needs an answer, the oldest
    first."""

    search_fields = ("despatch_number", "sender_title", "sender_identifier", "receipt_number")
    view = django_filters.ChoiceFilter(choices=(("awaiting", _("Needs an answer")),), method="filter_view",
                                       label=_("Show"))
    # the 7-day watch (watch.py): each value a range of arrival times over the status index
    answer_due = django_filters.ChoiceFilter(choices=watch.FILTER_CHOICES, method="filter_answer_due",
                                             label=_("Answer"))
    remote_status = django_filters.ChoiceFilter(choices=DispatchStatus.choices, label=_("Status"))
    sender = django_filters.CharFilter(field_name="sender_identifier", label=_("Sender's tax or national id"))
    date_from = DateFromFilter("received_at", label=_("Received from"))
    date_to = DateToFilter("received_at", label=_("Received until"))

    class Meta:
        model = IncomingNote
        fields = ("q", "view", "answer_due", "remote_status", "sender", "date_from", "date_to")

    def filter_view(self, queryset, name, value):
        if value == "awaiting":
            return queryset.filter(remote_status=DispatchStatus.AWAITING_APPROVAL).order_by("received_at", "id")
        return queryset

    def filter_answer_due(self, queryset, name, value):
        return watch.filtered(queryset, value)


class DispatchReplyFilterSet(BaseFilterSet):
    search_fields = ("receipt_number", "note__despatch_number", "note__sender_title")
    remote_status = django_filters.ChoiceFilter(choices=ReplyStatus.choices, label=_("Status"))
    answer = django_filters.ChoiceFilter(choices=Answer.choices, label=_("Answer"))
    sync_state = django_filters.ChoiceFilter(choices=SyncState.choices, label=_("Sync state"))

    class Meta:
        model = DispatchReply
        fields = ("q", "remote_status", "answer", "sync_state")
